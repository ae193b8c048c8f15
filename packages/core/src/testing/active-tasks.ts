import type { TaskState } from '../model/types.js';
import { appendEvents, createTask, statusUpdate, taskFixture } from './fixtures.js';
import { type ConformanceOptions, defineModule } from './harness.js';

const ACTIVE: TaskState[] = ['submitted', 'working', 'unknown'];
const INACTIVE: TaskState[] = ['completed', 'failed', 'canceled', 'rejected', 'input-required', 'auth-required'];

/** listActiveTasks: what is still running after a restart (§6.3 neither terminal nor interrupted). */
export function activeTasks(options: ConformanceOptions): void {
  defineModule(options, 'activeTasks', (test) => {
    test('lists submitted, working and unknown tasks, and no terminal or interrupted one', async ({
      expect,
      store,
    }) => {
      expect(await store.listActiveTasks()).toEqual([]);
      for (const state of [...ACTIVE, ...INACTIVE]) {
        await createTask(store, taskFixture({ id: `task-${state}`, contextId: `ctx-${state}`, state }));
      }

      const active = await store.listActiveTasks();
      expect(active.map((r) => r.task.id).sort()).toEqual(ACTIVE.map((s) => `task-${s}`).sort());
      for (const record of active) expect(record).toEqual(await store.getTask(record.task.id));
    });

    test('follows state changes: a task leaves the list when it ends or waits for input', async ({ expect, store }) => {
      const ends = taskFixture({ id: 'ends', state: 'submitted' });
      const waits = taskFixture({ id: 'waits', state: 'submitted' });
      const resumes = taskFixture({ id: 'resumes', state: 'input-required' });
      await createTask(store, ends);
      await createTask(store, waits);
      await createTask(store, resumes);
      expect((await store.listActiveTasks()).map((r) => r.task.id).sort()).toEqual(['ends', 'waits']);

      await appendEvents(store, 'ends', [statusUpdate(ends, 'working')]);
      await appendEvents(store, 'waits', [statusUpdate(waits, 'working')]);
      await appendEvents(store, 'resumes', [statusUpdate(resumes, 'working')]);
      const working = await store.listActiveTasks();
      expect(working.map((r) => r.task.id).sort()).toEqual(['ends', 'resumes', 'waits']);
      expect(working.every((r) => r.task.status.state === 'working' && r.version === 2)).toBe(true);

      await appendEvents(store, 'ends', [statusUpdate(ends, 'completed')]);
      await appendEvents(store, 'waits', [statusUpdate(waits, 'auth-required')]);
      expect((await store.listActiveTasks()).map((r) => r.task.id)).toEqual(['resumes']);
    });
  });
}
