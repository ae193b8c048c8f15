import { applyEvents } from '../model/task-state.js';
import type { Message, Task } from '../model/types.js';
import type { A2AStore, TaskEvent } from '../store/index.js';
import {
  agentMessage,
  appendEvents,
  createTask,
  indexEntry,
  isDuplicateMessage,
  rejectionOf,
  statusUpdate,
  taskFixture,
  userMessage,
} from './fixtures.js';
import { type ConformanceOptions, defineModule, type StoreTestContext, storesOnLocation } from './harness.js';

const CREATORS = 10;

/**
 * The index of user message ids that commit() maintains and findMessage() reads.
 *
 * Where the contract leaves room, the suite decides:
 * - A `task` event indexes `history[0].messageId` only when that message's role is `user`; later
 *   history messages and status-update messages are not indexed. Every `message` event is indexed
 *   (the suite only commits user ones).
 * - One commit carrying the same id twice (say the task's first message and a `message` event) is
 *   refused like a duplicate of an indexed id.
 * - A refused commit writes nothing: no snapshot, no event, no index entry (not even for the other,
 *   fresh ids it carried).
 * - The error is recognised by `A2AError.is(error) && error.code === 'DUPLICATE_MESSAGE'` and its
 *   `data.messageId` is the duplicate id (as `DuplicateMessageError` sets it).
 * - purgeExpired() removes the purged tasks' entries, and their ids can be used again.
 * - Every entry carries the digest of its message (`messageDigest`).
 *
 * These tests commit without an owner (the anonymous scope); the ownership module covers scopes.
 */
