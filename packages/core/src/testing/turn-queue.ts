import { applyEvents } from '../model/task-state.js';
import type { A2AStore, QueueSlot } from '../store/index.js';
import {
  appendEvents,
  createTask,
  eventually,
  inQueueOrder,
  isDuplicateMessage,
  isVersionConflict,
  rejectionOf,
  sortSlots,
  statusUpdate,
  taskFixture,
  turnRequest,
  userMessage,
} from './fixtures.js';
import { type ConformanceOptions, defineModule, storesOnLocation } from './harness.js';

const ENQUEUERS = 20;

/**
 * The per-context turn queue (`enqueueTurn`, `turnReadiness`, `finishTurn`, `listWorkerTurns`),
 * and commit()'s `enqueueTurn` / `finishTurn`, which do the same inside a task's commit.
 *
 * Where the contract leaves room, the suite decides:
 * - Positions are safe integers, strictly increasing per context in arrival order, and never
 *   reused in a context, not even after its queue emptied (so finishing a stale slot twice can
 *   never remove a later turn). Their start value and step are the store's business.
 * - `finishTurn` of a slot not (or no longer) queued resolves and changes nothing.
 * - `ahead` is the queued slot with the highest position below the slot's, as enqueueTurn
 *   returned it (all five fields).
 * - "Queue order" of `listWorkerTurns` is position order within each context; the order across
 *   contexts is left open.
 * - Slots are copied in and out.
 */
