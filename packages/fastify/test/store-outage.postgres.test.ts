/**
 * Issue 14: a Postgres outage in the middle of a turn. A throwaway cluster of this file's own (the
 * shared server serves other files) is stopped with `pg_ctl stop -m immediate` while a slow turn
 * writes, left down ~3 s, then started again. Afterwards every context and task must be usable:
 * the interrupted task reaches a terminal state, the message queued behind it in its context runs,
 * a new message in the context completes, tasks/get answers, and no stream was left hanging.
 */
import { PostgresStore } from '@fastify-a2a/store-postgres';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../../../test-support/global-setup.js';
import { a2aPlugin } from '../src/index.js';
import { listen, postSse, readSse, rpcBody, type SseEvent, testCard, userMessage } from './helpers.js';

let cluster: Cluster;
let app: FastifyInstance;
let base: string;
const logs: Record<string, unknown>[] = [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  // Durable: the throwaway default (fsync and synchronous_commit off) loses acknowledged commits
  // in a crash, which no store can survive; a production server does not.
  cluster = await startCluster({ durable: true });
  app = Fastify({
    logger: {
      level: 'debug',
      stream: { write: (line: string) => void logs.push(JSON.parse(line)) },
    },
  });
  await app.register(a2aPlugin, {
    agentCard: testCard,
    store: new PostgresStore({ connectionString: cluster.url, schema: 'outage' }),
    retention: false,
    drainTimeoutMs: 500,
    // The outage this test makes is meant to be shorter than the lease (a longer one fails the turns
    // as "Worker lost", core/test/runtime/outage.test.ts): on a loaded machine the cluster's crash
    // recovery alone once took longer than the default 15 s.
    leaseTtlMs: 60_000,
    async executor(turn) {
      if (turn.text === 'slow') {
        await turn.working('writing slowly');
        // About 2 s of chunks: the turn ends while the store is down (it is stopped 0.7 s in, for 3 s).
        for (let i = 0; i < 8; i++) {
          await turn.artifact({ artifactId: 'slow', text: `${i} `, append: i > 0 });
          await sleep(250);
        }
      }
      await turn.complete(`ok: ${turn.text}`);
    },
  });
  base = await listen(app);
}, 90_000);

afterAll(async () => {
  await app?.close();
  await cluster?.stop();
});

/** One JSON-RPC call over HTTP, with a time limit: an answer (result or error) must come, never a hang. */
async function call(method: string, params: unknown): Promise<{ result?: Record<string, unknown>; error?: unknown }> {
  const response = await fetch(`${base}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rpcBody(method, params)),
    signal: AbortSignal.timeout(10_000),
  });
  return (await response.json()) as { result?: Record<string, unknown>; error?: unknown };
}

/** Polls tasks/get until the task is in one of `states` (store errors while it comes back are retried). */
async function waitForState(id: string, states: string[], timeoutMs = 30_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const answer = await call('tasks/get', { id }).catch((error: unknown): { result?: undefined; error: unknown } => ({
      error,
    }));
    last = answer;
    const state = (answer.result?.status as { state?: string } | undefined)?.state;
    if (state !== undefined && states.includes(state)) return answer.result as Record<string, unknown>;
    await sleep(200);
  }
  // The server's warnings and errors go with the failure: which store call failed, and when, is
  // what tells a real regression from the store coming back slower than this test allows.
  const warnings = logs.filter((line) => typeof line.level === 'number' && line.level >= 40).slice(-10);
  throw new Error(
    `task ${id} never reached ${states.join('/')}: last answer ${JSON.stringify(last)}; server warnings: ${JSON.stringify(warnings)}`,
  );
}

it('after a store outage mid-turn, every context and task is usable again', async () => {
  const contextId = 'outage-context';
  const slow = (await call('message/send', {
    message: userMessage('slow', { contextId }),
    configuration: { blocking: false },
  })) as { result: { id: string } };
  const slowId = slow.result.id;
  // Queued behind the slow turn in the same context: it runs only once the slow turn's slot is freed.
  const queued = (await call('message/send', {
    message: userMessage('queued', { contextId }),
    configuration: { blocking: false },
  })) as { result: { id: string } };
  const queuedId = queued.result.id;
  // A stream following the slow task through the outage: it must end (final event, or an error
  // event the client can reconnect after), not hang.
  const stream = (async () => {
    const events: SseEvent[] = [];
    const response = await postSse(
      `${base}/a2a`,
      rpcBody('tasks/resubscribe', { id: slowId }),
      {},
      AbortSignal.timeout(60_000),
    );
    for await (const event of readSse(response)) events.push(event);
    return events;
  })();

  await waitForState(slowId, ['working']);
  await sleep(700); // some chunks written

  await cluster.halt();
  // While the store is down a request gets an error answer at once, not a hang.
  const during = await call('tasks/get', { id: slowId });
  expect(during.error).toBeDefined();
  await sleep(3000);
  await cluster.resume();

  // The interrupted task ends (its agent's write failed, so it fails; the write that says so is
  // retried until the store is back), and so does its stream.
  const ended = await waitForState(slowId, ['failed', 'completed']);
  expect(['failed', 'completed']).toContain((ended.status as { state: string }).state);
  // A failure says what happened without the store's own message (it names the host and user).
  expect(JSON.stringify(ended.status)).not.toMatch(/127\.0\.0\.1|postgres/i);
  const events = await stream;
  expect(events.length).toBeGreaterThan(0);
  const last = events.at(-1)?.data as { result?: { final?: boolean }; error?: unknown };
  expect(last.error !== undefined || last.result?.final === true).toBe(true);

  // The turn queued behind it in the context runs, and a new message in the context completes.
  const queuedDone = await waitForState(queuedId, ['completed']);
  expect(queuedDone.status).toMatchObject({ state: 'completed' });
  const next = (await call('message/send', { message: userMessage('after', { contextId }) })) as {
    result: { status: { state: string }; contextId: string };
  };
  expect(next.result.status.state).toBe('completed');
  expect(next.result.contextId).toBe(contextId);

  // tasks/get works for every task; a cancel of the ended task answers "not cancelable" (-32002),
  // the answer of a task that is terminal, rather than a store failure.
  for (const id of [slowId, queuedId]) expect((await call('tasks/get', { id })).result).toMatchObject({ id });
  expect(await call('tasks/cancel', { id: slowId })).toMatchObject({ error: { code: -32002 } });

  // The retries are logged: what failed, that it is retried, and that it succeeded.
  const messages = logs.map((line) => line.msg);
  expect(messages).toContain("a2a: could not write the turn's last event; retrying");
  expect(messages).not.toContain(
    "a2a: could not write the turn's last event; this worker lost its lease, so it stops trying",
  );
}, 90_000);