export function messageIndex(options: ConformanceOptions): void {
  defineModule(options, 'messageIndex', (test) => {
    test('commit indexes the first user message of a task and every message event', async ({ expect, store }) => {
      const first = userMessage('hello');
      const task = taskFixture({ state: 'working', history: [first] });
      await createTask(store, task);
      expect(await store.findMessage(first.messageId)).toEqual(indexEntry(task, first));

      const followUp = userMessage('and more', { taskId: task.id, contextId: task.contextId });
      await appendEvents(store, task.id, [followUp]);
      expect(await store.findMessage(followUp.messageId)).toEqual(indexEntry(task, followUp));

      // A message event in the creating commit, after a task event without history.
      const other = taskFixture({ state: 'working', contextId: task.contextId });
      const along = userMessage('along', { taskId: other.id, contextId: other.contextId });
      await createTask(store, other, [along]);
      expect(await store.findMessage(along.messageId)).toEqual(indexEntry(other, along));
      expect(await store.findMessage(first.messageId)).toEqual(indexEntry(task, first));

      expect(await store.findMessage('msg-unknown')).toBeUndefined();
      expect(await store.findMessage(first.messageId.toUpperCase())).toBeUndefined();
    });

    test('only the first history message of a task, and only a user one, is indexed', async ({ expect, store }) => {
      const agentFirst = taskFixture({ state: 'working', history: [agentMessage('greeting'), userMessage('reply')] });
      const userFirst = taskFixture({ state: 'working', history: [userMessage('first'), userMessage('second')] });
      await createTask(store, agentFirst);
      await createTask(store, userFirst);
      const status = agentMessage('on it', { taskId: userFirst.id, contextId: userFirst.contextId });
      await appendEvents(store, userFirst.id, [statusUpdate(userFirst, 'working', { message: status })]);

      const [agentGreeting, agentReply] = agentFirst.history ?? [];
      const [userOne, userTwo] = userFirst.history ?? [];
      expect(await store.findMessage(userOne?.messageId ?? '')).toEqual(indexEntry(userFirst, userOne as Message));
      for (const id of [agentGreeting?.messageId, agentReply?.messageId, userTwo?.messageId, status.messageId]) {
        expect(await store.findMessage(id ?? ''), id).toBeUndefined();
      }

      // Ids that were not indexed are free for a new task.
      for (const id of [agentGreeting?.messageId, userTwo?.messageId, status.messageId]) {
        const reuse = userMessage('reuses an unindexed id', { messageId: id ?? '' });
        const task = taskFixture({ history: [reuse] });
        await createTask(store, task);
        expect(await store.findMessage(id ?? ''), id).toEqual(indexEntry(task, reuse));
      }
    });

    test('a second task whose first message reuses an indexed id is refused and writes nothing', async ({
      expect,
      store,
    }) => {
      const first = userMessage('original');
      const original = taskFixture({ state: 'working', history: [first] });
      await createTask(store, original);
      const followUp = userMessage('follow-up', { taskId: original.id, contextId: original.contextId });
      await appendEvents(store, original.id, [followUp]);

      for (const indexed of [first, followUp]) {
        const { messageId } = indexed;
        const retry = taskFixture({ state: 'submitted', history: [userMessage('retried', { messageId })] });
        expectDuplicate(expect, await rejectionOf(createTask(store, retry)), messageId);
        expect(await store.getTask(retry.id)).toBeUndefined();
        expect(await store.readEvents(retry.id, 0)).toEqual([]);
        expect(await store.listTasksByContext(retry.contextId)).toEqual([]);
        expect(await store.findMessage(messageId)).toEqual(indexEntry(original, indexed));
        // The id is refused again: the failed commit changed nothing, and the original stays.
        expectDuplicate(expect, await rejectionOf(createTask(store, retry)), messageId);
      }
      expect((await store.getTask(original.id))?.version).toBe(2);
      expect((await store.listActiveTasks()).map((r) => r.task.id)).toEqual([original.id]);
    });

    test('a message event reusing an indexed id is refused; the task is unchanged', async ({ expect, store }) => {
      const a = taskFixture({ state: 'input-required', history: [userMessage('a asks')] });
      const b = taskFixture({ state: 'input-required', history: [userMessage('b asks')] });
      await createTask(store, a);
      await createTask(store, b);
      const [aMessage, bMessage] = [a.history?.[0] as Message, b.history?.[0] as Message];
      const [aFirst, bFirst] = [aMessage.messageId, bMessage.messageId];

      // Reusing the task's own first message, and another task's.
      for (const messageId of [aFirst, bFirst]) {
        const before = { record: await store.getTask(a.id), events: await store.readEvents(a.id, 0) };
        const fresh = userMessage('fresh', { taskId: a.id, contextId: a.contextId });
        const duplicate = userMessage('again', { messageId, taskId: a.id, contextId: a.contextId });
        const error = await rejectionOf(appendEvents(store, a.id, [fresh, duplicate]));
        expectDuplicate(expect, error, messageId);
        expect({ record: await store.getTask(a.id), events: await store.readEvents(a.id, 0) }).toEqual(before);
        // Nothing of the refused commit was indexed, not even its fresh id.
        expect(await store.findMessage(fresh.messageId)).toBeUndefined();
      }
      expect(await store.findMessage(aFirst)).toEqual(indexEntry(a, aMessage));
      expect(await store.findMessage(bFirst)).toEqual(indexEntry(b, bMessage));
      expect((await store.getTask(a.id))?.version).toBe(1);
    });

    test('a commit carrying the same message id twice is refused', async ({ expect, store }) => {
      const first = userMessage('first');
      const task = taskFixture({ state: 'working', history: [first] });
      const echo = userMessage('echo', { messageId: first.messageId, taskId: task.id, contextId: task.contextId });
      expectDuplicate(expect, await rejectionOf(createTask(store, task, [echo])), first.messageId);
      expect(await store.getTask(task.id)).toBeUndefined();
      expect(await store.findMessage(first.messageId)).toBeUndefined();

      const working = taskFixture({ state: 'working' });
      await createTask(store, working);
      const on = { taskId: working.id, contextId: working.contextId };
      const twice = userMessage('twice', on);
      expectDuplicate(
        expect,
        await rejectionOf(appendEvents(store, working.id, [twice, { ...twice }])),
        twice.messageId,
      );
      expect((await store.getTask(working.id))?.version).toBe(1);
      expect(await store.findMessage(twice.messageId)).toBeUndefined();
    });

    test(`${CREATORS} concurrent creates of different tasks with the same first message id (on several instances where supported): exactly one succeeds`, async (context) => {
      const { expect } = context;
      const stores = await storesOnLocation(context, 3);
      const messageId = 'msg-contested';
      const tasks = Array.from({ length: CREATORS }, (_, i) =>
        taskFixture({ id: `task-${i}`, contextId: `ctx-${i}`, history: [userMessage(`attempt ${i}`, { messageId })] }),
      );
      const results = await Promise.allSettled(
        tasks.map((task, i) => createTask(stores[i % stores.length] as A2AStore, task)),
      );

      const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
      expect(winners).toHaveLength(1);
      const winner = tasks[winners[0] ?? -1] as Task;
      for (const result of results) {
        if (result.status === 'rejected') expectDuplicate(expect, result.reason, messageId);
      }
      for (const reader of stores) {
        expect(await reader.findMessage(messageId)).toEqual(indexEntry(winner, winner.history?.[0] as Message));
        for (const task of tasks) {
          if (task !== winner) expect(await reader.getTask(task.id), task.id).toBeUndefined();
        }
        expect((await reader.listActiveTasks()).map((r) => r.task.id)).toEqual([winner.id]);
      }
    });

    test(
      'purgeExpired removes the purged tasks’ entries; their ids can be used again',
      async ({ expect, store, clock }) => {
        const done = taskFixture({ id: 'done', state: 'working', history: [userMessage('done first')] });
        const followUp = userMessage('done follow-up', { taskId: done.id, contextId: done.contextId });
        const events: TaskEvent[] = [followUp, statusUpdate(done, 'completed')];
        await createTask(store, done);
        await store.commit({ taskId: done.id, expectedVersion: 1, task: applyEvents(done, events), events });
        const runningFirst = userMessage('running first');
        const running = taskFixture({ id: 'running', state: 'working', history: [runningFirst] });
        await createTask(store, running);

        clock.advance(10_000);
        expect(await store.purgeExpired(clock.now)).toEqual({ tasks: 1, contexts: 0 });
        const doneIds = [done.history?.[0]?.messageId ?? '', followUp.messageId];
        for (const id of doneIds) expect(await store.findMessage(id), id).toBeUndefined();
        expect(await store.findMessage(runningFirst.messageId)).toEqual(indexEntry(running, runningFirst));

        for (const id of doneIds) {
          const reused = userMessage('after the purge', { messageId: id });
          const again = taskFixture({ history: [reused] });
          await createTask(store, again);
          expect(await store.findMessage(id), id).toEqual(indexEntry(again, reused));
        }
      },
      'ttl',
    );
  });
}

function expectDuplicate(expect: StoreTestContext['expect'], error: unknown, messageId: string): void {
  expect(isDuplicateMessage(error), `expected a DUPLICATE_MESSAGE error, got: ${String(error)}`).toBe(true);
  expect((error as { data?: unknown }).data).toMatchObject({ messageId });
}
