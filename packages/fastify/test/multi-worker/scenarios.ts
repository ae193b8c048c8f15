/**
 * The multi-worker scenarios, run on every store that supports cross-process use: real worker
 * processes on one database, a round-robin client in front, any request on any worker.
 */

import { ClientFactory as Client03Factory, ClientFactoryOptions as Client03FactoryOptions } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk-1';
import { ClientFactory as Client1Factory, ClientFactoryOptions as Client1FactoryOptions } from '@a2a-js/sdk-1/client';
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
    /** The last worker: C with three workers, B with two. */
    const last = (): Worker => cluster.workers[cluster.workers.length - 1] as Worker;
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
      // Running, and recorded: a blocking send's task is written with the agent's first update
      // (createTaskBeforeRun off), and from then on no retry starts the agent again.
      await waitFor(
        async () =>
          cluster.trace().some((e) => e.event === 'start' && e.messageId === message.messageId) &&
          // Requests without credentials are principal "tester" (worker.ts): its message index.
          (await store.findMessage(message.messageId, undefined, 'tester')) !== undefined,
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

    it('the same message sent to two workers at the same moment (a hedged request): both answered with the one task recorded', async () => {
      const message = userMessage('hedged request');
      const answers = await Promise.all([
        cluster.result<Task>('message/send', { message }, w(1)),
        cluster.result<Task>('message/send', { message }, w(2)),
      ]);
      const [first, second] = answers;
      taskIds.add(first?.id as string);
      expect(second?.id).toBe(first?.id);
      expect(answers.map((task) => task.status.state)).toEqual(['completed', 'completed']);
      expect(textParts(second?.artifacts?.[0]?.parts)).toBe('hedged request');
      const page = await store.listTasks?.({ limit: 100 });
      const recorded = (page?.records ?? []).filter((record) =>
        record.task.history?.some((entry) => entry.messageId === message.messageId),
      );
      expect(recorded.map((record) => record.task.id)).toEqual([first?.id]);
      // The agent may have started on both (the documented cost of writing a blocking send's task
      // with its first updates), never more often than the message was sent.
      const starts = cluster.trace().filter((e) => e.event === 'start' && e.messageId === message.messageId);
      expect(starts.length).toBeGreaterThanOrEqual(1);
      expect(starts.length).toBeLessThanOrEqual(2);
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
      // never concurrently: each turn starts after the previous one's agent finished its work (traced
      // right before its final status, whose commit is what lets the next turn start)
      for (let i = 1; i < starts.length; i++) {
        const previousEnd = turns.find((e) => e.event === 'finishing' && e.taskId === starts[i - 1]?.taskId);
        expect((starts[i]?.at ?? 0) >= (previousEnd?.at ?? Number.POSITIVE_INFINITY)).toBe(true);
      }
      // the context state passed from turn to turn across workers
      expect(tasks.map((t) => textParts(t.status.message?.parts))).toEqual(
        order.map((o, i) => `turn ${i + 1} on ${o.worker.id}`),
      );
    });

    it('over HTTP+JSON: a task started over JSON-RPC on A is followed by :subscribe on B, read on C, and a dropped REST stream resumes on C with Last-Event-ID', async () => {
      // (a text no other scenario sends: the trace is searched by it)
      const request = rpcBody('message/stream', { message: userMessage('tick:6:210') });
      const onA = collect(postSse(`${w(1).url}/a2a`, request));
      const taskId = await waitFor(
        () => cluster.trace().find((e) => e.event === 'start' && e.text === 'tick:6:210')?.taskId,
        10_000,
      );
      taskIds.add(taskId);
      const subscribe = (worker: Worker, headers: Record<string, string> = {}, signal?: AbortSignal) =>
        fetch(`${worker.url}/v1/tasks/${taskId}:subscribe`, {
          method: 'POST',
          headers: { accept: 'text/event-stream', ...headers },
          ...(signal ? { signal } : {}),
        });
      const onB = collect(subscribe(w(2)));
      // A REST stream on C, dropped after two events, then resumed on C from its last id.
      const controller = new AbortController();
      const firstPart = await collect(subscribe(last(), {}, controller.signal), (events) => events.length >= 2);
      controller.abort();
      const resumed = await collect(subscribe(last(), { 'last-event-id': firstPart.at(-1)?.id as string }));
      const [fromA, fromB] = await Promise.all([onA, onB]);
      const log = (await store.readEvents(taskId, 0)).filter(
        (e) => e.event.kind === 'status-update' || e.event.kind === 'artifact-update',
      );
      // B: the ProtoJSON snapshot, then exactly the log's events after it, through the final status.
      expect(fromB[0]?.data).toMatchObject({ task: { id: taskId } });
      const snapshotSeq = Number(fromB[0]?.id);
      expect(fromB.slice(1).map((e) => Number(e.id))).toEqual(log.filter((e) => e.seq > snapshotSeq).map((e) => e.seq));
      expect(fromB.at(-1)?.data).toMatchObject({
        statusUpdate: { final: true, status: { state: 'TASK_STATE_COMPLETED' } },
      });
      // C: the two halves together are the same events, none twice.
      const ids = [...firstPart, ...resumed].map((e) => Number(e.id));
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.slice(1)).toEqual(log.filter((e) => e.seq > Number(firstPart[0]?.id)).map((e) => e.seq));
      // A's JSON-RPC stream and B's REST stream carried the same events, each in its own shape.
      expect(fromA.filter((e) => Number(e.id) > snapshotSeq).map((e) => e.id)).toEqual(fromB.slice(1).map((e) => e.id));
      const got = await fetch(`${last().url}/v1/tasks/${taskId}`);
      expect(await got.json()).toMatchObject({ id: taskId, status: { state: 'TASK_STATE_COMPLETED' } });
    });

    it('over HTTP+JSON: a cancel on B aborts the agent on A and ends the REST stream on C', async () => {
      const task = await send(w(1), 'sleep:60000', {}, { blocking: false });
      await waitFor(async () => (await stateOf(task.id)) === 'working', 10_000);
      const onC = collect(
        fetch(`${last().url}/v1/tasks/${task.id}:subscribe`, { headers: { accept: 'text/event-stream' } }),
      );
      await new Promise((r) => setTimeout(r, 300));
      const canceled = await fetch(`${w(2).url}/v1/tasks/${task.id}:cancel`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      });
      expect(canceled.status).toBe(200);
      expect(await canceled.json()).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_CANCELLED' } });
      expect((await onC).at(-1)?.data).toMatchObject({
        statusUpdate: { final: true, status: { state: 'TASK_STATE_CANCELLED' } },
      });
      const abort = await waitFor(
        () => cluster.trace().find((e) => e.event === 'abort' && e.taskId === task.id),
        10_000,
      );
      expect(abort.worker).toBe('w1');
    });

    it('across versions: a task started over 0.3 JSON-RPC on A is listed, read and followed over 1.0 HTTP+JSON on B, resumed with Last-Event-ID on C; a 0.3 and a 1.0 stream see the same events, each in its shape', async () => {
      const contextId = nextId('ctx-versions');
      const v1 = { 'a2a-version': '1.0' };
      // (a text no other scenario sends: the trace is searched by it)
      const request = rpcBody('message/stream', { message: userMessage('tick:5:230', { contextId }) });
      const on03 = collect(postSse(`${w(1).url}/a2a`, request));
      const taskId = await waitFor(
        () => cluster.trace().find((e) => e.event === 'start' && e.text === 'tick:5:230')?.taskId,
        10_000,
      );
      taskIds.add(taskId);
      const listed = await (await fetch(`${w(2).url}/tasks?contextId=${contextId}`, { headers: v1 })).json();
      expect(listed).toMatchObject({ totalSize: 1, nextPageToken: '', tasks: [{ id: taskId, contextId }] });
      const subscribe = (worker: Worker, headers: Record<string, string>, signal?: AbortSignal) =>
        fetch(`${worker.url}/tasks/${taskId}:subscribe`, {
          method: 'POST',
          headers: { accept: 'text/event-stream', ...v1, ...headers },
          ...(signal ? { signal } : {}),
        });
      const controller = new AbortController();
      const firstPart = await collect(subscribe(w(2), {}, controller.signal), (events) => events.length >= 2);
      controller.abort();
      const resumed = await collect(subscribe(last(), { 'last-event-id': firstPart.at(-1)?.id as string }));
      const fromA = await on03;
      const v1Events = [...firstPart, ...resumed];
      // One set of events: every 1.0 event after B's snapshot is one of A's, with the same id.
      const snapshotSeq = Number(firstPart[0]?.id);
      expect(v1Events.slice(1).map((e) => e.id)).toEqual(
        fromA.filter((e) => Number(e.id) > snapshotSeq).map((e) => e.id),
      );
      // Each in its own shape: 0.3's `kind` and `final`; 1.0's member names and no `final`.
      expect(frame(fromA.at(-1)).result).toMatchObject({
        kind: 'status-update',
        final: true,
        status: { state: 'completed' },
      });
      expect(v1Events.at(-1)?.data).toEqual({
        statusUpdate: expect.objectContaining({
          taskId,
          status: expect.objectContaining({ state: 'TASK_STATE_COMPLETED' }),
        }),
      });
      expect(v1Events.at(-1)?.data).not.toHaveProperty('statusUpdate.final');
      const got = await (await fetch(`${last().url}/tasks/${taskId}`, { headers: v1 })).json();
      expect(got).toMatchObject({ id: taskId, status: { state: 'TASK_STATE_COMPLETED' } });
    });

    it('across versions, the other way: a task started over 1.0 JSON-RPC on B is read over 0.3 HTTP+JSON on A, answered over 0.3 JSON-RPC on C, and read over 1.0 JSON-RPC on A', async () => {
      const v1 = { 'content-type': 'application/json', 'a2a-version': '1.0' };
      const created = (await (
        await fetch(`${w(2).url}/a2a`, {
          method: 'POST',
          headers: v1,
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'SendMessage',
            params: { message: { messageId: nextId('v1'), role: 'ROLE_USER', parts: [{ text: 'ask:Which colour?' }] } },
          }),
        })
      ).json()) as { result: { task: { id: string; status: { state: string } } } };
      const task = created.result.task;
      taskIds.add(task.id);
      expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      const read03 = await (await fetch(`${w(1).url}/v1/tasks/${task.id}`)).json();
      expect(read03).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_INPUT_REQUIRED' } });
      const done = await cluster.result<Task>(
        'message/send',
        { message: userMessage('teal', { taskId: task.id }) },
        last(),
      );
      expect(done.status.state).toBe('completed');
      // the question (A2A 1.0's user message, the agent's question) and the 0.3 answer, in one history
      expect(done.history?.map((m) => m.role)).toEqual(['user', 'agent', 'user']);
      const v1Read = (await (
        await fetch(`${w(1).url}/a2a`, {
          method: 'POST',
          headers: v1,
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: task.id, historyLength: 2 } }),
        })
      ).json()) as { result: { history: unknown[] } };
      expect(v1Read.result).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_COMPLETED' } });
      expect(v1Read.result.history).toHaveLength(2);
      expect(JSON.stringify(v1Read.result)).not.toContain('"kind"');
    });

    it('the official clients on different workers: 0.3.14 streams on A, 1.3.0 follows the task on B over HTTP+JSON; 1.3.0 starts one on C over JSON-RPC, 0.3.14 cancels it on A over HTTP+JSON', async () => {
      const old = (worker: Worker, transport: 'JSONRPC' | 'HTTP+JSON') =>
        new Client03Factory(
          Client03FactoryOptions.createFrom(Client03FactoryOptions.default, { preferredTransports: [transport] }),
        ).createFromUrl(worker.url);
      const current = (worker: Worker, transport: 'JSONRPC' | 'HTTP+JSON') =>
        new Client1Factory(
          Client1FactoryOptions.createFrom(Client1FactoryOptions.default, { preferredTransports: [transport] }),
        ).createFromUrl(worker.url);
      const request = (fields: object): never => ({ tenant: '', ...fields }) as never;
      const v1Message = (text: string) => ({
        messageId: nextId('sdk1'),
        contextId: '',
        taskId: '',
        role: Role.ROLE_USER,
        parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      });

      // 0.3.14 streams on A; 1.3.0 (HTTP+JSON) resubscribes on B and follows to the end.
      const streaming = (await old(w(1), 'JSONRPC')).sendMessageStream({ message: userMessage('tick:4:240') });
      const first = await streaming.next();
      const taskId = (first.value as Task).id;
      taskIds.add(taskId);
      const follower = await current(w(2), 'HTTP+JSON');
      const states: number[] = [];
      for await (const event of follower.resubscribeTask(request({ id: taskId }))) {
        if (event.payload?.$case === 'statusUpdate') states.push(event.payload.value.status?.state ?? -1);
      }
      expect(states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
      for await (const _ of streaming) {
        // drain A's stream
      }

      // 1.3.0 (JSON-RPC) starts a long task on C; 0.3.14 (HTTP+JSON) cancels it on A.
      const started = await (await current(last(), 'JSONRPC')).sendMessage(
        request({
          message: v1Message('sleep:60000'),
          configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
        }),
      );
      const longId = (started as { id: string }).id;
      taskIds.add(longId);
      await waitFor(async () => (await stateOf(longId)) === 'working', 10_000);
      const canceled = await (await old(w(1), 'HTTP+JSON')).cancelTask({ id: longId });
      expect(canceled.status.state).toBe('canceled');
      const abort = await waitFor(
        () => cluster.trace().find((e) => e.event === 'abort' && e.taskId === longId),
        10_000,
      );
      expect(abort.worker).toBe(last().id);
    });

    it('two principals: Alice’s task, asked on A, is not found for Bob on any worker by any operation, while Alice answers it on C', async () => {
      const alice = { authorization: 'Bearer tok-alice' };
      const bob = { authorization: 'Bearer tok-bob' };
      const question = userMessage('ask:Which city?');
      const asked = await cluster.result<Task>('message/send', { message: question }, w(1), alice);
      taskIds.add(asked.id);
      expect(asked.status.state).toBe('input-required');
      const notFound = { error: { code: -32001 } };
      for (const worker of cluster.workers) {
        expect(await cluster.call('tasks/get', { id: asked.id }, worker, bob)).toMatchObject(notFound);
        expect(await cluster.call('tasks/cancel', { id: asked.id }, worker, bob)).toMatchObject(notFound);
        const followUp = { message: userMessage('Atlantis', { taskId: asked.id }) };
        expect(await cluster.call('message/send', followUp, worker, bob)).toMatchObject(notFound);
        const resubscribe = await fetch(`${worker.url}/v1/tasks/${asked.id}:subscribe`, {
          method: 'POST',
          headers: { accept: 'text/event-stream', ...bob },
        });
        expect(resubscribe.status).toBe(404);
        await resubscribe.body?.cancel();
        // ListTasks (1.0 over HTTP+JSON) lists none of Alice's tasks for Bob.
        const listed = await fetch(`${worker.url}/tasks?contextId=${asked.contextId}`, {
          headers: { 'a2a-version': '1.0', ...bob },
        });
        expect(await listed.json()).toMatchObject({ tasks: [], totalSize: 0 });
      }
      // Bob reusing Alice's messageId gets a task of his own, on any worker.
      const bobs = await cluster.result<Task>('message/send', { message: { ...question } }, w(2), bob);
      taskIds.add(bobs.id);
      expect(bobs.id).not.toBe(asked.id);
      // Nothing Bob did reached Alice's task: she answers it on C, history intact.
      const answered = await cluster.result<Task>(
        'message/send',
        { message: userMessage('Lisbon', { taskId: asked.id }) },
        last(),
        alice,
      );
      expect(answered.status.state).toBe('completed');
      expect(answered.history?.map((m) => textParts(m.parts))).toEqual(['ask:Which city?', 'Which city?', 'Lisbon']);
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

    it('SIGTERM drains: a short turn finishes, a long one is failed with a clear message, and open streams get those final events', async () => {
      const short = await send(w(1), 'sleep:500', {}, { blocking: false });
      const long = await send(w(1), 'sleep:60000', {}, { blocking: false });
      await waitFor(
        async () => (await stateOf(long.id)) === 'working' && (await stateOf(short.id)) === 'working',
        10_000,
      );
      // Streams served by the worker that shuts down stay open through the drain (issue 14).
      const streams = [short, long].map((task) =>
        collect(postSse(`${w(1).url}/a2a`, rpcBody('tasks/resubscribe', { id: task.id }))),
      );
      await new Promise((r) => setTimeout(r, 200));
      const code = await cluster.kill('w1', 'SIGTERM');
      expect(code).toBe(0);
      const [shortEvents, longEvents] = await Promise.all(streams);
      expect(frame(shortEvents?.at(-1)).result).toMatchObject({ final: true, status: { state: 'completed' } });
      expect(frame(longEvents?.at(-1)).result).toMatchObject({ final: true, status: { state: 'failed' } });
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
