import { applyEvents } from '../model/task-state.js';
import type { Message } from '../model/types.js';
import {
  appendEvents,
  artifactUpdate,
  createTask,
  indexEntry,
  isDuplicateMessage,
  isVersionConflict,
  rejectionOf,
  richTask,
  statusUpdate,
  taskFixture,
  turnRequest,
  userMessage,
} from './fixtures.js';
import { type ConformanceOptions, defineModule } from './harness.js';

/** Data survives close() and a new instance on the same location (supports.durable). */
export function persistence(options: ConformanceOptions): void {
  defineModule(options, 'persistence', (test) => {
    test(
      'tasks, events and contexts survive close and reopen; the next commit continues the log',
      async ({ expect, store, clock, openStore }) => {
        const rich = richTask({ id: 'rich', contextId: 'ctx' });
        await createTask(store, rich);
        clock.advance(1000);
        await appendEvents(store, 'rich', [artifactUpdate(rich, 'one'), artifactUpdate(rich, 'two')]);
        const done = taskFixture({ id: 'done', contextId: 'ctx', state: 'working' });
        await createTask(store, done);
        await appendEvents(store, 'done', [statusUpdate(done, 'completed', { message: 'bye' })]);
        await store.setContext('ctx', { upstream: 'conv-1', nested: [1, null, 'three'] });
        await store.setContext('null-state', null);

        const before = {
          rich: await store.getTask('rich'),
          done: await store.getTask('done'),
          richEvents: await store.readEvents('rich', 0),
          doneEvents: await store.readEvents('done', 0),
          byContext: await store.listTasksByContext('ctx'),
          active: await store.listActiveTasks(),
          context: await store.getContext('ctx'),
          nullState: await store.getContext('null-state'),
        };
        await store.close();

        clock.advance(60_000);
        const reopened = await openStore();
        expect({
          rich: await reopened.getTask('rich'),
          done: await reopened.getTask('done'),
          richEvents: await reopened.readEvents('rich', 0),
          doneEvents: await reopened.readEvents('done', 0),
          byContext: await reopened.listTasksByContext('ctx'),
          active: await reopened.listActiveTasks(),
          context: await reopened.getContext('ctx'),
          nullState: await reopened.getContext('null-state'),
        }).toEqual(before);
        expect(before.rich?.version).toBe(3);
        expect(before.nullState?.state).toBeNull();

        const record = before.rich;
        if (record === undefined) throw new Error('task was not stored');
        const events = [statusUpdate(rich, 'completed')];
        const result = await reopened.commit({
          taskId: 'rich',
          expectedVersion: 3,
          task: applyEvents(record.task, events),
          events,
        });
        expect(result).toEqual({ version: 4 });
        expect(await reopened.readEvents('rich', 3)).toEqual([{ seq: 4, event: events[0], createdAt: clock.now }]);
        expect((await reopened.getTask('rich'))?.version).toBe(4);

        // Version checks hold across instances too: the old version is stale now.
        const stale = await reopened
          .commit({ taskId: 'rich', expectedVersion: 3, task: record.task, events: [artifactUpdate(rich, 'late')] })
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        expect(isVersionConflict(stale)).toBe(true);
        const duplicate = await createTask(reopened, taskFixture({ id: 'done' })).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(isVersionConflict(duplicate)).toBe(true);
      },
      'durable',
    );

    test(
      'the message index, turn queues and worker leases survive close and reopen',
      async ({ expect, store, clock, openStore }) => {
        const t0 = clock.now;
        const task = taskFixture({ id: 'indexed', contextId: 'ctx', history: [userMessage('remember me')] });
        const messageId = task.history?.[0]?.messageId ?? '';
        await createTask(store, task);
        const first = await store.enqueueTurn(turnRequest({ contextId: 'ctx', workerId: 'worker' }));
        const second = await store.enqueueTurn(turnRequest({ contextId: 'ctx', workerId: 'worker' }));
        await store.heartbeat('worker', t0 + 1000);
        await store.close();

        const reopened = await openStore();
        expect(await reopened.findMessage(messageId)).toEqual(indexEntry(task, task.history?.[0] as Message));
        expect(
          isDuplicateMessage(
            await rejectionOf(createTask(reopened, taskFixture({ history: [task.history?.[0] ?? userMessage('')] }))),
          ),
        ).toBe(true);
        expect(await reopened.turnReadiness(second)).toEqual({ ready: false, ahead: first });
        expect(await reopened.claimExpiredWorkers(t0 + 1000)).toEqual([]);
        expect(await reopened.claimExpiredWorkers(t0 + 1001)).toEqual([
          { workerId: 'worker', lastHeartbeat: t0, turns: [first, second] },
        ]);
        // Positions keep growing after a reopen.
        await reopened.finishTurn(first);
        await reopened.finishTurn(second);
        const third = await reopened.enqueueTurn(turnRequest({ contextId: 'ctx' }));
        expect(third.position).toBeGreaterThan(second.position);
      },
      'durable',
    );

    test(
      'a second instance on the same location sees commits of the first',
      async ({ expect, store, openStore }) => {
        const other = await openStore();
        const task = taskFixture({ id: 'shared', state: 'working' });
        await createTask(store, task);
        expect((await other.getTask('shared'))?.version).toBe(1);
        await appendEvents(other, 'shared', [artifactUpdate(task, 'from the other instance')]);
        expect((await store.getTask('shared'))?.version).toBe(2);
        expect((await store.readEvents('shared', 0)).map((e) => e.seq)).toEqual([1, 2]);
        await other.setContext('ctx', 'written by other');
        expect((await store.getContext('ctx'))?.state).toBe('written by other');
      },
      'durable',
    );
  });
}
