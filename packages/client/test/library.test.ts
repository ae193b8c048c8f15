/**
 * The library against our server over real HTTP, on each store and each interface the card offers
 * (1.0 JSON-RPC, 1.0 HTTP+JSON, 0.3 JSON-RPC): every operation, one result model.
 */

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { type A2AClient, A2AClientError, type Binding, callAgent, connect, type Version } from '../src/index.js';
import { type Served, serve, tempDir } from './helpers.js';

const pg = withPostgres('client_library');

const STORES: [string, () => Promise<{ url: string; cleanup(): Promise<void> }>][] = [
  ['memory', async () => ({ url: 'memory:', cleanup: async () => {} })],
  [
    'sqlite',
    async () => {
      const tmp = await tempDir();
      return { url: `sqlite:${join(tmp.dir, 'a.db')}`, cleanup: tmp.remove };
    },
  ],
  [
    'postgres',
    async () => {
      const url = new URL(pg.url);
      url.searchParams.set('schema', pg.newSchema());
      return { url: url.href, cleanup: async () => {} };
    },
  ],
];

const INTERFACES: [Binding, Version][] = [
  ['JSONRPC', '1.0'],
  ['HTTP+JSON', '1.0'],
  ['JSONRPC', '0.3'],
  ['HTTP+JSON', '0.3'],
];

describe.each(STORES)('the client against our server on %s', (_name, makeStore) => {
  let served: Served;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const store = await makeStore();
    cleanup = store.cleanup;
    served = await serve(store.url);
  });
  afterAll(async () => {
    await served?.close();
    await cleanup?.();
  });

  describe.each(INTERFACES)('over %s %s', (binding, version) => {
    let client: A2AClient;
    beforeAll(async () => {
      client = await connect(served.url, { preferences: [{ binding, version }], freshCard: true, timeoutMs: 15_000 });
      expect(client.endpoint).toMatchObject({ binding, version });
    });

    it('sends (blocking) and reads the artifact back, the task in the one model', async () => {
      const { result, done } = await client.send({ text: 'hello' });
      expect(done).toBe(true);
      expect(result.kind).toBe('task');
      if (result.kind !== 'task') return;
      expect(result.status.state).toBe('completed');
      expect(result.artifacts?.[0]?.parts[0]).toEqual({ kind: 'text', text: 'echo: hello' });
      const again = await client.getTask(result.id, { historyLength: 1 });
      expect(again.id).toBe(result.id);
      expect(again.history?.length).toBe(1);
    });

    it('sends non-blocking, then waitForTask follows it to completion', async () => {
      const { result, done } = await client.send({ text: 'sleep:200' }, { blocking: false });
      expect(done).toBe(false);
      if (result.kind !== 'task') throw new Error('expected a task');
      const finished = await client.waitForTask(result.id, { pollIntervalMs: 50 });
      expect(finished.status.state).toBe('completed');
    });

    it('maxWaitMs returns a running task with its id and state, to poll later', async () => {
      const started = Date.now();
      const { result, done } = await client.send({ text: 'sleep:800' }, { maxWaitMs: 150, pollIntervalMs: 50 });
      expect(Date.now() - started).toBeLessThan(700);
      expect(done).toBe(false);
      if (result.kind !== 'task') throw new Error('expected a task');
      expect(['submitted', 'working']).toContain(result.status.state);
      expect((await client.waitForTask(result.id, { pollIntervalMs: 50 })).status.state).toBe('completed');
    });

    it('streams every event in order, ending with the final status', async () => {
      const events = [];
      for await (const event of client.stream({ text: 'words:4' })) events.push(event);
      const kinds = events.map((e) => e.result.kind);
      expect(kinds[0]).toBe('task');
      expect(kinds.filter((k) => k === 'artifact-update')).toHaveLength(4);
      const last = events.at(-1)?.result;
      expect(last?.kind === 'status-update' && last.status.state).toBe('completed');
      // Our server numbers its events: each id once, increasing.
      const ids = events.map((e) => Number(e.id));
      expect(ids.every((id, i) => i === 0 || id > (ids[i - 1] as number))).toBe(true);
    });

    it('stops at input-required, and continues the task with taskId', async () => {
      const { result } = await client.send({ text: 'ask:Your name?' });
      if (result.kind !== 'task') throw new Error('expected a task');
      expect(result.status.state).toBe('input-required');
      const reply = await client.send({ text: 'Ada', taskId: result.id, contextId: result.contextId });
      if (reply.result.kind !== 'task') throw new Error('expected a task');
      expect(reply.result.status.state).toBe('completed');
      expect(reply.result.id).toBe(result.id);
    });

    it('streams a reply to an input-required task on to its end (the opening snapshot does not end it)', async () => {
      const { result } = await client.send({ text: 'ask:Your name?' });
      if (result.kind !== 'task') throw new Error('expected a task');
      const events = [];
      for await (const event of client.stream({ text: 'Ada', taskId: result.id })) events.push(event.result);
      const last = events.at(-1);
      expect(last?.kind === 'status-update' && last.status.state).toBe('completed');
      expect(events.some((e) => e.kind === 'artifact-update')).toBe(true);
    });

    it('cancels a running task and subscribes to one', async () => {
      const { result } = await client.send({ text: 'sleep:5000' }, { blocking: false });
      if (result.kind !== 'task') throw new Error('expected a task');
      const seen: string[] = [];
      const subscription = (async () => {
        for await (const { result: item } of client.subscribe(result.id)) seen.push(item.kind);
      })();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const canceled = await client.cancelTask(result.id);
      expect(canceled.status.state).toBe('canceled');
      await subscription;
      expect(seen.at(-1)).toBe('status-update');
    });

    it('names the protocol error of an unknown task', async () => {
      const error = await client.getTask('no-such-task').catch((e: unknown) => e);
      expect(A2AClientError.is(error)).toBe(true);
      expect(error).toMatchObject({ kind: 'protocol', a2aCode: 'TASK_NOT_FOUND' });
      expect((error as A2AClientError).a2aName).toBe('TaskNotFoundError');
      // Streams too: 1.0 JSON-RPC refuses a stream with a plain JSON-RPC answer (HTTP 200, not SSE).
      const subscribed = await (async () => {
        for await (const _ of client.subscribe('no-such-task')) {
          // nothing to see
        }
      })().catch((e: unknown) => e);
      expect(subscribed).toMatchObject({ kind: 'protocol', a2aCode: 'TASK_NOT_FOUND' });
      const streamed = await (async () => {
        for await (const _ of client.stream({ text: 'hi', taskId: 'no-such-task' })) {
          // nothing to see
        }
      })().catch((e: unknown) => e);
      expect(streamed).toMatchObject({ kind: 'protocol', a2aCode: 'TASK_NOT_FOUND' });
    });

    it('sets, gets, lists and deletes a push notification config', async () => {
      const { result } = await client.send({ text: 'sleep:3000' }, { blocking: false });
      if (result.kind !== 'task') throw new Error('expected a task');
      const set = await client.setPushConfig(result.id, { id: 'hook', url: 'http://127.0.0.1:9/hook', token: 't' });
      expect(set).toMatchObject({
        taskId: result.id,
        pushNotificationConfig: { id: 'hook', url: 'http://127.0.0.1:9/hook' },
      });
      expect((await client.getPushConfig(result.id, 'hook')).pushNotificationConfig.id).toBe('hook');
      expect((await client.listPushConfigs(result.id)).map((c) => c.pushNotificationConfig.id)).toEqual(['hook']);
      await client.deletePushConfig(result.id, 'hook');
      expect(await client.listPushConfigs(result.id)).toEqual([]);
      await client.cancelTask(result.id);
    });

    it('lists every task over pages (0.3 JSON-RPC: says it has no list method)', async () => {
      const { result } = await client.send({ text: 'first' });
      const contextId = result.contextId as string;
      if (version === '0.3' && binding === 'JSONRPC') {
        const error = await client.listTasksPage({ contextId }).catch((e: unknown) => e);
        expect(error).toMatchObject({ kind: 'protocol', a2aCode: 'UNSUPPORTED_OPERATION' });
        return;
      }
      for (let i = 0; i < 4; i++) await client.send({ text: `more ${i}`, contextId });
      const ids = [];
      for await (const task of client.listTasks({ contextId, pageSize: 2 })) ids.push(task.id);
      expect(ids).toHaveLength(5);
      expect(new Set(ids).size).toBe(5);
    });
  });
});

