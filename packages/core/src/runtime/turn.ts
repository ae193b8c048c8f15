/**
 * A turn: one run of the agent for one user message. It holds its task's writer, the agent's
 * updates on their way to the store (checked at once, written in batches), how it was aborted, and
 * what a blocking send waits for.
 */

import { A2AError } from '../errors.js';
import { projectStatus } from '../model/task-state.js';
import { isTerminalState, type Message, type Task, type TaskEvent } from '../model/types.js';
import type { Caller } from '../protocol/context.js';
import type { QueueSlot, StoreCallContext } from '../store/index.js';
import { endsTurn } from './events.js';
import type { CommitOptions, TaskWriter } from './task-writer.js';

export interface TurnOutcome {
  task: Task;
  reply?: Message;
}

/**
 * `superseded`: the turn's deferred creating commit was refused because the same message was
 * recorded first by another turn (a retry racing the original): the other turn is the message's.
 */
export type AbortCause = 'canceled' | 'timeout' | 'shutdown' | 'lease-lost' | 'superseded';

/** A new task not yet written: its first commit creates it (see Intake, `deferCreation`). */
export interface PendingCreation {
  /** The task's owner, and the scope its message is indexed in. */
  readonly owner: string | undefined;
  /** The slot the creating commit takes when its updates do not end the turn. */
  readonly takeSlot: { messageId: string; workerId: string };
}

/**
 * A deferred whose promise is made only when someone asks for it: most turns are never awaited
 * (a stream reads the log, not the turn), so they should not each carry a pending promise.
 */
export class LazyDeferred<T> {
  #settled = false;
  #value: T | undefined;
  #deferred: { promise: Promise<T>; resolve: (value: T) => void } | undefined;

