/**
 * The monitor through the plugin over HTTP, on every store: the operator check on every route,
 * every owner's tasks with filters and paging, a task's event log, the events stream (hello,
 * snapshots, live changes, resume by Last-Event-ID, resync of a slow reader) and the operator
 * actions. Several workers: monitor-cluster.test.ts.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { A2AStore, Task } from '@fastify-a2a/core';
import { agentMessage, createTask, taskFixture } from '@fastify-a2a/core/testing';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { PostgresStore } from '@fastify-a2a/store-postgres';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { echoAgent, echoCard } from '../../../../test-support/agents.js';
import { withPostgres } from '../../../../test-support/postgres.js';
import { type A2APluginOptions, a2aPlugin, bearerTokens, operatorTokens } from '../../src/index.js';
import { listen, rpcBody, textParts, userMessage, waitFor } from '../helpers.js';
import { startWebhookReceiver } from '../push/receiver.js';
import { EventsReader, taskEvent } from './sse.js';

const OPERATOR = { authorization: 'Bearer operator-secret' };
const ALICE = { authorization: 'Bearer alice-token' };
const BOB = { authorization: 'Bearer bob-token' };

const dir = mkdtempSync(join(tmpdir(), 'a2a-monitor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const pg = withPostgres('a2a_monitor');
let fileCounter = 0;

const STORES: Record<string, () => A2AStore> = {
  memory: () => new MemoryStore(),
  SQLite: () => new SqliteStore({ filename: join(dir, `monitor-${++fileCounter}.db`) }),
  Postgres: () => new PostgresStore({ connectionString: pg.url, schema: pg.newSchema('a2a_monitor') }),
};

const apps: FastifyInstance[] = [];
const stores: A2AStore[] = [];
const readers: EventsReader[] = [];
afterEach(async () => {
  for (const reader of readers.splice(0)) reader.close();
  for (const app of apps.splice(0)) await app.close();
  for (const store of stores.splice(0)) await store.close();
});

async function start(
  makeStore: () => A2AStore,
  extra: Partial<A2APluginOptions> = {},
): Promise<{ app: FastifyInstance; url: string; store: A2AStore }> {
  const store = makeStore();
  stores.push(store);
  const app = Fastify({ logger: false });
  apps.push(app);
  await app.register(a2aPlugin, {
    agentCard: echoCard(),
    executor: echoAgent,
    store,
    retention: false,
    // Turns still running at the end of a test are failed at once when the app closes.
    drainTimeoutMs: 100,
    authenticate: bearerTokens({ 'alice-token': 'alice', 'bob-token': 'bob' }),
    monitor: { authorize: operatorTokens({ 'operator-secret': 'olga' }) },
    ...extra,
  });
  const url = await listen(app);
  return { app, url, store };
}

async function rpc<T>(url: string, method: string, params: unknown, headers: Record<string, string>): Promise<T> {
  const res = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(rpcBody(method, params)),
  });
  const body = (await res.json()) as { result?: T; error?: unknown };
  if (body.result === undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

const send = (url: string, text: string, headers: Record<string, string>, extra: Record<string, unknown> = {}) =>
  rpc<Task>(url, 'message/send', { message: userMessage(text, extra), configuration: { blocking: false } }, headers);

async function get(url: string, path: string, headers: Record<string, string> = OPERATOR) {
  const res = await fetch(`${url}/monitor${path}`, { headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { tasks?: MonitorTaskJson[] } };
}

async function post(url: string, path: string, body?: unknown, headers: Record<string, string> = OPERATOR) {
  const res = await fetch(`${url}/monitor${path}`, {
    method: 'POST',
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

interface MonitorTaskJson {
  id: string;
  state: string;
  owner: string | null;
  contextId: string;
  turn: { workerId: string; queuePosition: number; position: number } | null;
  push: { configId: string; failed: boolean; attempts: number }[];
}

async function stateOf(store: A2AStore, taskId: string): Promise<string | undefined> {
  return (await store.getTask(taskId))?.task.status.state;
}

describe('the monitor option', () => {
  it('refuses a monitor without an operator check, and serves nothing when it is off', async () => {
    const app = Fastify({ logger: false });
    apps.push(app);
    await expect(
      app.register(a2aPlugin, {
        agentCard: echoCard(),
        executor: echoAgent,
        monitor: {} as never,
      }),
    ).rejects.toThrow(/"monitor\.authorize" is required: the monitor shows every caller's tasks/);
    const off = Fastify({ logger: false });
    apps.push(off);
    await off.register(a2aPlugin, { agentCard: echoCard(), executor: echoAgent, retention: false });
    expect((await off.inject({ url: '/monitor/', headers: OPERATOR })).statusCode).toBe(404);
    expect((await off.inject({ url: '/monitor/events', headers: OPERATOR })).statusCode).toBe(404);
  });
});

// The hub is the same whatever the store: one store is enough to fill a connection's buffers.
describe('the monitor’s events stream, read too slowly', () => {
  const bigStatus = () => ({
    ...taskFixture({ state: 'working', timestamp: new Date().toISOString() }),
    status: { state: 'working' as const, timestamp: new Date().toISOString(), message: agentMessage('y'.repeat(500)) },
  });

  it('tells the reader to resync, and closes its connection, rather than buffering without limit', async () => {
    const { url, store } = await start(STORES.memory as () => A2AStore, {
      monitor: { authorize: operatorTokens({ 'operator-secret': 'olga' }), maxBufferedEvents: 10 },
    });
    const controller = new AbortController();
    // Not read until the server has given up on it.
    const res = await fetch(`${url}/monitor/events`, { headers: OPERATOR, signal: controller.signal });
    expect(res.status).toBe(200);
    // Thousands of tasks changing while the reader reads nothing: megabytes of live events.
    for (let i = 0; i < 6000; i++) {
      await createTask(store, bigStatus());
      if (i % 100 === 0) await new Promise((r) => setImmediate(r));
    }
    await new Promise((r) => setTimeout(r, 1000));
    const text = await new Response(res.body).text();
    expect(text).toMatch(/\n\nevent: resync\ndata: \{"reason":"this connection fell behind; reload everything"\}\n\n$/);
    expect(text.split('event: task').length - 1).toBeLessThan(6000);
  }, 30_000);

  it('sends the snapshots of more active tasks than maxBufferedEvents at the pace the reader reads, without resync', async () => {
    const { url, store } = await start(STORES.memory as () => A2AStore);
    // More than the default maxBufferedEvents (1000), megabytes in all: more than the sockets hold.
    for (let i = 0; i < 3000; i++) await createTask(store, bigStatus());
    const reader = await EventsReader.open(`${url}/monitor/events`, OPERATOR);
    readers.push(reader);
    await waitFor(() => reader.events.filter((e) => e.event === 'snapshot').length === 3000, 20_000, '3000 snapshots');
    expect(reader.events.some((e) => e.event === 'resync')).toBe(false);
  }, 30_000);
});

for (const [name, makeStore] of Object.entries(STORES)) {
  describe(`the monitor on ${name}`, () => {
    it('answers 401 without credentials and 403 with an agent caller’s on every API route', async () => {
      const { url } = await start(makeStore);
      const task = await send(url, 'hello', ALICE);
      const routes: [string, string][] = [
        ['GET', '/agents'],
        ['GET', '/tasks'],
        ['GET', `/tasks/${task.id}`],
        ['GET', '/events'],
        ['POST', `/tasks/${task.id}/cancel`],
        ['POST', `/tasks/${task.id}/fail`],
        ['POST', `/contexts/${task.contextId}/release`],
        ['POST', `/tasks/${task.id}/push/any/retry`],
      ];
      for (const [method, path] of routes) {
        for (const [headers, status] of [
          [{}, 401],
          [ALICE, 403],
          [{ authorization: 'Bearer wrong' }, 403],
        ] as const) {
          const res = await fetch(`${url}/monitor${path}`, { method, headers });
          expect(res.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(status);
          expect(((await res.json()) as { message: string }).message).toMatch(/operator/);
        }
      }
      // The page's files hold no data: a browser loads them, then signs in.
      const page = await fetch(`${url}/monitor/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
      const bare = await fetch(`${url}/monitor`, { redirect: 'manual' });
      // Relative, so that it keeps a prefix a proxy in front stripped: /ops/monitor → /ops/monitor/.
      expect([bare.status, bare.headers.get('location')]).toEqual([308, 'monitor/']);
      expect(new URL('monitor/', 'https://proxy.example/ops/monitor').pathname).toBe('/ops/monitor/');
      expect(await stateOf(stores[0] as A2AStore, task.id)).toBe('completed');
    });

    it('lists every owner’s tasks newest first, with filters and paging, and a task with its event log', async () => {
      const { url, store } = await start(makeStore);
      const alice = await send(url, 'from alice', ALICE);
      const bob = await send(url, 'from bob', BOB);
      const running = await send(url, 'sleep:60000', BOB);
      await waitFor(async () => (await stateOf(store, running.id)) === 'working', 5000);
      await waitFor(async () => (await stateOf(store, bob.id)) === 'completed', 5000);
      await waitFor(async () => (await stateOf(store, alice.id)) === 'completed', 5000);

      const all = await get(url, '/tasks');
      expect(all.status).toBe(200);
      expect(all.body.tasks?.map((t) => t.id).sort()).toEqual([alice.id, bob.id, running.id].sort());
      expect(all.body.totalSize).toBe(3);
      const runningView = all.body.tasks?.find((t) => t.id === running.id);
      expect(runningView).toMatchObject({ owner: 'bob', state: 'working', turn: { queuePosition: 0 } });
      expect(runningView?.turn?.workerId).toBe(((await get(url, '/agents')).body as { workerId: string }).workerId);

      expect((await get(url, '/tasks?owner=alice')).body.tasks?.map((t) => t.id)).toEqual([alice.id]);
      expect((await get(url, '/tasks?state=working')).body.tasks?.map((t) => t.id)).toEqual([running.id]);
      expect((await get(url, `/tasks?contextId=${bob.contextId}`)).body.tasks?.map((t) => t.id)).toEqual([bob.id]);
      const worker = runningView?.turn?.workerId as string;
      expect((await get(url, `/tasks?worker=${encodeURIComponent(worker)}`)).body.tasks?.map((t) => t.id)).toEqual([
        running.id,
      ]);

      const seen: string[] = [];
      let token = '';
      do {
        const page = await get(url, `/tasks?pageSize=2${token ? `&pageToken=${token}` : ''}`);
        seen.push(...(page.body.tasks ?? []).map((t) => t.id));
        token = page.body.nextPageToken as string;
      } while (token !== '');
      expect(seen).toEqual(all.body.tasks?.map((t) => t.id));

      for (const bad of ['state=sleeping', 'pageSize=0', 'pageSize=101', 'pageToken=garbage']) {
        const res = await get(url, `/tasks?${bad}`);
        expect(res.status, bad).toBe(400);
        expect(res.body).toMatchObject({ error: 'INVALID_PARAMS' });
      }

      const detail = await get(url, `/tasks/${alice.id}`);
      expect(detail.body).toMatchObject({ id: alice.id, owner: 'alice', state: 'completed' });
      const events = detail.body.events as { seq: number; kind: string; at: number }[];
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events[0]?.kind).toBe('task');
      expect(events.at(-1)?.kind).toBe('status-update');
      expect((await get(url, '/tasks/no-such-task')).status).toBe(404);
    });

    it('streams hello, a snapshot per running task, then changes; resumes by Last-Event-ID', async () => {
      const { url, store } = await start(makeStore);
      const running = await send(url, 'sleep:60000', ALICE);
      await waitFor(async () => (await stateOf(store, running.id)) === 'working', 5000);
      const reader = await EventsReader.open(`${url}/monitor/events`, OPERATOR);
      readers.push(reader);
      expect(reader.status).toBe(200);
      await reader.waitFor((e) => e.event === 'hello', 5000, 'hello');
      await reader.waitFor(taskEvent(running.id, 'working'), 5000, 'the snapshot');
      expect(reader.events[0]?.event).toBe('hello');

      const later = await send(url, 'a new one', BOB);
      await reader.waitFor(taskEvent(later.id, 'completed'), 5000, 'the new task completing');
      expect((await post(url, `/tasks/${running.id}/cancel`)).status).toBe(200);
      await reader.waitFor(taskEvent(running.id, 'canceled'), 5000, 'the cancel');
      const lastId = reader.lastId as string;
      reader.close();

      // Missed while disconnected: a task of bob's ends; the resumed stream has it.
      const missed = await send(url, 'while away', BOB);
      await waitFor(async () => (await stateOf(store, missed.id)) === 'completed', 5000);
      const resumed = await EventsReader.open(`${url}/monitor/events`, { ...OPERATOR, 'last-event-id': lastId });
      readers.push(resumed);
      const hello = await resumed.waitFor((e) => e.event === 'hello', 5000, 'hello');
      expect(hello.data.resumed).toBe(true);
      await resumed.waitFor(taskEvent(missed.id, 'completed'), 5000, 'the missed change');
    });

    it('operator actions: cancel and fail any owner’s task, release a context’s slot, each logged', async () => {
      const { url, store } = await start(makeStore);
      const toCancel = await send(url, 'sleep:60000', ALICE);
      const toFail = await send(url, 'sleep:60000', BOB);
      await waitFor(async () => (await stateOf(store, toCancel.id)) === 'working', 5000);
      await waitFor(async () => (await stateOf(store, toFail.id)) === 'working', 5000);

      expect((await post(url, `/tasks/${toCancel.id}/cancel`, { reason: 'runaway' })).body).toEqual({
        id: toCancel.id,
        state: 'canceled',
      });
      const canceled = await store.getTask(toCancel.id);
      expect(textParts(canceled?.task.status.message?.parts)).toBe('Canceled by operator "olga": runaway');
      expect((await post(url, `/tasks/${toCancel.id}/cancel`)).status).toBe(409);

      expect((await post(url, `/tasks/${toFail.id}/fail`)).body).toEqual({ id: toFail.id, state: 'failed' });
      expect(textParts((await store.getTask(toFail.id))?.task.status.message?.parts)).toBe(
        'Turn failed by operator "olga"',
      );
      // The context is free again: bob's next message runs.
      const next = await rpc<Task>(
        url,
        'message/send',
        { message: userMessage('next', { contextId: toFail.contextId }) },
        BOB,
      );
      expect(next.status.state).toBe('completed');

      // A slot whose turn is gone (as a crashed worker may leave): release it, and the queue moves.
      const stuck = await store.enqueueTurn({
        contextId: toCancel.contextId,
        taskId: toCancel.id,
        messageId: 'stuck-turn',
        workerId: ((await get(url, '/agents')).body as { workerId: string }).workerId,
      });
      const behind = await send(url, 'behind the stuck slot', ALICE, { contextId: toCancel.contextId });
      await new Promise((r) => setTimeout(r, 200));
      expect(await stateOf(store, behind.id)).toBe('submitted');
      const released = await post(url, `/contexts/${toCancel.contextId}/release`);
      expect(released.body).toEqual({ released: stuck });
      await waitFor(async () => (await stateOf(store, behind.id)) === 'completed', 5000);
      expect((await post(url, `/contexts/${toCancel.contextId}/release`)).status).toBe(404);
      expect((await post(url, `/contexts/${toCancel.contextId}/release`, { position: 'first' })).status).toBe(400);
    });

    it('operator action: a push delivery that gave up is retried', async () => {
      const receiver = await startWebhookReceiver();
      try {
        const { url, store } = await start(makeStore, {
          pushNotifications: true,
          pushAllowedCidrs: ['127.0.0.1/32'],
          pushPollIntervalMs: 20,
          pushRetryDelaysMs: [],
        });
        // The first POST fails, and with no retries the delivery gives up.
        receiver.answer = (n) => (n === 0 ? 500 : 200);
        const task = await rpc<Task>(
          url,
          'message/send',
          {
            message: userMessage('hello'),
            configuration: { pushNotificationConfig: { id: 'hook', url: receiver.url } },
          },
          ALICE,
        );
        await waitFor(async () => (await get(url, `/tasks/${task.id}`)).body.push, 5000);
        const failed = await waitFor(async () => {
          const view = (await get(url, `/tasks/${task.id}`)).body as unknown as MonitorTaskJson;
          return view.push[0]?.failed ? view : undefined;
        }, 5000);
        expect(failed.push[0]).toMatchObject({ configId: 'hook', failed: true });
        expect((await post(url, `/tasks/${task.id}/push/hook/retry`)).body).toEqual({ retried: true });
        await waitFor(async () => {
          const view = (await get(url, `/tasks/${task.id}`)).body as unknown as MonitorTaskJson;
          return view.push[0]?.failed === false && (view.push[0] as { behind?: number }).behind === 0;
        }, 5000);
        expect((await post(url, `/tasks/${task.id}/push/nope/retry`)).status).toBe(404);
        expect(await stateOf(store, task.id)).toBe('completed');
      } finally {
        await receiver.close();
      }
    });
  });
}
