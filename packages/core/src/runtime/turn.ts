/**
 * A turn: one run of the agent for one user message. It holds its task's writer, the agent's
 * updates on their way to the store (checked at once, written in batches), how it was aborted, and
 * what a blocking send waits for.
 *
 * Glossary of the runtime (one word per thing; docs/architecture.md is written from this):
 * - turn: one run of the agent for one user message ({@link Turn}), from the commit that records
 *   the message to the commit that ends it (a final status, or a `turn-end` event). A task has one
 *   turn per user message; the turn is named by that message's messageId.
 * - turn context: what the agent's `execute` receives (`TurnContext` in executor.ts; the runtime's
 *   implementation is `RuntimeTurnContext`, turn-context.ts): it reads the turn and reports on it.
 * - slot: a turn's place in its context's queue, kept by the store (`QueueSlot` in the store
 *   contract). Taken by the commit that records the message, released by the commit that ends the
 *   turn; turns of one context run one after another, in slot order, on whichever workers.
 * - task writer: the only way the runtime writes a task (task-writer.ts): a snapshot, its version,
 *   and version-checked commits that reload and retry on a conflict.
 * - intake: what an incoming message becomes (intake.ts): a new turn with its slot, or a retry of a
 *   message already received, answered from the task it started.
 * - scheduler: waits for a turn's slot to reach the head of its context's queue, runs the turn,
 *   releases the slot (scheduler.ts); the turn registry is how a cancel reaches a running turn in
 *   this process.
 * - runner: one run of the agent with its turn context, and the turn's last event however it ended
 *   (runner.ts).
 * - follower: streams: a task's log after a sequence number, woken by the store (follower.ts).
 * - membership: this worker's lease in the store, renewed on a timer; reaping the turns of workers
 *   whose lease ran out (membership.ts).
 * - lease: a worker's claim to be alive, with an expiry; a turn belongs to its worker's lease, so a
 *   lost lease hands the turn to the reaper.
 * - reaper: the worker that finds a lease run out and fails its turns, releasing their slots.
 */

import { A2AError } from '../errors.js';
import { runInMicrotask } from '../microtask.js';
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

  /** Resolved already. */
  get settled(): boolean {
    return this.#settled;
  }

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

/**
 * Where a turn is in its life. One phase instead of a flag per fact. A turn's end can be written
 * from two chains at once (its own run, and a drain's or an unexpected failure's `closeTurn`),
 * while the scheduler releases its slot alongside: every transition those races can make is legal
 * here, and the ones that find the turn already past them are no-ops.
 *
 * ```
 *              start()   end staged   end written   end failed       slotReleased()     abandon()
 *  queued      running   ending       -             -                released           abandoned
 *  running     throws    ending       -             -                released           abandoned
 *  ending      throws    (dropped)    ended         back to where    ending; a failed   ending; a failed end
 *                                                   it was staged    end goes back to   goes back to abandoned
 *                                                   from (#reopen)   released           (unless to released)
 *  ended       throws    (dropped)    -             -                no-op              no-op
 *  released    throws    ending       -             -                no-op              no-op
 *  abandoned   throws    ending       -             -                released           no-op
 * ```
 *
 * - `queued`: accepted (its message recorded, its slot taken), waiting for its slot to reach the
 *   head of its context's queue.
 * - `running`: the runner started it: the agent runs, its updates are staged and written.
 * - `ending`: the event that ends the turn (a final status, a turn end, a failure) is staged: later
 *   updates of the agent are dropped, since the context's next turn may already be running (on
 *   any worker). If the commit carrying it fails, the turn goes back to the phase it was staged
 *   from, so its failure can still be recorded; a slot released or an end given up meanwhile
 *   changes that phase, not this one.
 * - `ended`: the commit that wrote the end released the slot too (or the turn held none): nothing
 *   more of it is written.
 * - `released`: the scheduler released the slot (or the turn never took one) before an end was
 *   written: a turn canceled or shut down before it ran, or one whose end was refused or failed.
 *   The agent's late updates and a later attempt at the end are still written (the task may still
 *   be `working`); nothing is left for the scheduler or the reaper to release.
 * - `abandoned`: its end could not be written before this worker's lease ran out: its slot is left
 *   to the reaper, which fails the task and releases it. The agent's late updates and a later
 *   attempt at the end are still written: the store may be back, and a written end releases the
 *   slot itself. A release the scheduler started before the abandonment and that landed after it
 *   makes the turn `released`.
 *
 * `start()` from anywhere but `queued` throws (INTERNAL): the runner starts a turn once, before
 * anything else can move it.
 */
