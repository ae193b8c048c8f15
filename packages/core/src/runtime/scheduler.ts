/**
 * Turn slots: a turn runs once its slot is the head of its context's queue (the store keeps the
 * queue, so turns of one context run one after another in arrival order on whichever workers
 * received them), and releases the slot when it ends. Also how a cancel reaches a running turn:
 * through the {@link TurnRegistry} within this process, through the task's log across processes.
 */

import type { Logger } from '../logger.js';
import { isTerminalState } from '../model/types.js';
import { type MultiMap, multiMapAdd, multiMapDelete, multiMapValues } from '../multi-map.js';
import type { A2AStore, QueueSlot } from '../store/index.js';
import { monotonicSeconds, noTelemetry, type Telemetry } from '../telemetry.js';
import { retryUntilDone } from './retry.js';
import { storeFailureReason, type TurnRunner } from './runner.js';
import type { AbortCause, Turn } from './turn.js';

/** Releases a turn's slot in its context's queue (the store contract calls this `finishTurn`). */
export function releaseSlot(store: A2AStore, slot: QueueSlot): Promise<void> {
  return store.finishTurn(slot);
}

/**
 * Where a registry is kept on its store instance. `Symbol.for`, so that two copies of this package
 * in one process (an application's and a plugin's) that share a store share its registry too.
 * Versioned: a registry of another shape must not be mistaken for this one.
 */
const REGISTRY = Symbol.for('@fastify-a2a/core.turn-registry.v1');

/**
 * The turns running in this process on one store instance, whichever runtime runs them, by task id.
 *
 * How a cancel reaches a turn of another runtime: the registry lives on the store instance itself
 * (a non-enumerable property under {@link REGISTRY}), so every runtime built on the same store
 * object finds the same registry, and `tasks/cancel` on any of them aborts the turn at once. A
 * store that carries events across processes (`supports.crossProcess`) is also watched per turn
 * (see Scheduler), which is how a cancel reaches a turn in another process, or on another store
 * instance over the same database; a store that does not (memory) is only ever shared by the same
 * object, so the registry is all it needs, and no turn on it pays for a subscription.
 */
export class TurnRegistry {
  readonly #byTask: MultiMap<string, Turn> = new Map();

  /** The registry of this store instance, made on first use. */
  static of(store: A2AStore): TurnRegistry {
    const held = (store as { [REGISTRY]?: TurnRegistry })[REGISTRY];
    if (held !== undefined) return held;
    const registry = new TurnRegistry();
    // A store object that cannot take a property (frozen) gets a registry of this runtime only:
    // cancels from other runtimes on it then travel through the log watch, if the store has one.
    if (Object.isExtensible(store)) Object.defineProperty(store, REGISTRY, { value: registry });
    return registry;
  }

