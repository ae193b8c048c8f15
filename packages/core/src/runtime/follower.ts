/**
 * Streams (§7.2 message/stream, §7.9 tasks/resubscribe): every stream is one path, "the task's log
 * after seq N", optionally preceded by a Task snapshot taken at version N. A stream wakes on the
 * store's notifications; one safety poll per runtime covers notifications that were lost.
 */

import type { Logger } from '../logger.js';
import { runInMicrotask } from '../microtask.js';
import { advancesGeneration, endsStream, FIRST_GENERATION, withHistoryLength } from '../model/task-state.js';
import {
  isFinalState,
  isTerminalState,
  type StreamResult,
  type Task,
  type TaskEvent,
  type TaskState,
} from '../model/types.js';
import { type MultiMap, multiMapAdd, multiMapDelete, multiMapValues } from '../multi-map.js';
import type { StreamSignal } from '../protocol/context.js';
import type { StreamFrame } from '../protocol/operations.js';
import type { A2AStore, ReadEventsOptions, StoreCallContext, StoredEvent } from '../store/index.js';
import { noTelemetry, type Telemetry } from '../telemetry.js';
import type { StreamOptions } from './options.js';

/**
 * How one stream follows its task. Always built by {@link followOptions}, with every field, so all
 * streams share one object shape (bench/PROFILE.md: per-stream memory).
 */
export interface FollowOptions {
  signal: StreamSignal | undefined;
  historyLength: number | undefined;
  /** The user message whose turn the stream ends with (it ends at that turn's end); undefined: no turn. */
  messageId: string | undefined;
  /** End after the snapshot when the task is already final (tasks/resubscribe). */
  endIfFinal: boolean;
  /**
   * End only at a terminal state, not at an interrupted one (`input-required`, `auth-required`):
   * A2A 1.0's SubscribeToTask (§3.1.6: it "can be used with any task that is not in a terminal
   * state", and the stream "MUST terminate when the task reaches a terminal state"), so a client
   * that subscribes and then answers the question sees the next turn and the outcome on it.
   * Otherwise a stream also ends at an interrupted state, as 0.3's `final` says.
   */
  untilTerminal: boolean;
  /** End after the snapshot (a retried message whose turn already ended). */
  onlySnapshot: boolean;
  /** The store context of the stream's reads (the caller's). */
  storeContext: StoreCallContext | undefined;
  /** Each update event sent carries the task's generation after it (A2A 1.1 draft, `draft11.generations`). */
  generations: boolean;
  /** The store's reads for the stream: shared when the consumer never changes frames (StreamOptions.sharedFrames). */
  readOptions: ReadEventsOptions | undefined;
}

export function followOptions(
  options: StreamOptions,
  storeContext: StoreCallContext | undefined,
  extra: {
    historyLength?: number | undefined;
    messageId?: string;
    endIfFinal?: boolean;
    untilTerminal?: boolean;
    onlySnapshot?: boolean;
    generations?: boolean;
  },
): FollowOptions {
  return {
    signal: options.signal,
    historyLength: extra.historyLength ?? options.historyLength,
    messageId: extra.messageId,
    endIfFinal: extra.endIfFinal ?? false,
    untilTerminal: extra.untilTerminal ?? false,
    onlySnapshot: extra.onlySnapshot ?? false,
    storeContext,
    generations: extra.generations ?? false,
    readOptions: options.sharedFrames === true ? SHARED_READ : undefined,
  };
}

/** The reads of a stream whose frames no one changes, and of the runtime's own scans of a log. */
const SHARED_READ: ReadEventsOptions = Object.freeze({ shared: true });

/** Whether a status in `state` ends a stream that follows `options`. */
function endsHere(state: TaskState, options: FollowOptions): boolean {
  return options.untilTerminal ? isTerminalState(state) : isFinalState(state);
}

/** A stream reading its task's log, while it waits for more. */
interface Waiter {
  readonly taskId: string;
  /** The sequence of the last event it read. */
  readonly last: number;
  /** Wakes it if it waits: true for a notification (or an abort), false from the safety poll. */
  wake(notified: boolean): void;
}

/** Task ids per getVersions call of the safety poll. */
const POLL_BATCH = 1000;

