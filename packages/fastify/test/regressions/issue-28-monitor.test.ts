/**
 * Issue 28: the monitor's events stream.
 *
 * Item 9: one failed store read lost a task change for good. When the read after a burst of
 * changes failed once (a store blip), the hub dropped the pending task ids and sent nothing: a task
 * that completed during the blip showed as working until the page was reloaded. Now the pending
 * changes are kept and read again, and a store that stays unreadable ends in `resync`.
 *
 * Through the plugin over HTTP, on a real MemoryStore whose reads fail on demand — only the
 * monitor's reads, so the agent's own turn is untouched.
 */
import type { A2AStore, Task } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { a2aPlugin, operatorTokens } from '../../src/index.js';
import { listen, rpcBody, testCard, userMessage, waitFor } from '../helpers.js';
import { EventsReader } from '../monitor/sse.js';

const OPERATOR = { authorization: 'Bearer operator-secret' };

const apps: FastifyInstance[] = [];
const readers: EventsReader[] = [];
afterEach(async () => {
  for (const reader of readers.splice(0)) reader.close();
  for (const app of apps.splice(0)) await app.close();
});

/** Whether the monitor's events hub is the caller (its reads are the ones made to fail). */
const fromMonitor = (): boolean => /MonitorHub/.test(new Error().stack ?? '');

/**
 * A MemoryStore whose `getTask`, called by the monitor for `taskId`, rejects `failures` times
 * once armed: a store blip as the hub sees it.
 */
class BlinkingStore extends MemoryStore {
  taskId: string | undefined;
  failures = 0;
  failed = 0;

  override async getTask(...args: Parameters<MemoryStore['getTask']>): ReturnType<MemoryStore['getTask']> {
    if (this.failures > 0 && args[0] === this.taskId && fromMonitor()) {
      this.failures--;
      this.failed++;
      throw new Error('connection reset (a store blip)');
    }
    return super.getTask(...args);
  }
}

async function start(store: A2AStore, gate: Promise<void>): Promise<string> {
  const app = Fastify({ logger: false });
  apps.push(app);
  await app.register(a2aPlugin, {
    agentCard: testCard,
    store,
    retention: false,
    drainTimeoutMs: 100,
    monitor: { authorize: operatorTokens({ 'operator-secret': 'olga' }) },
    executor: async (turn) => {
      await turn.working();
      await gate;
      await turn.complete('done');
    },
  });
  return listen(app);
}

async function sendNonBlocking(url: string): Promise<Task> {
  const res = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rpcBody('message/send', { message: userMessage('hi'), configuration: { blocking: false } })),
  });
  return ((await res.json()) as { result: Task }).result;
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const stateEvents = (reader: EventsReader, taskId: string): string[] =>
  reader.events.filter((e) => e.event === 'task' && e.data.id === taskId).map((e) => e.data.state as string);

describe('issue 28, item 9: a failed store read loses no task change', () => {
  it('a task that completes while the monitor cannot read it still shows completed once the store answers', async () => {
    const store = new BlinkingStore();
    const turn = gate();
    const url = await start(store, turn.promise);
    const reader = await EventsReader.open(`${url}/monitor/events`, OPERATOR);
    readers.push(reader);
    expect(reader.status).toBe(200);
    await waitFor(() => reader.events.some((e) => e.event === 'hello'), 5000, 'hello');
    const task = await sendNonBlocking(url);
    await waitFor(() => stateEvents(reader, task.id).includes('working'), 5000, 'the working state');

    store.taskId = task.id;
    store.failures = 1;
    turn.open();
    await waitFor(() => stateEvents(reader, task.id).includes('completed'), 5000, 'the completed state');
    expect(store.failed).toBe(1);
    expect(stateEvents(reader, task.id).at(-1)).toBe('completed');
    expect(reader.ended).toBe(false);
  });

  it('a store that stays unreadable ends in resync, so the page reloads everything rather than show a stale state', async () => {
    const store = new BlinkingStore();
    const turn = gate();
    const url = await start(store, turn.promise);
    const reader = await EventsReader.open(`${url}/monitor/events`, OPERATOR);
    readers.push(reader);
    await waitFor(() => reader.events.some((e) => e.event === 'hello'), 5000, 'hello');
    const task = await sendNonBlocking(url);
    await waitFor(() => stateEvents(reader, task.id).includes('working'), 5000, 'the working state');

    store.taskId = task.id;
    store.failures = Number.POSITIVE_INFINITY;
    turn.open();
    await waitFor(() => reader.events.some((e) => e.event === 'resync'), 15_000, 'resync');
    const resync = reader.events.find((e) => e.event === 'resync');
    expect(resync?.id).toBeUndefined();
    expect(resync?.data.reason).toMatch(/could not be read/);
    expect(store.failed).toBeGreaterThan(1);
    await waitFor(() => reader.ended, 5000, 'the connection to close');
  }, 20_000);
});

describe('issue 28, item 8: the events stream opened while the server closes', () => {
  it('an operator check that ends after close() began gets 503, and close() does not wait on the stream', async () => {
    let checking!: () => void;
    const checkStarted = new Promise<void>((resolve) => {
      checking = resolve;
    });
    const checked = gate();
    const app = Fastify({ logger: false });
    await app.register(a2aPlugin, {
      agentCard: testCard,
      store: new MemoryStore(),
      retention: false,
      drainTimeoutMs: 100,
      heartbeatIntervalMs: 100,
      // An operator check that takes its time (a token introspection call).
      monitor: {
        authorize: async () => {
          checking();
          await checked.promise;
          return 'olga';
        },
      },
      executor: async (turn) => turn.complete(),
    });
    const url = await listen(app);
    const controller = new AbortController();
    const response = fetch(`${url}/monitor/events`, { headers: OPERATOR, signal: controller.signal });
    await checkStarted;
    const closed = app.close().then(() => 'closed');
    // The monitor's preClose ran (it ended the streams it had) before the check lets this one in.
    await new Promise((resolve) => setTimeout(resolve, 200));
    checked.open();
    try {
      const outcome = await Promise.race([
        closed,
        new Promise((resolve) => setTimeout(() => resolve('still open'), 3000)),
      ]);
      expect(outcome).toBe('closed');
      const answer = await response;
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('1');
      expect(await answer.json()).toMatchObject({ error: 'UNAVAILABLE' });
    } finally {
      controller.abort();
      await closed;
    }
  });
});
