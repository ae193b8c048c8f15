import { applyEvents } from '../model/task-state.js';
import type { Task, TextPart } from '../model/types.js';
import type { TaskEvent } from '../store/index.js';
import {
  appendEvents,
  artifactUpdate,
  createdSnapshot,
  createTask,
  largeText,
  richTask,
  statusUpdate,
  taskFixture,
  turnEnd,
  userMessage,
} from './fixtures.js';
import { type ConformanceOptions, defineModule } from './harness.js';

/** commit/getTask round trips, JSON fidelity, copies in and out, versions. */
export function taskBasics(options: ConformanceOptions): void {
  defineModule(options, 'taskBasics', (test) => {
    test('a created task reads back with version, createdAt and updatedAt', async ({ expect, store, clock }) => {
      const task = taskFixture({ history: [userMessage('hello')] });
      expect(await createTask(store, task)).toEqual({ version: 1 });
      expect(await store.readEvents(task.id, 0)).toEqual([{ seq: 1, event: task, createdAt: clock.now }]);

      const record = await store.getTask(task.id);
      expect(record).toEqual({ task: createdSnapshot(task), version: 1, createdAt: clock.now, updatedAt: clock.now });
    });

    test("a commit's traceContext is kept with the task until the next commit replaces or clears it", async ({
      expect,
      store,
    }) => {
      const traced = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      const task = taskFixture({ state: 'working' });
      const events: TaskEvent[] = [task];
      await store.commit({ taskId: task.id, expectedVersion: 0, task, events, traceContext: traced });
      expect((await store.getTask(task.id))?.traceContext).toBe(traced);
      expect((await store.listTasksByContext(task.contextId))[0]?.traceContext).toBe(traced);

      const next = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      const update = statusUpdate(task, 'working');
      await store.commit({
        taskId: task.id,
        expectedVersion: 1,
        task: applyEvents(task, [update]),
        events: [update],
        traceContext: next,
      });
      expect((await store.getTask(task.id))?.traceContext).toBe(next);

      // An untraced commit clears it: a later push must not join a trace that did not cause it.
      await appendEvents(store, task.id, [statusUpdate(task, 'completed')]);
      const record = await store.getTask(task.id);
      expect(record).toBeDefined();
      expect(Object.hasOwn(record ?? {}, 'traceContext')).toBe(false);
    });

    test('a missing task is undefined', async ({ expect, store }) => {
      expect(await store.getTask('no-such-task')).toBeUndefined();
      await createTask(store, taskFixture({ id: 'some-task' }));
      expect(await store.getTask('some-task-2')).toBeUndefined();
      expect(await store.getTask('SOME-TASK')).toBeUndefined();
    });

    test('JSON survives exactly: unicode, control characters, nested data, numbers, booleans, nulls, files', async ({
      expect,
      store,
    }) => {
      const task = richTask();
      const events: TaskEvent[] = [
        task,
        artifactUpdate(task, { artifactId: 'a2', parts: structuredClone(task.artifacts?.[0]?.parts ?? []) }),
        statusUpdate(task, 'input-required', { message: structuredClone(task.history?.[0]) }),
        turnEnd(task, 'turn-✓-1'),
      ];
      const snapshot = applyEvents(undefined, events);
      await store.commit({ taskId: task.id, expectedVersion: 0, task: snapshot, events });

      const record = await store.getTask(task.id);
      expect(record?.task).toEqual(snapshot);
      // toEqual ignores undefined properties; the JSON text must match too (key order aside).
      expect(canonical(record?.task)).toBe(canonical(snapshot));
      const read = await store.readEvents(task.id, 0);
      expect(read.map((e) => e.event)).toEqual(events);
      expect(read.map((e) => canonical(e.event))).toEqual(events.map(canonical));
    });

    test('a 1 MB artifact text round-trips exactly', async ({ expect, store }) => {
      const task = taskFixture({ state: 'working' });
      const text = largeText(1024 * 1024);
      await createTask(store, task);
      await appendEvents(store, task.id, [
        artifactUpdate(task, { artifactId: 'big', parts: [{ kind: 'text', text }] }),
      ]);

      const record = await store.getTask(task.id);
      const part = record?.task.artifacts?.[0]?.parts[0] as TextPart | undefined;
      expect(part?.kind).toBe('text');
      expect(part?.text.length).toBe(text.length);
      // A boolean, so a failure does not print two megabytes of diff.
      expect(part?.text === text).toBe(true);

      const [event] = await store.readEvents(task.id, 1);
      const eventText =
        event?.event.kind === 'artifact-update' ? (event.event.artifact.parts[0] as TextPart).text : undefined;
      expect(eventText === text).toBe(true);
    });

    test('data is copied in: mutating what was committed does not change the store', async ({ expect, store }) => {
      const task = taskFixture({ history: [userMessage('original')], metadata: { n: 1 } });
      const expected = structuredClone(task);
      const events: TaskEvent[] = [task];
      const snapshot = applyEvents(undefined, events);
      const expectedSnapshot = structuredClone(snapshot);
      await store.commit({ taskId: task.id, expectedVersion: 0, task: snapshot, events });

      task.metadata = { n: 2 };
      task.status.state = 'failed';
      (task.history?.[0]?.parts[0] as TextPart).text = 'changed';
      snapshot.status.state = 'canceled';
      snapshot.history?.push(userMessage('injected'));
      events.push(turnEnd(task, 'injected'));

      expect((await store.getTask(task.id))?.task).toEqual(expectedSnapshot);
      expect(await store.readEvents(task.id, 0)).toEqual([{ seq: 1, event: expected, createdAt: expect.any(Number) }]);
    });

    test('data is copied out: mutating what was read does not change the store', async ({ expect, store }) => {
      const task = taskFixture({ history: [userMessage('original')] });
      await createTask(store, task);
      const first = await store.getTask(task.id);
      if (first === undefined) throw new Error('task was not stored');

      first.version = 99;
      first.task.status.state = 'failed';
      first.task.history?.push(userMessage('injected'));
      const [readBack] = await store.readEvents(task.id, 0);
      if (readBack === undefined) throw new Error('event was not stored');
      (readBack.event as Task).contextId = 'changed';
      const [listed] = await store.listTasksByContext(task.contextId);
      if (listed !== undefined) listed.task.id = 'changed';

      expect(await store.getTask(task.id)).toEqual({
        task: createdSnapshot(task),
        version: 1,
        createdAt: expect.any(Number),
        updatedAt: expect.any(Number),
      });
      expect(await store.readEvents(task.id, 0)).toEqual([{ seq: 1, event: task, createdAt: expect.any(Number) }]);
      expect((await store.listTasksByContext(task.contextId)).map((r) => r.task.id)).toEqual([task.id]);
    });

    test('version equals the seq of the last event; updatedAt moves, createdAt stays', async ({
      expect,
      store,
      clock,
    }) => {
      const task = taskFixture();
      const createdAt = clock.now;
      await createTask(store, task, [statusUpdate(task, 'working')]);
      expect((await store.getTask(task.id))?.version).toBe(2);

      clock.advance(1000);
      const result = await appendEvents(store, task.id, [
        artifactUpdate(task, 'one'),
        artifactUpdate(task, 'two'),
        userMessage('more', { taskId: task.id, contextId: task.contextId }),
      ]);
      expect(result).toEqual({ version: 5 });
      expect((await store.readEvents(task.id, 2)).map((e) => e.seq)).toEqual([3, 4, 5]);
      clock.advance(1000);
      await appendEvents(store, task.id, [statusUpdate(task, 'completed', { message: 'done' })]);

      const record = await store.getTask(task.id);
      const events = await store.readEvents(task.id, 0);
      expect(record?.version).toBe(6);
      expect(record?.version).toBe(events.at(-1)?.seq);
      expect(record?.createdAt).toBe(createdAt);
      expect(record?.updatedAt).toBe(clock.now);
      expect(record?.task.status.state).toBe('completed');
      expect(record?.task.artifacts?.length).toBe(2);
    });
  });
}

/** JSON text with sorted keys, so stores that reorder keys (Postgres jsonb) still compare equal. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
