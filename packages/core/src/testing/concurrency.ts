import { applyEvents } from '../model/task-state.js';
import type { Task, TaskArtifactUpdateEvent } from '../model/types.js';
import type { A2AStore, TaskRecord } from '../store.js';
import {
  appendEvents,
  artifactUpdate,
  createTask,
  isVersionConflict,
  statusUpdate,
  taskFixture,
  textPart,
} from './fixtures.js';
import { type ConformanceOptions, defineModule, type StoreTestContext } from './harness.js';

const WRITERS = 20;

/** Optimistic concurrency: version checks, and no lost update under real concurrent writers. */
export function concurrency(options: ConformanceOptions): void {
  defineModule(options, 'concurrency', (test) => {
    test('a commit with a stale expectedVersion conflicts and changes nothing', async ({ expect, store }) => {
      const task = taskFixture({ state: 'working' });
      await createTask(store, task);
      const stale = await store.getTask(task.id);
      await appendEvents(store, task.id, [artifactUpdate(task, 'first writer')]);
      const before = await snapshot(store, task.id);

      if (stale === undefined) throw new Error('task was not stored');
      const events = [artifactUpdate(task, 'second writer')];
      const error = await store
        .commit({ taskId: task.id, expectedVersion: stale.version, task: applyEvents(stale.task, events), events })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expectConflict(expect, error, { taskId: task.id, expected: 1 });
      expect(await snapshot(store, task.id)).toEqual(before);
    });

    test('a commit with an expectedVersion ahead of the task conflicts', async ({ expect, store }) => {
      const task = taskFixture({ state: 'working' });
      await createTask(store, task);
      const events = [artifactUpdate(task, 'from the future')];
      const error = await store
        .commit({ taskId: task.id, expectedVersion: 5, task: applyEvents(task, events), events })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expectConflict(expect, error, { taskId: task.id, expected: 5 });
      expect((await store.getTask(task.id))?.version).toBe(1);
      expect(await store.readEvents(task.id, 1)).toEqual([]);
    });

    test('creating a task that exists conflicts', async ({ expect, store }) => {
      const task = taskFixture({ metadata: { writer: 'first' } });
      await createTask(store, task);
      const before = await snapshot(store, task.id);
      const error = await createTask(store, { ...task, metadata: { writer: 'second' } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expectConflict(expect, error, { taskId: task.id, expected: 0 });
      expect(await snapshot(store, task.id)).toEqual(before);
    });

    test('updating a task that does not exist conflicts and creates nothing', async ({ expect, store }) => {
      const task = taskFixture({ id: 'missing', state: 'working' });
      const events = [statusUpdate(task, 'completed')];
      const error = await store
        .commit({ taskId: 'missing', expectedVersion: 1, task: applyEvents(task, events), events })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expectConflict(expect, error, { taskId: 'missing', expected: 1 });
      expect(await store.getTask('missing')).toBeUndefined();
      expect(await store.readEvents('missing', 0)).toEqual([]);
      expect(await store.listTasksByContext(task.contextId)).toEqual([]);
    });

    test(`${WRITERS} concurrent read → apply → commit writers with retries lose no update`, async (context) => {
      await concurrentWriters(context, [context.store]);
    });

    test(
      `${WRITERS} concurrent writers through two instances on one location lose no update`,
      async (context) => {
        const second = await context.openStore();
        await concurrentWriters(context, [context.store, second]);
      },
      'durable',
    );

    test('concurrent creates of one task id: exactly one wins', async ({ expect, store }) => {
      const creators = Array.from({ length: 10 }, (_, i) => taskFixture({ id: 'contested', metadata: { creator: i } }));
      const results = await Promise.allSettled(creators.map((task) => createTask(store, task)));

      const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
      expect(winners).toHaveLength(1);
      for (const result of results) {
        if (result.status === 'rejected') expectConflict(expect, result.reason, { taskId: 'contested', expected: 0 });
      }
      const winner = creators[winners[0] ?? -1] as Task;
      expect((await store.getTask('contested'))?.task).toEqual(winner);
      expect(await store.readEvents('contested', 0)).toEqual([
        { seq: 1, event: winner, createdAt: expect.any(Number) },
      ]);
    });
  });
}

/**
 * Every writer appends one artifact through the retry loop, spread over `stores` (instances on one
 * location). A conflict means another writer committed after this one read, so no writer can lose
 * more than WRITERS - 1 times: that bounds the loop.
 */
async function concurrentWriters({ expect, store }: StoreTestContext, stores: A2AStore[]): Promise<void> {
  const task = taskFixture({ state: 'working' });
  await createTask(store, task);

  const results = await Promise.all(
    Array.from({ length: WRITERS }, (_, i) =>
      write(
        stores[i % stores.length] as A2AStore,
        task.id,
        artifactUpdate(task, { artifactId: `artifact-${i}`, parts: [textPart(`from writer ${i}`)] }),
        i % 3,
      ),
    ),
  );
  const seqs = results.map((r) => r.version);
  expect([...seqs].sort((a, b) => a - b)).toEqual(Array.from({ length: WRITERS }, (_, i) => i + 2));

  const expectedIds = Array.from({ length: WRITERS }, (_, i) => `artifact-${i}`).sort();
  for (const reader of stores) {
    const record = await reader.getTask(task.id);
    expect(record?.version).toBe(WRITERS + 1);
    expect(record?.task.artifacts?.map((a) => a.artifactId).sort()).toEqual(expectedIds);

    const events = await reader.readEvents(task.id, 0);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: WRITERS + 1 }, (_, i) => i + 1));
    const artifactIds = events.flatMap((e) =>
      e.event.kind === 'artifact-update' ? [e.event.artifact.artifactId] : [],
    );
    expect([...artifactIds].sort()).toEqual(expectedIds);
    // The snapshot is the log replayed: same artifacts, in the order their events were sequenced.
    expect(record?.task.artifacts?.map((a) => a.artifactId)).toEqual(artifactIds);
  }
}

/**
 * One writer: read → apply → commit, again on conflict. It waits `pause` event-loop turns between
 * read and commit, so writers interleave even on a store that answers without real I/O (in
 * lockstep, a store that skipped its version check would look correct).
 */
async function write(
  store: A2AStore,
  taskId: string,
  event: TaskArtifactUpdateEvent,
  pause: number,
): Promise<{ version: number; attempts: number }> {
  for (let attempts = 1; attempts <= WRITERS; attempts++) {
    const record = await store.getTask(taskId);
    if (record === undefined) throw new Error(`task "${taskId}" disappeared`);
    for (let turn = 0; turn < pause; turn++) await new Promise((resolve) => setImmediate(resolve));
    try {
      const { version } = await store.commit({
        taskId,
        expectedVersion: record.version,
        task: applyEvents(record.task, [event]),
        events: [event],
      });
      return { version, attempts };
    } catch (error) {
      if (!isVersionConflict(error)) throw error;
    }
  }
  throw new Error(`A writer had ${WRITERS} version conflicts, more than ${WRITERS - 1} other writers can cause.`);
}

function expectConflict(
  expect: StoreTestContext['expect'],
  error: unknown,
  data: { taskId: string; expected: number },
): void {
  expect(isVersionConflict(error), `expected a VERSION_CONFLICT error, got: ${String(error)}`).toBe(true);
  expect((error as { data?: unknown }).data).toMatchObject(data);
}

async function snapshot(
  store: A2AStore,
  taskId: string,
): Promise<{ record: TaskRecord | undefined; events: Awaited<ReturnType<A2AStore['readEvents']>> }> {
  return { record: await store.getTask(taskId), events: await store.readEvents(taskId, 0) };
}
