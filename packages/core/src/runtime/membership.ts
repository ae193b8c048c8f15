/**
 * This worker's membership of the set of workers sharing the store: it holds a lease renewed by
 * heartbeat, reaps workers whose lease ran out (failing the turns they left running, so their
 * streams on every worker end), notices when its own lease ran out, and leaves gracefully. Work on
 * a timer that only a live member should do (retention, push delivery) runs as its background jobs.
 */

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { A2AError } from '../errors.js';
import type { Logger } from '../logger.js';
import { isFinalState } from '../model/types.js';
import type { A2AStore, Clock, ExpiredWorker, QueueSlot, WorkerDescription, WorkerRecord } from '../store/index.js';
import { noTelemetry, type Telemetry } from '../telemetry.js';
import type { Events } from './events.js';
import { BackgroundJob, BackgroundJobs } from './jobs/background.js';
import { releaseSlot } from './scheduler.js';
import { TaskWriter } from './task-writer.js';

export interface MembershipOptions {
  readonly store: A2AStore;
  readonly workerId: string;
  readonly clock: Clock;
  readonly log: Logger;
  readonly events: Events;
  /** A worker silent for this long is dead to the others. */
  readonly leaseTtlMs: number;
  /** This worker found its own lease ran out: its turns must stop (another worker may have failed them). */
  readonly onLeaseLost: () => void;
  /** Where renewals and reaped workers are reported. @default noTelemetry */
  readonly telemetry?: Telemetry;
}

export class Membership {
  /** This process start, recorded with the lease (stores with `supports.cluster`). */
  readonly description: WorkerDescription;
  /** Jobs that run while this worker is a member: they start after it joined and stop when it leaves. */
  readonly jobs: BackgroundJobs;
  readonly #store: A2AStore;
  readonly #workerId: string;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #events: Events;
  readonly #leaseTtlMs: number;
  readonly #onLeaseLost: () => void;
  readonly #telemetry: Telemetry;
  readonly #lease: BackgroundJob;
  /** How soon a failed renewal is tried again (rather than at the next quarter of the TTL). */
  readonly #retryMs: number;
  #retryTimer: NodeJS.Timeout | undefined;
  /** Fires when the lease runs out: a renewal hanging on an unreachable store never gets to look. */
  #expiryTimer: NodeJS.Timeout | undefined;
  /** When this worker's lease, as last renewed, runs out. */
  #leaseEnd: number | undefined;
  /** The lease ran out and onLeaseLost was called; cleared by the next successful renewal. */
  #lost = false;
  /** Leaving: keep the lease, reap no one, start nothing new. */
  #leaving = false;
  /** join() refused: the lease row is a live process's, which leaving must not remove. */
  #refused = false;
  /** This start wrote its lease itself (a renewal called before join() finished): the row may be its own. */
  #renewed = false;
  /** Turns of this worker whose slot it could not release before its lease ran out (see abandon). */
  readonly #abandoned = new Map<string, { slot: QueueSlot; reason: string | undefined }>();

