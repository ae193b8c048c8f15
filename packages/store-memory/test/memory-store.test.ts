import { A2AError, DuplicateMessageError } from '@fastify-a2a/core';
import {
  appendEvents,
  artifactUpdate,
  createTask,
  createTestClock,
  eventually,
  indexEntry,
  rejectionOf,
  statusUpdate,
  taskFixture,
  turnRequest,
  userMessage,
} from '@fastify-a2a/core/testing';
import { describe, expect, it } from 'vitest';
import { createMemoryStore, MemoryStore } from '../src/index.js';

describe('bounded retention (maxTasks)', () => {
  it('evicts the least recently updated terminal tasks first, with their events', async () => {
    const clock = createTestClock();
    const store = new MemoryStore({ clock, maxTasks: 3 });
    const a = taskFixture({ id: 'a', state: 'working' });
    await createTask(store, a);
    clock.advance(1);
    await createTask(store, taskFixture({ id: 'b', state: 'completed' }));
    clock.advance(1);
    await createTask(store, taskFixture({ id: 'c', state: 'failed' }));
    clock.advance(1);
    // `a` was created first but is updated (and finished) last: it is now the most recent.
    await appendEvents(store, 'a', [statusUpdate(a, 'completed')]);

    await createTask(store, taskFixture({ id: 'd', state: 'working' }));
    expect(await store.getTask('b')).toBeUndefined();
    expect(await store.readEvents('b', 0)).toEqual([]);
    expect((await store.getTask('c'))?.task.id).toBe('c');
    expect((await store.getTask('a'))?.version).toBe(2);

    await createTask(store, taskFixture({ id: 'e', state: 'working' }));
    expect(await store.getTask('c')).toBeUndefined();
    expect((await store.getTask('a'))?.task.id).toBe('a');
    expect((await store.getTask('d'))?.task.id).toBe('d');
    expect((await store.getTask('e'))?.task.id).toBe('e');
  });

  it('never evicts a non-terminal task, nor the task just written: the bound is soft', async () => {
    const store = new MemoryStore({ maxTasks: 2 });
    for (const id of ['w1', 'w2', 'w3']) await createTask(store, taskFixture({ id, state: 'working' }));
    await createTask(store, taskFixture({ id: 'input', state: 'input-required' }));
    await createTask(store, taskFixture({ id: 'done', state: 'completed' }));

    for (const id of ['w1', 'w2', 'w3', 'input', 'done']) expect((await store.getTask(id))?.task.id, id).toBe(id);
    expect((await store.listActiveTasks()).map((r) => r.task.id)).toEqual(['w1', 'w2', 'w3']);

    // Once something else is written, the finished task is the one to go.
    await createTask(store, taskFixture({ id: 'w4', state: 'working' }));
    expect(await store.getTask('done')).toBeUndefined();
    expect((await store.getTask('input'))?.task.id).toBe('input');
  });

  /** A store-level write the runtime never makes (the state machine refuses it): sets the task's state. */
  const setState = async (store: MemoryStore, taskId: string, state: 'working' | 'completed'): Promise<void> => {
    const record = await store.getTask(taskId);
    if (record === undefined) throw new Error(`no task ${taskId}`);
    const task = { ...record.task, status: { ...record.task.status, state } };
    await store.commit({ taskId, expectedVersion: record.version, task, events: [statusUpdate(task, state)] });
  };

  it('a terminal task committed again moves to the end; one made non-terminal is no candidate until it ends again', async () => {
    const store = new MemoryStore({ maxTasks: 3 });
    for (const id of ['x', 'y', 'z']) await createTask(store, taskFixture({ id, state: 'completed' }));
    await setState(store, 'x', 'completed'); // committed again, still terminal: now the most recent
    await setState(store, 'y', 'working'); // reopened: no candidate while it runs

    await createTask(store, taskFixture({ id: 'n1', state: 'working' }));
    expect(await store.getTask('z')).toBeUndefined(); // the oldest candidate
    expect((await store.getTask('x'))?.task.id).toBe('x');
    expect((await store.getTask('y'))?.task.id).toBe('y');

    await setState(store, 'y', 'completed'); // ends again, after x: x goes first
    await createTask(store, taskFixture({ id: 'n2', state: 'working' }));
    expect(await store.getTask('x')).toBeUndefined();
    expect((await store.getTask('y'))?.task.id).toBe('y');
  });

  it('keeps exactly the most recent terminal tasks over a long churn (the eviction queue compacts)', async () => {
    const store = new MemoryStore({ maxTasks: 100 });
    const finished = async (id: string): Promise<void> => {
      const task = taskFixture({ id, contextId: 'churn', state: 'working' });
      await createTask(store, task);
      await appendEvents(store, task.id, [statusUpdate(task, 'completed')]);
    };
    for (let i = 0; i < 3000; i++) {
      await finished(`c${i}`);
      // Now and then a recent finished task is committed again: it moves to the end.
      if (i % 7 === 0 && i >= 10) await setState(store, `c${i - 10}`, 'completed');
    }
    const kept = async () => (await store.listTasksByContext('churn')).map((r) => r.task.id);
    expect(await kept()).toHaveLength(100);
    expect(await kept()).toContain('c2999');
    expect(await kept()).not.toContain('c2000');
    // After all that churn the order still holds: the oldest kept task, committed again, outlives
    // the next oldest.
    const oldest = (await kept())[0] as string;
    const next = (await kept())[1] as string;
    await setState(store, oldest, 'completed');
    await finished('c3000');
    expect(await kept()).toContain(oldest);
    expect(await kept()).not.toContain(next);
  });

  it('keeps the task count at maxTasks under a stream of finished tasks', async () => {
    const store = new MemoryStore({ maxTasks: 10 });
    for (let i = 0; i < 50; i++) {
      const task = taskFixture({ id: `t${i}`, contextId: 'ctx', state: 'working' });
      await createTask(store, task, [artifactUpdate(task, `out ${i}`)]);
      await appendEvents(store, task.id, [statusUpdate(task, 'completed')]);
    }
    const kept = await store.listTasksByContext('ctx');
    expect(kept.map((r) => r.task.id)).toEqual(Array.from({ length: 10 }, (_, i) => `t${40 + i}`));
  });
});

