/**
 * Streams (§7.2 message/stream, §7.9 tasks/resubscribe): every stream is one path, "the task's log
 * after seq N", optionally preceded by a Task snapshot taken at version N. A stream wakes on the
 * store's notifications; one safety poll per runtime covers notifications that were lost.
 */

import { endsStream, withHistoryLength } from '../model/task-state.js';
import { isFinalState, isTerminalState, type Task } from '../model/types.js';
import { type MultiMap, multiMapAdd, multiMapDelete, multiMapValues } from '../multi-map.js';
import type { StreamSignal } from '../protocol/context.js';
import type { StreamFrame } from '../protocol/operations.js';
import type { A2AStore, StoreCallContext } from '../store.js';
import type { RuntimeLogger, StreamOptions } from './options.js';

/**
 * How one stream follows its task. Always built by {@link followOptions}, with every field, so all
 * streams share one object shape (bench/PROFILE.md: per-stream memory).
 */
export interface FollowOptions {
  signal: StreamSignal | undefined;
  historyLength: number | undefined;
  /** End at the end of the turn this user message started. */
  turnMessageId: string | undefined;
  /** End after the snapshot when the task is already final (tasks/resubscribe). */
  endIfFinal: boolean;
  /** End after the snapshot (a retried message whose turn already ended). */
  onlySnapshot: boolean;
  /** The store context of the stream's reads (the caller's). */
  storeContext: StoreCallContext | undefined;
}

export function followOptions(
  options: StreamOptions,
  storeContext: StoreCallContext | undefined,
  extra: {
    historyLength?: number | undefined;
    turnMessageId?: string;
    endIfFinal?: boolean;
    onlySnapshot?: boolean;
  },
): FollowOptions {
  return {
    signal: options.signal,
    historyLength: extra.historyLength ?? options.historyLength,
    turnMessageId: extra.turnMessageId,
    endIfFinal: extra.endIfFinal ?? false,
    onlySnapshot: extra.onlySnapshot ?? false,
    storeContext,
  };
}

/** A stream reading its task's log, while it waits for more. */
interface Waiter {
  readonly taskId: string;
  /** The sequence of the last event it read. */
  last: number;
  /** Set while it waits: true for a notification (or an abort), false from the safety poll. */
  wake: ((notified: boolean) => void) | undefined;
}

/** Task ids per getVersions call of the safety poll. */
const POLL_BATCH = 1000;

/** Events per readEvents call. */
const READ_BATCH = 256;

export class Follower {
  readonly #store: A2AStore;
  readonly #log: RuntimeLogger;
  readonly #pollIntervalMs: number;
  /** Streams waiting for their task's next events, by task id (see #poll). */
  readonly #waiting: MultiMap<string, Waiter> = new Map();
  #pollTimer: NodeJS.Timeout | undefined;
  #polling = false;
  #stopped = false;

  constructor(store: A2AStore, log: RuntimeLogger, pollIntervalMs: number) {
    this.#store = store;
    this.#log = log;
    this.#pollIntervalMs = pollIntervalMs;
  }

