import type { StreamResult, Task, TaskArtifactUpdateEvent, Unsubscribe } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { afterEach, describe, expect, it } from 'vitest';
import { echoAgent, sleep } from '../../../examples/demo/src/agents.js';
import {
  buildApp,
  listen,
  parseSse,
  postSse,
  readSse,
  rpcBody,
  type SseEvent,
  type TestApp,
  textParts,
  userMessage,
  waitFor,
} from './helpers.js';

let t: TestApp;
afterEach(async () => {
  await t?.app.close();
});

type Frame = { jsonrpc: string; id: unknown; result: StreamResult };
const frames = (events: SseEvent[]) => events.map((e) => e.data as Frame);

describe('message/stream', () => {
  it('streams the Task first, then updates, and ends with final: true; SSE ids are increasing sequence numbers', async () => {
    t = await buildApp(echoAgent);
    const request = rpcBody('message/stream', { message: userMessage('one two three') }, 'stream-1');
    const res = await t.app.inject({
      method: 'POST',
      url: '/a2a',
      headers: { accept: 'text/event-stream' },
      payload: request,
    });
    expect(res.headers['content-type']).toMatch(/text\/event-stream/);
    const events = parseSse(res.body);
    const items = frames(events);
    expect(items.every((f) => f.jsonrpc === '2.0' && f.id === 'stream-1')).toBe(true);
    expect(items[0]?.result.kind).toBe('task');
    expect(items.map((f) => f.result.kind)).toEqual([
      'task',
      'status-update',
      'artifact-update',
      'artifact-update',
      'artifact-update',
      'artifact-update',
      'artifact-update',
      'status-update',
    ]);
    const last = items.at(-1)?.result;
    expect(last).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
    const nonFinal = items.slice(1, -1).filter((f) => f.result.kind === 'status-update');
    expect(nonFinal.every((f) => (f.result as { final: boolean }).final === false)).toBe(true);
    const ids = events.map((e) => Number(e.id));
    expect(ids.every((id, i) => i === 0 || id > (ids[i - 1] as number))).toBe(true);
    const chunks = items
      .filter((f) => f.result.kind === 'artifact-update')
      .map((f) => f.result as TaskArtifactUpdateEvent);
    expect(chunks.map((c) => textParts(c.artifact.parts)).join('')).toBe('one two three');
    expect(chunks[0]?.append).toBe(false);
    expect(chunks.slice(1).every((c) => c.append === true)).toBe(true);
    expect(chunks.at(-1)?.lastChunk).toBe(true);
  });

  it('ends the stream at input-required (final) and a follow-up message/stream resumes the task', async () => {
    t = await buildApp(echoAgent);
    const first = frames(
      parseSse(
        (
          await t.app.inject({
            method: 'POST',
            url: '/a2a',
            payload: rpcBody('message/stream', { message: userMessage('ask:color?') }),
          })
        ).body,
      ),
    );
    const task = first[0]?.result as Task;
    expect(first.at(-1)?.result).toMatchObject({
      kind: 'status-update',
      final: true,
      status: { state: 'input-required' },
    });
    const second = frames(
      parseSse(
        (
          await t.app.inject({
            method: 'POST',
            url: '/a2a',
            payload: rpcBody('message/stream', { message: userMessage('blue', { taskId: task.id }) }),
          })
        ).body,
      ),
    );
    const snapshot = second[0]?.result as Task;
    expect(snapshot.id).toBe(task.id);
    expect(textParts(snapshot.history?.at(-1)?.parts)).toBe('blue');
    expect(second.at(-1)?.result).toMatchObject({ final: true, status: { state: 'completed' } });
  });

  it('closes the stream when the turn ends with the task still working', async () => {
    t = await buildApp(async (turn) => turn.working('still going'));
    const items = frames(
      parseSse(
        (
          await t.app.inject({
            method: 'POST',
            url: '/a2a',
            payload: rpcBody('message/stream', { message: userMessage('x') }),
          })
        ).body,
      ),
    );
    expect(items.map((f) => f.result.kind)).toEqual(['task', 'status-update', 'status-update']);
    expect(items.at(-1)?.result).toMatchObject({ final: false, status: { state: 'working' } });
  });

  it('a client disconnect does not cancel the task', async () => {
    t = await buildApp(async (turn) => {
      await turn.working();
      await sleep(300, turn.signal);
      await turn.complete('survived');
    });
    const base = await listen(t.app);
    const controller = new AbortController();
    const res = await postSse(
      `${base}/a2a`,
      rpcBody('message/stream', { message: userMessage('x') }),
      {},
      controller.signal,
    );
    const reader = readSse(res);
    const first = (await reader.next()).value as SseEvent;
    const taskId = ((first.data as Frame).result as Task).id;
    controller.abort();
    await reader.return(undefined).catch(() => undefined);
    const done = await waitFor(async () => {
      const record = await t.store.getTask(taskId);
      return record?.task.status.state === 'completed' ? record : undefined;
    });
    expect(textParts(done.task.status.message?.parts)).toBe('survived');
  });

  it('sends heartbeats on an idle stream', async () => {
    t = await buildApp(
      async (turn) => {
        await turn.working();
        await sleep(250, turn.signal);
        await turn.complete();
      },
      { heartbeatIntervalMs: 50 },
    );
    const res = await t.app.inject({
      method: 'POST',
      url: '/a2a',
      payload: rpcBody('message/stream', { message: userMessage('x') }),
    });
    expect(res.body).toMatch(/^: heartbeat$/m);
    expect(frames(parseSse(res.body)).at(-1)?.result).toMatchObject({ final: true });
  });

  it('a reconnect with Last-Event-ID resumes after that event without gaps or duplicates', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    t = await buildApp(async (turn) => {
      await turn.artifact({ artifactId: 'a', text: 'first', append: false });
      await gate;
      await turn.artifact({ artifactId: 'a', text: ' second', append: true });
      await turn.artifact({ artifactId: 'a', text: ' third', append: true, lastChunk: true });
      await turn.complete();
    });
    const base = await listen(t.app);
    const message = userMessage('go', { contextId: 'reconnect-ctx' });
    const request = rpcBody('message/stream', { message }, 'r1');
    const controller = new AbortController();
    const reader = readSse(await postSse(`${base}/a2a`, request, {}, controller.signal));
    const seen: SseEvent[] = [];
    for await (const event of reader) {
      seen.push(event);
      if ((event.data as Frame).result.kind === 'artifact-update') break;
    }
    controller.abort();
    const lastId = seen.at(-1)?.id as string;
    release();
    const resumed: SseEvent[] = [];
    for await (const event of readSse(await postSse(`${base}/a2a`, request, { 'last-event-id': lastId })))
      resumed.push(event);
    const all = [...seen, ...resumed];
    const ids = all.map((e) => Number(e.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(resumed.every((e) => Number(e.id) > Number(lastId))).toBe(true);
    const texts = frames(all)
      .filter((f) => f.result.kind === 'artifact-update')
      .map((f) => textParts((f.result as TaskArtifactUpdateEvent).artifact.parts));
    expect(texts).toEqual(['first', ' second', ' third']);
    expect(frames(resumed).at(-1)?.result).toMatchObject({ final: true, status: { state: 'completed' } });
    // no second turn was started by the reconnect
    expect(await t.store.listTasksByContext('reconnect-ctx')).toHaveLength(1);
  });
});

describe('tasks/resubscribe', () => {
  it('streams the current task then the remaining events through final', async () => {
    t = await buildApp(echoAgent);
    const base = await listen(t.app);
    const sent = await t.call<Task>('message/send', {
      message: userMessage('sleep:300'),
      configuration: { blocking: false },
    });
    if (!('result' in sent)) throw new Error(JSON.stringify(sent));
    const items: Frame[] = [];
    for await (const event of readSse(
      await postSse(`${base}/a2a`, rpcBody('tasks/resubscribe', { id: sent.result.id }, 'resub')),
    )) {
      items.push(event.data as Frame);
    }
    expect(items[0]?.result).toMatchObject({ kind: 'task', id: sent.result.id });
    expect(items.every((f) => f.id === 'resub')).toBe(true);
    expect(items.at(-1)?.result).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
  });

  it('on a terminal task answers with the final task and closes', async () => {
    t = await buildApp(echoAgent);
    const sent = await t.call<Task>('message/send', { message: userMessage('hi') });
    if (!('result' in sent)) throw new Error(JSON.stringify(sent));
    const res = await t.app.inject({
      method: 'POST',
      url: '/a2a',
      payload: rpcBody('tasks/resubscribe', { id: sent.result.id }),
    });
    const items = frames(parseSse(res.body));
    expect(items).toHaveLength(1);
    expect(items[0]?.result).toMatchObject({ kind: 'task', status: { state: 'completed' } });
  });

  it('with Last-Event-ID sends only later events', async () => {
    t = await buildApp(echoAgent);
    const sent = await t.call<Task>('message/send', { message: userMessage('a b') });
    if (!('result' in sent)) throw new Error(JSON.stringify(sent));
    const all = await t.store.readEvents(sent.result.id, 0);
    const res = await t.app.inject({
      method: 'POST',
      url: '/a2a',
      headers: { 'last-event-id': '2' },
      payload: rpcBody('tasks/resubscribe', { id: sent.result.id }),
    });
    const events = parseSse(res.body);
    expect(events.map((e) => Number(e.id))).toEqual(all.filter((e) => e.seq > 2).map((e) => e.seq));
    expect(frames(events).at(-1)?.result).toMatchObject({ final: true });
  });

  it('a cancel ends every open stream of the task with the canceled final event', async () => {
    t = await buildApp(echoAgent);
    const base = await listen(t.app);
    const sent = await t.call<Task>('message/send', {
      message: userMessage('sleep:20000'),
      configuration: { blocking: false },
    });
    if (!('result' in sent)) throw new Error(JSON.stringify(sent));
    const id = sent.result.id;
    await waitFor(async () => (await t.store.getTask(id))?.task.status.state === 'working');
    const collect = async () => {
      const items: Frame[] = [];
      for await (const event of readSse(await postSse(`${base}/a2a`, rpcBody('tasks/resubscribe', { id }))))
        items.push(event.data as Frame);
      return items;
    };
    const streams = [collect(), collect()];
    await new Promise((r) => setTimeout(r, 100));
    await t.call('tasks/cancel', { id });
    for (const items of await Promise.all(streams)) {
      expect(items.at(-1)?.result).toMatchObject({ kind: 'status-update', final: true, status: { state: 'canceled' } });
    }
  });
});

describe('lost notifications', () => {
  /** A store whose notifications never arrive, as if every NOTIFY after a commit were lost. */
  class DeafStore extends MemoryStore {
    getVersionsCalls = 0;
    override subscribe(): Unsubscribe {
      return () => {};
    }
    override getVersions(taskIds: readonly string[]): Promise<Map<string, number>> {
      this.getVersionsCalls++;
      return super.getVersions(taskIds);
    }
  }

  it('streams still reach their final event through the safety poll, one getVersions call per interval for all of them', async () => {
    const store = new DeafStore();
    t = await buildApp(echoAgent, { store, followPollIntervalMs: 100 });
    const base = await listen(t.app);
    const sent = await Promise.all(
      [0, 1, 2].map(() =>
        t.call<Task>('message/send', { message: userMessage('sleep:300'), configuration: { blocking: false } }),
      ),
    );
    const streams = sent.map(async (response) => {
      if (!('result' in response)) throw new Error(JSON.stringify(response));
      const items: Frame[] = [];
      for await (const event of readSse(
        await postSse(`${base}/a2a`, rpcBody('tasks/resubscribe', { id: response.result.id }, 'deaf')),
      )) {
        items.push(event.data as Frame);
      }
      return items;
    });
    const started = Date.now();
    for (const items of await Promise.all(streams)) {
      expect(items.at(-1)?.result).toMatchObject({
        kind: 'status-update',
        final: true,
        status: { state: 'completed' },
      });
    }
    const elapsedMs = Date.now() - started;
    // Three streams waited together: about one call per 100 ms interval, not one per stream.
    expect(store.getVersionsCalls).toBeGreaterThan(0);
    expect(store.getVersionsCalls).toBeLessThanOrEqual(Math.ceil(elapsedMs / 100) + 1);
  });
});

describe('reconnects after the end', () => {
  it('a message/stream reconnect with a Last-Event-ID at or past the final event closes at once', async () => {
    t = await buildApp(echoAgent);
    const request = rpcBody('message/stream', { message: userMessage('done soon') });
    const first = parseSse((await t.app.inject({ method: 'POST', url: '/a2a', payload: request })).body);
    const lastId = first.at(-1)?.id as string;
    const started = Date.now();
    const again = await t.app.inject({
      method: 'POST',
      url: '/a2a',
      headers: { 'last-event-id': lastId },
      payload: request,
    });
    expect(parseSse(again.body)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1500);
  });
});
