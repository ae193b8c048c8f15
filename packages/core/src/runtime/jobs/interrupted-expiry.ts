/**
 * Interrupted-task expiry (issue 23, item 12): a task in `input-required` or `auth-required`
 * (§6.3, interrupted) waits for its client for good unless something ends it; its context's state
 * then lives on too, since retention only purges terminal tasks and contexts left without others.
 * With `interruptedExpiry` set, every worker sweeps now and then, and a task that has waited longer
 * than `ttlMs` is moved to `failed` with a status message saying why; retention purges it (and its
 * context, once no other task holds it) like any terminal task.
 *
 * Across workers: each expiry is one version-checked commit of the version the sweep read, so of
 * two workers sweeping at once one writes and the other's commit is refused and skipped, and a
 * task answered (or canceled) since the read is left alone. A follow-up message already recorded
 * for the task, whose turn has not started yet (its slot still queued), also spares it: the
 * answer came in time.
 */

import { A2AError } from '../../errors.js';
import { applyEvents } from '../../model/task-state.js';
import { INTERRUPTED_STATES } from '../../model/types.js';
import { type A2AStore, type Clock, statusTimestampOf, type TaskRecord } from '../../store/index.js';
import type { Events } from '../events.js';
import type { InterruptedExpiryOptions, RuntimeLogger } from '../options.js';
import type { JobSpec } from './background.js';

/** Tasks one sweep reads (and may expire); the next sweep takes the rest. */
const SWEEP_BATCH = 500;
/** The sweep interval when the options give none: often enough next to any TTL, at most a minute. */
const MAX_DEFAULT_SWEEP_INTERVAL_MS = 60_000;

export class InterruptedExpiry {
  readonly #store: A2AStore;
  readonly #clock: Clock;
  readonly #events: Events;
  readonly #log: RuntimeLogger;
  readonly #ttlMs: number;
  readonly #sweepIntervalMs: number;

  constructor(store: A2AStore, clock: Clock, events: Events, log: RuntimeLogger, options: InterruptedExpiryOptions) {
    if (store.supports.interruptedTasks !== true || store.listInterruptedTasks === undefined) {
      throw new A2AError(
        'INVALID_OPTIONS',
        'interruptedExpiry needs a store that lists interrupted tasks by age (store.supports.interruptedTasks); the memory, SQLite and Postgres stores do. Use one of them, or leave interruptedExpiry out.',
      );
    }
    this.#store = store;
    this.#clock = clock;
    this.#events = events;
    this.#log = log;
    this.#ttlMs = options.ttlMs;
    this.#sweepIntervalMs = options.sweepIntervalMs ?? Math.min(MAX_DEFAULT_SWEEP_INTERVAL_MS, options.ttlMs);
  }

  /** Expires the interrupted tasks that have waited longer than the TTL; resolves with how many it ended. */
  async sweep(): Promise<number> {
    const listInterrupted = this.#store.listInterruptedTasks as NonNullable<A2AStore['listInterruptedTasks']>;
    // Whole milliseconds: a fractional ttlMs would otherwise reach a store comparing it to an
    // integer column (Postgres refuses "1234.5" as a bigint).
    const before = Math.floor(this.#clock() - this.#ttlMs);
    const due = await listInterrupted.call(this.#store, { before, limit: SWEEP_BATCH });
    let expired = 0;
    // Read after the tasks: a slot queued or finished since then came with a commit of its task,
    // so that task's expiry is refused as a version conflict.
    let queued: Promise<Set<string> | undefined> | undefined;
    const hasQueuedTurn = async (taskId: string): Promise<boolean> => {
      queued ??= this.#queuedTaskIds();
      // A store that does not list slots: assume the follow-up's turn will run.
      return (await queued)?.has(taskId) ?? true;
    };
    for (const record of due) if (await this.#expire(record, before, hasQueuedTurn)) expired++;
    if (expired > 0) this.#log.info({ expired, ttlMs: this.#ttlMs }, 'a2a: expired interrupted tasks');
    return expired;
  }

  /** The sweep as a background job. */
  job(): JobSpec {
    return {
      name: 'interrupted-task expiry',
      intervalMs: this.#sweepIntervalMs,
      run: () => this.sweep().then(() => {}),
    };
  }

  /** Tasks with a turn slot queued; `undefined` where the store does not list them. */
  async #queuedTaskIds(): Promise<Set<string> | undefined> {
    if (this.#store.supports.cluster !== true || this.#store.listWorkers === undefined) return undefined;
    const workers = await this.#store.listWorkers();
    return new Set(workers.flatMap((worker) => worker.turns.map((turn) => turn.taskId)));
  }

  async #expire(
    record: TaskRecord,
    before: number,
    hasQueuedTurn: (taskId: string) => Promise<boolean>,
  ): Promise<boolean> {
    const { task, version } = record;
    const { state } = task.status;
    if (!INTERRUPTED_STATES.has(state) || statusTimestampOf(task) >= before) return false;
    // The last event is a message when a follow-up was recorded after the pause: its turn will
    // run, as long as its slot is queued (it is taken in the follow-up's commit). A follow-up
    // whose slot is gone (released by an operator, say) never runs: sparing it would keep the
    // task for good, and each sweep would read the same oldest tasks again.
    const [last] = await this.#store.readEvents(task.id, version - 1, 1);
    if (last?.event.kind === 'message' && (await hasQueuedTurn(task.id))) return false;
    const reason = `Expired: the task waited in ${state} for more than ${this.#ttlMs} ms without an answer (interruptedExpiry).`;
    const event = this.#events.status(task, 'failed', reason);
    try {
      await this.#store.commit({
        taskId: task.id,
        expectedVersion: version,
        task: applyEvents(task, [event]),
        events: [event],
      });
      return true;
    } catch (error) {
      // Answered, canceled or expired by another worker since the read: nothing to do.
      if (A2AError.is(error) && error.code === 'VERSION_CONFLICT') return false;
      throw error;
    }
  }
}
