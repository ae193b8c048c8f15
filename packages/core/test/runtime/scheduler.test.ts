/**
 * The scheduler alone: the registry through which a cancel reaches a turn run by another runtime
 * of this process on the same store instance, and turn slots (a turn runs once the slot ahead of
 * it in its context's queue is released, whichever scheduler released it).
 */
import { randomUUID } from 'node:crypto';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import type { Task } from '../../src/model/types.js';
import { callContext, callerOf } from '../../src/protocol/context.js';
import { Events } from '../../src/runtime/events.js';
import { Intake } from '../../src/runtime/intake.js';
import type { TurnRunner } from '../../src/runtime/runner.js';
import { Scheduler, TurnRegistry } from '../../src/runtime/scheduler.js';
import { TaskWriter } from '../../src/runtime/task-writer.js';
import { Turn } from '../../src/runtime/turn.js';
import { asTask, gate, recordingLogger, useRuntimes, userMessage, waitFor, waitForAbort } from './helpers.js';

const start = useRuntimes();

/** The store behind a Proxy, as an application's instrumentation might wrap it (methods bound to the store). */
function wrapped(store: MemoryStore): MemoryStore {
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A turn of `taskId` as intake would make it, without a store behind it. */
function turnOf(store: MemoryStore, taskId: string): Turn {
  const messageId = `msg-${taskId}`;
  const task: Task = { kind: 'task', id: taskId, contextId: 'ctx', status: { state: 'working', timestamp: '' } };
  const slot = { contextId: 'ctx', position: 1, taskId, messageId, workerId: 'w' };
  const message = userMessage('x');
  return new Turn({
    messageId,
    message,
    isNewTask: true,
    isNewContext: true,
    writer: new TaskWriter(store, task, 1, undefined),
    slot,
    caller: callerOf(callContext()),
    storeContext: undefined,
  });
}

describe('turn registry', () => {
  it('is one per store instance: every runtime built on the same store object finds the same registry', () => {
    const store = new MemoryStore();
    const registry = TurnRegistry.of(store);
    expect(TurnRegistry.of(store)).toBe(registry);
    expect(TurnRegistry.of(new MemoryStore())).not.toBe(registry);
    // Kept on the store under a registered symbol (another copy of this package finds it too),
    // out of sight of enumeration and serialisation.
    expect((store as unknown as Record<symbol, unknown>)[Symbol.for('@fastify-a2a/core.turn-registry.v1')]).toBe(
      registry,
    );
    expect(Object.keys(store)).not.toContain(Symbol.for('@fastify-a2a/core.turn-registry.v1'));
    expect(Object.getOwnPropertyDescriptor(store, Symbol.for('@fastify-a2a/core.turn-registry.v1'))?.enumerable).toBe(
      false,
    );
  });

  it('is shared through a Proxy of the store (a wrapped store is the same instance underneath)', () => {
    const store = new MemoryStore();
    expect(TurnRegistry.of(wrapped(store))).toBe(TurnRegistry.of(store));
  });

  it('gives a store object that cannot take a property (frozen) a registry of its own rather than failing', () => {
    const store = Object.freeze(new MemoryStore());
    const registry = TurnRegistry.of(store);
    expect(registry).toBeInstanceOf(TurnRegistry);
    expect(TurnRegistry.of(store)).not.toBe(registry);
  });

  it('aborts the turns of one task, and none once they are gone', () => {
    const store = new MemoryStore();
    const registry = TurnRegistry.of(store);
    const a = turnOf(store, 'task-a');
    const b = turnOf(store, 'task-b');
    registry.add(a);
    registry.add(b);
    expect(registry.abortTask('task-a', 'canceled')).toBe(1);
    expect(a.abortCause).toBe('canceled');
    expect(a.signal.aborted).toBe(true);
    expect(b.aborted).toBe(false);
    registry.delete(b);
    expect(registry.abortTask('task-b', 'canceled')).toBe(0);
    expect(b.aborted).toBe(false);
  });

  it('carries a cancel to a turn of another runtime that reaches the same store through a Proxy', async () => {
    const store = new MemoryStore();
    let aborted = false;
    const running = start(
      async (turn) => {
        await turn.working();
        await waitForAbort(turn.signal);
        aborted = true;
      },
      { store, closeStore: false },
    );
    const other = start(async (turn) => turn.complete(), { store: wrapped(store), closeStore: false });
    const task = asTask(
      await running.sendMessage({ message: userMessage('wait'), configuration: { blocking: false } }),
    );
    await waitFor(async () => (await running.getTask({ id: task.id })).status.state === 'working');
    expect((await other.cancelTask({ id: task.id })).status.state).toBe('canceled');
    await waitFor(() => aborted);
  });
});

describe('turn slots', () => {
  it('a turn runs once the slot ahead of it is released, by whichever scheduler on the store held it', async () => {
    const store = new MemoryStore();
    const events = new Events(Date.now, randomUUID);
    const log = recordingLogger();
    const ran: string[] = [];
    const held = gate();
    const runner = {
      async run(turn: Turn) {
        ran.push(turn.message.parts[0]?.kind === 'text' ? turn.message.parts[0].text : '?');
        if (ran.length === 1) await held.promise;
      },
    } as unknown as TurnRunner;
    const schedulerA = new Scheduler({ store, runner, log, pollIntervalMs: 10_000, onAbandoned: () => {} });
    const schedulerB = new Scheduler({ store, runner, log, pollIntervalMs: 10_000, onAbandoned: () => {} });
    const intakeA = new Intake({ store, events, log, workerId: 'a', scheduler: schedulerA });
    const intakeB = new Intake({ store, events, log, workerId: 'b', scheduler: schedulerB });

    await intakeA.accept({ message: userMessage('first', { contextId: 'shared' }) }, callContext());
    const second = await intakeB.accept({ message: userMessage('second', { contextId: 'shared' }) }, callContext());
    await waitFor(() => ran.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ran).toEqual(['first']); // the second waits (no poll within the test: only the release wakes it)
    expect(schedulerB.running.size).toBe(1);

    held.open(); // the first run returns: scheduler A releases its slot, and the store's notification wakes B
    await waitFor(() => ran.length === 2, 2000, 'the second turn');
    expect(ran).toEqual(['first', 'second']);
    expect(second.kind === 'turn' && second.turn.waited).toBe(true);
    await waitFor(() => schedulerA.running.size === 0 && schedulerB.running.size === 0);
    expect([...(await store.listWorkerTurns('a')), ...(await store.listWorkerTurns('b'))]).toEqual([]);
  });
});
