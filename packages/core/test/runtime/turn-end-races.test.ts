/**
 * Regressions of the turn phase machine (issue 21, item 3, review): a turn's end can be written
 * from two chains at once (its own run, and a drain's or an unexpected failure's `closeTurn`), and
 * the scheduler releases its slot alongside. Every interleaving below was legal before `phase`
 * replaced the turn's flags (179532e); the machine must take them all without throwing, write what
 * the flags wrote, and still settle the turn.
 */
import { randomUUID } from 'node:crypto';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../../src/logger.js';
import { Events } from '../../src/runtime/events.js';
import { TurnRunner } from '../../src/runtime/runner.js';
import { Scheduler } from '../../src/runtime/scheduler.js';
import type { QueueSlot } from '../../src/store/index.js';
import { acceptedTurn, gate, recordingLogger, textParts, waitForAbort } from './helpers.js';

const events = new Events(Date.now, randomUUID);

/** A call held open on the test's say: the next call waits until `open`; `reached` tells it arrived. */
interface Hold {
  open: () => void;
  reached: Promise<void>;
}

/** One of the store's calls, which can be held open once at a time (see {@link Hold}). */
function holdable(): { hold(): Hold; pass(): Promise<void> } {
  let next: { opened: Promise<void>; reached: () => void } | undefined;
  return {
    hold() {
      const opened = gate();
      const reached = gate();
      next = { opened: opened.promise, reached: () => reached.open() };
      return { open: () => opened.open(), reached: reached.promise };
    },
    /** Waits while the call is held (once), then lets it through. */
    async pass() {
      const held = next;
      next = undefined;
      if (held === undefined) return;
      held.reached();
      await held.opened;
    },
  };
}

/** The store's commits and slot releases, each failing or held open on the test's say. */
function controlledStore(): {
  store: MemoryStore;
  /** Commits reject while set. */
  commitsFail: { on: boolean };
  /** Holds the next commit until it is opened; it then fails if `commitsFail` is on. */
  holdNextCommit(): Hold;
  /** Holds the next slot release until it is opened. */
  holdNextRelease(): Hold;
} {
  const store = new MemoryStore();
  const commitsFail = { on: false };
  const commit = store.commit.bind(store);
  const finishTurn = store.finishTurn.bind(store);
  const commits = holdable();
  const releases = holdable();
  store.commit = async (...args) => {
    await commits.pass();
    if (commitsFail.on) throw new Error('connection refused (injected outage: commit)');
    return commit(...args);
  };
  store.finishTurn = async (...args) => {
    await releases.pass();
    return finishTurn(...args);
  };
  return { store, commitsFail, holdNextCommit: commits.hold, holdNextRelease: releases.hold };
}

function runnerOn(store: MemoryStore, log: Logger, execute: (signal: AbortSignal) => Promise<void> = async () => {}) {
  return new TurnRunner({
    services: { store, log, events },
    executor: { execute: (context) => execute((context as unknown as { signal: AbortSignal }).signal) },
    workerId: 'w',
    turnTimeoutMs: undefined,
    drainTimeoutMs: 0,
  });
}

/** A running turn whose end `closeTurn` staged, its commit held open in the store. */
async function closingWithEndInFlight(store: MemoryStore, runner: TurnRunner, holdNextCommit: () => Hold) {
  const turn = await acceptedTurn(store);
  turn.start();
  const commit = holdNextCommit();
  const closed = runner.closeTurn(turn, 'Interrupted: shut down.');
  await commit.reached;
  return { turn, closed, commit };
}

/** Resolves with 'resolved', or 'pending' if `promise` has not settled within `ms`. */
function within(promise: Promise<unknown>, ms: number): Promise<'resolved' | 'pending'> {
  return Promise.race([
    promise.then(() => 'resolved' as const),
    new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), ms)),
  ]);
}

const stateOf = async (store: MemoryStore, taskId: string) => (await store.getTask(taskId))?.task.status;