/** Events per readEvents call. */
const READ_BATCH = 256;

export class Follower {
  readonly #store: A2AStore;
  readonly #log: Logger;
  readonly #pollIntervalMs: number;
  /** Streams waiting for their task's next events, by task id (see #poll). */
  readonly #waiting: MultiMap<string, Waiter> = new Map();
  #pollTimer: NodeJS.Timeout | undefined;
  #polling = false;
  #stopped = false;
  readonly #telemetry: Telemetry;

  constructor(store: A2AStore, log: Logger, pollIntervalMs: number, telemetry: Telemetry = noTelemetry) {
    this.#store = store;
    this.#log = log;
    this.#pollIntervalMs = pollIntervalMs;
    this.#telemetry = telemetry;
  }

  /** Stops the safety poll for good (the runtime is closing); streams still open wake on notifications. */
  stop(): void {
    this.#stopped = true;
    if (this.#pollTimer) clearInterval(this.#pollTimer);
  }

  /**
   * The stream of a task: `snapshot` as the first frame when given (read at version `afterSeq`),
   * then the log after `afterSeq`, until a final status event (a terminal one with
   * `options.untilTerminal`), the end of the turn of `options.messageId`, or `signal` aborts. See
   * {@link FollowStream}.
   */
  follow(taskId: string, afterSeq: number, options: FollowOptions, snapshot?: Task): AsyncGenerator<StreamFrame> {
    return new FollowStream(this.#store, this.#waitingList, taskId, afterSeq, options, snapshot, this.#telemetry);
  }

  /**
   * Where the turn of user message `messageId` ended in the task's log: the sequence of its final
   * status or turn-end event, or undefined while it runs.
   */
  async turnEndSeq(taskId: string, messageId: string, ctx: StoreCallContext | undefined): Promise<number | undefined> {
    let after = await this.turnStartSeq(taskId, messageId, ctx);
    for (;;) {
      const events = await this.#store.readEvents(taskId, after, READ_BATCH, ctx, SHARED_READ);
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
      const events = await this.#store.readEvents(taskId, after, READ_BATCH, ctx, SHARED_READ);
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

  /**
   * Resolves once the turn of user message `messageId` has ended, wherever it runs, or after
   * `maxWaitMs` (the runtime's blockingSendMaxWaitMs) when given.
   */
  async waitForTurnEnd(
    taskId: string,
    messageId: string,
    ctx: StoreCallContext | undefined,
    maxWaitMs?: number,
  ): Promise<void> {
    const startSeq = await this.turnStartSeq(taskId, messageId, ctx);
    const signal = maxWaitMs === undefined ? undefined : AbortSignal.timeout(maxWaitMs);
    // Its frames are drained unread: shared.
    const options = followOptions(signal === undefined ? { sharedFrames: true } : { signal, sharedFrames: true }, ctx, {
      messageId,
    });
    for await (const _ of this.follow(taskId, startSeq, options)) {
      // drain: follow returns at the turn's end
    }
  }

  /**
   * The safety poll's list of waiting streams: one timer and one `getVersions` call per interval
   * for every stream this runtime serves, rather than a timer and two reads per stream.
   */
  readonly #waitingList: WaitingList = {
    add: (waiter) => {
      multiMapAdd(this.#waiting, waiter.taskId, waiter);
      if (this.#pollTimer === undefined && !this.#stopped) {
        this.#pollTimer = setInterval(() => void this.#poll(), this.#pollIntervalMs);
        this.#pollTimer.unref();
      }
    },
    delete: (waiter) => {
      if (!multiMapDelete(this.#waiting, waiter.taskId, waiter)) return;
      if (this.#waiting.size === 0 && this.#pollTimer !== undefined) {
        clearInterval(this.#pollTimer);
        this.#pollTimer = undefined;
      }
    },
  };

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
            if (version === undefined || version > waiter.last) waiter.wake(false);
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

/** Where waiting streams register with the safety poll. */
interface WaitingList {
  add(waiter: Waiter): void;
  delete(waiter: Waiter): void;
}

/** What a step of a stream came to: a frame to send, the end, or nothing new yet. */
const WAIT = Symbol('wait');
const END = Symbol('end');
type Step = StreamFrame | typeof WAIT | typeof END;

/** How to answer a next(), return() or throw() call. */
type Resolve = (result: IteratorResult<StreamFrame>) => void;
type Reject = (error: unknown) => void;

const DONE: IteratorResult<StreamFrame> = Object.freeze({ done: true, value: undefined });

/**
 * One stream, as an async iterator written out rather than an async generator: while it waits for
 * its task's next event it holds this object and the pending next() call's promise, and no
 * suspended frame (an async generator holds more per held stream: bench/PROFILE.md has the figure).
 * It behaves as the generator did: the snapshot first when given, then the log after `afterSeq`;
 * it subscribes to the task once past the snapshot, and lets go (subscription, abort listener,
 * safety poll) when it ends, fails, or is returned or thrown into. Calls made while one is being
 * answered wait their turn, as a generator's do.
 */
class FollowStream implements AsyncGenerator<StreamFrame>, Waiter {
  readonly taskId: string;
  last: number;
  readonly #store: A2AStore;
  readonly #waitingList: WaitingList;
  readonly #options: FollowOptions;
  #snapshot: Task | undefined;
  /** 0: not subscribed yet; 1: following the log; 2: ended. */
  #phase: 0 | 1 | 2 = 0;
  /** The frame just answered ends the stream: the next call ends it. */
  #endNext = false;
  /** Whether it answered any frame. */
  #sent = false;
  /**
   * Read the task when the log has nothing new: at the start, and after a wake from the safety poll
   * (not a notification). Not at the start after a snapshot that is not final: that read could
   * only find the task as the snapshot has it (the log after it is empty), so a stream opened
   * with its task makes one store read fewer (bench/PROFILE.md, per-stream memory). A task that
   * became terminal and was purged meanwhile is found by the safety poll.
   */
  #checkTask: boolean;
  /** A notification of a newer event came since the last read. */
  #notified = false;
  /** The newest sequence a notification announced (0: none yet). */
  #announced = 0;
  /**
   * The last read reached the end of the log (it returned less than a batch): once the stream has
   * sent what it read, another read finds nothing unless a notification announced more.
   */
  #readToEnd = false;
  #waiting = false;
  /** The log events read and not answered yet. */
  #batch: readonly StoredEvent[] = [];
  #index = 0;
  #unsubscribe: (() => void) | undefined;
  #onAbort: (() => void) | undefined;
  /** How to answer the call being served; undefined when none is. */
  #resolve: Resolve | undefined;
  #reject: Reject | undefined;
  /** Calls waiting for it. */
  #queue: (() => void)[] | undefined;
  readonly #telemetry: Telemetry;
  /**
   * With `options.generations`: the task's generation after the last event read (the A2A 1.1
   * draft's, §3.2.7, by the model's one rule); undefined until known (see #generationAt).
   */
  #generation: number | undefined;

  constructor(
    store: A2AStore,
    waitingList: WaitingList,
    taskId: string,
    afterSeq: number,
    options: FollowOptions,
    snapshot: Task | undefined,
    telemetry: Telemetry,
  ) {
    this.#telemetry = telemetry;
    telemetry.streamOpened();
    this.#store = store;
    this.#waitingList = waitingList;
    this.taskId = taskId;
    this.last = afterSeq;
    this.#options = options;
    this.#snapshot = snapshot;
    this.#checkTask = snapshot === undefined || isFinalState(snapshot.status.state);
    // A snapshot is read at version `afterSeq`: its generation is the one after that event.
    if (options.generations) this.#generation = snapshot !== undefined ? (snapshot.generation ?? 0) : undefined;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<StreamFrame>> {
    return new Promise((resolve, reject) => this.#submit(resolve, reject, 'next'));
  }

  return(value?: unknown): Promise<IteratorResult<StreamFrame>> {
    return new Promise((resolve, reject) =>
      this.#submit(() => resolve({ done: true, value: value as undefined }), reject, 'return'),
    );
  }

  throw(error: unknown): Promise<IteratorResult<StreamFrame>> {
    return new Promise((resolve, reject) => this.#submit(resolve, () => reject(error), 'throw'));
  }

  #submit(resolve: Resolve, reject: Reject, kind: 'next' | 'return' | 'throw'): void {
    if (this.#resolve === undefined) {
      this.#serve(resolve, reject, kind);
      return;
    }
    this.#queue ??= [];
    this.#queue.push(() => this.#serve(resolve, reject, kind));
  }

  #serve(resolve: Resolve, reject: Reject, kind: 'next' | 'return' | 'throw'): void {
    this.#resolve = resolve;
    this.#reject = reject;
    if (kind === 'next') {
      if (this.#phase === 2) this.#answer(DONE);
      else this.#step();
      return;
    }
    this.#close();
    if (kind === 'return') this.#answer(DONE);
    else this.#fail(undefined);
  }

  /** Answers the call being served, then serves the next one waiting. */
  #answer(result: IteratorResult<StreamFrame>): void {
    const resolve = this.#resolve;
    this.#resolve = undefined;
    this.#reject = undefined;
    resolve?.(result);
    this.#queue?.shift()?.();
  }

  #fail(error: unknown): void {
    this.#close();
    const reject = this.#reject;
    this.#resolve = undefined;
    this.#reject = undefined;
    reject?.(error);
    this.#queue?.shift()?.();
  }

  #step(): void {
    this.#advance().then(
      (step) => {
        if (step === WAIT) {
          this.#waiting = true;
          this.#waitingList.add(this);
        } else if (step === END) {
          this.#close();
          this.#answer(DONE);
        } else {
          this.#sent = true;
          this.#answer({ done: false, value: step });
        }
      },
      (error: unknown) => this.#fail(error),
    );
  }

  /** Called by a notification or an abort (true), or the safety poll (false). */
  wake(notified: boolean): void {
    if (!this.#waiting) return;
    this.#waiting = false;
    this.#waitingList.delete(this);
    this.#checkTask = !notified;
    // Not from within the store's notification or the poll's loop.
    runInMicrotask(() => this.#step());
  }

  /** Lets go of the subscription, the abort listener and the safety poll; the stream has ended. */
  #close(): void {
    if (this.#phase === 2) return;
    const subscribed = this.#phase === 1;
    this.#phase = 2;
    this.#telemetry.streamClosed();
    this.#batch = [];
    this.#snapshot = undefined;
    if (!subscribed) return;
    if (this.#waiting) {
      this.#waiting = false;
      this.#waitingList.delete(this);
    }
    this.#unsubscribe?.();
    if (this.#onAbort !== undefined) this.#options.signal?.removeEventListener('abort', this.#onAbort);
  }

  #subscribe(): void {
    this.#phase = 1;
    this.#unsubscribe = this.#store.subscribe(this.taskId, (seq) => {
      if (seq > this.#announced) this.#announced = seq;
      if (seq > this.last) {
        this.#notified = true;
        this.wake(true);
      }
    });
    this.#onAbort = (): void => this.wake(true);
    this.#options.signal?.addEventListener('abort', this.#onAbort);
  }

  /** The generation after `event` (model/task-state.ts advancesGeneration: the one rule). */
  #countGeneration(event: TaskEvent): void {
    if (event.kind === 'task') this.#generation = FIRST_GENERATION;
    else if (advancesGeneration(event)) this.#generation = (this.#generation ?? 0) + 1;
  }

  /** A copy of `event` carrying the generation after it; the log's event is shared, never changed. */
  #withGeneration(event: Exclude<TaskEvent, { kind: 'turn-end' | 'message' }>): StreamResult {
    return { ...event, generation: this.#generation ?? 0 };
  }

  /**
   * The generation after the log's event `seq`, for a stream that starts without a snapshot (a
   * reconnect with Last-Event-ID): the log's advancing events up to there, counted once.
   */
  async #generationAt(seq: number): Promise<number> {
    let generation = 0;
    let after = 0;
    while (after < seq) {
      const events = await this.#store.readEvents(
        this.taskId,
        after,
        READ_BATCH,
        this.#options.storeContext,
        SHARED_READ,
      );
      if (events.length === 0) break;
      for (const stored of events) {
        if (stored.seq > seq) return generation;
        if (stored.event.kind === 'task') generation = FIRST_GENERATION;
        else if (advancesGeneration(stored.event)) generation += 1;
        after = stored.seq;
      }
    }
    return generation;
  }

  /** The stream's next frame, its end, or WAIT when the log has nothing new yet. */
  async #advance(): Promise<Step> {
    if (this.#endNext) return END;
    const options = this.#options;
    const { signal, messageId } = options;
    const snapshot = this.#snapshot;
    if (snapshot !== undefined) {
      this.#snapshot = undefined; // not kept alive while the stream waits
      if (options.onlySnapshot || (options.endIfFinal && endsHere(snapshot.status.state, options))) {
        this.#endNext = true;
      }
      return { seq: this.last, result: withHistoryLength(snapshot, options.historyLength) };
    }
    if (this.#phase === 0) this.#subscribe();
    for (;;) {
      const batch = this.#batch;
      while (this.#index < batch.length) {
        const stored = batch[this.#index++] as StoredEvent;
        this.last = stored.seq;
        const { event } = stored;
        if (options.generations) this.#countGeneration(event);
        if (event.kind === 'turn-end') {
          if (event.turnId === messageId) return END;
          continue;
        }
        if (event.kind === 'message') continue; // user follow-ups are in the next Task snapshot, not stream items
        if (event.kind === 'status-update' && endsHere(event.status.state, options)) this.#endNext = true;
        return { seq: stored.seq, result: options.generations ? this.#withGeneration(event) : event };
      }
      if (signal?.aborted) return END;
      if (options.generations && this.#generation === undefined) this.#generation = await this.#generationAt(this.last);
      // Issue 30: a stream that has sent everything its last read found, up to the end of the log,
      // and was announced nothing newer, would read an empty batch (one per streamed chunk): it
      // waits instead. A lost notification is the safety poll's (its wake sets #checkTask).
      if (this.#readToEnd && !this.#notified && !this.#checkTask && this.last >= this.#announced) return WAIT;
      const notified = this.#notified;
      this.#notified = false;
      const events = await this.#store.readEvents(
        this.taskId,
        this.last,
        READ_BATCH,
        options.storeContext,
        options.readOptions,
      );
      this.#batch = events;
      this.#index = 0;
      this.#readToEnd = events.length < READ_BATCH;
      // How long the newest event took from its commit (on any worker) to this stream, woken by
      // the store's notification: what a client waits for beyond the commit itself.
      if (notified && events.length > 0 && this.#telemetry.enabled) {
        this.#telemetry.notificationLag((Date.now() - (events[events.length - 1] as StoredEvent).createdAt) / 1000);
      }
      if (events.length > 0) continue;
      if (this.#checkTask) {
        // Nothing new: the task may be gone (purged) or already past its final event.
        const record = await this.#store.getTask(this.taskId, options.storeContext);
        if (record === undefined) return END;
        // Past the last event of a terminal task, nothing more can come. An interrupted task
        // (input-required) may be about to resume with the turn of `messageId`, which this stream
        // waits for, or with any next turn for a stream that ends only at a terminal state.
        const { state } = record.task.status;
        if (
          record.version <= this.last &&
          (isTerminalState(state) || (isFinalState(state) && messageId === undefined && !options.untilTerminal))
        ) {
          // A stream about to end having sent nothing (a reconnect whose Last-Event-ID is the
          // final event, or past it) answers with the task as it stands, as §7.9 answers a
          // subscription to a finished task: an empty stream would not tell the client how the
          // task ended. Its id is the latest event's, so reconnecting with it answers the same.
          if (this.#sent) return END;
          this.#endNext = true;
          return { seq: record.version, result: withHistoryLength(record.task, options.historyLength) };
        }
        if (options.untilTerminal && !this.#sent && record.version <= this.last && isFinalState(state)) {
          // A stream that ends only at a terminal state, resumed (Last-Event-ID) on a task waiting
          // for input: nothing may come until the client answers, so rather than wait having sent
          // nothing (not even the response head), it answers with the task as it stands, as a
          // subscription without Last-Event-ID starts, and then waits for the next turn.
          return { seq: record.version, result: withHistoryLength(record.task, options.historyLength) };
        }
      }
      if (this.#notified || signal?.aborted) continue;
      // Wait for a notification, or for the safety poll to see the task changed (or gone).
      return WAIT;
    }
  }
}
