import { createdSnapshot, createTask, taskFixture } from './fixtures.js';
import { type ConformanceOptions, defineModule } from './harness.js';

/** open/close/ping and the declared capabilities. */
export function lifecycle(options: ConformanceOptions): void {
  defineModule(options, 'lifecycle', (test) => {
    test('declares its capabilities as booleans; listTasks, push and interruptedTasks, when declared, come with their methods; advice is in range', async ({
      expect,
      store,
    }) => {
      const { listTasks, push, interruptedTasks, cluster, streamCommitIntervalMs, ...required } = store.supports;
      expect(required).toEqual({
        durable: expect.any(Boolean),
        crossProcess: expect.any(Boolean),
        ttl: expect.any(Boolean),
        namespaces: expect.any(Boolean),
      });
      // Advice, not a capability: when given, a number of milliseconds the runtime can use.
      if (streamCommitIntervalMs !== undefined) {
        expect(Number.isFinite(streamCommitIntervalMs) && streamCommitIntervalMs >= 0).toBe(true);
        expect(streamCommitIntervalMs).toBeLessThanOrEqual(1000);
      }
      // Optional: a store written before listTasks existed leaves it out.
      if (listTasks !== undefined) expect(listTasks).toEqual(expect.any(Boolean));
      if (listTasks === true) expect(store.listTasks).toEqual(expect.any(Function));
      if (interruptedTasks !== undefined) expect(interruptedTasks).toEqual(expect.any(Boolean));
      if (interruptedTasks === true) expect(store.listInterruptedTasks).toEqual(expect.any(Function));
      if (push !== undefined) expect(push).toEqual(expect.any(Boolean));
      if (cluster !== undefined) expect(cluster).toEqual(expect.any(Boolean));
      if (cluster === true) {
        for (const method of [store.joinWorker, store.listWorkers, store.subscribeAll]) {
          expect(method).toEqual(expect.any(Function));
        }
      }
      if (push === true) {
        for (const method of [
          store.savePushConfig,
          store.getPushConfig,
          store.listPushConfigs,
          store.deletePushConfig,
          store.claimPushDeliveries,
          store.renewPushClaims,
          store.completePushDelivery,
          store.failPushAttempt,
          store.releasePushClaim,
          store.listPushDeliveries,
        ]) {
          expect(method).toEqual(expect.any(Function));
        }
      }
    });

    test('open() twice is harmless: the store keeps working and keeps its data', async ({ expect, store }) => {
      // The harness already opened it once.
      await store.open();
      const task = taskFixture();
      await createTask(store, task);
      await store.open();
      expect((await store.getTask(task.id))?.task).toEqual(createdSnapshot(task));
      await store.setContext('ctx', 1);
      expect((await store.getContext('ctx'))?.state).toBe(1);
    });

    test('ping() resolves on an open store', async ({ expect, store }) => {
      await expect(store.ping()).resolves.toBeUndefined();
      await createTask(store, taskFixture());
      await expect(store.ping()).resolves.toBeUndefined();
    });

    test('close() twice is harmless', async ({ expect, store }) => {
      await createTask(store, taskFixture());
      await expect(store.close()).resolves.toBeUndefined();
      await expect(store.close()).resolves.toBeUndefined();
    });

    test('open() at a fresh location gives an empty store', async ({ expect, store, openStore, newLocation }) => {
      await createTask(store, taskFixture({ id: 'here', contextId: 'ctx' }));
      await store.setContext('ctx', 'here');
      const elsewhere = await openStore({ location: newLocation() });
      expect(await elsewhere.getTask('here')).toBeUndefined();
      expect(await elsewhere.getContext('ctx')).toBeUndefined();
      expect(await elsewhere.listActiveTasks()).toEqual([]);
    });
  });
}
