import type { A2AStore, WorkerDescription } from '../store/index.js';
import {
  appendEvents,
  artifactUpdate,
  createTask,
  eventually,
  newId,
  sortSlots,
  taskFixture,
  turnRequest,
} from './fixtures.js';
import { type ConformanceOptions, defineModule, storesOnLocation } from './harness.js';

/**
 * The cluster view an operator's monitor reads (`supports.cluster`): `joinWorker` recognising a
 * worker id's previous process start, `listWorkers` from the lease table, and `subscribeAll`.
 *
 * Where the contract leaves room, the suite decides:
 * - joinWorker returns the predecessor whether or not its lease has run out.
 * - heartbeat() keeps the description a joinWorker recorded; a row heartbeat() creates has none.
 */
export function cluster(options: ConformanceOptions): void {
  defineModule(options, 'cluster', (test) => {
    test(
      'joinWorker records the start; a start of another incarnation gets its predecessor with every turn',
      async ({ expect, store, clock }) => {
        const t0 = clock.now;
        const first = description('incarnation-1', t0);
        expect(await join(store, 'worker-fixed', t0 + 1000, first)).toBeUndefined();
        // The same start joining again only renews.
        expect(await join(store, 'worker-fixed', t0 + 2000, first)).toBeUndefined();
        const a1 = await store.enqueueTurn(turnRequest({ contextId: 'ctx-a', workerId: 'worker-fixed' }));
        const b1 = await store.enqueueTurn(turnRequest({ contextId: 'ctx-b', workerId: 'worker-fixed' }));
        const other = await store.enqueueTurn(turnRequest({ contextId: 'ctx-a', workerId: 'worker-other' }));

        // Restarted within the lease: its lease has not run out, and it is still the predecessor.
        clock.set(t0 + 500);
        const second = description('incarnation-2', t0 + 500);
        const predecessor = await join(store, 'worker-fixed', t0 + 3000, second);
        expect(predecessor).toEqual({ workerId: 'worker-fixed', lastHeartbeat: t0, turns: expect.any(Array) });
        expect(sortSlots(predecessor?.turns ?? [])).toEqual(sortSlots([a1, b1]));
        // The turns stay queued until the caller finishes them.
        expect(sortSlots(await store.listWorkerTurns('worker-fixed'))).toEqual(sortSlots([a1, b1]));
        expect(await store.turnReadiness(other)).toEqual({ ready: false, ahead: a1 });

        const [worker] = (await store.listWorkers?.()) ?? [];
        expect(worker).toEqual({
          workerId: 'worker-fixed',
          leaseUntil: t0 + 3000,
          lastHeartbeat: t0 + 500,
          description: second,
          turns: expect.any(Array),
        });
        // Once that start renews under its own incarnation, nothing is a predecessor any more.
        expect(await join(store, 'worker-fixed', t0 + 4000, second)).toBeUndefined();
      },
      'cluster',
    );

    test(
      'joinWorker returns a predecessor whose lease ran out, and one written by heartbeat alone',
      async ({ expect, store, clock }) => {
        const t0 = clock.now;
        await join(store, 'worker-expired', t0 + 100, description('old', t0));
        await store.heartbeat('worker-legacy', t0 + 100);
        const turn = await store.enqueueTurn(turnRequest({ workerId: 'worker-legacy' }));
        clock.set(t0 + 10_000);
        expect(await join(store, 'worker-expired', t0 + 20_000, description('new', t0 + 10_000))).toEqual({
          workerId: 'worker-expired',
          lastHeartbeat: t0,
          turns: [],
        });
        expect(await join(store, 'worker-legacy', t0 + 20_000, description('new', t0 + 10_000))).toEqual({
          workerId: 'worker-legacy',
          lastHeartbeat: t0,
          turns: [turn],
        });
      },
      'cluster',
    );

    test(
      'joinWorker returns the turns of its id whose row a reaper already removed; none without turns',
      async ({ expect, store, clock }) => {
        const t0 = clock.now;
        await join(store, 'worker-gone', t0 + 100, description('old', t0));
        const turn = await store.enqueueTurn(turnRequest({ workerId: 'worker-gone' }));
        clock.set(t0 + 1000);
        await store.claimExpiredWorkers(t0 + 1000);
        expect(await join(store, 'worker-gone', t0 + 5000, description('new', t0 + 1000))).toEqual({
          workerId: 'worker-gone',
          lastHeartbeat: 0,
          turns: [turn],
        });
        await store.removeWorker('worker-gone');
        await store.finishTurn(turn);
        expect(await join(store, 'worker-gone', t0 + 5000, description('newer', t0 + 1000))).toBeUndefined();
      },
      'cluster',
    );

    test(
      'listWorkers lists every lease by worker id with its turns in queue order; heartbeat keeps the description',
      async ({ expect, store, clock }) => {
        const t0 = clock.now;
        const b = description('b', t0);
        await join(store, 'worker-b', t0 + 1000, b);
        await store.heartbeat('worker-a', t0 + 1000);
        const b1 = await store.enqueueTurn(turnRequest({ contextId: 'ctx-1', workerId: 'worker-b' }));
        const a1 = await store.enqueueTurn(turnRequest({ contextId: 'ctx-1', workerId: 'worker-a' }));
        const b2 = await store.enqueueTurn(turnRequest({ contextId: 'ctx-1', workerId: 'worker-b' }));
        clock.set(t0 + 700);
        await store.heartbeat('worker-b', t0 + 1700);

        expect(await store.listWorkers?.()).toEqual([
          { workerId: 'worker-a', leaseUntil: t0 + 1000, lastHeartbeat: t0, description: null, turns: [a1] },
          { workerId: 'worker-b', leaseUntil: t0 + 1700, lastHeartbeat: t0 + 700, description: b, turns: [b1, b2] },
        ]);
        // A claimed worker's lease is gone; the turns it left, until released, are listed under its
        // id with no lease (an operator must still find them if the reaper failed to).
        clock.set(t0 + 1500);
        await store.claimExpiredWorkers(t0 + 1500);
        expect(await store.listWorkers?.()).toEqual([
          { workerId: 'worker-a', leaseUntil: 0, lastHeartbeat: 0, description: null, turns: [a1] },
          { workerId: 'worker-b', leaseUntil: t0 + 1700, lastHeartbeat: t0 + 700, description: b, turns: [b1, b2] },
        ]);
        await store.finishTurn(a1);
        expect((await store.listWorkers?.())?.map((w) => w.workerId)).toEqual(['worker-b']);
        await store.removeWorker('worker-b');
        expect(await store.listWorkers?.()).toEqual([
          { workerId: 'worker-b', leaseUntil: 0, lastHeartbeat: 0, description: null, turns: [b1, b2] },
        ]);
        for (const turn of [b1, b2]) await store.finishTurn(turn);
        expect(await store.listWorkers?.()).toEqual([]);
      },
      'cluster',
    );

    test(
      'subscribeAll hears every task’s commits, also those of other instances where supported, until unsubscribed',
      async (context) => {
        const { expect, store, notificationTimeout } = context;
        const [, other = store] = await storesOnLocation(context, 2);
        const seen: Array<[string, number]> = [];
        const unsubscribe = store.subscribeAll?.((taskId, seq) => seen.push([taskId, seq])) ?? (() => {});
        const heard = (taskId: string, seq: number) => seen.some(([id, s]) => id === taskId && s >= seq);
        try {
          const one = taskFixture({ state: 'working' });
          const two = taskFixture({ state: 'working' });
          await createTask(store, one);
          await createTask(other, two);
          await appendEvents(other, two.id, [artifactUpdate(two, 'a')]);
          await eventually('both tasks', () => heard(one.id, 1) && heard(two.id, 2), { timeout: notificationTimeout });
          // A notification names a committed seq, never one from the future.
          for (const [taskId, seq] of seen) {
            if (taskId !== '') expect(seq).toBeLessThanOrEqual(taskId === one.id ? 1 : 2);
          }
        } finally {
          unsubscribe();
        }
        const count = seen.length;
        const late = taskFixture({ id: newId('late') });
        const barrier: string[] = [];
        const stop = store.subscribe(late.id, () => barrier.push(late.id));
        try {
          await createTask(store, late);
          await eventually('the barrier listener', () => barrier.length > 0, { timeout: notificationTimeout });
        } finally {
          stop();
        }
        expect(seen.slice(count).filter(([taskId]) => taskId === late.id)).toEqual([]);
      },
      'cluster',
    );
  });
}

function description(incarnation: string, startedAt: number): WorkerDescription {
  return { incarnation, host: 'host-1', pid: 4242, startedAt };
}

function join(store: A2AStore, workerId: string, leaseUntil: number, worker: WorkerDescription) {
  if (store.joinWorker === undefined) throw new Error('supports.cluster is true but joinWorker() is missing');
  return store.joinWorker(workerId, leaseUntil, worker);
}