describe('options', () => {
  it('rejects a maxTasks that is not a positive integer', () => {
    for (const maxTasks of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new MemoryStore({ maxTasks }), String(maxTasks)).toThrow(/maxTasks must be a positive integer/);
      try {
        new MemoryStore({ maxTasks });
      } catch (error) {
        expect(A2AError.is(error) && error.code).toBe('INVALID_OPTIONS');
      }
    }
  });

  it('rejects a clock that is not a function', () => {
    expect(() => new MemoryStore({ clock: 5 as unknown as () => number })).toThrow(/clock must be a function/);
  });

  it('uses the system clock by default', async () => {
    const store = createMemoryStore();
    const before = Date.now();
    await store.setContext('ctx', 1);
    const record = await store.getContext('ctx');
    expect(record?.updatedAt).toBeGreaterThanOrEqual(before);
    expect(record?.updatedAt).toBeLessThanOrEqual(Date.now());
  });

  it('declares its capabilities', () => {
    expect(new MemoryStore().supports).toEqual({
      durable: false,
      crossProcess: false,
      ttl: true,
      namespaces: false,
      listTasks: true,
      push: true,
      interruptedTasks: true,
      cluster: true,
    });
    expect(Object.isFrozen(new MemoryStore().supports)).toBe(true);
  });
});

describe('commit validation', () => {
  it('refuses a commit without events or with a snapshot of another task, and stores nothing', async () => {
    const store = new MemoryStore();
    const task = taskFixture({ id: 't' });
    await expect(store.commit({ taskId: 't', expectedVersion: 0, task, events: [] })).rejects.toThrow(/no events/);
    await expect(store.commit({ taskId: 'other', expectedVersion: 0, task, events: [task] })).rejects.toThrow(
      /must match/,
    );
    expect(await store.getTask('t')).toBeUndefined();
    expect(await store.getTask('other')).toBeUndefined();
  });
});