export type TurnPhase = 'queued' | 'running' | 'ending' | 'ended' | 'released' | 'abandoned';

/** The phases an end can be staged from, and that a failed end goes back to. */
type OpenPhase = 'queued' | 'running' | 'released' | 'abandoned';

/** Who waits for a batch of updates to be written (see {@link Turn.whenQueuedWritten}). */
export interface BatchWaiter {
  /** Written (true), or dropped because the task became terminal meanwhile (false). */
  resolve(written: boolean): void;
  reject(error: unknown): void;
}

/** What a turn is made from (see Intake). */
export interface TurnOptions {
  /**
   * The id of the user message that started the turn: what the store contract names a turn by
   * (`messageId`; only the SQL column and a stored `TurnEndEvent.turnId` keep the older word).
   */
  readonly messageId: string;
  readonly message: Message;
  readonly isNewTask: boolean;
  /** The context was created by this message (its id generated here): no other turn, no state. */
  readonly isNewContext: boolean;
  readonly writer: TaskWriter;
  /**
   * The turn's place in its context's queue, taken by the commit that recorded the message;
   * undefined while the task's creation is deferred (a turn that ends in its creating commit
   * never takes one).
   */
  readonly slot: QueueSlot | undefined;
  /** Who sent the message that started the turn. */
  readonly caller: Caller;
  /** The store context of the caller's writes. */
  readonly storeContext: StoreCallContext | undefined;
  /** The task is written by the turn's first commit, together with the agent's first updates. */
  readonly creation?: PendingCreation | undefined;
  /** See {@link A2ARuntimeOptions.streamCommitIntervalMs}; 0 or absent: every batch goes at once. */
  readonly streamCommitIntervalMs?: number;
}

/**
 * A chunk appended to an artifact already streaming: the updates a batch may wait for company in
 * (see {@link A2ARuntimeOptions.streamCommitIntervalMs}). A new artifact, a status update or the
 * turn's end goes at once, and takes any waiting chunks with it.
 */
function isAppendedChunk(event: TaskEvent): boolean {
  return event.kind === 'artifact-update' && event.append === true;
}

export class Turn {
  readonly messageId: string;
  readonly message: Message;
  readonly isNewTask: boolean;
  readonly isNewContext: boolean;
  readonly caller: Caller;
  readonly storeContext: StoreCallContext | undefined;
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
  #phase: TurnPhase = 'queued';
  /** While `ending`: the phase the end was staged from, where the turn goes back if the end fails. */
  #phaseBeforeEnd: OpenPhase = 'queued';
  #abortCause: AbortCause | undefined;
  #writeError: unknown;
  #waited = false;
  #leaseLost = false;
  /** Ends the watch for a cancel from another worker (see Scheduler), when one runs. */
  unsubscribe: (() => void) | undefined;
  #queue: TaskEvent[] = [];
  /** The queued batch holds the event that ends the turn: its commit releases the slot too. */
  #endQueued = false;
  #waiters: BatchWaiter[] = [];
  #pumping: Promise<void> | undefined;
  /** The turn's first commit was made (see {@link Turn.#pump}: it alone waits a loop turn). */
  #pumpedOnce = false;
  #inFlight = 0;
  #creation: PendingCreation | undefined;
  #slot: QueueSlot | undefined;
  readonly #streamCommitIntervalMs: number;
  /** When the last batch went to the store (performance.now()); kept only with an interval. */
  #lastCommitAt = Number.NEGATIVE_INFINITY;
  /** Ends the wait of a batch of chunks early (an update that must not wait was queued). */
  #wakePacedBatch: (() => void) | undefined;
  /** When the scheduler took it, and when it got its slot (monotonic seconds; 0 with telemetry off). */
  acceptedAt = 0;
  startedAt = 0;

  constructor(options: TurnOptions) {
    this.messageId = options.messageId;
    this.message = options.message;
    this.isNewTask = options.isNewTask;
    this.isNewContext = options.isNewContext;
    this.caller = options.caller;
    this.storeContext = options.storeContext;
    this.writer = options.writer;
    this.projected = options.writer.task;
    this.#slot = options.slot;
    this.#creation = options.creation;
    this.#streamCommitIntervalMs = options.streamCommitIntervalMs ?? 0;
  }

