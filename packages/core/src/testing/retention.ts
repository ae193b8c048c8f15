import type { TaskState } from '../model/types.js';
import { appendEvents, createdSnapshot, createTask, statusUpdate, taskFixture } from './fixtures.js';
import { type ConformanceOptions, defineModule } from './harness.js';

const HOUR = 3_600_000;

/** purgeExpired (supports.ttl), driven by the injected clock. */
export function retention(options: ConformanceOptions): void {
  defineModule(options, 'retention', (test) => {
    test(
      'purges old terminal tasks with their events and orphaned old contexts; keeps the rest',
      async ({ expect, store, clock }) => {
        const t0 = clock.now;
        const cutoff = t0 + HOUR;
        const create = (id: string, contextId: string, state: TaskState) =>
          createTask(store, taskFixture({ id, contextId, state }));

        // Last updated at t0, before the cutoff.
        await create('old-completed', 'ctx-old', 'completed');
        await create('old-failed', 'ctx-f', 'failed');
        await create('old-canceled', 'ctx-c', 'canceled');
        await create('old-rejected', 'ctx-r', 'rejected');
        await create('old-working', 'ctx-working', 'working');
        await create('old-submitted', 'ctx-submitted', 'submitted');
        await create('old-input', 'ctx-input', 'input-required');
        await create('old-auth', 'ctx-auth', 'auth-required');
        await create('shared-old', 'ctx-shared', 'completed');
        await create('refreshed-old', 'ctx-refreshed', 'completed');
        await create('ends-late', 'ctx-late', 'working');
        for (const id of ['ctx-old', 'ctx-working', 'ctx-shared', 'ctx-refreshed', 'ctx-orphan-old']) {
          await store.setContext(id, { id });
        }

        // Exactly at the cutoff: "before" is strict, so these stay.
        clock.set(cutoff);
        await create('at-cutoff', 'ctx-at-cutoff', 'completed');
        await store.setContext('ctx-orphan-at-cutoff', 'kept');

        // After the cutoff.
        clock.set(t0 + 2 * HOUR);
        await create('recent-completed', 'ctx-recent', 'completed');
        await create('shared-recent', 'ctx-shared', 'failed');
        await appendEvents(store, 'ends-late', [statusUpdate({ id: 'ends-late', contextId: 'ctx-late' }, 'completed')]);
        await store.setContext('ctx-refreshed', { refreshed: true });
        await store.setContext('ctx-orphan-new', 'kept');

        const result = await store.purgeExpired(cutoff);
        expect(result).toEqual({ tasks: 6, contexts: 2 });

        const purged = ['old-completed', 'old-failed', 'old-canceled', 'old-rejected', 'shared-old', 'refreshed-old'];
        for (const id of purged) {
          expect(await store.getTask(id), id).toBeUndefined();
          expect(await store.readEvents(id, 0), id).toEqual([]);
        }
        const kept = [
          'old-working',
          'old-submitted',
          'old-input',
          'old-auth',
          'ends-late',
          'at-cutoff',
          'recent-completed',
          'shared-recent',
        ];
        for (const id of kept) {
          expect((await store.getTask(id))?.task.id, id).toBe(id);
          expect((await store.readEvents(id, 0)).length, id).toBeGreaterThan(0);
        }
        expect((await store.getTask('ends-late'))?.version).toBe(2);
        expect((await store.listTasksByContext('ctx-shared')).map((r) => r.task.id)).toEqual(['shared-recent']);
        expect(await store.listTasksByContext('ctx-old')).toEqual([]);
        expect((await store.listActiveTasks()).map((r) => r.task.id).sort()).toEqual(['old-submitted', 'old-working']);

        for (const id of ['ctx-old', 'ctx-orphan-old']) expect(await store.getContext(id), id).toBeUndefined();
        for (const id of ['ctx-working', 'ctx-shared', 'ctx-orphan-at-cutoff', 'ctx-orphan-new']) {
          expect((await store.getContext(id))?.contextId, id).toBe(id);
        }
        expect((await store.getContext('ctx-refreshed'))?.state).toEqual({ refreshed: true });

        expect(await store.purgeExpired(cutoff)).toEqual({ tasks: 0, contexts: 0 });
      },
      'ttl',
    );

    test(
      'a context is kept while any of its tasks remains, and purged with the last one',
      async ({ expect, store, clock }) => {
        const t0 = clock.now;
        const running = taskFixture({ id: 'running', contextId: 'ctx', state: 'working' });
        await createTask(store, taskFixture({ id: 'done', contextId: 'ctx', state: 'completed' }));
        await createTask(store, running);
        await store.setContext('ctx', { turns: 2 });

        clock.set(t0 + 2 * HOUR);
        expect(await store.purgeExpired(t0 + HOUR)).toEqual({ tasks: 1, contexts: 0 });
        expect(await store.getContext('ctx')).toEqual({ contextId: 'ctx', state: { turns: 2 }, updatedAt: t0 });

        await appendEvents(store, 'running', [statusUpdate(running, 'canceled')]);
        clock.set(t0 + 4 * HOUR);
        expect(await store.purgeExpired(t0 + 3 * HOUR)).toEqual({ tasks: 1, contexts: 1 });
        expect(await store.getContext('ctx')).toBeUndefined();
        expect(await store.getTask('running')).toBeUndefined();
        expect(await store.listTasksByContext('ctx')).toEqual([]);
      },
      'ttl',
    );

    test(
      'a purged task id can be created again, its log starting at seq 1',
      async ({ expect, store, clock }) => {
        const task = taskFixture({ id: 'reused', state: 'completed' });
        await createTask(store, task);
        await createTask(store, taskFixture({ id: 'other', state: 'submitted' }));
        clock.advance(HOUR);
        expect(await store.purgeExpired(clock.now)).toEqual({ tasks: 1, contexts: 0 });

        const again = taskFixture({ id: 'reused', state: 'working' });
        expect(await createTask(store, again)).toEqual({ version: 1 });
        expect(await store.getTask('reused')).toEqual({
          task: createdSnapshot(again),
          version: 1,
          createdAt: clock.now,
          updatedAt: clock.now,
        });
        expect(await store.readEvents('reused', 0)).toEqual([{ seq: 1, event: again, createdAt: clock.now }]);
      },
      'ttl',
    );
  });
}