  constructor(options: MembershipOptions) {
    this.#store = options.store;
    this.#workerId = options.workerId;
    this.#clock = options.clock;
    this.#log = options.log;
    this.#events = options.events;
    this.#leaseTtlMs = options.leaseTtlMs;
    this.#onLeaseLost = options.onLeaseLost;
    this.#telemetry = options.telemetry ?? noTelemetry;
    this.#retryMs = Math.max(10, Math.min(1000, this.#leaseTtlMs / 4));
    this.description = { incarnation: randomUUID(), host: hostname(), pid: process.pid, startedAt: this.#clock() };
    this.jobs = new BackgroundJobs(options.log);
    // Renew well before the lease ends (a renewal that fails is retried within a second), and look
    // for dead workers as often: a worker that dies is found at most 1.25 × leaseTtlMs after its
    // last renewal.
    this.#lease = new BackgroundJob(
      {
        name: 'lease renewal or reaping',
        intervalMs: Math.max(10, this.#leaseTtlMs / 4),
        run: () => this.#renewAndReap(),
      },
      options.log,
    );
  }

  /** Takes this worker's lease, reaps dead workers once, then keeps renewing and starts the jobs. */
  async join(): Promise<void> {
    if (this.#store.supports.cluster === true && this.#store.joinWorker !== undefined) {
      await this.#refuseIfHeldByLiveProcess();
      // A worker restarted under the same workerId (set by the user) within the lease TTL finds
      // its predecessor's lease: it fails the turns that start left, as a reaper would (issue 23).
      const leaseUntil = this.#clock() + this.#leaseTtlMs;
      const predecessor = await this.#store.joinWorker(this.#workerId, leaseUntil, this.description);
      // Renew from now on: failing many turns on a slow store can take longer than the lease.
      this.#lease.start();
      if (predecessor !== undefined) await this.#reapPredecessor(predecessor);
    } else {
      await this.#store.heartbeat(this.#workerId, this.#clock() + this.#leaseTtlMs);
      this.#lease.start();
    }
    await this.#lease.run();
    if (!this.#leaving) this.jobs.start();
  }

  /**
   * Issue 28: two live processes configured with one workerId took each other's lease and failed
   * each other's turns (each start reaps its "predecessor"). A restart and a second live process
   * are told apart by time: a lease row of another start that is still live is watched for one
   * renewal interval of its holder (a quarter of the TTL it took, as `leaseUntil - lastHeartbeat`
   * tells, plus half of that for a late timer or a slow store: taking a live process for a crashed
   * one would fail its running turns, the very harm this guards against). Renewed meanwhile, its
   * process is alive: this start is refused, naming the id and that process's host and pid. Not
   * renewed (the process crashed, or was SIGKILLed), or gone, the start goes on as a restart.
   */
  async #refuseIfHeldByLiveProcess(): Promise<void> {
    if (this.#store.listWorkers === undefined || this.#renewed) return;
    const held = await this.#leaseRow();
    if (held === undefined || held.leaseUntil <= this.#clock() || this.#renewed) return;
    const heldTtlMs = held.leaseUntil - held.lastHeartbeat;
    // A TTL that makes no sense (clocks stepped, a hand-written row) is taken to be this worker's.
    const ttlMs = heldTtlMs > 0 && heldTtlMs <= 4 * this.#leaseTtlMs ? heldTtlMs : this.#leaseTtlMs;
    const waitMs = 1.5 * Math.max(10, ttlMs / 4);
    this.#log.info(
      { workerId: this.#workerId, host: held.description?.host, pid: held.description?.pid, waitMs },
      'a2a: another start of this worker id holds a live lease; waiting one renewal interval to tell a restart from a live process',
    );
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    const now = await this.#leaseRow();
    if (
      now === undefined ||
      this.#renewed ||
      (now.lastHeartbeat === held.lastHeartbeat &&
        now.leaseUntil === held.leaseUntil &&
        now.description?.incarnation === held.description?.incarnation)
    ) {
      return;
    }
    this.#refused = true;
    const { host, pid, startedAt } = now.description ?? {};
    const who =
      now.description === null
        ? 'a process of unknown host and pid (its lease carries no description)'
        : `the process on host "${host}" with pid ${pid} (started ${new Date(startedAt ?? 0).toISOString()})`;
    throw new A2AError(
      'INVALID_OPTIONS',
      `Worker id "${this.#workerId}" is in use: ${who} renewed its lease while this one waited, so it is alive. ` +
        "Two running processes must not share a workerId (each would fail the other's turns): give each its own, or leave workerId unset.",
      { data: { workerId: this.#workerId, host: host ?? null, pid: pid ?? null } },
    );
  }

  /** This worker id's lease row, if the store holds one. */
  async #leaseRow(): Promise<WorkerRecord | undefined> {
    const workers = (await this.#store.listWorkers?.()) ?? [];
    return workers.find((worker) => worker.workerId === this.#workerId && worker.leaseUntil > 0);
  }

  /**
   * Renews the lease, then claims workers whose lease ran out and fails the turns they left
   * running. One at a time (a call while one runs returns at once); failures are logged. Does
   * nothing once this worker has left.
   */
  renewAndReap(): Promise<void> {
    return this.#lease.run();
  }

  /**
   * Leaves the membership: stops the jobs and reaping at once, keeps the lease renewed while
   * `drain` runs — the worker is alive, and a lease running out mid-drain would let another worker
   * fail its turns as "worker lost" while they still run — then gives the lease up.
   */
  async leave(drain: () => Promise<void>): Promise<void> {
    this.#leaving = true;
    this.jobs.stop();
    await drain();
    this.#lease.stop();
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#expiryTimer);
    // A refused start took no lease: the row is the live process's.
    if (this.#refused) return;
    await this.#store
      .removeWorker(this.#workerId)
      .catch((error) => this.#log.warn({ err: error }, 'a2a: could not remove the worker lease'));
  }

  /** Whether this worker's lease ran out and has not been renewed since (its turns were aborted). */
  get leaseLost(): boolean {
    return this.#lost;
  }

  /**
   * Hands over a turn of this worker whose end it could not write before its lease ran out: with
   * the lease gone, another worker may be reaping it, so the turn's own retries stop. If no one
   * did (a single worker, or every worker lost the store), this worker reaps the turn itself once
   * its lease is renewed, the way it reaps a dead worker's: the task fails and the slot is released.
   */
  abandon(slot: QueueSlot, reason?: string): void {
    this.#abandoned.set(`${slot.contextId}\u0000${slot.position}`, { slot, reason });
  }

  async #renewAndReap(): Promise<void> {
    // The lease lasts the full TTL: that is what `leaseTtlMs` promises (a worker silent for that
    // long is dead to the others), and what lets this worker ride out a store outage shorter than
    // the TTL. It is computed before the write, so it never ends later than the store holds it.
    const sentAt = this.#clock();
    this.#renewed = true;
    try {
      await this.#store.heartbeat(this.#workerId, sentAt + this.#leaseTtlMs);
    } catch (error) {
      // Retry soon rather than at the next quarter tick, while the lease still runs; declare it
      // lost only once it has actually run out since the last successful renewal.
      this.#checkLeaseEnd(this.#clock());
      this.#retrySoon();
      this.#telemetry.leaseRenewed(false);
      throw error;
    }
    this.#telemetry.leaseRenewed(true);
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    // A renewal sent after the lease ended (event loop stalled, store unreachable) took a new one,
    // but meanwhile another worker may have declared this one dead and failed its tasks.
    this.#checkLeaseEnd(sentAt);
    this.#leaseEnd = sentAt + this.#leaseTtlMs;
    this.#lost = false;
    clearTimeout(this.#expiryTimer);
    this.#expiryTimer = setTimeout(() => this.#checkLeaseEnd(this.#clock()), this.#leaseTtlMs + 1);
    this.#expiryTimer.unref();
    if (this.#abandoned.size > 0) await this.#reapAbandoned();
    // A leaving worker only keeps its own lease: other workers reap the dead.
    if (this.#leaving) return;
    const now = this.#clock();
    for (const dead of await this.#store.claimExpiredWorkers(now, this.#workerId)) {
      const since = new Date(dead.lastHeartbeat).toISOString();
      for (const slot of dead.turns) {
        await this.#failAbandonedTurn(
          slot,
          `Worker lost: worker "${dead.workerId}" stopped renewing its lease (last heartbeat ${since}) before the turn finished.`,
        );
      }
      this.#log.warn({ workerId: dead.workerId, turns: dead.turns.length }, 'a2a: reaped a dead worker');
      this.#telemetry.workerReaped(dead.turns.length);
    }
  }

  async #reapPredecessor(predecessor: ExpiredWorker): Promise<void> {
    const since = new Date(predecessor.lastHeartbeat).toISOString();
    const reason = `Worker lost: worker "${predecessor.workerId}" restarted (last heartbeat of the previous process ${since}) before the turn finished.`;
    for (const slot of predecessor.turns) {
      try {
        await this.#failAbandonedTurn(slot, reason);
      } catch (error) {
        // The store already holds the new incarnation, so no later joinWorker returns this turn, and
        // a rejected join would fail start() for good: the turn is this worker id's, so reap it like
        // an abandoned one of its own, retried at each renewal while its slot is still queued.
        this.#log.warn(
          { err: error, taskId: slot.taskId },
          "a2a: could not fail a turn of this worker id's previous process; retrying",
        );
        this.abandon(slot, reason);
      }
    }
    if (predecessor.turns.length > 0) {
      this.#log.warn(
        { workerId: predecessor.workerId, turns: predecessor.turns.length },
        "a2a: failed the turns this worker id's previous process left running",
      );
    }
  }

  /** Declares the lease lost, once per loss, when `at` is past its end. */
  #checkLeaseEnd(at: number): void {
    if (this.#lost || this.#leaseEnd === undefined || at <= this.#leaseEnd) return;
    this.#lost = true;
    // Another worker may have declared this one dead and failed its tasks. Its turns must not go
    // on, or a context could run two turns at once; abort them (their writes are refused anyway).
    this.#log.error({ workerId: this.#workerId }, 'a2a: this worker lost its lease; aborting its running turns');
    this.#onLeaseLost();
  }

  #retrySoon(): void {
    if (this.#retryTimer !== undefined) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      void this.#lease.run();
    }, this.#retryMs);
    this.#retryTimer.unref();
  }

  /** Reaps this worker's abandoned turns that are still queued (no other worker reaped them). */
  async #reapAbandoned(): Promise<void> {
    const queued = new Set(
      (await this.#store.listWorkerTurns(this.#workerId)).map((slot) => `${slot.contextId}\u0000${slot.position}`),
    );
    for (const [key, { slot, reason }] of this.#abandoned) {
      if (queued.has(key)) {
        await this.#failAbandonedTurn(
          slot,
          reason ??
            `Worker lost: worker "${this.#workerId}" could not reach the store to finish the turn before its lease ran out.`,
        );
      }
      this.#abandoned.delete(key);
    }
  }

  /** Fails the task of a turn whose worker is gone, unless the turn had already ended, then releases its slot. */
  async #failAbandonedTurn(slot: QueueSlot, reason: string): Promise<void> {
    const record = await this.#store.getTask(slot.taskId);
    if (record !== undefined && !isFinalState(record.task.status.state)) {
      const last = await this.#store.readEvents(slot.taskId, record.version - 1, 1);
      const ended = last[0]?.event.kind === 'turn-end' && last[0].event.turnId === slot.messageId;
      if (!ended) {
        const writer = new TaskWriter(this.#store, record.task, record.version, undefined);
        const failed = await writer.commit(
          (task) => (isFinalState(task.status.state) ? undefined : [this.#events.status(task, 'failed', reason)]),
          { releaseSlot: slot },
        );
        if (failed !== undefined) return;
      }
    }
    await releaseSlot(this.#store, slot);
  }
}
