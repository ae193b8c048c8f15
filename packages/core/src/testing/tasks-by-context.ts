import { appendEvents, artifactUpdate, createTask, statusUpdate, taskFixture } from './fixtures.js';
import { type ConformanceOptions, defineModule } from './harness.js';

/** listTasksByContext: filtering, order, limit. */
export function tasksByContext(options: ConformanceOptions): void {
  defineModule(options, 'tasksByContext', (test) => {
    test('returns only that context’s tasks, oldest first', async ({ expect, store, clock }) => {
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const task = taskFixture({ id: `task-a${i}`, contextId: 'ctx-a', state: i === 1 ? 'completed' : 'working' });
        await createTask(store, task);
        ids.push(task.id);
        await createTask(store, taskFixture({ id: `task-b${i}`, contextId: 'ctx-b' }));
        clock.advance(10);
      }
      await createTask(store, taskFixture({ id: 'task-other', contextId: 'ctx-a-suffix' }));

      const listed = await store.listTasksByContext('ctx-a');
      expect(listed.map((r) => r.task.id)).toEqual(ids);
      expect(listed.every((r) => r.task.contextId === 'ctx-a')).toBe(true);
      expect(listed[1]).toEqual(await store.getTask('task-a1'));
      expect((await store.listTasksByContext('ctx-b')).map((r) => r.task.id)).toEqual([
        'task-b0',
        'task-b1',
        'task-b2',
        'task-b3',
      ]);
    });

    test('order is by creation: updating an old task does not move it', async ({ expect, store, clock }) => {
      const first = taskFixture({ id: 'first', contextId: 'ctx', state: 'working' });
      await createTask(store, first);
      clock.advance(10);
      await createTask(store, taskFixture({ id: 'second', contextId: 'ctx' }));
      clock.advance(10);
      await appendEvents(store, 'first', [artifactUpdate(first, 'late'), statusUpdate(first, 'completed')]);

      const listed = await store.listTasksByContext('ctx');
      expect(listed.map((r) => r.task.id)).toEqual(['first', 'second']);
      expect(listed[0]?.version).toBe(3);
      expect(listed[0]?.task.status.state).toBe('completed');
    });

    test('honours limit', async ({ expect, store, clock }) => {
      for (let i = 0; i < 5; i++) {
        await createTask(store, taskFixture({ id: `t${i}`, contextId: 'ctx' }));
        clock.advance(1);
      }
      expect((await store.listTasksByContext('ctx', { limit: 2 })).map((r) => r.task.id)).toEqual(['t0', 't1']);
      expect((await store.listTasksByContext('ctx', { limit: 1 })).map((r) => r.task.id)).toEqual(['t0']);
      expect(await store.listTasksByContext('ctx', { limit: 5 })).toHaveLength(5);
      expect(await store.listTasksByContext('ctx', { limit: 100 })).toHaveLength(5);
      expect(await store.listTasksByContext('ctx', {})).toHaveLength(5);
    });

    test('an unknown context gives []', async ({ expect, store }) => {
      expect(await store.listTasksByContext('no-such-context')).toEqual([]);
      await createTask(store, taskFixture({ contextId: 'known' }));
      expect(await store.listTasksByContext('no-such-context', { limit: 10 })).toEqual([]);
      expect(await store.listTasksByContext('KNOWN')).toEqual([]);
    });
  });
}