  get taskId(): string {
    return this.writer.task.id;
  }

  /** See {@link TurnPhase}. */
  get phase(): TurnPhase {
    return this.#phase;
  }

  /** The turn's place in its context's queue; undefined while it has none (see {@link TurnOptions.slot}). */
  get slot(): QueueSlot | undefined {
    return this.#slot;
  }

  /** The first store failure while writing the agent's updates; the turn fails with it. */
  get writeError(): unknown {
    return this.#writeError;
  }

  /** The turn waited behind another turn of its context before it ran: its task is read again. */
  get waited(): boolean {
    return this.#waited;
  }

  /** The turn's slot was not at the head of its context's queue when first checked. */
  waitedForSlot(): void {
    this.#waited = true;
  }

  /**
   * This worker's lease ran out while the turn ran: another worker may be reaping it, so the
   * turn's writes that must happen (its end, its slot) stop being retried (see retry.ts).
   */
  get leaseLost(): boolean {
    return this.#leaseLost;
  }

  loseLease(): void {
    this.#leaseLost = true;
  }

  /** The outcome a blocking send waits for is resolved. */
  get settled(): boolean {
    return this.outcome.settled;
  }

  /** queued → running: the runner starts the agent. */
  start(): void {
    if (this.#phase !== 'queued') this.#refuse('running');
    this.#phase = 'running';
  }

  /** The end is staged: an open phase → ending (already ending or ended: nothing changes). */
  #stageEnd(): void {
    const from = this.#phase;
    if (from === 'ending' || from === 'ended') return;
    this.#phaseBeforeEnd = from;
    this.#phase = 'ending';
  }

  /**
   * ending → the phase the end was staged from: the commit carrying it failed, the turn is not
   * over, so a later attempt at the end (or the agent's failure) is still written.
   */
  #reopen(): void {
    if (this.#phase === 'ending') this.#phase = this.#phaseBeforeEnd;
  }

  /** ending → ended: the commit that wrote the turn's end also released its slot (or it took none). */
  #endWritten(): void {
    if (this.#phase === 'ending') this.#phase = 'ended';
  }

  /**
   * The scheduler released the turn's slot (or found it took none): queued, running, abandoned →
   * released. Ending: the end's commit is in flight (the other chain staged it), and the turn goes
   * back to released if it fails. Ended or released already: nothing changes.
   */
  slotReleased(): void {
    const phase = this.#phase;
    if (phase === 'ending') this.#phaseBeforeEnd = 'released';
    else if (phase === 'queued' || phase === 'running' || phase === 'abandoned') this.#phase = 'released';
  }