  get promise(): Promise<T> {
    if (this.#settled) return Promise.resolve(this.#value as T);
    this.#deferred ??= deferred<T>();
    return this.#deferred.promise;
  }

  /** The first call wins, as with a promise. */
  resolve(value: T): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#value = value;
    this.#deferred?.resolve(value);
  }
}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export class Turn {
  readonly writer: TaskWriter;
  /**
   * The task's status with every queued update applied: what the agent's next update is checked
   * against. Its history and artifacts are the writer's snapshot's (see {@link projectStatus}):
   * projecting each artifact chunk in full would cost O(artifact size) per chunk.
   */
  projected: Task;
  /** Made when first needed (the agent reads `signal`, or the turn is aborted): most turns never are. */
  #controller: AbortController | undefined;
  readonly outcome = new LazyDeferred<TurnOutcome>();
  /** Resolves when the executor has returned and the turn's writes are done. */
  readonly done = new LazyDeferred<void>();
  abortCause: AbortCause | undefined;
  settled = false;
  reply: Message | undefined;
  /** The first store failure while writing the agent's updates; the turn fails with it. */
  emitError: unknown;
  /** Ends the watch for a cancel from another worker (see Scheduler), when one runs. */
  unsubscribe: (() => void) | undefined;
  lastArtifactId: string | undefined;
  /** The turn waited behind another turn of its context before it ran. */
  waited = false;
  /**
   * A final status or the turn end is staged: the turn is over, and later updates of the agent are
   * dropped (the context's next turn may already be running, on any worker).
   */
  ended = false;
  /** The commit that ended the turn also released its slot in the context's queue. */
  slotReleased = false;
  /**
   * This worker's lease ran out while the turn ran: another worker may be reaping it, so the
   * turn's writes that must happen (its end, its slot) stop being retried (see retry.ts).
   */
  leaseLost = false;
  /** The turn's last event could not be written before the lease ran out: the task is not ended. */
  endUnwritten = false;
  #queue: TaskEvent[] = [];
  /** The queued batch holds the event that ends the turn: its commit releases the slot too. */
  #endQueued = false;
  #waiters: { resolve: (written: boolean) => void; reject: (error: unknown) => void }[] = [];
  #pumping: Promise<void> | undefined;
  #inFlight = 0;
  #creation: PendingCreation | undefined;
  /** The turn's place in its context's queue (see the constructor). */
  slot: QueueSlot | undefined;
  /** When the scheduler took it, and when it got its slot (monotonic seconds; 0 with telemetry off). */
  acceptedAt = 0;
  startedAt = 0;

  constructor(
    /** The id of the user message that started the turn (the store calls it the turn id). */
    readonly messageId: string,
    readonly message: Message,
    readonly isNewTask: boolean,
    /** The context was created by this message (its id generated here): no other turn, no state. */
    readonly isNewContext: boolean,
    writer: TaskWriter,
    /**
     * The turn's place in its context's queue, taken by the commit that recorded the message;
     * undefined while the task's creation is deferred (a turn that ends in its creating commit
     * never takes one).
     */
    slot: QueueSlot | undefined,
    /** Who sent the message that started the turn. */
    readonly caller: Caller,
    /** The store context of the caller's writes. */
    readonly storeContext: StoreCallContext | undefined,
    /** The task is written by the turn's first commit, together with the agent's first updates. */
    creation?: PendingCreation,
  ) {
    this.writer = writer;
    this.projected = writer.task;
    this.slot = slot;
    this.#creation = creation;
  }

  get taskId(): string {
    return this.writer.task.id;
  }

  /** Updates queued or being written. */
  get backlog(): number {
    return this.#queue.length + this.#inFlight;
  }

  /**
   * Checks the events `build` makes against the projected task (an invalid transition throws here,
   * to the agent) and queues them. Updates that queue up while a write is in flight go to the
   * store together in the next commit: one round trip for a burst of artifact chunks. Resolves
   * with true once written, false if dropped because the task became terminal meanwhile (a cancel
   * from any worker); undefined when there was nothing to write (the task is already terminal).
   */
  stage(build: (projected: Task) => TaskEvent[] | undefined): Promise<boolean> | undefined {
    if (this.ended || isTerminalState(this.projected.status.state)) return undefined;
    const events = build(this.projected);
    if (events === undefined || events.length === 0) return undefined;
    this.projected = projectStatus(this.projected, events);
    const written = new Promise<boolean>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    for (const event of events) {
      this.#queue.push(event);
      if (endsTurn(event, this.messageId)) {
        this.ended = true;
        this.#endQueued = true;
      }
    }
    this.#pumping ??= this.#pump();
    return written;
  }

  async #pump(): Promise<void> {
    while (this.#queue.length > 0) {
      // Let the agent run on to its next real wait first: what it queues meanwhile joins this
      // commit, even when the store answers within microtasks (memory, SQLite).
      await new Promise<void>((resolve) => setImmediate(resolve));
      const events = this.#queue;
      const waiters = this.#waiters;
      const ends = this.#endQueued;
      this.#queue = [];
      this.#waiters = [];
      this.#endQueued = false;
      this.#inFlight = events.length;
      try {
        const creation = this.#creation;
        const written =
          creation === undefined ? await this.#commit(events, ends) : await this.#create(creation, events, ends);
        if (written && ends) this.slotReleased = true;
        for (const waiter of waiters) waiter.resolve(written);
      } catch (error) {
        this.emitError ??= error;
        // The end was not written: the turn is not over, so its failure can still be recorded.
        if (ends) this.ended = false;
        for (const waiter of waiters) waiter.reject(error);
        if (this.#creation !== undefined && A2AError.is(error) && error.code === 'DUPLICATE_MESSAGE') {
          // Another turn recorded this message first: it is the message's turn, this one stops.
          this.ended = true;
          for (const waiter of this.#waiters) waiter.reject(error);
          this.#queue = [];
          this.#waiters = [];
          this.#endQueued = false;
          this.abort('superseded');
        }
      } finally {
        this.#inFlight = 0;
      }
      // Re-base what the agent is checked against on what the store now holds, once nothing is queued.
      if (this.#queue.length === 0) {
        this.projected = this.writer.task;
      }
    }
    this.#pumping = undefined;
  }

  /**
   * Commits a batch to the task. Dropped when the task turned terminal (canceled elsewhere): §6.3,
   * terminal is final. The batch that ends the turn releases its slot in the context's queue in
   * the same commit. The writer applies the whole batch to its snapshot once (applyEvents copies
   * each changed list once per call): a burst of k chunks into an artifact of n parts costs O(n + k).
   */
  async #commit(events: TaskEvent[], ends: boolean): Promise<boolean> {
    const result = await this.writer.commit((task) => (isTerminalState(task.status.state) ? undefined : events), {
      releaseSlot: ends ? this.slot : undefined,
    });
    return result !== undefined;
  }

  /**
   * The turn's first commit when its task's creation was deferred: the task (with the user
   * message, indexed for retries), then the batch. A batch that ends the turn takes no slot at
   * all: the turn is over by the time anyone could queue behind it. Otherwise the commit takes the
   * slot, which later commits release, as for a turn whose task was written before it ran.
   */
  async #create(creation: PendingCreation, events: TaskEvent[], ends: boolean): Promise<boolean> {
    const options: CommitOptions = { owner: creation.owner };
    if (!ends) options.takeSlot = creation.takeSlot;
    const created = this.writer.task;
    const result = await this.writer.commit(
      // After a lost answer to a creating commit that was written, the writer reloads: the task
      // exists, so the batch goes as an update (or not at all, if the task is terminal by then).
      (task) =>
        this.writer.version === 0 ? [created, ...events] : isTerminalState(task.status.state) ? undefined : events,
      options,
    );
    this.#creation = undefined;
    if (options.takeSlot !== undefined && result !== undefined) {
      if (result.turn === undefined) throw new A2AError('INTERNAL', 'The store did not return the enqueued turn.');
      this.slot = result.turn;
    }
    return result !== undefined;
  }

  /** Resolves when every update queued so far is written (or failed). */
  async flush(): Promise<void> {
    while (this.#pumping) await this.#pumping;
  }

  settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.outcome.resolve(this.reply ? { task: this.writer.task, reply: this.reply } : { task: this.writer.task });
  }

  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.abortCause !== undefined;
  }

  abort(cause: AbortCause): void {
    if (this.abortCause !== undefined) return;
    this.abortCause = cause;
    this.#controller ??= new AbortController();
    this.#controller.abort(new A2AError('INTERNAL', `Turn aborted: ${cause}`));
  }
}
