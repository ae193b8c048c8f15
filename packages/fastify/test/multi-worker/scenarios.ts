/**
 * The multi-worker scenarios, run on every store that supports cross-process use: real worker
 * processes on one database, a round-robin client in front, any request on any worker.
 */
import type { A2AStore, StreamResult, Task } from '@fastify-a2a/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextId, postSse, readSse, rpcBody, type SseEvent, textParts, userMessage, waitFor } from '../helpers.js';
import { Cluster, type Worker } from './cluster.js';

type Frame = { id: unknown; result?: StreamResult; error?: unknown };

export interface MultiWorkerOptions {
  name: string;
  workers: number;
  storeUrl: () => Promise<string> | string;
  /** A store on the same database, opened in the test process to check what the workers wrote. */
  openStore: () => Promise<A2AStore>;
  leaseTtlMs?: number;
}

async function collect(response: Promise<Response>, until?: (frames: SseEvent[]) => boolean): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of readSse(await response)) {
    events.push(event);
    if (until?.(events)) break;
  }
  return events;
}

const frame = (event: SseEvent | undefined): Frame => event?.data as Frame;

export function multiWorkerScenarios(options: MultiWorkerOptions): void {
  const leaseTtlMs = options.leaseTtlMs ?? 3000;
  describe(`${options.name}: ${options.workers} workers on one store`, () => {
    let cluster: Cluster;
    let store: A2AStore;
    const taskIds = new Set<string>();
    const w = (n: number): Worker => cluster.worker(`w${n}`);
    const send = async (
      worker: Worker,
      text: string,
      extra: Record<string, unknown> = {},
      config: Record<string, unknown> = {},
    ) => {
      const task = await cluster.result<Task>(
        'message/send',
        { message: userMessage(text, extra), configuration: config },
        worker,
      );
      taskIds.add(task.id);
      return task;
    };
    const stateOf = async (id: string) => (await store.getTask(id))?.task.status.state;

    beforeAll(async () => {
      cluster = await new Cluster({ storeUrl: await options.storeUrl(), workers: options.workers, leaseTtlMs }).start();
      store = await options.openStore();
      await store.open();
    }, 90_000);

    afterAll(async () => {
      await cluster?.stop();
      await store?.close();
    });

    it('tasks/get answers on every worker for a task created on another', async () => {
      const task = await send(w(1), 'hello cluster');
      expect(task.status.state).toBe('completed');
      for (const worker of cluster.workers) {
        const got = await cluster.result<Task>('tasks/get', { id: task.id }, worker);
        expect(got.status.state).toBe('completed');
        expect(textParts(got.artifacts?.[0]?.parts)).toBe('hello cluster');
      }
    });

    it('tasks/resubscribe on other workers delivers the remaining events of a task running on A, in order, through final', async () => {
      const request = rpcBody('message/stream', { message: userMessage('tick:8:150') });
      const onA = collect(postSse(`${w(1).url}/a2a`, request));
      // Let A's turn start, then follow it from the other workers.
      const taskId = await waitFor(async () => {
        const started = cluster.trace().find((e) => e.event === 'start' && e.text === 'tick:8:150');
        return started?.taskId;
      }, 10_000);
      taskIds.add(taskId);
      const others = cluster.workers
        .slice(1)
        .map((worker) => collect(postSse(`${worker.url}/a2a`, rpcBody('tasks/resubscribe', { id: taskId }))));
      const [fromA, ...fromOthers] = await Promise.all([onA, ...others]);
      const log = (await store.readEvents(taskId, 0)).filter(
        (e) => e.event.kind === 'status-update' || e.event.kind === 'artifact-update',
      );
      expect(frame(fromA.at(-1)).result).toMatchObject({
        kind: 'status-update',
        final: true,
        status: { state: 'completed' },
      });
      for (const events of fromOthers) {
        expect(frame(events[0]).result?.kind).toBe('task');
        const snapshotSeq = Number(events[0]?.id);
        const rest = events.slice(1);
        // exactly the log's events after the snapshot, in order: no gaps, no duplicates
        expect(rest.map((e) => Number(e.id))).toEqual(log.filter((e) => e.seq > snapshotSeq).map((e) => e.seq));
        expect(frame(rest.at(-1)).result).toMatchObject({
          kind: 'status-update',
          final: true,
          status: { state: 'completed' },
        });
      }
    });

    it('a message/stream reconnect with Last-Event-ID on another worker resumes without gaps or duplicates', async () => {
      const request = rpcBody('message/stream', { message: userMessage('tick:6:200') });
      const controller = new AbortController();
      const first = await collect(
        postSse(`${w(1).url}/a2a`, request, {}, controller.signal),
        (events) => events.length >= 3,
      );
      controller.abort();
      const taskId = (frame(first[0]).result as Task).id;
      taskIds.add(taskId);
      const lastId = first.at(-1)?.id as string;
      const rest = await collect(postSse(`${w(2).url}/a2a`, request, { 'last-event-id': lastId }));
      const ids = [...first, ...rest].map((e) => Number(e.id));
      expect(new Set(ids).size).toBe(ids.length);
      const log = (await store.readEvents(taskId, 0)).filter(
        (e) => e.event.kind !== 'message' && e.event.kind !== 'turn-end',
      );
      expect(ids).toEqual(log.map((e) => e.seq));
      expect(frame(rest.at(-1)).result).toMatchObject({ final: true, status: { state: 'completed' } });
      // the reconnect started no second turn
      expect(cluster.trace().filter((e) => e.event === 'start' && e.taskId === taskId)).toHaveLength(1);
    });

    it('a retried blocking message/send on B, while the turn runs on A, returns the original task when it completes', async () => {
      const message = userMessage('sleep:800');
      const original = cluster.result<Task>('message/send', { message }, w(1));
      await waitFor(
        () => cluster.trace().some((e) => e.event === 'start' && e.messageId === message.messageId),
        10_000,
      );
      const retried = await cluster.result<Task>('message/send', { message }, w(2));
      const first = await original;
      taskIds.add(first.id);
      expect(retried.id).toBe(first.id);
      expect(retried.status.state).toBe('completed');
      expect(first.status.state).toBe('completed');
      expect(cluster.trace().filter((e) => e.event === 'start' && e.messageId === message.messageId)).toHaveLength(1);
    });

    it('tasks/cancel on C aborts the agent running on A and ends every open stream with canceled', async () => {
      const task = await send(w(1), 'sleep:60000', {}, { blocking: false });
      await waitFor(async () => (await stateOf(task.id)) === 'working', 10_000);
      const streams = cluster.workers.map((worker) =>
        collect(postSse(`${worker.url}/a2a`, rpcBody('tasks/resubscribe', { id: task.id }))),
      );
      await new Promise((r) => setTimeout(r, 300));
      const canceler = cluster.workers[cluster.workers.length - 1] as Worker;
      const canceled = await cluster.result<Task>('tasks/cancel', { id: task.id }, canceler);
      expect(canceled.status.state).toBe('canceled');
      for (const events of await Promise.all(streams)) {
        expect(frame(events.at(-1)).result).toMatchObject({
          kind: 'status-update',
          final: true,
          status: { state: 'canceled' },
        });
      }
      const abort = await waitFor(
        () => cluster.trace().find((e) => e.event === 'abort' && e.taskId === task.id),
        10_000,
      );
      expect(abort.worker).toBe('w1');
    });

    it('an input-required task parked by A resumes on B with the full history and the context state', async () => {
      const asked = await send(w(1), 'ask:Which colour?');
      expect(asked.status.state).toBe('input-required');
      const done = await cluster.result<Task>(
        'message/send',
        { message: userMessage('teal', { taskId: asked.id }) },
        w(2),
      );
      expect(done.status.state).toBe('completed');
      const part = done.artifacts?.[0]?.parts[0];
      expect(part?.kind).toBe('data');
      const data = part?.kind === 'data' ? part.data : undefined;
      expect(data).toEqual({ answer: 'teal', askedBy: 'w1', answeredBy: 'w2', history: 3 });
    });

    it('turns of one context arriving at different workers run one after another, in arrival order', async () => {
      const contextId = nextId('ctx');
      const order = cluster.workers.map((worker, i) => ({ worker, text: `hold:${400 - i * 100}` }));
      const pending: Promise<Task>[] = [];
      for (const { worker, text } of order) {
        pending.push(cluster.result<Task>('message/send', { message: userMessage(text, { contextId }) }, worker));
        await new Promise((r) => setTimeout(r, 60));
      }
      const tasks = await Promise.all(pending);
      for (const t of tasks) taskIds.add(t.id);
      const turns = cluster.trace().filter((e) => e.contextId === contextId || tasks.some((t) => t.id === e.taskId));
      const starts = turns.filter((e) => e.event === 'start');
      expect(starts.map((e) => e.worker)).toEqual(order.map((o) => o.worker.id));
      // never concurrently: each turn starts after the previous one ended
      for (let i = 1; i < starts.length; i++) {
        const previousEnd = turns.find((e) => e.event === 'end' && e.taskId === starts[i - 1]?.taskId);
        expect((starts[i]?.at ?? 0) >= (previousEnd?.at ?? Number.POSITIVE_INFINITY)).toBe(true);
      }
      // the context state passed from turn to turn across workers
      expect(tasks.map((t) => textParts(t.status.message?.parts))).toEqual(
        order.map((o, i) => `turn ${i + 1} on ${o.worker.id}`),
      );
    });

    it('SIGKILL of a worker mid-stream: another worker fails its task (worker lost) within leaseTtl, and streams end', async () => {
      const victim = w(1);
      const task = await send(victim, 'sleep:60000', {}, { blocking: false });
      await waitFor(async () => (await stateOf(task.id)) === 'working', 10_000);
      const stream = collect(postSse(`${w(2).url}/a2a`, rpcBody('tasks/resubscribe', { id: task.id })));
      await new Promise((r) => setTimeout(r, 200));
      const killedAt = Date.now();
      await cluster.kill('w1', 'SIGKILL');
      const events = await stream;
      const elapsed = Date.now() - killedAt;
      expect(frame(events.at(-1)).result).toMatchObject({
        kind: 'status-update',
        final: true,
        status: { state: 'failed' },
      });
      const failed = await store.getTask(task.id);
      expect(textParts(failed?.task.status.message?.parts)).toMatch(/Worker lost: worker "w1"/);
      expect(elapsed).toBeLessThan(leaseTtlMs + 1500);
      // the context of the dead worker's turn is free again: a new turn for it runs elsewhere
      const next = await send(w(2), 'after the crash', { contextId: task.contextId });
      expect(next.status.state).toBe('completed');
      await cluster.startWorker('w1');
    });

    it('SIGTERM drains: a short turn finishes, a long one is failed with a clear message', async () => {
      const short = await send(w(1), 'sleep:500', {}, { blocking: false });
      const long = await send(w(1), 'sleep:60000', {}, { blocking: false });
      await waitFor(
        async () => (await stateOf(long.id)) === 'working' && (await stateOf(short.id)) === 'working',
        10_000,
      );
      const code = await cluster.kill('w1', 'SIGTERM');
      expect(code).toBe(0);
      expect(await stateOf(short.id)).toBe('completed');
      const failed = await store.getTask(long.id);
      expect(failed?.task.status.state).toBe('failed');
      expect(textParts(failed?.task.status.message?.parts)).toMatch(/worker "w1" shut down before the turn finished/);
      await cluster.startWorker('w1');
    });

    it('afterwards the store holds every task, terminal or parked, with every event once and no gaps', async () => {
      expect(taskIds.size).toBeGreaterThanOrEqual(10);
      for (const id of taskIds) {
        const record = await store.getTask(id);
        expect(record, id).toBeDefined();
        expect(['completed', 'canceled', 'failed', 'input-required']).toContain(record?.task.status.state);
        const events = await store.readEvents(id, 0);
        expect(events.map((e) => e.seq)).toEqual(Array.from({ length: record?.version ?? 0 }, (_, i) => i + 1));
      }
    });
  });
}
