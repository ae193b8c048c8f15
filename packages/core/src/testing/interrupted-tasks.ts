import type { TaskState } from '../model/types.js';
import type { A2AStore, InterruptedTasksQuery, TaskRecord } from '../store/index.js';
import { appendEvents, createTask, statusUpdate, TEST_CLOCK_START, taskFixture } from './fixtures.js';
import { type ConformanceOptions, defineModule } from './harness.js';

/** `ms` after the test clock's start, as a status timestamp. */
const at = (ms: number): string => new Date(TEST_CLOCK_START + ms).toISOString();

async function create(store: A2AStore, id: string, state: TaskState, ts: number | null, owner?: string): Promise<void> {
  const task = taskFixture({ id, contextId: `ctx-${id}`, state, timestamp: ts === null ? null : at(ts) });
  await createTask(store, task, [], owner);
}

/** `store.listInterruptedTasks`, which the capability gate guarantees in these tests. */
function listInterrupted(store: A2AStore, query: InterruptedTasksQuery): Promise<TaskRecord[]> {
  if (store.listInterruptedTasks === undefined) {
    throw new Error('The store declares supports.interruptedTasks but has no listInterruptedTasks().');
  }
  return store.listInterruptedTasks(query);
}

const ids = (records: TaskRecord[]): string[] => records.map((record) => record.task.id);

/** listInterruptedTasks (supports.interruptedTasks): what the interrupted-task expiry reads. */
export function interruptedTasks(options: ConformanceOptions): void {
  defineModule(options, 'interruptedTasks', (test) => {
    test(
      'lists input-required and auth-required tasks older than `before`, oldest first, ties by id, of every owner',
      async ({ expect, store }) => {
        // Created in an order unrelated to their age: a store returning insertion order fails.
        await create(store, 'waits-b', 'input-required', 100, 'alice');
        await create(store, 'auth', 'auth-required', 50);
        await create(store, 'waits-a', 'input-required', 100, 'bob');
        await create(store, 'oldest', 'input-required', 10);
        await create(store, 'young', 'input-required', 1000);
        await create(store, 'at-cutoff', 'auth-required', 500);
        await create(store, 'no-timestamp', 'input-required', null);
        for (const state of ['submitted', 'working', 'completed', 'failed', 'canceled', 'rejected'] as const) {
          await create(store, `not-${state}`, state, 0);
        }

        const due = await listInterrupted(store, { before: TEST_CLOCK_START + 500, limit: 100 });
        // `before` is strict (at-cutoff is not older than it); no timestamp means no known age.
        expect(ids(due)).toEqual(['oldest', 'auth', 'waits-a', 'waits-b']);
        for (const record of due) expect(record).toEqual(await store.getTask(record.task.id));
        expect(ids(await listInterrupted(store, { before: TEST_CLOCK_START + 500, limit: 2 }))).toEqual([
          'oldest',
          'auth',
        ]);
        expect(await listInterrupted(store, { before: TEST_CLOCK_START, limit: 100 })).toEqual([]);
      },
      'interruptedTasks',
    );

    test(
      'follows state changes: an answered task leaves the list, a task that pauses again joins it with its new timestamp',
      async ({ expect, store }) => {
        const answered = taskFixture({ id: 'answered', state: 'input-required', timestamp: at(0) });
        const paused = taskFixture({ id: 'paused', state: 'working', timestamp: at(0) });
        await createTask(store, answered);
        await createTask(store, paused);
        const before = TEST_CLOCK_START + 100;
        expect(ids(await listInterrupted(store, { before, limit: 10 }))).toEqual(['answered']);

        await appendEvents(store, 'answered', [statusUpdate(answered, 'working', { timestamp: at(1) })]);
        await appendEvents(store, 'paused', [statusUpdate(paused, 'auth-required', { timestamp: at(20) })]);
        expect(ids(await listInterrupted(store, { before, limit: 10 }))).toEqual(['paused']);
        // Its status timestamp is the pause's, not the task's creation.
        expect(await listInterrupted(store, { before: TEST_CLOCK_START + 20, limit: 10 })).toEqual([]);
      },
      'interruptedTasks',
    );
  });
}