  add(turn: Turn): void {
    multiMapAdd(this.#byTask, turn.taskId, turn);
  }

  delete(turn: Turn): void {
    multiMapDelete(this.#byTask, turn.taskId, turn);
  }

  /** Aborts every running turn of the task; how many there were. */
  abortTask(taskId: string, cause: AbortCause): number {
    const turns = multiMapValues(this.#byTask, taskId);
    for (const turn of turns) turn.abort(cause);
    return turns.length;
  }
}

/** What a drain did: the turns it waited for, and how many of them it had to interrupt. */
export interface DrainSummary {
  turns: number;
  interrupted: number;
}

export interface SchedulerOptions {
  readonly store: A2AStore;
  readonly runner: TurnRunner;
  readonly log: Logger;
  /** A turn waiting for its context re-checks the queue this often between notifications. */
  readonly pollIntervalMs: number;
  /**
   * A turn whose slot could not be released before this worker's lease ran out (see
   * Membership.abandon): whoever reaps it fails its task and releases the slot.
   */
  readonly onAbandoned: (slot: QueueSlot) => void;
  /** Where turns starting and ending are reported. @default noTelemetry */
  readonly telemetry?: Telemetry;
}

export class Scheduler {
  readonly #store: A2AStore;
  readonly #runner: TurnRunner;
  readonly #log: Logger;
  readonly #pollIntervalMs: number;
  readonly #registry: TurnRegistry;
  readonly #onAbandoned: (slot: QueueSlot) => void;
  readonly #telemetry: Telemetry;
  /** Turns accepted by this worker and not finished yet. */
  readonly #running = new Set<Turn>();

  constructor(options: SchedulerOptions) {
    this.#store = options.store;
    this.#runner = options.runner;
    this.#log = options.log;
    this.#pollIntervalMs = options.pollIntervalMs;
    this.#registry = TurnRegistry.of(options.store);
    this.#onAbandoned = options.onAbandoned;
    this.#telemetry = options.telemetry ?? noTelemetry;
  }

  /** Turns of this worker not finished yet. */
  get running(): ReadonlySet<Turn> {
    return this.#running;
  }

  /**
   * Takes a turn whose message was just recorded (with its slot): waits for the slot to reach the
   * head of the context's queue, runs the turn, then releases the slot.
   */
  schedule(turn: Turn): void {
    // A store shared across processes can carry a cancel from another worker: watch the task's log
    // for it. Within one process a cancel reaches the turn through the registry.
    if (this.#store.supports.crossProcess) this.#watch(turn);
    this.#running.add(turn);
    this.#registry.add(turn);
    // Chained rather than one more async function awaiting the run: a running turn keeps one
    // suspended frame instead of two (bench/PROFILE.md, per-stream memory).
    let ran: Promise<void>;
    if (this.#telemetry.enabled) {
      turn.acceptedAt = monotonicSeconds();
      ran = turn.isNewContext ? this.#runReported(turn) : this.#waitForSlot(turn).then(() => this.#runReported(turn));
    } else {
      ran = turn.isNewContext ? this.#runner.run(turn) : this.#waitForSlot(turn).then(() => this.#runner.run(turn));
    }
    // One reaction on the run, not a catch and a then (one promise fewer per running turn).
    void ran.then(
      () => this.#retire(turn),
      (error: unknown) => this.#failUnexpectedly(turn, error).then(() => this.#retire(turn)),
    );
  }

  /** Runs the turn (telemetry on), reporting its start after the wait for its slot. */
  #runReported(turn: Turn): Promise<void> {
    if (!turn.settled && !turn.aborted) {
      turn.startedAt = monotonicSeconds();
      this.#telemetry.turnStarted(turn.startedAt - turn.acceptedAt);
    }
    return this.#runner.run(turn);
  }

  /** Aborts this process's running turns of the task, on every runtime sharing the store (§7.4 tasks/cancel). */
  abortTask(taskId: string): void {
    this.#registry.abortTask(taskId, 'canceled');
  }

  /** Aborts every turn of this worker (its lease was lost): their pending writes stop being retried. */
  abortAll(cause: AbortCause): void {
    for (const turn of this.#running) {
      if (cause === 'lease-lost') turn.loseLease();
      turn.abort(cause);
    }
  }

  /**
   * A turn that failed outside the agent (a store read before it ran, say, during an outage): its
   * task must still end, or it stays `submitted` or `working` with no turn left to end it.
   */
  async #failUnexpectedly(turn: Turn, error: unknown): Promise<void> {
    this.#log.error({ err: error, taskId: turn.taskId }, 'a2a: turn failed unexpectedly');
    if (turn.settled || turn.abortCause === 'canceled' || turn.abortCause === 'superseded') return;
    const reason = error instanceof Error && error.message ? error.message : String(error);
    try {
      await this.#runner.closeTurn(
        turn,
        storeFailureReason(error) ?? `The turn failed before it could finish: ${reason}`,
      );
    } catch (closeError) {
      // Still retired after this (see #retire): the turn must settle and resolve `done`.
      this.#log.error({ err: closeError, taskId: turn.taskId }, "a2a: could not write the turn's failure");
    }
  }

  /**
   * Graceful shutdown: lets running turns finish for up to `drainMs`, then aborts the rest, fails
   * their tasks and releases their slots.
   */
  async drain(drainMs: number): Promise<DrainSummary> {
    const turns = [...this.#running];
    if (turns.length > 0) await Promise.race([Promise.allSettled(turns.map((t) => t.done.promise)), delay(drainMs)]);
    const left = [...this.#running];
    for (const turn of left) turn.abort('shutdown');
    await Promise.race([Promise.allSettled(left.map((t) => t.done.promise)), delay(1000)]);
    const reason = this.#runner.shutdownReason();
    for (const turn of left) {
      // Both retried while the lease holds (the store may be down as the worker shuts down); past
      // it, the turn is handed to the reaper like any turn of a worker whose lease ran out.
      await this.#runner.closeTurn(turn, reason);
      await this.#releaseSlot(turn);
    }
    return { turns: turns.length, interrupted: left.length };
  }

  /**
   * Releases the turn's slot unless its last commit did, retrying through a store outage: a slot
   * never released blocks every later message of the context (issue 14). Not when the turn's end
   * could not be written: releasing then would leave the task `working` with no turn to end it, so
   * the slot goes to the reaper, which fails the task and releases it. The turn's other chain may
   * give up on its end while the release is in flight; the release landed all the same, and the
   * turn takes it (see Turn.slotReleased).
   */
  async #releaseSlot(turn: Turn): Promise<void> {
    if (!turn.holdsSlot) return;
    const slot = turn.slot;
    if (slot === undefined) {
      // A turn whose task's creation was deferred took no slot (and, unwritten, left nothing to reap).
      turn.slotReleased();
      return;
    }
    const released =
      !turn.slotLeftToReaper &&
      (await retryUntilDone(() => releaseSlot(this.#store, slot), {
        log: this.#log,
        what: "release the turn's queue slot",
        fields: { taskId: turn.taskId },
        giveUp: () => turn.leaseLost,
      }));
    if (released) turn.slotReleased();
    else this.#onAbandoned(slot);
  }

  /**
   * After the turn ran (or never could): releases its slot if its last commit did not, and settles
   * it. Runs on a chain no one awaits: whatever fails here is logged, and the turn is still
   * settled and its `done` resolved, or a blocking send would hang and a drain wait for it.
   */
  #retire(turn: Turn): Promise<void> | undefined {
    // Usually the commit that ended the turn released its slot: nothing to wait for, so no async
    // frame (and its promises) either. Not when the turn never ran, its last write was refused
    // (canceled meanwhile) or failed.
    if (!turn.holdsSlot) {
      this.#forget(turn);
      return undefined;
    }
    return this.#releaseThenForget(turn);
  }

  async #releaseThenForget(turn: Turn): Promise<void> {
    try {
      await this.#releaseSlot(turn);
    } catch (error) {
      this.#log.error({ err: error, taskId: turn.taskId }, "a2a: could not retire the turn's slot");
    }
    this.#forget(turn);
  }

