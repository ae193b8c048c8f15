import { appendEvents, artifactUpdate, createTask, eventually, taskFixture } from './fixtures.js';
import { type ConformanceOptions, defineModule } from './harness.js';

/**
 * subscribe() on the committing store instance. Notifications may arrive late, coalesced or
 * repeated (see `EventNotifier`), so the tests wait (bounded polling) for a seq at least as high as
 * the one committed, and use a second listener as the barrier for "was not called".
 */
export function notifications(options: ConformanceOptions): void {
  defineModule(options, 'notifications', (test) => {
    test('a listener hears a seq at least as high as each commit’s last one', async ({
      expect,
      store,
      notificationTimeout,
    }) => {
      const task = taskFixture({ state: 'working' });
      const seen: number[] = [];
      // Subscribing before the task exists is allowed: the runtime subscribes, then reads.
      const unsubscribe = store.subscribe(task.id, (seq) => seen.push(seq));
      try {
        await createTask(store, task);
        await eventually('a notification with seq >= 1', () => seen.some((s) => s >= 1), {
          timeout: notificationTimeout,
        });
        const { version } = await appendEvents(store, task.id, [artifactUpdate(task, 'a'), artifactUpdate(task, 'b')]);
        expect(version).toBe(3);
        await eventually('a notification with seq >= 3', () => seen.some((s) => s >= 3), {
          timeout: notificationTimeout,
        });
        // A notification names a committed seq, never one from the future.
        expect(seen.every((s) => Number.isInteger(s) && s >= 1 && s <= 3)).toBe(true);
      } finally {
        unsubscribe();
      }
    });

    test('a commit marked unknownElsewhere still tells this instance’s listeners, and later commits too', async ({
      expect,
      store,
      notificationTimeout,
    }) => {
      const task = taskFixture({ state: 'working' });
      const seen: number[] = [];
      const unsubscribe = store.subscribe(task.id, (seq) => seen.push(seq));
      try {
        const created = await store.commit({
          taskId: task.id,
          expectedVersion: 0,
          task,
          events: [task],
          unknownElsewhere: true,
        });
        expect(created.version).toBe(1);
        await eventually('a notification with seq >= 1', () => seen.some((s) => s >= 1), {
          timeout: notificationTimeout,
        });
        expect((await store.getTask(task.id))?.version).toBe(1);
        await appendEvents(store, task.id, [artifactUpdate(task, 'a')]);
        await eventually('a notification with seq >= 2', () => seen.some((s) => s >= 2), {
          timeout: notificationTimeout,
        });
      } finally {
        unsubscribe();
      }
    });

    test('every listener of the task is called', async ({ expect, store, notificationTimeout }) => {
      const task = taskFixture();
      const seen: number[][] = [[], [], []];
      const unsubscribes = seen.map((list) => store.subscribe(task.id, (seq) => list.push(seq)));
      try {
        await createTask(store, task);
        await eventually('all three listeners', () => seen.every((list) => list.some((s) => s >= 1)), {
          timeout: notificationTimeout,
        });
        expect(seen.map((list) => Math.max(...list))).toEqual([1, 1, 1]);
      } finally {
        for (const unsubscribe of unsubscribes) unsubscribe();
      }
    });

    test('unsubscribe stops further calls', async ({ expect, store, notificationTimeout }) => {
      const task = taskFixture({ state: 'working' });
      const gone: number[] = [];
      const barrier: number[] = [];
      const unsubscribeGone = store.subscribe(task.id, (seq) => gone.push(seq));
      const unsubscribeBarrier = store.subscribe(task.id, (seq) => barrier.push(seq));
      try {
        await createTask(store, task);
        await eventually('both listeners', () => gone.some((s) => s >= 1) && barrier.some((s) => s >= 1), {
          timeout: notificationTimeout,
        });

        unsubscribeGone();
        unsubscribeGone(); // idempotent
        const callsBefore = gone.length;
        await appendEvents(store, task.id, [artifactUpdate(task, 'after unsubscribe')]);
        await appendEvents(store, task.id, [artifactUpdate(task, 'and again')]);
        await eventually('the remaining listener to hear seq 3', () => barrier.some((s) => s >= 3), {
          timeout: notificationTimeout,
        });
        expect(gone).toHaveLength(callsBefore);
        expect(gone.every((s) => s <= 1)).toBe(true);
      } finally {
        unsubscribeGone();
        unsubscribeBarrier();
      }
    });

    test('a listener of task A is not called for task B', async ({ expect, store, notificationTimeout }) => {
      const a = taskFixture({ state: 'working' });
      const b = taskFixture({ state: 'working', contextId: a.contextId });
      const heardA: number[] = [];
      const heardB: number[] = [];
      const unsubscribeA = store.subscribe(a.id, (seq) => heardA.push(seq));
      const unsubscribeB = store.subscribe(b.id, (seq) => heardB.push(seq));
      try {
        await createTask(store, b);
        await appendEvents(store, b.id, [artifactUpdate(b, 'b only')]);
        await eventually('the listener of B', () => heardB.some((s) => s >= 2), { timeout: notificationTimeout });
        expect(heardA).toEqual([]);

        await createTask(store, a);
        await eventually('the listener of A', () => heardA.some((s) => s >= 1), { timeout: notificationTimeout });
        expect(heardA.every((s) => s === 1)).toBe(true);
      } finally {
        unsubscribeA();
        unsubscribeB();
      }
    });

    test('a throwing listener breaks neither the commit nor the other listeners', async ({
      expect,
      store,
      notificationTimeout,
    }) => {
      const task = taskFixture({ state: 'working' });
      const heard: number[] = [];
      let thrown = 0;
      const unsubscribeThrowing = store.subscribe(task.id, () => {
        thrown++;
        throw new Error('listener failure (expected by the conformance suite)');
      });
      const unsubscribe = store.subscribe(task.id, (seq) => heard.push(seq));
      try {
        expect((await createTask(store, task)).version).toBe(1);
        await eventually('the healthy listener', () => heard.some((s) => s >= 1), { timeout: notificationTimeout });
        expect((await appendEvents(store, task.id, [artifactUpdate(task, 'more')])).version).toBe(2);
        await eventually('the healthy listener, again', () => heard.some((s) => s >= 2), {
          timeout: notificationTimeout,
        });
        await eventually('the throwing listener to have been called', () => thrown > 0, {
          timeout: notificationTimeout,
        });
        expect((await store.getTask(task.id))?.version).toBe(2);
      } finally {
        unsubscribeThrowing();
        unsubscribe();
      }
    });
  });
}
