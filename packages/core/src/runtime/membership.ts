/**
 * This worker's membership of the set of workers sharing the store: it holds a lease renewed by
 * heartbeat, reaps workers whose lease ran out (failing the turns they left running, so their
 * streams on every worker end), notices when its own lease ran out, and leaves gracefully. Work on
 * a timer that only a live member should do (retention, push delivery) runs as its background jobs.
 */

import type { TurnTicket } from '../coordination.js';
import { isFinalState } from '../model/types.js';
import type { A2AStore, Clock } from '../store.js';
import type { Events } from './events.js';
import { BackgroundJob, BackgroundJobs } from './jobs/background.js';
import type { RuntimeLogger } from './options.js';
import { releaseSlot } from './scheduler.js';
import { TaskWriter } from './task-writer.js';

export interface MembershipOptions {
  readonly store: A2AStore;
  readonly workerId: string;
  readonly clock: Clock;
  readonly log: RuntimeLogger;
  readonly events: Events;
  /** A worker silent for this long is dead to the others. */
  readonly leaseTtlMs: number;
  /** This worker found its own lease ran out: its turns must stop (another worker may have failed them). */
  readonly onLeaseLost: () => void;
}

export class Membership {
  /** Jobs that run while this worker is a member: they start after it joined and stop when it leaves. */
  readonly jobs: BackgroundJobs;
  readonly #store: A2AStore;
  readonly #workerId: string;
  readonly #clock: Clock;
  readonly #log: RuntimeLogger;
  readonly #events: Events;
  readonly #leaseTtlMs: number;
  readonly #onLeaseLost: () => void;
  readonly #lease: BackgroundJob;
  /** When this worker's lease, as last renewed, runs out. */
  #leaseEnd: number | undefined;
  /** Leaving: keep the lease, reap no one, start nothing new. */
  #leaving = false;

  constructor(options: MembershipOptions) {
    this.#store = options.store;
    this.#workerId = options.workerId;
    this.#clock = options.clock;
    this.#log = options.log;
    this.#events = options.events;
    this.#leaseTtlMs = options.leaseTtlMs;
    this.#onLeaseLost = options.onLeaseLost;
    this.jobs = new BackgroundJobs(options.log);
    // Renew well before the lease ends, and look for dead workers as often: a worker that dies is
    // found at most ~leaseTtlMs after its last renewal.
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
    await this.#store.heartbeat(this.#workerId, this.#leaseUntil());
    this.#lease.start();
    await this.#lease.run();
    if (!this.#leaving) this.jobs.start();
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
    await this.#store
      .removeWorker(this.#workerId)
      .catch((error) => this.#log.warn({ err: error }, 'a2a: could not remove the worker lease'));
  }

  #leaseUntil(): number {
    // 70% of the TTL: with renewals every 25%, a live worker survives one late renewal, and a dead
    // one expires, and is reaped on the next quarter tick, within the TTL.
    return this.#clock() + Math.round(this.#leaseTtlMs * 0.7);
  }

  async #renewAndReap(): Promise<void> {
    const leaseUntil = this.#leaseUntil();
    await this.#store.heartbeat(this.#workerId, leaseUntil);
    if (this.#leaseEnd !== undefined && this.#clock() > this.#leaseEnd) {
      // This worker was silent past its lease (event loop stalled, store unreachable): another
      // worker may have declared it dead and failed its tasks. Its turns must not go on, or a
      // context could run two turns at once; abort them (their writes are refused anyway).
      this.#log.error({ workerId: this.#workerId }, 'a2a: this worker lost its lease; aborting its running turns');
      this.#onLeaseLost();
    }
    this.#leaseEnd = leaseUntil;
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
    }
  }

  /** Fails the task of a turn whose worker is gone, unless the turn had already ended, then releases its slot. */
  async #failAbandonedTurn(slot: TurnTicket, reason: string): Promise<void> {
    const record = await this.#store.getTask(slot.taskId);
    if (record !== undefined && !isFinalState(record.task.status.state)) {
      const last = await this.#store.readEvents(slot.taskId, record.version - 1, 1);
      const ended = last[0]?.event.kind === 'turn-end' && last[0].event.turnId === slot.turnId;
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