describe('close', () => {
  it('makes ping and every operation reject with STORE_UNAVAILABLE, and drops the data', async () => {
    const store = new MemoryStore();
    await store.open();
    await createTask(store, taskFixture({ id: 't' }));
    await store.close();

    await expect(store.ping()).rejects.toThrow(/MemoryStore is closed/);
    await expect(store.getTask('t')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(store.open()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(store.setContext('c', 1)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(store.purgeExpired(Date.now())).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(store.close()).resolves.toBeUndefined();
  });
});

describe('call context', () => {
  it('rejects with the abort reason when the signal is already aborted', async () => {
    const store = new MemoryStore();
    const controller = new AbortController();
    controller.abort(new Error('caller gave up'));
    const task = taskFixture();
    await expect(
      store.commit({ taskId: task.id, expectedVersion: 0, task, events: [task] }, { signal: controller.signal }),
    ).rejects.toThrow('caller gave up');
    expect(await store.getTask(task.id)).toBeUndefined();
    await expect(store.getTask(task.id, { signal: controller.signal })).rejects.toThrow('caller gave up');
  });
});

describe('subscribe', () => {
  it('reports a throwing listener to onListenerError and still calls the others', async () => {
    const errors: Array<{ error: unknown; taskId: string }> = [];
    const store = new MemoryStore({ onListenerError: (error, taskId) => errors.push({ error, taskId }) });
    const heard: number[] = [];
    store.subscribe('t', () => {
      throw new Error('boom');
    });
    store.subscribe('t', (seq) => heard.push(seq));
    await createTask(store, taskFixture({ id: 't' }));
    await eventually('the healthy listener', () => heard.length > 0);
    expect(heard).toEqual([1]);
    expect(errors).toEqual([{ error: new Error('boom'), taskId: 't' }]);
  });

  it('calls listeners after the commit, not inside it, with the task version', async () => {
    const store = new MemoryStore();
    const task = taskFixture({ id: 't', state: 'working' });
    const seen: Array<{ seq: number; version: number | undefined }> = [];
    store.subscribe('t', (seq) => {
      // Reading from the listener sees the committed state.
      void store.getTask('t').then((record) => seen.push({ seq, version: record?.version }));
    });
    const committed = createTask(store, task, [artifactUpdate(task, 'x')]);
    expect(seen).toEqual([]);
    await committed;
    await eventually('the listener', () => seen.length > 0);
    expect(seen).toEqual([{ seq: 2, version: 2 }]);
  });

  it('a listener subscribed twice is called twice, and each unsubscribe removes one', async () => {
    const store = new MemoryStore();
    const heard: number[] = [];
    const listener = (seq: number) => heard.push(seq);
    const first = store.subscribe('t', listener);
    store.subscribe('t', listener);
    const task = taskFixture({ id: 't', state: 'working' });
    await createTask(store, task);
    await eventually('both calls', () => heard.length === 2);
    first();
    await appendEvents(store, 't', [artifactUpdate(task, 'x')]);
    await eventually('one more call', () => heard.length === 3);
    expect(heard).toEqual([1, 1, 2]);
  });
});

describe('coordination', () => {
  it('finishTurn wakes local subscribers of the slot’s task with seq 0; a missing slot wakes nobody', async () => {
    const store = new MemoryStore();
    const heard: number[] = [];
    const other: number[] = [];
    const first = await store.enqueueTurn(turnRequest({ contextId: 'ctx', taskId: 'task-first' }));
    const second = await store.enqueueTurn(turnRequest({ contextId: 'ctx', taskId: 'task-second' }));
    store.subscribe('task-first', (seq) => heard.push(seq));
    store.subscribe('task-second', (seq) => other.push(seq));

    await store.finishTurn(first);
    await eventually('the wake-up', () => heard.length > 0);
    await store.finishTurn(first); // already finished: nothing to wake anyone for
    await store.finishTurn(second);
    await eventually('the second wake-up', () => other.length > 0);
    expect(heard).toEqual([0]);
    expect(other).toEqual([0]);
  });

  it('lists a worker’s turns across contexts in arrival order', async () => {
    const store = new MemoryStore();
    const slots = [];
    for (const contextId of ['ctx-b', 'ctx-a', 'ctx-b', 'ctx-c']) {
      slots.push(await store.enqueueTurn(turnRequest({ contextId, workerId: 'worker' })));
    }
    expect(await store.listWorkerTurns('worker')).toEqual(slots);
    await store.heartbeat('worker', 0);
    expect(await store.claimExpiredWorkers(1)).toEqual([
      { workerId: 'worker', lastHeartbeat: expect.any(Number), turns: slots },
    ]);
  });

  it('evicting a task (maxTasks) drops its message ids from the index, in every owner scope', async () => {
    const store = new MemoryStore({ maxTasks: 1 });
    const first = userMessage('first');
    const { messageId } = first;
    const done = taskFixture({ id: 'done', state: 'completed', history: [first] });
    await createTask(store, done, [], 'alice');
    const byBob = userMessage('bob follows up', { messageId: 'msg-bob', taskId: 'done', contextId: done.contextId });
    await store.commit({ taskId: 'done', expectedVersion: 1, task: done, events: [byBob], owner: 'bob' });
    expect(await store.findMessage(messageId, undefined, 'alice')).toEqual(indexEntry(done, first));
    expect(await store.findMessage('msg-bob', undefined, 'bob')).toEqual(indexEntry(done, byBob));

    await createTask(store, taskFixture({ id: 'next', state: 'working' }));
    expect(await store.getTask('done')).toBeUndefined();
    expect(await store.findMessage(messageId, undefined, 'alice')).toBeUndefined();
    expect(await store.findMessage('msg-bob', undefined, 'bob')).toBeUndefined();
    const reused = userMessage('reused', { messageId });
    const again = taskFixture({ id: 'again', history: [reused] });
    await createTask(store, again, [], 'alice');
    expect(await store.findMessage(messageId, undefined, 'alice')).toEqual(indexEntry(again, reused));
  });

  it('a duplicate names the task that holds the id', async () => {
    const store = new MemoryStore();
    const task = taskFixture({ id: 'holder', contextId: 'ctx', history: [userMessage('hi', { messageId: 'msg-1' })] });
    await createTask(store, task);
    const error = await rejectionOf(
      createTask(store, taskFixture({ history: [userMessage('hi', { messageId: 'msg-1' })] })),
    );
    expect(error).toBeInstanceOf(DuplicateMessageError);
    expect(error).toMatchObject({
      code: 'DUPLICATE_MESSAGE',
      data: { messageId: 'msg-1', taskId: 'holder', contextId: 'ctx' },
    });
  });

  it('rejects every coordination call after close() and with an aborted signal', async () => {
    const store = new MemoryStore();
    const slot = await store.enqueueTurn(turnRequest());
    const aborted = AbortSignal.abort(new Error('caller gave up'));
    const calls = (ctx?: { signal: AbortSignal }) => [
      store.heartbeat('worker', 1, ctx),
      store.enqueueTurn(turnRequest(), ctx),
      store.turnReadiness(slot, ctx),
      store.finishTurn(slot, ctx),
      store.claimExpiredWorkers(1, undefined, ctx),
      store.removeWorker('worker', ctx),
      store.listWorkerTurns('worker', ctx),
      store.findMessage('msg', ctx),
    ];
    for (const call of calls({ signal: aborted })) await expect(call).rejects.toThrow('caller gave up');
    expect(await store.listWorkerTurns(slot.workerId)).toEqual([slot]);

    await store.close();
    for (const call of calls()) await expect(call).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });
});

describe('transfer', () => {
  it('keeps the handed-over objects instead of copying them, and still copies out', async () => {
    const store = new MemoryStore();
    const task = taskFixture({ state: 'working' });
    await store.commit({ taskId: task.id, expectedVersion: 0, task, events: [task], transfer: true });
    const read = await store.getTask(task.id);
    expect(read?.task).toEqual(task);
    expect(read?.task).not.toBe(task); // copied out all the same
    // Without transfer the store copies in: the caller's later change does not reach it.
    const other = taskFixture({ state: 'working' });
    await store.commit({ taskId: other.id, expectedVersion: 0, task: other, events: [other] });
    other.status.state = 'failed';
    expect((await store.getTask(other.id))?.task.status.state).toBe('working');
    // With transfer it does (which is why only a caller that never mutates may set it).
    task.status.state = 'failed';
    expect((await store.getTask(task.id))?.task.status.state).toBe('failed');
  });
});

describe('push', () => {
  it('evicting a task (maxTasks) drops its push configs and their delivery state', async () => {
    const store = new MemoryStore({ maxTasks: 1 });
    await createTask(store, taskFixture({ id: 'done', state: 'completed' }));
    await store.savePushConfig({
      taskId: 'done',
      config: { id: 'cfg', url: 'https://hooks.example.com/' },
      protocolVersion: '1.0',
    });
    const [claimed] = await store.claimPushDeliveries({ workerId: 'w', now: 0, claimUntil: 10, limit: 10 });
    expect(claimed?.config.taskId).toBe('done');

    await createTask(store, taskFixture({ id: 'next', state: 'working' }));
    expect(await store.getTask('done')).toBeUndefined();
    expect(await store.listPushConfigs('done')).toEqual([]);
    expect(await store.listPushDeliveries()).toEqual([]);
    expect(await store.renewPushClaims('w', 100)).toBe(0);
  });

  it('rejects push calls after close() and with an aborted signal', async () => {
    const store = new MemoryStore();
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await expect(store.listPushDeliveries({}, { signal: controller.signal })).rejects.toThrow('gone');
    await store.close();
    const closed = await rejectionOf(store.claimPushDeliveries({ workerId: 'w', now: 0, claimUntil: 1, limit: 1 }));
    expect(A2AError.is(closed) && closed.code).toBe('STORE_UNAVAILABLE');
  });
});