describe('a turn whose end is written from two chains at once', () => {
  it('(1) the scheduler releasing the slot while a drain gives up on the end still settles the turn and resolves done', async () => {
    const { store, commitsFail, holdNextRelease } = controlledStore();
    const log = recordingLogger();
    const runner = runnerOn(store, log);
    const abandoned: QueueSlot[] = [];
    const scheduler = new Scheduler({
      store,
      runner,
      log,
      pollIntervalMs: 10_000,
      onAbandoned: (slot) => abandoned.push(slot),
    });
    // Canceled while it waited (never run): its own chain goes straight to releasing its slot.
    const release = holdNextRelease();
    const turn = await acceptedTurn(store, (accepted) => {
      accepted.abort('shutdown');
      scheduler.schedule(accepted);
    });
    await release.reached;
    // Meanwhile the lease runs out with the store down: the drain's attempt at the end gives up.
    turn.loseLease();
    commitsFail.on = true;
    const drained = scheduler.drain(0);
    expect(await within(drained, 3000)).toBe('resolved');
    expect(abandoned).toEqual([turn.slot]);
    // The release the turn's own chain started lands after all.
    release.open();
    expect(await within(turn.done.promise, 1000)).toBe('resolved');
    expect(turn.settled).toBe(true);
    expect(scheduler.running.size).toBe(0);
    expect(await store.listWorkerTurns('w')).toEqual([]);
  });

  it('(2) a drain giving up on an end after the slot was released does not fail: the turn settles', async () => {
    const { store, commitsFail, holdNextCommit } = controlledStore();
    const log = recordingLogger();
    const runner = runnerOn(store, log);
    const { turn, closed, commit } = await closingWithEndInFlight(store, runner, holdNextCommit);
    // The turn's own chain released its slot while this end was in flight; then the lease ran out.
    turn.slotReleased();
    turn.loseLease();
    commitsFail.on = true;
    commit.open();
    await expect(closed).resolves.toBeUndefined();
    expect(turn.settled).toBe(true);
    expect((await stateOf(store, turn.taskId))?.state).toBe('submitted');
  });

  it('(3a) an end given up on is written by a later closeTurn once the store is back', async () => {
    const { store, commitsFail } = controlledStore();
    const log = recordingLogger();
    const runner = runnerOn(store, log);
    const turn = await acceptedTurn(store);
    turn.start();
    turn.loseLease();
    commitsFail.on = true;
    await runner.closeTurn(turn, 'first attempt');
    expect(turn.phase).toBe('abandoned');
    commitsFail.on = false;
    // #failUnexpectedly or a drain closes it again: the failure is written this time.
    await runner.closeTurn(turn, 'The turn failed before it could finish.');
    const status = await stateOf(store, turn.taskId);
    expect(status?.state).toBe('failed');
    expect(textParts(status?.message?.parts)).toBe('The turn failed before it could finish.');
    expect(await store.listWorkerTurns('w')).toEqual([]);
  });

  it('(3b) updates the agent sends after its end was given up on are still written', async () => {
    const { store, commitsFail } = controlledStore();
    const runner = runnerOn(store, recordingLogger());
    const turn = await acceptedTurn(store);
    turn.start();
    turn.loseLease();
    commitsFail.on = true;
    await runner.closeTurn(turn, 'given up');
    commitsFail.on = false;
    expect(await turn.stage((task) => [events.status(task, 'working', 'still here')])).toBe(true);
    expect(textParts((await stateOf(store, turn.taskId))?.message?.parts)).toBe('still here');
  });

  it('(3c) the slot released while the end is in flight: when that commit fails, the retry still ends the task', async () => {
    const { store, commitsFail, holdNextCommit } = controlledStore();
    const runner = runnerOn(store, recordingLogger());
    const { turn, closed, commit } = await closingWithEndInFlight(store, runner, holdNextCommit);
    // A drain's release of the slot lands while the end's commit is in flight, which then fails.
    turn.slotReleased();
    commitsFail.on = true;
    commit.open();
    await new Promise((resolve) => setTimeout(resolve, 20));
    commitsFail.on = false; // the store is back before the retry (100 ms)
    await closed;
    const status = await stateOf(store, turn.taskId);
    expect(status?.state).toBe('failed');
    expect(textParts(status?.message?.parts)).toBe('Interrupted: shut down.');
  });

  it('(drain) a turn still running when its worker shuts down is failed, its slot released, and done resolved', async () => {
    const { store } = controlledStore();
    const log = recordingLogger();
    const runner = runnerOn(store, log, (signal) => waitForAbort(signal));
    const scheduler = new Scheduler({ store, runner, log, pollIntervalMs: 10_000, onAbandoned: () => {} });
    const turn = await acceptedTurn(store, (accepted) => scheduler.schedule(accepted));
    await expect(scheduler.drain(0)).resolves.toEqual({ turns: 1, interrupted: 1 });
    expect(await within(turn.done.promise, 1000)).toBe('resolved');
    expect((await stateOf(store, turn.taskId))?.state).toBe('failed');
    expect(await store.listWorkerTurns('w')).toEqual([]);
  });
});