export function turnQueue(options: ConformanceOptions): void {
  defineModule(options, 'turnQueue', (test) => {
    test('enqueueTurn returns the request with increasing positions per context', async ({ expect, store }) => {
      const requests = [0, 1, 2].map((i) =>
        turnRequest({ contextId: 'ctx', taskId: `task-${i}`, messageId: `turn-${i}` }),
      );
      const slots: QueueSlot[] = [];
      for (const request of requests) slots.push(await store.enqueueTurn(request));

      slots.forEach((slot, i) => {
        expect(slot).toEqual({ ...requests[i], position: expect.any(Number) });
        expect(Number.isSafeInteger(slot.position), `position ${String(slot.position)}`).toBe(true);
      });
      const positions = slots.map((t) => t.position);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      expect(new Set(positions).size).toBe(3);
    });

    test('the first slot of a context is ready; the next waits for the one directly ahead of it', async ({
      expect,
      store,
    }) => {
      const first = await store.enqueueTurn(turnRequest({ contextId: 'ctx' }));
      const second = await store.enqueueTurn(turnRequest({ contextId: 'ctx' }));
      const third = await store.enqueueTurn(turnRequest({ contextId: 'ctx' }));

      expect(await store.turnReadiness(first)).toEqual({ ready: true });
      expect(await store.turnReadiness(second)).toEqual({ ready: false, ahead: first });
      expect(await store.turnReadiness(third)).toEqual({ ready: false, ahead: second });

      await store.finishTurn(first);
      expect(await store.turnReadiness(second)).toEqual({ ready: true });
      expect(await store.turnReadiness(third)).toEqual({ ready: false, ahead: second });

      await store.finishTurn(second);
      expect(await store.turnReadiness(third)).toEqual({ ready: true });
    });

    test('a slot abandoned in the middle of the queue is skipped', async ({ expect, store }) => {
      const first = await store.enqueueTurn(turnRequest({ contextId: 'ctx' }));
      const second = await store.enqueueTurn(turnRequest({ contextId: 'ctx' }));
      const third = await store.enqueueTurn(turnRequest({ contextId: 'ctx' }));

      await store.finishTurn(second);
      expect(await store.turnReadiness(third)).toEqual({ ready: false, ahead: first });
      await store.finishTurn(first);
      expect(await store.turnReadiness(third)).toEqual({ ready: true });
    });

    test('contexts are independent queues', async ({ expect, store }) => {
      const a1 = await store.enqueueTurn(turnRequest({ contextId: 'ctx-a' }));
      const b1 = await store.enqueueTurn(turnRequest({ contextId: 'ctx-b' }));
      const a2 = await store.enqueueTurn(turnRequest({ contextId: 'ctx-a' }));
      const b2 = await store.enqueueTurn(turnRequest({ contextId: 'ctx-b' }));
      // A context whose id extends another's is a different context.
      const longer = await store.enqueueTurn(turnRequest({ contextId: 'ctx-a-suffix' }));

      expect(await store.turnReadiness(a1)).toEqual({ ready: true });
      expect(await store.turnReadiness(b1)).toEqual({ ready: true });
      expect(await store.turnReadiness(longer)).toEqual({ ready: true });
      expect(await store.turnReadiness(a2)).toEqual({ ready: false, ahead: a1 });
      expect(await store.turnReadiness(b2)).toEqual({ ready: false, ahead: b1 });

      await store.finishTurn(b1);
      expect(await store.turnReadiness(b2)).toEqual({ ready: true });
      expect(await store.turnReadiness(a2)).toEqual({ ready: false, ahead: a1 });
    });

    test('finishTurn of a missing slot changes nothing', async ({ expect, store }) => {
      const first = await store.enqueueTurn(turnRequest({ contextId: 'ctx' }));
      const second = await store.enqueueTurn(turnRequest({ contextId: 'ctx' }));

      // Never enqueued: an unknown context, and a position of this context that was never handed out.
      await expect(store.finishTurn({ ...turnRequest(), position: first.position })).resolves.toBeUndefined();
      const unused = Math.max(first.position, second.position) + 1000;
      await expect(
        store.finishTurn({ ...turnRequest({ contextId: 'ctx' }), position: unused }),
      ).resolves.toBeUndefined();
      expect(await store.turnReadiness(first)).toEqual({ ready: true });
      expect(await store.turnReadiness(second)).toEqual({ ready: false, ahead: first });

      // Finished twice: the second call must not take the new head with it.
      await store.finishTurn(first);
      await expect(store.finishTurn(first)).resolves.toBeUndefined();
      expect(await store.turnReadiness(second)).toEqual({ ready: true });
      expect(await store.listWorkerTurns(second.workerId)).toEqual([second]);
    });

    test('positions are never reused, even after a context’s queue emptied', async ({ expect, store }) => {
      const first = await store.enqueueTurn(turnRequest({ contextId: 'ctx' }));
      await store.finishTurn(first);
      const second = await store.enqueueTurn(turnRequest({ contextId: 'ctx' }));
      expect(second.position).toBeGreaterThan(first.position);
      expect(await store.turnReadiness(second)).toEqual({ ready: true });

      // A late, duplicate finish of the old slot (a reaper and the worker both finishing it).
      await store.finishTurn(first);
      expect(await store.listWorkerTurns(second.workerId)).toEqual([second]);
      const third = await store.enqueueTurn(turnRequest({ contextId: 'ctx' }));
      expect(await store.turnReadiness(third)).toEqual({ ready: false, ahead: second });
    });

    test(`${ENQUEUERS} concurrent enqueues on one context (on several instances where supported) get distinct positions and run one at a time in position order`, async (context) => {
      const { expect } = context;
      const stores = await storesOnLocation(context, 3);
      const at = (i: number): A2AStore => stores[i % stores.length] as A2AStore;
      const requests = Array.from({ length: ENQUEUERS }, (_, i) =>
        turnRequest({
          contextId: 'ctx-busy',
          taskId: `task-${i}`,
          messageId: `turn-${i}`,
          workerId: `worker-${i % 3}`,
        }),
      );
      const slots = await Promise.all(requests.map((request, i) => at(i).enqueueTurn(request)));

      slots.forEach((slot, i) => {
        expect(slot).toEqual({ ...requests[i], position: expect.any(Number) });
      });
      expect(new Set(slots.map((t) => t.position)).size).toBe(ENQUEUERS);

      // Simulate the workers: exactly one slot is ready at any time, the lowest position; each
      // other slot waits for the one directly ahead of it. Finish the head; repeat.
      const queue = [...slots].sort((a, b) => a.position - b.position);
      for (let head = 0; head < ENQUEUERS; head++) {
        const reader = at(head);
        const waiting = queue.slice(head);
        const readiness = await Promise.all(waiting.map((slot) => reader.turnReadiness(slot)));
        expect(readiness, `after ${head} finished turns`).toEqual(
          waiting.map((_, i) => (i === 0 ? { ready: true } : { ready: false, ahead: waiting[i - 1] })),
        );
        await at(head + 1).finishTurn(queue[head] as QueueSlot);
      }
      for (const reader of stores) {
        for (const workerId of ['worker-0', 'worker-1', 'worker-2']) {
          expect(await reader.listWorkerTurns(workerId)).toEqual([]);
        }
      }
    });

    test('listWorkerTurns returns a worker’s queued slots in queue order', async ({ expect, store }) => {
      const enqueue = (contextId: string, workerId: string) => store.enqueueTurn(turnRequest({ contextId, workerId }));
      const a1 = await enqueue('ctx-a', 'worker-1');
      const b1 = await enqueue('ctx-b', 'worker-1');
      const a2 = await enqueue('ctx-a', 'worker-2');
      const a3 = await enqueue('ctx-a', 'worker-1');
      const c1 = await enqueue('ctx-c', 'worker-2');

      const listed = await store.listWorkerTurns('worker-1');
      expect(inQueueOrder(listed), JSON.stringify(listed)).toBe(true);
      expect(sortSlots(listed)).toEqual(sortSlots([a1, a3, b1]));
      expect(listed.filter((t) => t.contextId === 'ctx-a')).toEqual([a1, a3]);
      expect(sortSlots(await store.listWorkerTurns('worker-2'))).toEqual(sortSlots([a2, c1]));
      expect(await store.listWorkerTurns('worker-unknown')).toEqual([]);
      // Worker ids match exactly.
      expect(await store.listWorkerTurns('worker-')).toEqual([]);

      await store.finishTurn(a1);
      await store.finishTurn(b1);
      expect(await store.listWorkerTurns('worker-1')).toEqual([a3]);
    });

    test('commit with enqueueTurn queues a turn of that task, in arrival order with enqueueTurn()', async ({
      expect,
      store,
    }) => {
      const task = taskFixture({ history: [userMessage('first')] });
      const created = await store.commit({
        taskId: task.id,
        expectedVersion: 0,
        task,
        events: [task],
        enqueueTurn: { messageId: 'turn-1', workerId: 'worker-1' },
      });
      const first = created.turn;
      expect(created).toEqual({
        version: 1,
        turn: {
          contextId: task.contextId,
          position: expect.any(Number),
          taskId: task.id,
          messageId: 'turn-1',
          workerId: 'worker-1',
        },
      });
      if (first === undefined) throw new Error('no slot');
      expect(await store.turnReadiness(first)).toEqual({ ready: true });

      const second = await store.enqueueTurn(turnRequest({ contextId: task.contextId }));
      const followUp = userMessage('second', { taskId: task.id, contextId: task.contextId });
      const third = (
        await store.commit({
          taskId: task.id,
          expectedVersion: 1,
          task: applyEvents(task, [followUp]),
          events: [followUp],
          enqueueTurn: { messageId: followUp.messageId, workerId: 'worker-1' },
        })
      ).turn;
      if (third === undefined) throw new Error('no slot');
      expect(await store.turnReadiness(second)).toEqual({ ready: false, ahead: first });
      expect(await store.turnReadiness(third)).toEqual({ ready: false, ahead: second });
      expect(sortSlots(await store.listWorkerTurns('worker-1'))).toEqual(sortSlots([first, third]));
      // A commit without enqueueTurn returns no slot.
      expect(await appendEvents(store, task.id, [statusUpdate(task, 'working')])).toEqual({ version: 3 });
    });

    test('commit with finishTurn removes the slot, and subscribers of the task hear of it', async ({
      expect,
      store,
      notificationTimeout,
    }) => {
      const task = taskFixture({ state: 'working' });
      const slot = (
        await store.commit({
          taskId: task.id,
          expectedVersion: 0,
          task,
          events: [task],
          enqueueTurn: { messageId: 'turn-1', workerId: 'worker-f' },
        })
      ).turn;
      if (slot === undefined) throw new Error('no slot');
      const behind = await store.enqueueTurn(turnRequest({ contextId: task.contextId, workerId: 'worker-g' }));
      const heard: number[] = [];
      const unsubscribe = store.subscribe(task.id, (seq) => heard.push(seq));
      try {
        const done = [statusUpdate(task, 'completed')];
        const result = await store.commit({
          taskId: task.id,
          expectedVersion: 1,
          task: applyEvents(task, done),
          events: done,
          finishTurn: slot,
        });
        expect(result).toEqual({ version: 2 });
        expect(await store.turnReadiness(behind)).toEqual({ ready: true });
        expect(await store.listWorkerTurns('worker-f')).toEqual([]);
        await eventually('the subscriber of the finished turn’s task', () => heard.includes(2), {
          timeout: notificationTimeout,
        });
      } finally {
        unsubscribe();
      }
    });

    test('a refused commit enqueues nothing and finishes nothing', async ({ expect, store }) => {
      const task = taskFixture({ history: [userMessage('hello')] });
      const { turn: slot } = await store.commit({
        taskId: task.id,
        expectedVersion: 0,
        task,
        events: [task],
        enqueueTurn: { messageId: 'turn-1', workerId: 'worker-r' },
      });
      if (slot === undefined) throw new Error('no slot');
      const done = [statusUpdate(task, 'completed')];

      // A stale version, carrying both an enqueue and a finish.
      const stale = await rejectionOf(
        store.commit({
          taskId: task.id,
          expectedVersion: 5,
          task: applyEvents(task, done),
          events: done,
          enqueueTurn: { messageId: 'turn-2', workerId: 'worker-r' },
          finishTurn: slot,
        }),
      );
      expect(isVersionConflict(stale), String(stale)).toBe(true);
      // A duplicate message id (the task's first message, again, on a new task).
      const again = taskFixture({ contextId: task.contextId, history: task.history ?? [] });
      const duplicate = await rejectionOf(
        store.commit({
          taskId: again.id,
          expectedVersion: 0,
          task: again,
          events: [again],
          enqueueTurn: { messageId: 'turn-3', workerId: 'worker-r' },
          finishTurn: { ...slot, taskId: again.id },
        }),
      );
      expect(isDuplicateMessage(duplicate), String(duplicate)).toBe(true);

      expect(await store.listWorkerTurns('worker-r')).toEqual([slot]);
      expect(await store.turnReadiness(slot)).toEqual({ ready: true });
      expect(await store.getTask(again.id)).toBeUndefined();
    });

    test('commit refuses to finish a turn of another task, and writes nothing', async ({ expect, store }) => {
      const task = taskFixture();
      await createTask(store, task);
      const other = await store.enqueueTurn(turnRequest({ contextId: task.contextId, workerId: 'worker-o' }));
      const done = [statusUpdate(task, 'completed')];
      const error = await rejectionOf(
        store.commit({
          taskId: task.id,
          expectedVersion: 1,
          task: applyEvents(task, done),
          events: done,
          finishTurn: other,
        }),
      );
      expect((error as { code?: string }).code).toBe('INTERNAL');
      expect(String((error as Error).message)).toMatch(/finish a turn of task/);
      expect((await store.getTask(task.id))?.version).toBe(1);
      expect(await store.listWorkerTurns('worker-o')).toEqual([other]);
    });

    test('slots are copied in and out', async ({ expect, store }) => {
      const request = turnRequest({ contextId: 'ctx' });
      const expected = { ...request };
      const first = await store.enqueueTurn(request);
      const kept = structuredClone(first);
      request.workerId = 'changed';
      first.workerId = 'changed';
      first.taskId = 'changed';
      expect(await store.listWorkerTurns(expected.workerId)).toEqual([kept]);

      const second = await store.enqueueTurn(turnRequest({ contextId: 'ctx' }));
      const readiness = await store.turnReadiness(second);
      if (!readiness.ready) readiness.ahead.taskId = 'changed';
      const listed = await store.listWorkerTurns(expected.workerId);
      if (listed[0] !== undefined) listed[0].messageId = 'changed';
      expect(await store.turnReadiness(second)).toEqual({ ready: false, ahead: kept });
      expect(kept).toEqual({ ...expected, position: kept.position });
    });
  });
}