  /** Stops the safety poll for good (the runtime is closing); streams still open wake on notifications. */
  stop(): void {
    this.#stopped = true;
    if (this.#pollTimer) clearInterval(this.#pollTimer);
  }

  /**
   * The stream of a task: `snapshot` as the first frame when given (read at version `afterSeq`),
   * then the log after `afterSeq`, until a final status event, the end of the turn of
   * `turnMessageId`, or `signal` aborts. One generator per stream: a held stream keeps one frame.
   */
  async *follow(
    taskId: string,
    afterSeq: number,
    options: FollowOptions,
    snapshot?: Task,
  ): AsyncGenerator<StreamFrame> {
    const { signal, turnMessageId } = options;
    let sent = false;
    if (snapshot !== undefined) {
      sent = true;
      const { state } = snapshot.status;
      yield { seq: afterSeq, result: withHistoryLength(snapshot, options.historyLength) };
      snapshot = undefined; // not kept alive while the stream waits
      if (options.onlySnapshot || (options.endIfFinal && isFinalState(state))) return;
    }
    const waiter: Waiter = { taskId, last: afterSeq, wake: undefined };
    let notified = false;
    const unsubscribe = this.#store.subscribe(taskId, (seq) => {
      if (seq > waiter.last) {
        notified = true;
        waiter.wake?.(true);
      }
    });
    const onAbort = (): void => waiter.wake?.(true);
    signal?.addEventListener('abort', onAbort);
    try {
      let checkTask = true;
      while (!signal?.aborted) {
        notified = false;
        const events = await this.#store.readEvents(taskId, waiter.last, READ_BATCH, options.storeContext);
        for (const stored of events) {
          waiter.last = stored.seq;
          const { event } = stored;
          if (event.kind === 'turn-end') {
            if (event.turnId === turnMessageId) return;
            continue;
          }
          if (event.kind === 'message') continue; // user follow-ups are in the next Task snapshot, not stream items
          sent = true;
          yield { seq: stored.seq, result: event };
          if (endsStream(event)) return;
        }
        if (events.length > 0) continue;
        if (checkTask) {
          // Nothing new: the task may be gone (purged) or already past its final event.
          const record = await this.#store.getTask(taskId, options.storeContext);
          if (record === undefined) return;
          // Past the last event of a terminal task, nothing more can come. An interrupted task
          // (input-required) may be about to resume with the turn `turnMessageId` waits for.
          const { state } = record.task.status;
          if (
            record.version <= waiter.last &&
            (isTerminalState(state) || (isFinalState(state) && turnMessageId === undefined))
          ) {
            // A stream about to end having sent nothing (a reconnect whose Last-Event-ID is the
            // final event, or past it) answers with the task as it stands, as §7.9 answers a
            // subscription to a finished task: an empty stream would not tell the client how the
            // task ended. Its id is the latest event's, so reconnecting with it answers the same.
            if (!sent) yield { seq: record.version, result: withHistoryLength(record.task, options.historyLength) };
            return;
          }
        }
        if (notified || signal?.aborted) continue;
        // Wait for a notification, or for the safety poll to see the task changed (or gone).
        const woke = await new Promise<boolean>((resolve) => {
          waiter.wake = resolve;
          this.#startWaiting(waiter);
        });
        this.#stopWaiting(waiter);
        waiter.wake = undefined;
        checkTask = !woke;
      }
    } finally {
      this.#stopWaiting(waiter);
      unsubscribe();
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Where the turn of user message `messageId` ended in the task's log: the sequence of its final
   * status or turn-end event, or undefined while it runs.
   */
  async turnEndSeq(taskId: string, messageId: string, ctx: StoreCallContext | undefined): Promise<number | undefined> {
    let after = await this.turnStartSeq(taskId, messageId, ctx);
    for (;;) {
      const events = await this.#store.readEvents(taskId, after, READ_BATCH, ctx);
      if (events.length === 0) return undefined;
      for (const { seq, event } of events) {
        if ((event.kind === 'turn-end' && event.turnId === messageId) || endsStream(event)) return seq;
        // The next user message starts another turn: this one ended before it.
        if (event.kind === 'message') return seq - 1;
        after = seq;
      }
    }
  }

  /** The sequence of the event that recorded user message `messageId` (the log's end if it is not there). */
  async turnStartSeq(taskId: string, messageId: string, ctx: StoreCallContext | undefined): Promise<number> {
    let after = 0;
    for (;;) {
      const events = await this.#store.readEvents(taskId, after, READ_BATCH, ctx);
      if (events.length === 0) return after;
      for (const { seq, event } of events) {
        if (
          (event.kind === 'task' && event.history?.[0]?.messageId === messageId) ||
          (event.kind === 'message' && event.messageId === messageId)
        ) {
          return seq;
        }
        after = seq;
      }
    }
  }

  /** Resolves once the turn of user message `messageId` has ended, wherever it runs. */
  async waitForTurnEnd(taskId: string, messageId: string, ctx: StoreCallContext | undefined): Promise<void> {
    const startSeq = await this.turnStartSeq(taskId, messageId, ctx);
    for await (const _ of this.follow(taskId, startSeq, followOptions({}, ctx, { turnMessageId: messageId }))) {
      // drain: follow returns at the turn's end
    }
  }

  /**
   * Registers a waiting stream with the safety poll: one timer and one `getVersions` call per
   * interval for every stream this runtime serves, rather than a timer and two reads per stream.
   */
  #startWaiting(waiter: Waiter): void {
    multiMapAdd(this.#waiting, waiter.taskId, waiter);
    if (this.#pollTimer === undefined && !this.#stopped) {
      this.#pollTimer = setInterval(() => void this.#poll(), this.#pollIntervalMs);
      this.#pollTimer.unref();
    }
  }

  #stopWaiting(waiter: Waiter): void {
    if (!multiMapDelete(this.#waiting, waiter.taskId, waiter)) return;
    if (this.#waiting.size === 0 && this.#pollTimer !== undefined) {
      clearInterval(this.#pollTimer);
      this.#pollTimer = undefined;
    }
  }

  /**
   * The safety net under notifications (which a crash between a commit and its NOTIFY can lose):
   * wakes every waiting stream whose task moved past what it has, or no longer exists.
   */
  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      const taskIds = [...this.#waiting.keys()];
      for (let start = 0; start < taskIds.length; start += POLL_BATCH) {
        const batch = taskIds.slice(start, start + POLL_BATCH);
        const versions = await this.#store.getVersions(batch);
        for (const taskId of batch) {
          const version = versions.get(taskId);
          for (const waiter of multiMapValues(this.#waiting, taskId)) {
            if (version === undefined || version > waiter.last) waiter.wake?.(false);
          }
        }
      }
    } catch (error) {
      this.#log.warn({ err: error }, 'a2a: the safety poll of open streams failed; it runs again next interval');
    } finally {
      this.#polling = false;
    }
  }
}
