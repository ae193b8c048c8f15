import { applyEvents } from '../model/task-state.js';
import type { StoredEvent, TaskEvent } from '../store/index.js';
import {
  appendEvents,
  artifactUpdate,
  createTask,
  eventually,
  isVersionConflict,
  rejectionOf,
  statusUpdate,
  taskFixture,
  turnEnd,
  userMessage,
} from './fixtures.js';
import { type ConformanceOptions, defineModule, storesOnLocation } from './harness.js';

/** The per-task event log: gapless sequence numbers, readEvents windows, timestamps. */
export function eventLog(options: ConformanceOptions): void {
  defineModule(options, 'eventLog', (test) => {
    test('seq runs 1..n without gaps across commits; createdAt is the commit’s clock time', async ({
      expect,
      store,
      clock,
    }) => {
      const task = taskFixture();
      const on = { taskId: task.id, contextId: task.contextId };
      const commits: TaskEvent[][] = [
        [statusUpdate(task, 'working')],
        [artifactUpdate(task, 'a'), artifactUpdate(task, 'b'), artifactUpdate(task, 'c')],
        [statusUpdate(task, 'input-required', { message: 'which?' }), turnEnd(task, 'turn-1')],
        [userMessage('this one', on)],
        [statusUpdate(task, 'completed')],
      ];
      const expected: StoredEvent[] = [];
      const returned: number[] = [];
      const times: number[] = [];

      returned.push((await createTask(store, task)).version);
      expected.push({ seq: 1, event: task, createdAt: clock.now });
      for (const events of commits) {
        times.push(clock.advance(1000));
        returned.push((await appendEvents(store, task.id, events)).version);
        for (const event of events) expected.push({ seq: expected.length + 1, event, createdAt: clock.now });
      }

      // commit() returns the new version: the seq of its last event.
      expect(returned).toEqual([1, 2, 5, 7, 8, 9]);
      const read = await store.readEvents(task.id, 0);
      expect(read).toEqual(expected);
      expect(read.map((e) => e.seq)).toEqual(Array.from({ length: expected.length }, (_, i) => i + 1));
      expect(read).toHaveLength(9);
      expect(new Set(read.map((e) => e.createdAt))).toEqual(new Set([expected[0]?.createdAt, ...times]));
    });

    test('readEvents(after N) returns exactly the later events, in order', async ({ expect, store }) => {
      const task = taskFixture({ state: 'working' });
      await createTask(store, task);
      for (let i = 0; i < 9; i++) await appendEvents(store, task.id, [artifactUpdate(task, `chunk ${i}`)]);
      const all = await store.readEvents(task.id, 0);
      expect(all).toHaveLength(10);

      for (const after of [1, 3, 7, 9]) {
        const later = await store.readEvents(task.id, after);
        expect(later.map((e) => e.seq)).toEqual(Array.from({ length: 10 - after }, (_, i) => after + i + 1));
        expect(later).toEqual(all.slice(after));
      }
      expect(await store.readEvents(task.id, 10)).toEqual([]);
      expect(await store.readEvents(task.id, 25)).toEqual([]);
    });

    test('readEvents honours limit', async ({ expect, store }) => {
      const task = taskFixture({ state: 'working' });
      await createTask(store, task, [artifactUpdate(task, 'x'), artifactUpdate(task, 'y'), artifactUpdate(task, 'z')]);
      await appendEvents(store, task.id, [artifactUpdate(task, 'w')]);

      expect((await store.readEvents(task.id, 0, 2)).map((e) => e.seq)).toEqual([1, 2]);
      expect((await store.readEvents(task.id, 2, 2)).map((e) => e.seq)).toEqual([3, 4]);
      expect((await store.readEvents(task.id, 4, 2)).map((e) => e.seq)).toEqual([5]);
      expect((await store.readEvents(task.id, 1, 1)).map((e) => e.seq)).toEqual([2]);
      expect((await store.readEvents(task.id, 0, 50)).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    });

    test('a shared read (readEvents option shared) answers exactly what a plain read does', async ({
      expect,
      store,
    }) => {
      const task = taskFixture({ state: 'working' });
      await createTask(store, task, [artifactUpdate(task, 'x')]);
      // Handed over, as the runtime commits: a store may keep these objects and share them.
      for (let i = 0; i < 4; i++) {
        const record = await store.getTask(task.id);
        if (record === undefined) throw new Error('task was not stored');
        const events = [artifactUpdate(task, `chunk ${i}`), statusUpdate(task, 'working')];
        const snapshot = applyEvents(record.task, events);
        await store.commit({
          taskId: task.id,
          expectedVersion: record.version,
          task: snapshot,
          events,
          transfer: true,
        });
      }
      const shared = { shared: true };
      for (const after of [0, 1, 4, 9, 10, 12]) {
        for (const limit of [undefined, 1, 3, 50]) {
          const plain = await store.readEvents(task.id, after, limit);
          expect(
            await store.readEvents(task.id, after, limit, undefined, shared),
            `after ${after}, limit ${limit}`,
          ).toEqual(plain);
        }
      }
      expect(await store.readEvents('no-such-task', 0, undefined, undefined, shared)).toEqual([]);
    });

    test('a plain read is a copy, also of events committed with transfer and read shared before', async ({
      expect,
      store,
    }) => {
      const task = taskFixture({ state: 'working' });
      await createTask(store, task);
      const record = await store.getTask(task.id);
      if (record === undefined) throw new Error('task was not stored');
      const events = [artifactUpdate(task, 'kept')];
      const expected = structuredClone(events[0]);
      await store.commit({
        taskId: task.id,
        expectedVersion: record.version,
        task: applyEvents(record.task, events),
        events,
        transfer: true,
      });
      await store.readEvents(task.id, 1, undefined, undefined, { shared: true });

      const [copy] = await store.readEvents(task.id, 1);
      if (copy?.event.kind !== 'artifact-update') throw new Error('the event was not stored');
      copy.event.artifact.parts = [];
      copy.event.taskId = 'changed';
      copy.seq = 99;

      expect(await store.readEvents(task.id, 1)).toEqual([{ seq: 2, event: expected, createdAt: expect.any(Number) }]);
      expect(await store.readEvents(task.id, 1, undefined, undefined, { shared: true })).toEqual([
        { seq: 2, event: expected, createdAt: expect.any(Number) },
      ]);
    });

    test('an unknown task has no events', async ({ expect, store }) => {
      expect(await store.readEvents('no-such-task', 0)).toEqual([]);
      const task = taskFixture();
      await createTask(store, task);
      expect(await store.readEvents(`${task.id}-other`, 0)).toEqual([]);
      expect(await store.readEvents(`${task.id}-other`, 0, 10)).toEqual([]);
    });

    test('getVersions gives the current version of each existing task, in one call', async ({ expect, store }) => {
      const a = taskFixture({ state: 'working' });
      const b = taskFixture({ state: 'working' });
      await createTask(store, a);
      await createTask(store, b, [artifactUpdate(b, 'b2')]);
      await appendEvents(store, b.id, [artifactUpdate(b, 'b3')]);

      expect(await store.getVersions([a.id, b.id, 'no-such-task'])).toEqual(
        new Map([
          [a.id, 1],
          [b.id, 3],
        ]),
      );
      expect(await store.getVersions([])).toEqual(new Map());
      // Many ids at once (a process following thousands of streams asks for all of them).
      const many = [...Array.from({ length: 2000 }, (_, i) => `missing-${i}`), a.id];
      expect(await store.getVersions(many)).toEqual(new Map([[a.id, 1]]));
    });

    test('an instance reads the events other instances committed after its own, once it has heard of them', async (context) => {
      const { expect, store, notificationTimeout } = context;
      // A store may answer readEvents from the events it committed itself (with no read), and
      // such an answer may stop before what other instances committed after them; never before
      // a version the store has reported, in a task record, by getVersions, a version
      // conflict or a notification.
      const [, other = store] = await storesOnLocation(context, 2);
      const task = taskFixture({ state: 'working' });
      const chunk = (text: string) => [artifactUpdate(task, text)];
      await createTask(store, task);
      await appendEvents(store, task.id, chunk('own 2'));
      await appendEvents(other, task.id, chunk('other 3'));
      expect((await store.getTask(task.id))?.version).toBe(3);
      expect((await store.readEvents(task.id, 0)).map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(await store.readEvents(task.id, 1)).toEqual(await other.readEvents(task.id, 1));

      await appendEvents(store, task.id, chunk('own 4'));
      await appendEvents(other, task.id, chunk('other 5'));
      expect(await store.getVersions([task.id])).toEqual(new Map([[task.id, 5]]));
      expect((await store.readEvents(task.id, 3)).map((e) => e.seq)).toEqual([4, 5]);

      // Heard of by a version conflict.
      await appendEvents(store, task.id, chunk('own 6'));
      await appendEvents(other, task.id, chunk('other 7'));
      const snapshot = (await other.getTask(task.id))?.task ?? task;
      const stale = store.commit({ taskId: task.id, expectedVersion: 6, task: snapshot, events: chunk('late') });
      expect(isVersionConflict(await rejectionOf(stale))).toBe(true);
      expect((await store.readEvents(task.id, 5)).map((e) => e.seq)).toEqual([6, 7]);

      // Heard of by a notification (across instances where the store supports it).
      if (other !== store && !store.supports.crossProcess) return;
      const heard: number[] = [];
      const unsubscribe = store.subscribe(task.id, (seq) => heard.push(seq));
      try {
        await appendEvents(store, task.id, chunk('own 8'));
        await appendEvents(other, task.id, chunk('other 9'));
        await eventually('a notification of seq 9', () => heard.some((seq) => seq >= 9), {
          timeout: notificationTimeout,
        });
        expect((await store.readEvents(task.id, 7)).map((e) => e.seq)).toEqual([8, 9]);
        expect(await store.readEvents(task.id, 0)).toEqual(await other.readEvents(task.id, 0));
      } finally {
        unsubscribe();
      }
    });

    test('event logs of different tasks are independent', async ({ expect, store }) => {
      const a = taskFixture({ state: 'working' });
      const b = taskFixture({ state: 'working', contextId: a.contextId });
      await createTask(store, a);
      await createTask(store, b);
      await appendEvents(store, a.id, [artifactUpdate(a, 'a2')]);
      await appendEvents(store, b.id, [artifactUpdate(b, 'b2'), artifactUpdate(b, 'b3')]);
      await appendEvents(store, a.id, [artifactUpdate(a, 'a3')]);

      const eventsOfA = await store.readEvents(a.id, 0);
      const eventsOfB = await store.readEvents(b.id, 0);
      expect(eventsOfA.map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(eventsOfB.map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(eventsOfA.every((e) => (e.event.kind === 'task' ? e.event.id : e.event.taskId) === a.id)).toBe(true);
      expect(eventsOfB.every((e) => (e.event.kind === 'task' ? e.event.id : e.event.taskId) === b.id)).toBe(true);
    });
  });
}