  /** The turn is done with: no longer running here, settled, and its `done` resolved. */
  #forget(turn: Turn): void {
    this.#running.delete(turn);
    this.#registry.delete(turn);
    turn.unsubscribe?.();
    turn.settle();
    turn.done.resolve();
    // A turn that never started (canceled while it waited) is not reported as one that ended.
    if (turn.startedAt !== 0) {
      this.#telemetry.turnEnded(turn.writer.task.status.state, monotonicSeconds() - turn.startedAt);
    }
  }

  async #waitForSlot(turn: Turn): Promise<void> {
    // A context this very message created has no other turn (its id was not known to anyone).
    const slot = turn.slot;
    if (turn.isNewContext || slot === undefined) return;
    const { signal } = turn;
    let failures = 0;
    // Both reads of the queue below, the first and the one after subscribing, go through this: the
    // store may become unreachable between them as well (issue 28: an outage starting there failed
    // the queued turn, whose agent had not even run).
    const readQueue = async (): Promise<Awaited<ReturnType<A2AStore['turnReadiness']>> | undefined> => {
      try {
        const readiness = await this.#store.turnReadiness(slot);
        failures = 0;
        return readiness;
      } catch (error) {
        // The store is unreachable (issue 14): a queued turn waits it out rather than failing a task
        // that never started, as long as this worker holds its lease.
        if (turn.leaseLost) throw error;
        if (failures++ === 0) {
          this.#log.warn({ err: error, taskId: turn.taskId }, 'a2a: could not check the turn queue; retrying');
        }
        await delay(Math.min(2000, this.#pollIntervalMs * 2 ** failures), signal);
        return undefined;
      }
    };
    for (;;) {
      if (turn.settled || signal.aborted) return;
      const readiness = await readQueue();
      if (readiness === undefined) continue;
      if (readiness.ready) return;
      turn.waitedForSlot();
      // The turn ahead ends with a write to its task and a queue notification: wake on it. Subscribe
      // first, then look again, so a release landing between the two reads is not missed.
      const wake = new AbortController();
      const unsubscribe = this.#store.subscribe(readiness.ahead.taskId, () => wake.abort());
      const onAbort = (): void => wake.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        const again = await readQueue();
        if (again?.ready) return;
        // Read again from the top: after a failure (readQueue waited already), or once woken.
        if (again !== undefined) await delay(this.#pollIntervalMs, wake.signal);
      } finally {
        signal.removeEventListener('abort', onAbort);
        unsubscribe();
      }
    }
  }

  /**
   * Watches the task's log for a terminal state written by someone else — a tasks/cancel on any
   * worker — and aborts the running executor (§7.4: cancel reaches the agent wherever it runs).
   */
  #watch(turn: Turn): void {
    let checking = false;
    let pending = false;
    let notified = 0;
    const check = async (): Promise<void> => {
      if (checking) {
        pending = true;
        return;
      }
      checking = true;
      try {
        do {
          pending = false;
          await turn.flush();
          // Most notifications are of the turn's own writes: nothing to read for those.
          if (notified <= turn.writer.version) continue;
          const record = await this.#store.getTask(turn.taskId);
          if (record === undefined || record.version <= turn.writer.version) continue;
          if (isTerminalState(record.task.status.state)) {
            turn.writer.task = record.task;
            turn.writer.version = record.version;
            turn.abort('canceled');
            turn.settle();
          }
        } while (pending);
      } catch (error) {
        this.#log.warn({ err: error, taskId: turn.taskId }, 'a2a: could not check the task for cancellation');
      } finally {
        checking = false;
      }
    };
    turn.unsubscribe = this.#store.subscribe(turn.taskId, (seq) => {
      notified = Math.max(notified, seq);
      if (seq > turn.writer.version && !turn.aborted) void check();
    });
  }
}

export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