  /**
   * The turn's end could not be written before the lease ran out, so its slot is left to the
   * reaper: queued, running → abandoned. Ending: another attempt at the end is in flight, and the
   * turn goes back to abandoned if it fails. A turn that holds no slot any more (ended, released)
   * has nothing to leave to the reaper: nothing changes.
   */
  abandon(): void {
    const phase = this.#phase;
    if (phase === 'ending') {
      if (this.#phaseBeforeEnd !== 'released') this.#phaseBeforeEnd = 'abandoned';
    } else if (phase === 'queued' || phase === 'running') this.#phase = 'abandoned';
  }

  /**
   * The scheduler still has to release the turn's slot or hand it to the reaper: no commit that
   * wrote its end released it, and the scheduler did not either. True as well for a turn whose
   * creation is deferred and that took no slot yet (the scheduler then just notes it).
   */
  get holdsSlot(): boolean {
    const phase = this.#phase === 'ending' ? this.#phaseBeforeEnd : this.#phase;
    return phase === 'queued' || phase === 'running' || phase === 'abandoned';
  }

  /** Its end was given up on while it held its slot: the slot is the reaper's (see {@link abandon}). */
  get slotLeftToReaper(): boolean {
    return (this.#phase === 'ending' ? this.#phaseBeforeEnd : this.#phase) === 'abandoned';
  }

  #refuse(next: TurnPhase): never {
    throw new A2AError(
      'INTERNAL',
      `The turn of message "${this.messageId}" cannot go from ${this.#phase} to ${next} (see TurnPhase).`,
    );
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
   * from any worker); undefined when there was nothing to write (the turn's end is staged or
   * written, or the task is already terminal). A turn released or abandoned before its end was
   * written still writes: its task may still be `working` (see {@link TurnPhase}).
   */
  stage(build: (projected: Task) => TaskEvent[] | undefined): Promise<boolean> | undefined {
    if (!this.enqueue(build)) return undefined;
    return new Promise<boolean>((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  /**
   * {@link stage} without the promise: queues the events `build` makes (false when there was
   * nothing to write). For updates no one waits for (most of the agent's, the runner's `working`):
   * a promise per update would be made and dropped on every artifact chunk. A failed write still
   * reaches the turn ({@link writeError}); {@link whenQueuedWritten} waits for it after all.
   */
  enqueue(build: (projected: Task) => TaskEvent[] | undefined): boolean {
    const phase = this.#phase;
    if (phase === 'ending' || phase === 'ended' || isTerminalState(this.projected.status.state)) return false;
    const events = build(this.projected);
    if (events === undefined || events.length === 0) return false;
    this.projected = projectStatus(this.projected, events);
    for (const event of events) {
      this.#queue.push(event);
      if (endsTurn(event, this.messageId) && !this.#endQueued) {
        this.#stageEnd();
        this.#endQueued = true;
      }
    }
    // Only while a batch of chunks waits (streamCommitIntervalMs): an update that must not wait ends it.
    if (this.#wakePacedBatch !== undefined && !events.every(isAppendedChunk)) this.#wakePacedBatch();
    this.#pumping ??= this.#pump();
    return true;
  }

  /**
   * Tells `waiter` how the batch holding the updates queued last ends, as {@link stage}'s promise
   * would: written (true), dropped because the task became terminal (false), or failed. Call it
   * right after {@link enqueue} returned true, while those updates are still queued.
   */
  whenQueuedWritten(waiter: BatchWaiter): void {
    this.#waiters.push(waiter);
  }

  /** Updates are queued or being written (flush would wait). */
  get writing(): boolean {
    return this.#pumping !== undefined;
  }

  async #pump(): Promise<void> {
    while (this.#queue.length > 0) {
      // Let the agent run on to its next real wait first: what it queues meanwhile joins this
      // commit, even when the store answers within microtasks (memory, SQLite).
      if (this.#pumpedOnce) {
        // A tick scheduled from a microtask runs once the microtask queue is empty, i.e. when
        // every continuation the agent had pending has run; unlike setImmediate it does not also
        // wait for the event loop's I/O phase, which under hundreds of streams made every chunk
        // wait a whole loop turn (issue 30, bench/TOKENS.md).
        await new Promise<void>((resolve) => runInMicrotask(() => process.nextTick(resolve)));
      } else {
        // The turn's first commit (for a short answer its only one) waits for the end of the
        // loop turn: the first commits of every request read in the same I/O phase then reach the
        // store together and share its transaction (SQLite's and Postgres's group commit). Made
        // at once, each request's went alone: blocking message/send fell from 2,500–2,900 to
        // ~1,600 req/s on SQLite and from ~2,600–3,600 to ~2,200 on Postgres (issue 30, an A/B
        // with `BENCH_SERVERS=sdk,sqlite,postgres BENCH_SCENARIOS=send npm run bench`).
        this.#pumpedOnce = true;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      if (this.#streamCommitIntervalMs > 0) {
        await this.#paceChunks();
        this.#lastCommitAt = performance.now();
      }
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
        // The commit that ended the turn released its slot in the context's queue (or took none).
        if (written && ends) this.#endWritten();
        for (const waiter of waiters) waiter.resolve(written);
      } catch (error) {
        this.#writeError ??= error;
        // The end was not written: the turn is not over, so its failure can still be recorded.
        if (ends) this.#reopen();
        for (const waiter of waiters) waiter.reject(error);
        if (this.#creation !== undefined && A2AError.is(error) && error.code === 'DUPLICATE_MESSAGE') {
          // Another turn recorded this message first: it is the message's turn, this one stops.
          this.#stageEnd();
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
   * A batch of nothing but appended chunks, due less than `streamCommitIntervalMs` after the
   * previous batch went, waits out the rest of that interval (or until an update that must not
   * wait is queued): the chunks an agent streams meanwhile go in the same commit. On a durable
   * store each commit is a transaction, a notification and a read by every follower; an LLM
   * emitting 50 tokens a second would otherwise pay all of that per token (issue 30,
   * bench/TOKENS.md). The first chunk after a pause, and every other update, goes at once.
   */
  async #paceChunks(): Promise<void> {
    if (this.#endQueued || !this.#queue.every(isAppendedChunk)) return;
    const wait = this.#lastCommitAt + this.#streamCommitIntervalMs - performance.now();
    if (wait < 1) return;
    await new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#wakePacedBatch = undefined;
        resolve();
      };
      const timer = setTimeout(wake, wait);
      this.#wakePacedBatch = wake;
    });
  }

  /**
   * Commits a batch to the task. Dropped when the task turned terminal (canceled elsewhere): §6.3,
   * terminal is final. The batch that ends the turn releases its slot in the context's queue in
   * the same commit. The writer applies the whole batch to its snapshot once (applyEvents copies
   * each changed list once per call): a burst of k chunks into an artifact of n parts costs O(n + k).
   */
  #commit(events: TaskEvent[], ends: boolean): Promise<boolean> {
    // A reaction on the writer's promise rather than an async frame awaiting it: one promise fewer per batch.
    return this.writer
      .commit((task) => (isTerminalState(task.status.state) ? undefined : events), {
        releaseSlot: ends ? this.#slot : undefined,
      })
      .then((result) => this.#written(result !== undefined));
  }

  /**
   * A batch dropped because the writer found the task terminal: another worker ended it (a
   * tasks/cancel that won the race to the version; this commit's conflict reloaded its state).
   * The scheduler's watch stops the agent when it hears of such a write, but it compares versions,
   * and after that reload the writer is already at the version it hears of: the agent must be
   * stopped here (§7.4: the cancel reaches the agent wherever it runs), or it runs on to its end.
   */
  #written(written: boolean): boolean {
    if (!written && !this.aborted && isTerminalState(this.writer.task.status.state)) {
      this.abort('canceled');
      this.settle();
    }
    return written;
  }

  /**
   * The turn's first commit when its task's creation was deferred: the task (with the user
   * message, indexed for retries), then the batch. A batch that ends the turn takes no slot at
   * all: the turn is over by the time anyone could queue behind it. Otherwise the commit takes the
   * slot, which later commits release, as for a turn whose task was written before it ran.
   */
  #create(creation: PendingCreation, events: TaskEvent[], ends: boolean): Promise<boolean> {
    const options: CommitOptions = { owner: creation.owner };
    if (!ends) options.takeSlot = creation.takeSlot;
    const created = this.writer.task;
    const committed = this.writer.commit(
      // After a lost answer to a creating commit that was written, the writer reloads: the task
      // exists, so the batch goes as an update (or not at all, if the task is terminal by then).
      (task) =>
        this.writer.version === 0 ? [created, ...events] : isTerminalState(task.status.state) ? undefined : events,
      options,
    );
    // A reaction rather than an async frame (see #commit).
    return committed.then((result) => {
      this.#creation = undefined;
      if (options.takeSlot !== undefined && result !== undefined) {
        if (result.turn === undefined) throw new A2AError('INTERNAL', 'The store did not return the enqueued turn.');
        this.#slot = result.turn;
      }
      return this.#written(result !== undefined);
    });
  }

  /** Resolves when every update queued so far is written (or failed). */
  async flush(): Promise<void> {
    while (this.#pumping) await this.#pumping;
  }

  /** Resolves the outcome a blocking send waits for (the first call wins): the task, and the agent's reply if it gave one. */
  settle(reply?: Message): void {
    if (this.outcome.settled) return;
    this.outcome.resolve(reply ? { task: this.writer.task, reply } : { task: this.writer.task });
  }

  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }

  /** Why the turn was aborted (the first cause wins); undefined while it was not. */
  get abortCause(): AbortCause | undefined {
    return this.#abortCause;
  }

  get aborted(): boolean {
    return this.#abortCause !== undefined;
  }

  abort(cause: AbortCause): void {
    if (this.#abortCause !== undefined) return;
    this.#abortCause = cause;
    this.#controller ??= new AbortController();
    this.#controller.abort(new A2AError('INTERNAL', `Turn aborted: ${cause}`));
  }
}
