import type { Message } from '../model/types.js';
import {
  appendEvents,
  artifactUpdate,
  createTask,
  indexEntry,
  isDuplicateMessage,
  rejectionOf,
  taskFixture,
  turnRequest,
  userMessage,
} from './fixtures.js';
import { type ConformanceOptions, defineModule } from './harness.js';

/**
 * Two agents sharing one database (supports.namespaces) never see each other's data: tasks,
 * events, contexts, message ids, turn queues and worker leases.
 */
export function isolation(options: ConformanceOptions): void {
  defineModule(options, 'isolation', (test) => {
    test(
      'tasks, events and contexts of one namespace are invisible to another',
      async ({ expect, store, openStore }) => {
        const a = await openStore({ namespace: 'agent_a' });
        const b = await openStore({ namespace: 'agent_b' });
        const task = taskFixture({ id: 'task-of-a', contextId: 'ctx-of-a', state: 'working' });
        await createTask(a, task, [artifactUpdate(task, 'secret')]);
        await a.setContext('ctx-of-a', { owner: 'a' });

        expect((await a.getTask('task-of-a'))?.version).toBe(2);
        for (const other of [b, store]) {
          expect(await other.getTask('task-of-a')).toBeUndefined();
          expect(await other.readEvents('task-of-a', 0)).toEqual([]);
          expect(await other.listTasksByContext('ctx-of-a')).toEqual([]);
          expect(await other.getContext('ctx-of-a')).toBeUndefined();
          expect(await other.listActiveTasks()).toEqual([]);
        }

        // And the other way round, from the default namespace.
        await createTask(store, taskFixture({ id: 'task-of-default', contextId: 'ctx-of-default' }));
        await store.setContext('ctx-of-default', 'default');
        for (const other of [a, b]) {
          expect(await other.getTask('task-of-default')).toBeUndefined();
          expect(await other.getContext('ctx-of-default')).toBeUndefined();
        }
        expect((await a.listActiveTasks()).map((r) => r.task.id)).toEqual(['task-of-a']);
      },
      'namespaces',
    );

    test(
      'the same ids live independently in two namespaces',
      async ({ expect, openStore }) => {
        const a = await openStore({ namespace: 'agent_a' });
        const b = await openStore({ namespace: 'agent_b' });
        const taskOfA = taskFixture({ id: 'same-id', contextId: 'same-ctx', state: 'working', metadata: { of: 'a' } });
        const taskOfB = taskFixture({ id: 'same-id', contextId: 'same-ctx', state: 'working', metadata: { of: 'b' } });

        await createTask(a, taskOfA);
        await createTask(b, taskOfB); // expectedVersion 0 succeeds: nothing exists in b's namespace
        await appendEvents(a, 'same-id', [artifactUpdate(taskOfA, 'a1'), artifactUpdate(taskOfA, 'a2')]);
        await a.setContext('same-ctx', 'state of a');
        await b.setContext('same-ctx', 'state of b');

        expect((await a.getTask('same-id'))?.version).toBe(3);
        expect((await b.getTask('same-id'))?.version).toBe(1);
        expect((await b.getTask('same-id'))?.task.metadata).toEqual({ of: 'b' });
        expect((await b.readEvents('same-id', 0)).map((e) => e.seq)).toEqual([1]);
        expect((await a.listTasksByContext('same-ctx')).map((r) => r.task.metadata)).toEqual([{ of: 'a' }]);
        expect((await a.getContext('same-ctx'))?.state).toBe('state of a');
        expect((await b.getContext('same-ctx'))?.state).toBe('state of b');
      },
      'namespaces',
    );

    test(
      'the message index is per namespace',
      async ({ expect, store, openStore }) => {
        const a = await openStore({ namespace: 'agent_a' });
        const b = await openStore({ namespace: 'agent_b' });
        const messageId = 'msg-shared-id';
        const taskOfA = taskFixture({
          id: 'task-of-a',
          contextId: 'ctx-a',
          history: [userMessage('a', { messageId })],
        });
        await createTask(a, taskOfA);
        expect(await b.findMessage(messageId)).toBeUndefined();
        expect(await store.findMessage(messageId)).toBeUndefined();

        // The same message id is new to b: its task is created and indexed there.
        const taskOfB = taskFixture({
          id: 'task-of-b',
          contextId: 'ctx-b',
          history: [userMessage('b', { messageId })],
        });
        await createTask(b, taskOfB);
        expect(await a.findMessage(messageId)).toEqual(indexEntry(taskOfA, taskOfA.history?.[0] as Message));
        expect(await b.findMessage(messageId)).toEqual(indexEntry(taskOfB, taskOfB.history?.[0] as Message));

        // Within a namespace it is still a duplicate.
        const again = taskFixture({ history: [userMessage('again', { messageId })] });
        expect(isDuplicateMessage(await rejectionOf(createTask(a, again)))).toBe(true);
        expect(isDuplicateMessage(await rejectionOf(createTask(b, again)))).toBe(true);
        await createTask(store, again);
        expect(await store.findMessage(messageId)).toEqual(indexEntry(again, again.history?.[0] as Message));
      },
      'namespaces',
    );

    test(
      'turn queues and worker leases are per namespace',
      async ({ expect, store, openStore, clock }) => {
        const a = await openStore({ namespace: 'agent_a' });
        const b = await openStore({ namespace: 'agent_b' });
        const t0 = clock.now;
        const slotOfA = await a.enqueueTurn(turnRequest({ contextId: 'ctx', workerId: 'worker' }));
        const slotOfB = await b.enqueueTurn(turnRequest({ contextId: 'ctx', workerId: 'worker' }));
        // The same context id in b is another queue: its first slot does not wait for a's.
        expect(await b.turnReadiness(slotOfB)).toEqual({ ready: true });
        expect(await a.turnReadiness(slotOfA)).toEqual({ ready: true });
        expect(await a.listWorkerTurns('worker')).toEqual([slotOfA]);
        expect(await b.listWorkerTurns('worker')).toEqual([slotOfB]);
        expect(await store.listWorkerTurns('worker')).toEqual([]);

        await a.heartbeat('worker', t0 + 100);
        clock.set(t0 + 1000);
        // b's reaper must not fail a's tasks.
        expect(await b.claimExpiredWorkers(t0 + 1000)).toEqual([]);
        expect(await store.claimExpiredWorkers(t0 + 1000)).toEqual([]);
        await b.removeWorker('worker');
        expect(await a.claimExpiredWorkers(t0 + 1000)).toEqual([
          { workerId: 'worker', lastHeartbeat: t0, turns: [slotOfA] },
        ]);

        await b.finishTurn(slotOfA);
        expect(await a.listWorkerTurns('worker')).toEqual([slotOfA]);
      },
      'namespaces',
    );

    test(
      'purgeExpired in one namespace does not delete another’s data',
      async ({ expect, openStore, clock }) => {
        const a = await openStore({ namespace: 'agent_a' });
        const b = await openStore({ namespace: 'agent_b' });
        await createTask(a, taskFixture({ id: 'done-in-a', contextId: 'ctx-a', state: 'completed' }));
        await a.setContext('orphan-in-a', 'old');
        await createTask(b, taskFixture({ id: 'done-in-b', contextId: 'ctx-b', state: 'completed' }));

        clock.advance(10_000);
        if (b.supports.ttl) {
          expect(await b.purgeExpired(clock.now)).toEqual({ tasks: 1, contexts: 0 });
          expect(await b.getTask('done-in-b')).toBeUndefined();
        }
        expect((await a.getTask('done-in-a'))?.task.id).toBe('done-in-a');
        expect((await a.getContext('orphan-in-a'))?.state).toBe('old');
        if (a.supports.ttl) expect(await a.purgeExpired(clock.now)).toEqual({ tasks: 1, contexts: 1 });
      },
      'namespaces',
    );
  });
}