describe('callAgent', () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve('memory:');
  });
  afterAll(() => served?.close());

  it('returns the text, data and ids an LLM tool needs, streamed or not', async () => {
    const sent = await callAgent(served.url, { text: 'hello' });
    expect(sent).toMatchObject({ text: 'echo: hello', state: 'completed', done: true, files: [], data: [] });
    expect(sent.metadata).toMatchObject({ agent: 'Client test agent', url: `${served.url}/a2a` });
    const streamed = await callAgent(served.url, { text: 'words:3', stream: true, contextId: sent.metadata.contextId });
    expect(streamed.text).toBe('w0 w1 w2 ');
    expect(streamed.metadata.contextId).toBe(sent.metadata.contextId);
  });

  it('relays a question, continues with taskId, and returns a running task after maxWaitMs', async () => {
    const asked = await callAgent(served.url, { text: 'ask:Your name?' });
    expect(asked).toMatchObject({ state: 'input-required', text: 'Your name?' });
    const answered = await callAgent(served.url, { text: 'Ada', taskId: asked.metadata.taskId });
    expect(answered).toMatchObject({ state: 'completed', text: 'You answered: Ada' });
    const running = await callAgent(served.url, { text: 'sleep:1000', maxWaitMs: 100 });
    expect(running.done).toBe(false);
    expect(running.metadata.taskId).toEqual(expect.any(String));
  });
});
