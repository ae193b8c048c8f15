import { applyEvents } from '../model/task-state.js';
import type { Task, TaskArtifactUpdateEvent } from '../model/types.js';
import type { A2AStore, TaskRecord } from '../store/index.js';
import {
  appendEvents,
  artifactUpdate,
  createdSnapshot,
  createTask,
  isDuplicateMessage,
  isVersionConflict,
  statusUpdate,
  taskFixture,
  textPart,
  userMessage,
} from './fixtures.js';
import { type ConformanceOptions, defineModule, type StoreTestContext } from './harness.js';

const WRITERS = 20;
/**
 * Commits made at once in the burst tests: enough that a store with group commit sends several of
 * them in one batch (it batches what waits while earlier commits are on their way).
 */
const BURST = 24;

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

    // The burst tests: commits made at once, which a store with group commit sends to its
    // database together. Each keeps its own version check and its own result.
    test(`${BURST} commits of different tasks at once, one of them stale: only that one conflicts`, async ({
      expect,
      store,
    }) => {
      const tasks = Array.from({ length: BURST }, () => taskFixture({ state: 'working' }));
      await Promise.all(tasks.map((task) => createTask(store, task)));
      const staleAt = Math.floor(BURST / 2);
      const stale = tasks[staleAt] as Task;
      await appendEvents(store, stale.id, [artifactUpdate(stale, 'moved on')]);
      const staleBefore = await snapshot(store, stale.id);
      const fresh = Array.from({ length: BURST }, () => taskFixture());

      // No await between the calls: every commit is made before any is answered.
      const commits = [
        ...tasks.map((task) => {
          const events = [statusUpdate(task, 'completed')];
          return store.commit({ taskId: task.id, expectedVersion: 1, task: applyEvents(task, events), events });
        }),
        ...fresh.map((task) => createTask(store, task)),
      ];
      const results = await Promise.allSettled(commits);

      for (const [i, result] of results.entries()) {
        if (i === staleAt) {
          expect(result.status, 'the stale commit').toBe('rejected');
          if (result.status === 'rejected') expectConflict(expect, result.reason, { taskId: stale.id, expected: 1 });
          continue;
        }
        expect(result, `commit ${i}`).toEqual({ status: 'fulfilled', value: { version: i < BURST ? 2 : 1 } });
      }
      expect(await snapshot(store, stale.id)).toEqual(staleBefore);
      for (const task of tasks) {
        if (task === stale) continue;
        const record = await store.getTask(task.id);
        expect(record?.version).toBe(2);
        expect(record?.task.status.state).toBe('completed');
        expect((await store.readEvents(task.id, 0)).map((e) => e.seq)).toEqual([1, 2]);
      }
      for (const task of fresh) expect((await store.getTask(task.id))?.task).toEqual(createdSnapshot(task));
    });

    test(`${BURST} creates at once, one reusing an indexed message id: only that one fails`, async ({
      expect,
      store,
    }) => {
      const taken = userMessage('sent before', { messageId: 'burst-taken' });
      const earlier = taskFixture({ history: [taken] });
      await createTask(store, earlier);
      const tasks = Array.from({ length: BURST }, (_, i) =>
        taskFixture({ history: [userMessage(`message ${i}`, { messageId: `burst-${i}` })] }),
      );
      const reuseAt = Math.floor(BURST / 2);
      const reuser = taskFixture({ history: [userMessage('sent again', { messageId: 'burst-taken' })] });
      tasks[reuseAt] = reuser;
      // Two commits of the burst with one new id: whichever the store takes second fails.
      const pair = [BURST - 3, BURST - 2] as const;
      for (const i of pair)
        tasks[i] = taskFixture({ history: [userMessage(`pair ${i}`, { messageId: 'burst-pair' })] });

      const results = await Promise.allSettled(tasks.map((task) => createTask(store, task)));

      for (const [i, result] of results.entries()) {
        if (i === reuseAt) {
          expect(result.status, 'the commit reusing an id').toBe('rejected');
          if (result.status === 'rejected') {
            expect(isDuplicateMessage(result.reason), `expected DUPLICATE_MESSAGE, got ${String(result.reason)}`).toBe(
              true,
            );
            expect((result.reason as { data?: unknown }).data).toMatchObject({
              messageId: 'burst-taken',
              taskId: earlier.id,
            });
          }
          expect(await store.getTask(reuser.id)).toBeUndefined();
          continue;
        }
        if ((pair as readonly number[]).includes(i)) continue;
        expect(result, `commit ${i}`).toEqual({ status: 'fulfilled', value: { version: 1 } });
        expect((await store.findMessage(`burst-${i}`))?.taskId).toBe((tasks[i] as Task).id);
      }
      const pairResults = pair.map((i) => results[i] as PromiseSettledResult<unknown>);
      const winners = pair.filter((_, k) => pairResults[k]?.status === 'fulfilled');
      expect(winners, 'exactly one of the two commits with one new message id').toHaveLength(1);
      const loser = pairResults.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(isDuplicateMessage(loser.reason), `expected DUPLICATE_MESSAGE, got ${String(loser.reason)}`).toBe(true);
      const winner = tasks[winners[0] as number] as Task;
      expect((await store.findMessage('burst-pair'))?.taskId).toBe(winner.id);
      for (const i of pair) {
        const task = tasks[i] as Task;
        expect(await store.getTask(task.id), `pair commit ${i}`).toEqual(
          task === winner ? expect.objectContaining({ version: 1 }) : undefined,
        );
      }
      expect((await store.findMessage('burst-taken'))?.taskId).toBe(earlier.id);
    });

    test('commits of one task made at once, among others, keep their order', async ({ expect, store }) => {
      const task = taskFixture({ state: 'working' });
      const others = Array.from({ length: BURST }, () => taskFixture());
      await createTask(store, task);
      const first = [artifactUpdate(task, 'first')];
      const afterFirst = applyEvents(task, first);
      const second = [artifactUpdate(task, { artifactId: 'second', parts: [textPart('second')] })];

      const half = others.slice(0, BURST / 2).map((other) => createTask(store, other));
      const ofTask = [
        store.commit({ taskId: task.id, expectedVersion: 1, task: afterFirst, events: first }),
        // Made before the first is answered, expecting the version the first one makes.
        store.commit({ taskId: task.id, expectedVersion: 2, task: applyEvents(afterFirst, second), events: second }),
      ];
      const rest = others.slice(BURST / 2).map((other) => createTask(store, other));
      const [one, two] = await Promise.allSettled(ofTask);
      for (const result of await Promise.allSettled([...half, ...rest])) expect(result.status).toBe('fulfilled');

      // The first is never overtaken: it succeeds. The second sees it, or (a store that runs
      // concurrent commits in parallel) conflicts, as any commit racing an earlier one may.
      expect(one).toEqual({ status: 'fulfilled', value: { version: 2 } });
      const events = (await store.readEvents(task.id, 0)).map((e) => e.event);
      if (two?.status === 'fulfilled') {
        expect(two.value).toEqual({ version: 3 });
        expect(events).toEqual([task, ...first, ...second]);
        expect((await store.getTask(task.id))?.version).toBe(3);
      } else {
        expectConflict(expect, two?.reason, { taskId: task.id, expected: 2 });
        expect(events).toEqual([task, ...first]);
        expect((await store.getTask(task.id))?.task).toEqual(afterFirst);
      }
    });

    test('concurrent creates of one task id: exactly one wins', async ({ expect, store }) => {
      const creators = Array.from({ length: 10 }, (_, i) => taskFixture({ id: 'contested', metadata: { creator: i } }));
      const results = await Promise.allSettled(creators.map((task) => createTask(store, task)));

      const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
      expect(winners).toHaveLength(1);
      for (const result of results) {
        if (result.status === 'rejected') expectConflict(expect, result.reason, { taskId: 'contested', expected: 0 });
      }
      const winner = creators[winners[0] ?? -1] as Task;
      expect((await store.getTask('contested'))?.task).toEqual(createdSnapshot(winner));
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
