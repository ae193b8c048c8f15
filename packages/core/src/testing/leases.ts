import type { A2AStore, ExpiredWorker, QueueSlot } from '../store/index.js';
import { inQueueOrder, sortSlots, turnRequest } from './fixtures.js';
import { type ConformanceOptions, defineModule, storesOnLocation } from './harness.js';

const CLAIMERS = 10;

/**
 * Worker leases (`heartbeat`, `claimExpiredWorkers`, `removeWorker`), driven by the injected clock.
 *
 * Where the contract leaves room, the suite decides:
 * - A lease that ends exactly at `now` is still alive: a worker is claimed when `leaseUntil < now`.
 * - `lastHeartbeat` is the store's clock at the worker's last heartbeat() call (not its lease end).
 * - The order of the claimed workers is left open; their `turns` are in queue order (position order
 *   within each context; the order across contexts is left open).
 * - A worker that is `exceptWorkerId` keeps its row: a later claim without it returns it.
 * - A claimed worker that heartbeats again is registered anew.
 * - removeWorker() deletes only the lease row: turns still queued stay queued (and listed).
 */
export function leases(options: ConformanceOptions): void {
  defineModule(options, 'leases', (test) => {
    test('claimExpiredWorkers claims workers whose lease ended strictly before now, with their queued turns, once', async ({
      expect,
      store,
      clock,
    }) => {
      const t0 = clock.now;
      await store.heartbeat('worker-dead', t0 + 1000);
      await store.heartbeat('worker-boundary', t0 + 2000);
      await store.heartbeat('worker-alive', t0 + 10_000);
      await store.heartbeat('worker-idle', t0 + 500);
      const deadA1 = await store.enqueueTurn(turnRequest({ contextId: 'ctx-a', workerId: 'worker-dead' }));
      const aliveA2 = await store.enqueueTurn(turnRequest({ contextId: 'ctx-a', workerId: 'worker-alive' }));
      const deadB1 = await store.enqueueTurn(turnRequest({ contextId: 'ctx-b', workerId: 'worker-dead' }));
      const deadA3 = await store.enqueueTurn(turnRequest({ contextId: 'ctx-a', workerId: 'worker-dead' }));
      const boundaryC1 = await store.enqueueTurn(turnRequest({ contextId: 'ctx-c', workerId: 'worker-boundary' }));

      clock.set(t0 + 2000);
      const claimed = sortWorkers(await store.claimExpiredWorkers(t0 + 2000));
      expect(claimed.map((w) => w.workerId)).toEqual(['worker-dead', 'worker-idle']);
      const [dead, idle] = claimed;
      expect(dead).toEqual({ workerId: 'worker-dead', lastHeartbeat: t0, turns: expect.any(Array) });
      expect(inQueueOrder(dead?.turns ?? []), JSON.stringify(dead?.turns)).toBe(true);
      expect(sortSlots(dead?.turns ?? [])).toEqual(sortSlots([deadA1, deadA3, deadB1]));
      expect(idle).toEqual({ workerId: 'worker-idle', lastHeartbeat: t0, turns: [] });

      // Claimed means deleted: nobody gets them again.
      expect(await store.claimExpiredWorkers(t0 + 2000)).toEqual([]);

      // The turns stay queued until the reaper finishes them.
      expect(sortSlots(await store.listWorkerTurns('worker-dead'))).toEqual(sortSlots([deadA1, deadA3, deadB1]));
      expect(await store.turnReadiness(deadA1)).toEqual({ ready: true });
      expect(await store.turnReadiness(aliveA2)).toEqual({ ready: false, ahead: deadA1 });
      for (const slot of [deadA1, deadB1, deadA3]) await store.finishTurn(slot);
      expect(await store.turnReadiness(aliveA2)).toEqual({ ready: true });
      expect(await store.listWorkerTurns('worker-dead')).toEqual([]);

      // One millisecond later the lease that ended at t0 + 2000 has ended before `now`.
      expect(await store.claimExpiredWorkers(t0 + 2001)).toEqual([
        { workerId: 'worker-boundary', lastHeartbeat: t0, turns: [boundaryC1] },
      ]);
      expect(await store.claimExpiredWorkers(t0 + 10_000)).toEqual([]);
      expect((await store.claimExpiredWorkers(t0 + 10_001)).map((w) => w.workerId)).toEqual(['worker-alive']);
    });

    test('claimExpiredWorkers leaves exceptWorkerId alone', async ({ expect, store, clock }) => {
      const t0 = clock.now;
      await store.heartbeat('worker-self', t0 + 100);
      await store.heartbeat('worker-other', t0 + 100);
      const own = await store.enqueueTurn(turnRequest({ workerId: 'worker-self' }));

      clock.set(t0 + 1000);
      expect((await store.claimExpiredWorkers(t0 + 1000, 'worker-self')).map((w) => w.workerId)).toEqual([
        'worker-other',
      ]);
      expect(await store.claimExpiredWorkers(t0 + 1000, 'worker-self')).toEqual([]);
      // Its row is still there for another reaper.
      expect(await store.claimExpiredWorkers(t0 + 1000, 'worker-someone-else')).toEqual([
        { workerId: 'worker-self', lastHeartbeat: t0, turns: [own] },
      ]);
    });

    test('a renewed heartbeat keeps a worker alive; a claimed worker that heartbeats again is registered anew', async ({
      expect,
      store,
      clock,
    }) => {
      const t0 = clock.now;
      await store.heartbeat('worker', t0 + 1000);
      clock.set(t0 + 900);
      await store.heartbeat('worker', t0 + 2000);

      clock.set(t0 + 1500);
      expect(await store.claimExpiredWorkers(t0 + 1500)).toEqual([]);
      clock.set(t0 + 2001);
      expect(await store.claimExpiredWorkers(t0 + 2001)).toEqual([
        { workerId: 'worker', lastHeartbeat: t0 + 900, turns: [] },
      ]);

      // Back from a long pause: it heartbeats again and is a live worker once more.
      await store.heartbeat('worker', t0 + 5000);
      expect(await store.claimExpiredWorkers(t0 + 5000)).toEqual([]);
      expect(await store.claimExpiredWorkers(t0 + 5001)).toEqual([
        { workerId: 'worker', lastHeartbeat: t0 + 2001, turns: [] },
      ]);
    });

    test('removeWorker deletes the lease, not the turns; unknown workers are ignored', async ({
      expect,
      store,
      clock,
    }) => {
      const t0 = clock.now;
      await store.heartbeat('worker-leaving', t0 + 1000);
      await store.heartbeat('worker-staying', t0 + 1000);
      const slot = await store.enqueueTurn(turnRequest({ workerId: 'worker-leaving' }));

      await store.removeWorker('worker-leaving');
      await expect(store.removeWorker('worker-leaving')).resolves.toBeUndefined();
      await expect(store.removeWorker('worker-unknown')).resolves.toBeUndefined();
      expect(await store.listWorkerTurns('worker-leaving')).toEqual([slot]);

      clock.set(t0 + 5000);
      expect(await store.claimExpiredWorkers(t0 + 5000)).toEqual([
        { workerId: 'worker-staying', lastHeartbeat: t0, turns: [] },
      ]);
    });

    test(`${CLAIMERS} concurrent claimers (on several instances where supported): each dead worker goes to exactly one`, async (context) => {
      const { expect, clock } = context;
      const stores = await storesOnLocation(context, 3);
      const at = (i: number): A2AStore => stores[i % stores.length] as A2AStore;
      const t0 = clock.now;
      const dead = Array.from({ length: 6 }, (_, i) => `worker-dead-${i}`);
      const turns = new Map<string, QueueSlot>();
      for (const [i, workerId] of dead.entries()) {
        await at(i).heartbeat(workerId, t0 + 100 * i);
        turns.set(workerId, await at(i).enqueueTurn(turnRequest({ contextId: `ctx-${i % 2}`, workerId })));
      }
      await at(0).heartbeat('worker-alive-1', t0 + 60_000);
      await at(1).heartbeat('worker-alive-2', t0 + 60_000);

      clock.set(t0 + 10_000);
      const results = await Promise.all(
        Array.from({ length: CLAIMERS }, (_, i) => at(i).claimExpiredWorkers(t0 + 10_000)),
      );
      const claimed = sortWorkers(results.flat());
      expect(claimed.map((w) => w.workerId)).toEqual(dead);
      for (const [i, worker] of claimed.entries()) {
        expect(worker).toEqual({ workerId: dead[i], lastHeartbeat: t0, turns: [turns.get(dead[i] as string)] });
      }
      for (const reader of stores) expect(await reader.claimExpiredWorkers(t0 + 10_000)).toEqual([]);
      expect(sortWorkers(await at(2).claimExpiredWorkers(t0 + 60_001)).map((w) => w.workerId)).toEqual([
        'worker-alive-1',
        'worker-alive-2',
      ]);
    });
  });
}

function sortWorkers(workers: ExpiredWorker[]): ExpiredWorker[] {
  return [...workers].sort((a, b) => (a.workerId < b.workerId ? -1 : a.workerId > b.workerId ? 1 : 0));
}
