/**
 * The task runtime: turns incoming messages into turns of the agent, writes every event through
 * the store (sequenced, versioned), and serves streams by reading the store's event log. Nothing
 * here keeps protocol state only in memory: a stream, a cancel or a follow-up message works from
 * whatever the store holds, which is what lets several processes share one store.
 */

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { MessageIndexEntry, TurnTicket } from './coordination.js';
import { A2AError, invalidParams, taskNotCancelable, taskNotFound } from './errors.js';
import {
  type AgentExecutor,
  type AgentExecutorLike,
  type ArtifactInput,
  type MessageInput,
  type TurnContext,
  textOf,
  toAgentMessage,
  toArtifact,
  toExecutor,
} from './executor.js';
import { cloneJson } from './json.js';
import { type MultiMap, multiMapAdd, multiMapDelete, multiMapValues } from './multi-map.js';
import type { A2AStore, Clock, CommitResult, TaskEvent } from './store.js';
import { systemClock } from './store.js';
import { applyEvents, endsStream, withHistoryLength } from './task-state.js';
import {
  isFinalState,
  isTerminalState,
  type Message,
  type MessageSendParams,
  type Metadata,
  type StreamResult,
  type Task,
  type TaskIdParams,
  type TaskQueryParams,
  type TaskState,
  type TaskStatusUpdateEvent,
} from './types.js';

/** The subset of a pino / Fastify logger the runtime uses. */
export interface RuntimeLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const silentLogger: RuntimeLogger = { debug() {}, info() {}, warn() {}, error() {} };

export interface RetentionOptions {
  /** Terminal tasks last updated longer ago than this are purged. @default 86_400_000 (24 h) */
  ttlMs?: number;
  /** How often the sweep runs. @default 600_000 (10 min) */
  sweepIntervalMs?: number;
}

export interface A2ARuntimeOptions {
  store: A2AStore;
  executor: AgentExecutorLike;
  logger?: RuntimeLogger;
  /** Fails a turn that runs longer than this (its signal is aborted). @default undefined (no limit) */
  turnTimeoutMs?: number;
  /**
   * Streams read the event log when notified. In case a notification was lost, this process also
   * checks the versions of every task its streams wait on this often (one `getVersions` call for
   * all of them) and wakes the streams whose task moved on. @default 2000
   */
  followPollIntervalMs?: number;
  /** A turn waiting for its context re-checks the queue this often between notifications. @default 100 */
  turnPollIntervalMs?: number;
  /** @default Date.now */
  clock?: Clock;
  /** Ids for tasks, contexts, artifacts and agent messages. @default crypto.randomUUID */
  generateId?: () => string;
  /** Periodic purge of old terminal tasks; `false` disables it. @default {} (24 h TTL) */
  retention?: RetentionOptions | false;
  /** This process's identity in the store's worker leases. @default `<hostname>-<pid>-<random>` */
  workerId?: string;
  /**
   * A worker that has not renewed its lease for this long is considered dead: another worker
   * fails its running tasks ("worker lost"). Leases are renewed every quarter of this. @default 15000
   */
  leaseTtlMs?: number;
  /**
   * On close, running turns may finish for this long; then they are aborted and their tasks failed.
   * @default 10000
   */
  drainTimeoutMs?: number;
  /** close() also closes the store. Pass false for a store the application owns. @default true */
  closeStore?: boolean;
}

/** One SSE frame: a stream result and the event sequence number it corresponds to. */
export interface StreamFrame {
  seq: number;
  result: StreamResult;
}

/**
 * What a stream needs to learn that its client went away. An AbortSignal is one; the Fastify plugin
 * passes a lighter object of its own (an AbortController costs about 1 KB per held stream).
 */
export interface StreamSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export interface StreamOptions {
  /** Ends the stream (and stops waiting) when aborted, e.g. when the client disconnects. */
  signal?: StreamSignal;
  /** Resume after this event sequence (SSE Last-Event-ID) instead of starting with a snapshot. */
  afterSeq?: number;
  historyLength?: number;
}

interface TurnOutcome {
  task: Task;
  reply?: Message;
}

interface CommitOptions {
  /** The snapshot after the events, as the caller already computed it for the current one. */
  precomputed?: Task | undefined;
  enqueueTurn?: { turnId: string; workerId: string } | undefined;
  finishTurn?: TurnTicket | undefined;
}

/** Whether `event`, written by turn `turnId`, ends that turn: a final status (§7.2 `final`) or its turn end. */
function endsTurn(event: TaskEvent, turnId: string): boolean {
  return endsStream(event) || (event.kind === 'turn-end' && event.turnId === turnId);
}

/** A task snapshot with the version it was read at, and version-checked writes with retry. */
class TaskWriter {
  task: Task;
  version: number;

  constructor(
    private readonly store: A2AStore,
    task: Task,
    version: number,
  ) {
    this.task = task;
    this.version = version;
  }

  /**
   * Builds events from the current snapshot and commits them; on a version conflict reloads and
   * builds again. Returns undefined when `build` decided there is nothing to write.
   */
  async commit(
    build: (task: Task) => TaskEvent[] | undefined,
    options: CommitOptions = {},
  ): Promise<CommitResult | undefined> {
    const maxAttempts = 20;
    for (let attempt = 1; ; attempt++) {
      const events = build(this.task);
      if (events === undefined || events.length === 0) return undefined;
      // `precomputed` is the caller's result of applying these events to this very snapshot; after
      // a conflict the snapshot is another one, so the events are applied again.
      const next =
        attempt === 1 && options.precomputed !== undefined
          ? options.precomputed
          : applyEvents(this.version === 0 ? undefined : this.task, events);
      try {
        const result = await this.store.commit({
          taskId: this.task.id,
          expectedVersion: this.version,
          task: next,
          events,
          // Snapshots are copy-on-write (applyEvents) and events are built here from copies of
          // what the agent passed: nothing changes them after the commit.
          transfer: true,
          ...(options.enqueueTurn === undefined ? {} : { enqueueTurn: options.enqueueTurn }),
          ...(options.finishTurn === undefined ? {} : { finishTurn: options.finishTurn }),
        });
        this.task = next;
        this.version = result.version;
        return result;
      } catch (error) {
        if (!(A2AError.is(error) && error.code === 'VERSION_CONFLICT') || attempt >= maxAttempts) throw error;
        await this.reload();
      }
    }
  }

  async reload(): Promise<void> {
    const record = await this.store.getTask(this.task.id);
    if (record === undefined) throw taskNotFound(this.task.id);
    this.task = record.task;
    this.version = record.version;
  }
}

/**
 * A deferred whose promise is made only when someone asks for it: most turns are never awaited
 * (a stream reads the log, not the turn), so they should not each carry a pending promise.
 */
class LazyDeferred<T> {
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

type AbortCause = 'canceled' | 'timeout' | 'shutdown' | 'lease-lost';

/** The turns running in this process on each store, whichever runtime runs them. */
const turnsByStore = new WeakMap<A2AStore, Set<Turn>>();

function turnsOf(store: A2AStore): Set<Turn> {
  let turns = turnsByStore.get(store);
  if (turns === undefined) {
    turns = new Set();
    turnsByStore.set(store, turns);
  }
  return turns;
}

/**
 * How one stream follows its task. Always built by {@link followOptions}, with every field, so all
 * streams share one object shape (a spread plus extra keys gave each its own hidden class: about
 * 150 bytes per held stream).
 */
interface FollowOptions {
  signal: StreamSignal | undefined;
  historyLength: number | undefined;
  /** End at the end of this turn (the user message id that started it). */
  turnId: string | undefined;
  /** End after the snapshot when the task is already final (tasks/resubscribe). */
  endIfFinal: boolean;
  /** End after the snapshot (a retried message whose turn already ended). */
  onlySnapshot: boolean;
}

function followOptions(
  options: StreamOptions,
  extra: { historyLength?: number | undefined; turnId?: string; endIfFinal?: boolean; onlySnapshot?: boolean },
): FollowOptions {
  return {
    signal: options.signal,
    historyLength: extra.historyLength ?? options.historyLength,
    turnId: extra.turnId,
    endIfFinal: extra.endIfFinal ?? false,
    onlySnapshot: extra.onlySnapshot ?? false,
  };
}

/**
 * The user message as the task keeps it, with its task and context ids. Copied field by field
 * (not a spread plus new keys, which gives the object a hidden class of its own).
 */
function storedMessage(incoming: Message, taskId: string, contextId: string): Message {
  const message: Message = Object.assign({}, incoming);
  message.kind = 'message';
  message.taskId = taskId;
  message.contextId = contextId;
  return message;
}

/** A stream reading its task's log, while it waits for more. */
interface Follower {
  readonly taskId: string;
  /** The sequence of the last event it read. */
  last: number;
  /** Set while it waits: true for a notification (or an abort), false from the safety poll. */
  wake: ((notified: boolean) => void) | undefined;
}

/** Task ids per getVersions call of the safety poll. */
const FOLLOW_POLL_BATCH = 1000;

/** Above this many queued, uncommitted events an agent's updates wait for the store (backpressure). */
const MAX_BACKLOG = 256;

class Turn {
  readonly writer: TaskWriter;
  /** The task with every queued update applied: what the agent's next update is checked against. */
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
  unsubscribe: (() => void) | undefined;
  lastArtifactId: string | undefined;
  /** The turn waited behind another turn of its context before it ran. */
  waited = false;
  /**
   * A final status or the turn end is staged: the turn is over, and later updates of the agent are
   * dropped (the context's next turn may already be running, on any worker).
   */
  ended = false;
  /** The commit that ended the turn also removed its ticket from the context's queue. */
  ticketFinished = false;
  #queue: TaskEvent[] = [];
  /** The queued batch holds the event that ends the turn: its commit finishes the ticket too. */
  #endQueued = false;
  #waiters: { resolve: (written: boolean) => void; reject: (error: unknown) => void }[] = [];
  #pumping: Promise<void> | undefined;
  #inFlight = 0;
  /** `projected` no longer extends the writer's snapshot (a conflict, a drop or a failure happened). */
  #diverged = false;

  constructor(
    readonly id: string,
    readonly message: Message,
    readonly isNewTask: boolean,
    /** The context was created by this message (its id generated here): no other turn, no state. */
    readonly isNewContext: boolean,
    writer: TaskWriter,
    readonly ticket: TurnTicket,
  ) {
    this.writer = writer;
    this.projected = writer.task;
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
    this.projected = applyEvents(this.projected, events);
    const written = new Promise<boolean>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    for (const event of events) {
      this.#queue.push(event);
      if (endsTurn(event, this.id)) {
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
      // While nothing else wrote the task, `projected` is exactly this batch applied to the
      // writer's snapshot: commit it as is instead of applying the events a second time.
      const startVersion = this.writer.version;
      const precomputed = this.#diverged ? undefined : this.projected;
      try {
        // Dropped when the task turned terminal (canceled elsewhere): §6.3, terminal is final.
        // The batch that ends the turn frees its place in the context's queue in the same commit.
        const result = await this.writer.commit((task) => (isTerminalState(task.status.state) ? undefined : events), {
          precomputed,
          finishTurn: ends ? this.ticket : undefined,
        });
        const written = result !== undefined;
        if (written && ends) this.ticketFinished = true;
        if (!written || this.writer.version !== startVersion + events.length) this.#diverged = true;
        for (const waiter of waiters) waiter.resolve(written);
      } catch (error) {
        this.#diverged = true;
        this.emitError ??= error;
        // The end was not written: the turn is not over, so its failure can still be recorded.
        if (ends) this.ended = false;
        for (const waiter of waiters) waiter.reject(error);
      } finally {
        this.#inFlight = 0;
      }
      // Re-base what the agent is checked against on what the store now holds, once nothing is queued.
      if (this.#queue.length === 0) {
        this.projected = this.writer.task;
        this.#diverged = false;
      }
    }
    this.#pumping = undefined;
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

/** What the runtime lends the context of each of its turns; one object per runtime. */
interface TurnServices {
  readonly store: A2AStore;
  readonly log: RuntimeLogger;
  newId(): string;
  statusEvent(task: Task, state: TaskState, message?: Message | string, metadata?: Metadata): TaskStatusUpdateEvent;
}

type EmitOptions = { durable?: boolean; after?: () => void };
const NO_EMIT_OPTIONS: EmitOptions = Object.freeze({});

/**
 * The {@link TurnContext} an agent gets. Its update methods are getters returning a fresh arrow
 * function: `const { complete } = turn` works, and a turn keeps no closure per method alive while
 * it runs (a held stream's turn is mostly waiting). The message and task are copied only if read.
 */
class AgentTurn implements TurnContext {
  readonly taskId: string;
  readonly contextId: string;
  readonly isNewTask: boolean;
  readonly previousState: TaskState;
  readonly contextState: unknown;
  readonly #turn: Turn;
  readonly #services: TurnServices;
  readonly #taskAtStart: Task;
  #message: Message | undefined;
  #task: Task | undefined;
  #text: string | undefined;

  constructor(turn: Turn, services: TurnServices, previousState: TaskState, contextState: unknown) {
    this.#turn = turn;
    this.#services = services;
    this.#taskAtStart = turn.projected;
    this.taskId = turn.writer.task.id;
    this.contextId = turn.writer.task.contextId;
    this.isNewTask = turn.isNewTask;
    this.previousState = previousState;
    this.contextState = contextState;
  }

  // Copies for the agent, made on first read: it may mutate them freely.
  get message(): Message {
    this.#message ??= cloneJson(this.#turn.message);
    return this.#message;
  }
  get task(): Task {
    this.#task ??= cloneJson(this.#taskAtStart);
    return this.#task;
  }
  get text(): string {
    this.#text ??= textOf(this.#turn.message);
    return this.#text;
  }
  get signal(): AbortSignal {
    return this.#turn.signal;
  }

  get setContextState(): TurnContext['setContextState'] {
    return (state) => this.#services.store.setContext(this.contextId, state);
  }
  get status(): TurnContext['status'] {
    return (state, message, metadata) => this.#status(state, message, metadata);
  }
  get working(): TurnContext['working'] {
    return (message, metadata) => this.#status('working', message, metadata);
  }
  get complete(): TurnContext['complete'] {
    return (message, metadata) => this.#status('completed', message, metadata);
  }
  get fail(): TurnContext['fail'] {
    return (message, metadata) => this.#status('failed', message, metadata);
  }
  get reject(): TurnContext['reject'] {
    return (message, metadata) => this.#status('rejected', message, metadata);
  }
  get requireInput(): TurnContext['requireInput'] {
    return (message, metadata) => this.#status('input-required', message, metadata);
  }
  get requireAuth(): TurnContext['requireAuth'] {
    return (message, metadata) => this.#status('auth-required', message, metadata);
  }
  get reply(): TurnContext['reply'] {
    return (message) => {
      const reply = toAgentMessage(message, this.#ids());
      const turn = this.#turn;
      return this.#emit((current) => [this.#services.statusEvent(current, 'completed', reply)], {
        durable: true,
        after: () => {
          turn.reply = reply;
          turn.settle();
        },
      });
    };
  }
  get artifact(): TurnContext['artifact'] {
    return (chunk) => this.#artifact(chunk);
  }

  async #artifact(chunk: ArtifactInput): Promise<string> {
    const turn = this.#turn;
    const artifactId = chunk.artifactId ?? (chunk.append ? turn.lastArtifactId : undefined) ?? this.#services.newId();
    turn.lastArtifactId = artifactId;
    await this.#emit((current) => {
      const event: TaskEvent = {
        kind: 'artifact-update',
        taskId: current.id,
        contextId: current.contextId,
        artifact: toArtifact(chunk, artifactId),
      };
      if (chunk.append !== undefined) event.append = chunk.append;
      if (chunk.lastChunk !== undefined) event.lastChunk = chunk.lastChunk;
      return [event];
    }, NO_EMIT_OPTIONS);
    return artifactId;
  }

  #status(state: TaskState, message?: MessageInput, metadata?: Metadata): Promise<void> {
    const turn = this.#turn;
    return this.#emit(
      (current) => [
        this.#services.statusEvent(
          current,
          state,
          message === undefined ? undefined : toAgentMessage(message, this.#ids()),
          metadata,
        ),
      ],
      isFinalState(state) ? { durable: true, after: () => turn.settle() } : NO_EMIT_OPTIONS,
    );
  }

  #ids(): { taskId: string; contextId: string; messageId: string } {
    return { taskId: this.taskId, contextId: this.contextId, messageId: this.#services.newId() };
  }

  /**
   * Queues an update. A final state (and a reply) resolves once it is in the store; other updates
   * resolve as soon as they are checked and queued, so a burst of them is written in one commit,
   * unless too many are waiting for the store. An invalid transition rejects at once.
   */
  #emit(build: (current: Task) => TaskEvent[] | undefined, options: EmitOptions): Promise<void> {
    const turn = this.#turn;
    let staged: Promise<boolean> | undefined;
    try {
      staged = turn.stage(build);
    } catch (error) {
      return Promise.reject(error);
    }
    if (staged === undefined) {
      // Canceled, or the turn already ended: the agent's late updates are dropped (§6.3).
      this.#services.log.debug({ taskId: this.taskId }, 'a2a: dropped an update after the turn ended');
      return Promise.resolve();
    }
    const { durable, after } = options;
    const written =
      after === undefined ? staged.then(() => undefined) : staged.then((ok) => (ok ? after() : undefined));
    written.catch(() => undefined); // recorded in turn.emitError; the turn fails with it
    return durable || turn.backlog > MAX_BACKLOG ? written : Promise.resolve();
  }
}

/** What accepting a message led to: a turn started here, or a retry of a message already received. */
type Accepted =
  | { kind: 'turn'; turn: Turn }
  | { kind: 'duplicate'; taskId: string; turnId: string; task: Task; version: number };

function delay(ms: number, signal?: AbortSignal): Promise<void> {
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

export class A2ARuntime {
  readonly store: A2AStore;
  /** This process's id in the store's worker leases. */
  readonly workerId: string;
  readonly #executor: AgentExecutor;
  readonly #log: RuntimeLogger;
  readonly #clock: Clock;
  readonly #id: () => string;
  readonly #options: A2ARuntimeOptions;
  readonly #leaseTtlMs: number;
  /** Turns accepted by this worker and not finished yet. */
  readonly #turns = new Set<Turn>();
  #sweepTimer: NodeJS.Timeout | undefined;
  #leaseTimer: NodeJS.Timeout | undefined;
  #leaseRunning = false;
  /** When this worker's lease, as last renewed, runs out. */
  #leaseEnd: number | undefined;
  #started: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  /** What every turn's context uses of this runtime: one object, not closures per turn. */
  readonly #turnServices: TurnServices;
  /** Streams waiting for their task's next events, by task id (see #pollFollowed). */
  readonly #waiting: MultiMap<string, Follower> = new Map();
  #followPollTimer: NodeJS.Timeout | undefined;
  #followPolling = false;

  constructor(options: A2ARuntimeOptions) {
    this.#options = options;
    this.store = options.store;
    this.#executor = toExecutor(options.executor);
    this.#log = options.logger ?? silentLogger;
    this.#clock = options.clock ?? systemClock;
    this.#id = options.generateId ?? randomUUID;
    this.#leaseTtlMs = options.leaseTtlMs ?? 15_000;
    this.workerId = options.workerId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.#turnServices = {
      store: this.store,
      log: this.#log,
      newId: () => this.#id(),
      statusEvent: (task, state, message, metadata) => this.#statusEvent(task, state, message, metadata),
    };
  }

  /** Opens the store, takes this worker's lease and starts the lease and retention timers. */
  start(): Promise<void> {
    this.#started ??= this.#start();
    return this.#started;
  }

  async #start(): Promise<void> {
    await this.store.open();
    await this.store.heartbeat(this.workerId, this.#leaseUntil());
    // Renew well before the lease ends, and look for dead workers as often: a worker that dies is
    // found at most ~leaseTtlMs after its last renewal.
    this.#leaseTimer = setInterval(() => void this.renewLeaseAndReap(), Math.max(10, this.#leaseTtlMs / 4));
    this.#leaseTimer.unref();
    await this.renewLeaseAndReap();
    const retention = this.#options.retention;
    if (retention !== false) {
      const ttlMs = retention?.ttlMs ?? 86_400_000;
      const interval = retention?.sweepIntervalMs ?? 600_000;
      this.#sweepTimer = setInterval(() => void this.sweep(ttlMs), interval);
      this.#sweepTimer.unref();
    }
  }

  #leaseUntil(): number {
    // 70% of the TTL: with renewals every 25%, a live worker survives one late renewal, and a dead
    // one expires, and is reaped on the next quarter tick, within the TTL.
    return this.#clock() + Math.round(this.#leaseTtlMs * 0.7);
  }

  /**
   * Renews this worker's lease, then claims workers whose lease ran out and fails the tasks their
   * turns left running ("worker lost"), so their streams on every worker end. The lease timer
   * calls this; tests may call it directly.
   */
  async renewLeaseAndReap(): Promise<void> {
    if (this.#leaseRunning || this.#closing) return;
    this.#leaseRunning = true;
    try {
      const leaseUntil = this.#leaseUntil();
      await this.store.heartbeat(this.workerId, leaseUntil);
      if (this.#leaseEnd !== undefined && this.#clock() > this.#leaseEnd) {
        // This worker was silent past its lease (event loop stalled, store unreachable): another
        // worker may have declared it dead and failed its tasks. Its turns must not go on, or a
        // context could run two turns at once; abort them (their writes are refused anyway).
        this.#log.error({ workerId: this.workerId }, 'a2a: this worker lost its lease; aborting its running turns');
        for (const turn of this.#turns) turn.abort('lease-lost');
      }
      this.#leaseEnd = leaseUntil;
      const now = this.#clock();
      for (const dead of await this.store.claimExpiredWorkers(now, this.workerId)) {
        const since = new Date(dead.lastHeartbeat).toISOString();
        for (const ticket of dead.turns) {
          await this.#failAbandonedTurn(
            ticket,
            `Worker lost: worker "${dead.workerId}" stopped renewing its lease (last heartbeat ${since}) before the turn finished.`,
          );
        }
        this.#log.warn({ workerId: dead.workerId, turns: dead.turns.length }, 'a2a: reaped a dead worker');
      }
    } catch (error) {
      this.#log.error({ err: error }, 'a2a: lease renewal or reaping failed');
    } finally {
      this.#leaseRunning = false;
    }
  }

  /** Fails the task of a turn whose worker is gone, unless the turn had already ended, then frees its queue slot. */
  async #failAbandonedTurn(ticket: TurnTicket, reason: string): Promise<void> {
    const record = await this.store.getTask(ticket.taskId);
    if (record !== undefined && !isFinalState(record.task.status.state)) {
      const last = await this.store.readEvents(ticket.taskId, record.version - 1, 1);
      const ended = last[0]?.event.kind === 'turn-end' && last[0].event.turnId === ticket.turnId;
      if (!ended) {
        const writer = new TaskWriter(this.store, record.task, record.version);
        const failed = await writer.commit(
          (task) => (isFinalState(task.status.state) ? undefined : [this.#statusEvent(task, 'failed', reason)]),
          { finishTurn: ticket },
        );
        if (failed !== undefined) return;
      }
    }
    await this.store.finishTurn(ticket);
  }

  /** Purges terminal tasks older than `ttlMs`; the periodic sweep calls this. */
  async sweep(ttlMs: number): Promise<void> {
    try {
      const purged = await this.store.purgeExpired(this.#clock() - ttlMs);
      if (purged.tasks > 0 || purged.contexts > 0) this.#log.info({ purged }, 'a2a: purged expired tasks');
    } catch (error) {
      this.#log.error({ err: error }, 'a2a: retention sweep failed');
    }
  }

  /**
   * Graceful shutdown: takes no new turns, lets running ones finish for up to `drainTimeoutMs`,
   * then aborts the rest and fails their tasks, gives up this worker's lease and closes the store.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    if (this.#sweepTimer) clearInterval(this.#sweepTimer);
    if (this.#leaseTimer) clearInterval(this.#leaseTimer);
    if (this.#followPollTimer) clearInterval(this.#followPollTimer);
    if (this.#started === undefined) return;
    await this.#started.catch(() => undefined);
    const drainMs = this.#options.drainTimeoutMs ?? 10_000;
    const turns = [...this.#turns];
    await Promise.race([Promise.allSettled(turns.map((t) => t.done.promise)), delay(drainMs)]);
    const left = [...this.#turns];
    for (const turn of left) turn.abort('shutdown');
    await Promise.race([Promise.allSettled(left.map((t) => t.done.promise)), delay(1000)]);
    const reason = this.#shutdownReason();
    for (const turn of left) {
      try {
        await this.#finishTurn(turn, reason);
        if (!turn.ticketFinished) await this.store.finishTurn(turn.ticket);
      } catch (error) {
        this.#log.error({ err: error, taskId: turn.taskId }, 'a2a: could not fail an interrupted turn');
      }
    }
    await this.store
      .removeWorker(this.workerId)
      .catch((error) => this.#log.warn({ err: error }, 'a2a: could not remove the worker lease'));
    if (this.#options.closeStore !== false) await this.store.close();
  }

  #shutdownReason(): string {
    return `Interrupted: worker "${this.workerId}" shut down before the turn finished (drain timeout ${this.#options.drainTimeoutMs ?? 10_000} ms).`;
  }

  // ---- message/send, message/stream (§7.1, §7.2) ----

  /** §7.1 message/send: the task (or the agent's reply Message) when the turn settles, or at once when non-blocking. */
  async sendMessage(params: MessageSendParams): Promise<Task | Message> {
    const accepted = await this.#acceptMessage(params);
    const historyLength = params.configuration?.historyLength;
    const blocking = params.configuration?.blocking !== false;
    if (accepted.kind === 'duplicate') {
      // A retried send: answer with the original task, once its turn settled (wherever it runs).
      if (blocking) await this.#waitForTurnEnd(accepted.taskId, accepted.turnId);
      return this.getTask({ id: accepted.taskId, ...(historyLength !== undefined ? { historyLength } : {}) });
    }
    const { turn } = accepted;
    if (!blocking) return withHistoryLength(turn.writer.task, historyLength);
    const outcome = await turn.outcome.promise;
    return outcome.reply ?? withHistoryLength(outcome.task, historyLength);
  }

  /** §7.2 message/stream: the Task first, then its events until a final one or the end of this turn. */
  async streamMessage(params: MessageSendParams, options: StreamOptions = {}): Promise<AsyncGenerator<StreamFrame>> {
    const accepted = await this.#acceptMessage(params);
    const historyLength = options.historyLength ?? params.configuration?.historyLength;
    if (accepted.kind === 'duplicate') {
      const ended = (await this.#turnEnd(accepted.taskId, accepted.turnId)) !== undefined;
      return this.#framesFrom(
        accepted.task,
        accepted.version,
        followOptions(options, { historyLength, turnId: accepted.turnId, onlySnapshot: ended }),
      );
    }
    const { task, version } = accepted.turn.writer;
    return this.#framesFrom(task, version, followOptions(options, { historyLength, turnId: accepted.turn.id }));
  }

  /**
   * A message/stream retried with SSE Last-Event-ID: continues the stream of the turn that message
   * started, after `afterSeq`, without starting a second turn. Undefined when the message is unknown.
   */
  async resumeMessageStream(
    params: MessageSendParams,
    afterSeq: number,
    options: StreamOptions = {},
  ): Promise<AsyncGenerator<StreamFrame> | undefined> {
    await this.start();
    const entry = await this.store.findMessage(params.message.messageId);
    if (entry === undefined) return undefined;
    return this.#follow(entry.taskId, afterSeq, followOptions(options, { turnId: params.message.messageId }));
  }

  /**
   * Where the turn started by user message `turnId` ended in the task's log: the sequence of its
   * final status or turn-end event, or undefined while it runs.
   */
  async #turnEnd(taskId: string, turnId: string): Promise<number | undefined> {
    let after = await this.#turnStart(taskId, turnId);
    for (;;) {
      const events = await this.store.readEvents(taskId, after, 256);
      if (events.length === 0) return undefined;
      for (const { seq, event } of events) {
        if ((event.kind === 'turn-end' && event.turnId === turnId) || endsStream(event)) return seq;
        // The next user message starts another turn: this one ended before it.
        if (event.kind === 'message') return seq - 1;
        after = seq;
      }
    }
  }

  async #waitForTurnEnd(taskId: string, turnId: string): Promise<void> {
    const startSeq = await this.#turnStart(taskId, turnId);
    for await (const _ of this.#follow(taskId, startSeq, followOptions({}, { turnId }))) {
      // drain: #follow returns at the turn's end
    }
  }

  /** The sequence of the event that recorded user message `turnId` (the log's end if it is not there). */
  async #turnStart(taskId: string, turnId: string): Promise<number> {
    let after = 0;
    for (;;) {
      const events = await this.store.readEvents(taskId, after, 256);
      if (events.length === 0) return after;
      for (const { seq, event } of events) {
        if (
          (event.kind === 'task' && event.history?.[0]?.messageId === turnId) ||
          (event.kind === 'message' && event.messageId === turnId)
        ) {
          return seq;
        }
        after = seq;
      }
    }
  }

  async #duplicate(message: Message, entry: MessageIndexEntry): Promise<Accepted> {
    if (message.contextId !== undefined && message.contextId !== entry.contextId) {
      throw invalidParams(
        `messageId "${message.messageId}" was already used in context "${entry.contextId}"; message ids must be unique — send a new one.`,
        { messageId: message.messageId, contextId: entry.contextId },
      );
    }
    const record = await this.store.getTask(entry.taskId);
    if (record === undefined) throw taskNotFound(entry.taskId);
    this.#log.info(
      { messageId: message.messageId, taskId: entry.taskId },
      'a2a: retried message answered with its task',
    );
    return {
      kind: 'duplicate',
      taskId: entry.taskId,
      turnId: message.messageId,
      task: record.task,
      version: record.version,
    };
  }

  async #acceptMessage(params: MessageSendParams): Promise<Accepted> {
    await this.start();
    if (this.#closing)
      throw new A2AError('INTERNAL', 'This worker is shutting down; retry the request (another worker will take it).');
    const incoming = params.message;
    // A retried message is recognised by the store's message index when its commit is refused
    // (DuplicateMessageError below), so the usual path costs no extra read.
    let taskId: string;
    let contextId: string;
    let writer: TaskWriter;
    let firstEvents: (task: Task) => TaskEvent[];
    let message: Message;
    if (incoming.taskId !== undefined) {
      const record = await this.store.getTask(incoming.taskId);
      if (record === undefined) throw taskNotFound(incoming.taskId);
      if (isTerminalState(record.task.status.state)) {
        // A retry of the message that finished the task gets the task, not "terminal" (-32602).
        const known = await this.store.findMessage(incoming.messageId);
        if (known !== undefined) return this.#duplicate(incoming, known);
      }
      taskId = incoming.taskId;
      contextId = record.task.contextId;
      if (incoming.contextId !== undefined && incoming.contextId !== contextId) {
        throw invalidParams(
          `message.contextId "${incoming.contextId}" does not match task "${taskId}", which belongs to context "${contextId}". Omit contextId or send the task's.`,
          { taskId, contextId },
        );
      }
      message = storedMessage(incoming, taskId, contextId);
      writer = new TaskWriter(this.store, record.task, record.version);
      const follow = message;
      firstEvents = (task) => {
        if (isTerminalState(task.status.state)) {
          throw invalidParams(
            `Task "${task.id}" is ${task.status.state}, a terminal state (A2A §6.3): it accepts no more messages. Send the message without taskId to start a new task.`,
            { taskId: task.id, state: task.status.state },
          );
        }
        return [follow];
      };
    } else {
      contextId = incoming.contextId ?? this.#id();
      taskId = this.#id();
      message = storedMessage(incoming, taskId, contextId);
      const task: Task = {
        kind: 'task',
        id: taskId,
        contextId,
        status: { state: 'submitted', timestamp: this.#now() },
        history: [message],
      };
      if (params.metadata !== undefined) task.metadata = params.metadata;
      writer = new TaskWriter(this.store, task, 0);
      firstEvents = () => [task];
    }

    // Record the message and take the turn's place in its context's queue in one commit: the
    // position is the turn's place in the context's arrival order, across every worker sharing the
    // store. A refused commit (duplicate message, terminal task) enqueued nothing.
    let ticket: TurnTicket | undefined;
    try {
      ticket = (
        await writer.commit(firstEvents, { enqueueTurn: { turnId: incoming.messageId, workerId: this.workerId } })
      )?.turn;
    } catch (error) {
      if (A2AError.is(error) && error.code === 'DUPLICATE_MESSAGE') {
        // The same message reached another worker at the same moment; answer like a retry.
        const entry = await this.store.findMessage(incoming.messageId);
        if (entry !== undefined) return this.#duplicate(incoming, entry);
      }
      throw error;
    }
    if (ticket === undefined) throw new A2AError('INTERNAL', 'The store did not return the enqueued turn.');
    const isNewContext = incoming.contextId === undefined && incoming.taskId === undefined;
    const turn = new Turn(incoming.messageId, message, incoming.taskId === undefined, isNewContext, writer, ticket);
    // A store shared across processes can carry a cancel from another worker: watch the task's log
    // for it. Within one process a cancel reaches the turn directly (see turnsOfStore).
    if (this.store.supports.crossProcess) this.#watch(turn);
    this.#turns.add(turn);
    turnsOf(this.store).add(turn);
    this.#schedule(turn);
    return { kind: 'turn', turn };
  }

  /** Waits for the turn's place at the head of its context's queue, runs it, then frees the place. */
  #schedule(turn: Turn): void {
    // Chained rather than one more async function awaiting #runTurn: a running turn keeps one
    // suspended frame instead of two (about 450 bytes per held stream).
    const ran = turn.isNewContext ? this.#runTurn(turn) : this.#waitForTurnSlot(turn).then(() => this.#runTurn(turn));
    void ran
      .catch((error: unknown) => this.#log.error({ err: error, taskId: turn.taskId }, 'a2a: turn failed unexpectedly'))
      .then(() => this.#endTurn(turn));
  }

  /** After the turn ran (or never could): frees its queue slot if its last commit did not, and settles it. */
  async #endTurn(turn: Turn): Promise<void> {
    // Usually the commit that ended the turn freed its slot; not when the turn never ran, its last
    // write was refused (canceled meanwhile) or failed.
    if (!turn.ticketFinished) {
      await this.store
        .finishTurn(turn.ticket)
        .catch((error) =>
          this.#log.error({ err: error, taskId: turn.taskId }, "a2a: could not free the turn's queue slot"),
        );
    }
    this.#turns.delete(turn);
    turnsOf(this.store).delete(turn);
    turn.unsubscribe?.();
    turn.settle();
    turn.done.resolve();
  }

  async #waitForTurnSlot(turn: Turn): Promise<void> {
    // A context this very message created has no other turn (its id was not known to anyone).
    if (turn.isNewContext) return;
    const pollMs = this.#options.turnPollIntervalMs ?? 100;
    const { signal } = turn;
    for (;;) {
      if (turn.settled || signal.aborted) return;
      const readiness = await this.store.turnReadiness(turn.ticket);
      if (readiness.ready) return;
      turn.waited = true;
      // The turn ahead ends with a write to its task and a queue notification: wake on it. Subscribe
      // first, then look again, so a finish landing between the two reads is not missed.
      const wake = new AbortController();
      const unsubscribe = this.store.subscribe(readiness.ahead.taskId, () => wake.abort());
      const onAbort = (): void => wake.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        if ((await this.store.turnReadiness(turn.ticket)).ready) return;
        await delay(pollMs, wake.signal);
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
          const record = await this.store.getTask(turn.taskId);
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
    turn.unsubscribe = this.store.subscribe(turn.taskId, (seq) => {
      notified = Math.max(notified, seq);
      if (seq > turn.writer.version && !turn.aborted) void check();
    });
  }

  async #runTurn(turn: Turn): Promise<void> {
    if (turn.settled || turn.aborted) return; // canceled (or shut down) while it waited for its context
    // A task that turns of others may have changed while this one waited is read again; a new
    // task that started at once is as this worker wrote it (a cancel meanwhile still shows up as
    // a version conflict on the first write, and the watcher aborts the turn).
    if (turn.waited || !turn.isNewTask) {
      await turn.writer.reload();
      turn.projected = turn.writer.task;
    }
    const previousState = turn.writer.task.status.state;
    if (isTerminalState(previousState)) return;
    // Not awaited: `working` goes to the store together with the agent's first updates.
    void turn.stage((task) => [this.#statusEvent(task, 'working')])?.catch(() => undefined);
    // A context this message created has no state yet: no read for it.
    const contextRecord = turn.isNewContext ? undefined : await this.store.getContext(turn.writer.task.contextId);
    const context = new AgentTurn(turn, this.#turnServices, previousState, contextRecord?.state);

    let thrown: unknown;
    let how: 'returned' | 'timeout' = 'returned';
    const timeoutMs = this.#options.turnTimeoutMs;
    if (timeoutMs === undefined || timeoutMs <= 0) {
      // No limit: no timer, no race, no extra promise kept alive while the agent works.
      try {
        await this.#executor.execute(context);
      } catch (error) {
        thrown = error;
      }
      await turn.flush();
    } else {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
        timer.unref();
      });
      const execution = (async () => {
        try {
          await this.#executor.execute(context);
        } catch (error) {
          thrown = error;
        }
        await turn.flush();
        return 'returned' as const;
      })();
      how = await Promise.race([execution, timedOut]);
      clearTimeout(timer);
    }

    if (how === 'timeout') {
      turn.abort('timeout');
      await this.#finishTurn(turn, `Turn timed out after ${timeoutMs} ms.`);
      return;
    }
    if (turn.abortCause === 'canceled') {
      await turn.writer.reload(); // settle with the canceled task, not the snapshot before the cancel
      return;
    }
    if (turn.abortCause === 'lease-lost') {
      await this.#finishTurn(turn, `Worker lost: worker "${this.workerId}" could not renew its lease in time.`);
      return;
    }
    if (turn.abortCause === 'shutdown') {
      await this.#finishTurn(turn, this.#shutdownReason());
      return;
    }
    if (thrown !== undefined) {
      const reason = thrown instanceof Error ? thrown.message : String(thrown);
      this.#log.warn({ err: thrown, taskId: turn.taskId }, 'a2a: agent failed the turn');
      await this.#finishTurn(turn, reason || 'The agent failed without a message.');
      return;
    }
    if (turn.emitError !== undefined) {
      const reason = turn.emitError instanceof Error ? turn.emitError.message : String(turn.emitError);
      await this.#finishTurn(turn, `The agent sent an invalid update: ${reason}`);
      return;
    }
    await this.#finishTurn(turn, undefined);
  }

  /**
   * Ends a turn: fails the task with `failure` when given and the task is not already final;
   * otherwise records a turn end when the task is left non-final. Then settles the turn.
   */
  async #finishTurn(turn: Turn, failure: string | undefined): Promise<void> {
    await turn.flush();
    await turn.stage((task) => {
      if (failure !== undefined) return [this.#statusEvent(task, 'failed', failure)];
      if (isFinalState(task.status.state)) return undefined;
      return [{ kind: 'turn-end', taskId: task.id, contextId: task.contextId, turnId: turn.id }];
    });
    turn.settle();
  }

  #lastNow = Number.NaN;
  #lastNowIso = '';

  /** The clock as an ISO timestamp; one string per millisecond (a turn stamps several events in one). */
  #now(): string {
    const now = this.#clock();
    if (now !== this.#lastNow) {
      this.#lastNow = now;
      this.#lastNowIso = new Date(now).toISOString();
    }
    return this.#lastNowIso;
  }

  #statusEvent(task: Task, state: TaskState, message?: Message | string, metadata?: Metadata): TaskStatusUpdateEvent {
    const status: TaskStatusUpdateEvent['status'] = { state, timestamp: this.#now() };
    if (message !== undefined) {
      status.message =
        typeof message === 'string'
          ? toAgentMessage(message, { taskId: task.id, contextId: task.contextId, messageId: this.#id() })
          : message;
    }
    const event: TaskStatusUpdateEvent = {
      kind: 'status-update',
      taskId: task.id,
      contextId: task.contextId,
      status,
      final: isFinalState(state),
    };
    if (metadata !== undefined) event.metadata = cloneJson(metadata); // the agent may reuse its object
    return event;
  }

  // ---- tasks/get, tasks/cancel, tasks/resubscribe (§7.3–7.9) ----

  async getTask(params: TaskQueryParams): Promise<Task> {
    await this.start();
    const record = await this.store.getTask(params.id);
    if (record === undefined) throw taskNotFound(params.id);
    return withHistoryLength(record.task, params.historyLength);
  }

  /** §7.4: moves the task to `canceled`; the worker running its turn sees it in the log and aborts. */
  async cancelTask(params: TaskIdParams): Promise<Task> {
    await this.start();
    const record = await this.store.getTask(params.id);
    if (record === undefined) throw taskNotFound(params.id);
    const writer = new TaskWriter(this.store, record.task, record.version);
    await writer.commit((task) => {
      if (isTerminalState(task.status.state)) throw taskNotCancelable(task.id, task.status.state);
      return [this.#statusEvent(task, 'canceled')];
    });
    // Abort local turns of the task at once rather than waiting for the notification round trip.
    // Every runtime of this process sharing the store: with a store that is not shared across
    // processes (memory), this is how a cancel reaches the turn, as no log watch runs for it.
    for (const turn of turnsOf(this.store)) if (turn.taskId === params.id) turn.abort('canceled');
    return writer.task;
  }

  /**
   * §7.9 tasks/resubscribe: the current Task, then its events until a final one. For a task already
   * in a final state (terminal or interrupted) the stream is that one Task and ends. With `afterSeq`
   * (SSE Last-Event-ID) it resumes after that event instead, with no snapshot.
   */
  async resubscribe(params: TaskIdParams, options: StreamOptions = {}): Promise<AsyncGenerator<StreamFrame>> {
    await this.start();
    const record = await this.store.getTask(params.id);
    if (record === undefined) throw taskNotFound(params.id);
    if (options.afterSeq !== undefined) return this.#follow(params.id, options.afterSeq, followOptions(options, {}));
    return this.#framesFrom(record.task, record.version, followOptions(options, { endIfFinal: true }));
  }

  /** The Task snapshot as the first frame, then the log after it (one generator: a held stream keeps one frame). */
  #framesFrom(task: Task, version: number, options: FollowOptions): AsyncGenerator<StreamFrame> {
    return this.#follow(task.id, version, options, task);
  }

  /**
   * Reads the task's log after `afterSeq`, waking on store notifications (and a slow poll as a
   * safety net), until a final status event, the end of turn `turnId`, or `signal` aborts.
   */
  async *#follow(
    taskId: string,
    afterSeq: number,
    options: FollowOptions,
    snapshot?: Task,
  ): AsyncGenerator<StreamFrame> {
    const { signal, turnId } = options;
    if (snapshot !== undefined) {
      const { state } = snapshot.status;
      yield { seq: afterSeq, result: withHistoryLength(snapshot, options.historyLength) };
      snapshot = undefined; // not kept alive while the stream waits
      if (options.onlySnapshot || (options.endIfFinal && isFinalState(state))) return;
    }
    const follower: Follower = { taskId, last: afterSeq, wake: undefined };
    let notified = false;
    const unsubscribe = this.store.subscribe(taskId, (seq) => {
      if (seq > follower.last) {
        notified = true;
        follower.wake?.(true);
      }
    });
    const onAbort = (): void => follower.wake?.(true);
    signal?.addEventListener('abort', onAbort);
    try {
      let checkTask = true;
      while (!signal?.aborted) {
        notified = false;
        const events = await this.store.readEvents(taskId, follower.last, 256);
        for (const stored of events) {
          follower.last = stored.seq;
          const { event } = stored;
          if (event.kind === 'turn-end') {
            if (event.turnId === turnId) return;
            continue;
          }
          if (event.kind === 'message') continue; // user follow-ups are in the next Task snapshot, not stream items
          yield { seq: stored.seq, result: event };
          if (endsStream(event)) return;
        }
        if (events.length > 0) continue;
        if (checkTask) {
          // Nothing new: the task may be gone (purged) or already past its final event.
          const record = await this.store.getTask(taskId);
          if (record === undefined) return;
          // Past the last event of a terminal task, nothing more can come. An interrupted task
          // (input-required) may be about to resume with the turn `turnId` waits for.
          const { state } = record.task.status;
          if (
            record.version <= follower.last &&
            (isTerminalState(state) || (isFinalState(state) && turnId === undefined))
          )
            return;
        }
        if (notified || signal?.aborted) continue;
        // Wait for a notification, or for the safety poll to see the task changed (or gone).
        const woke = await new Promise<boolean>((resolve) => {
          follower.wake = resolve;
          this.#startWaiting(follower);
        });
        this.#stopWaiting(follower);
        follower.wake = undefined;
        checkTask = !woke;
      }
    } finally {
      this.#stopWaiting(follower);
      unsubscribe();
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Registers a waiting stream with the safety poll: one timer and one `getVersions` call per
   * interval for every stream this process serves, rather than a timer and two reads per stream.
   */
  #startWaiting(follower: Follower): void {
    multiMapAdd(this.#waiting, follower.taskId, follower);
    if (this.#followPollTimer === undefined && this.#closing === undefined) {
      this.#followPollTimer = setInterval(() => void this.#pollFollowed(), this.#options.followPollIntervalMs ?? 2000);
      this.#followPollTimer.unref();
    }
  }

  #stopWaiting(follower: Follower): void {
    if (!multiMapDelete(this.#waiting, follower.taskId, follower)) return;
    if (this.#waiting.size === 0 && this.#followPollTimer !== undefined) {
      clearInterval(this.#followPollTimer);
      this.#followPollTimer = undefined;
    }
  }

  /**
   * The safety net under notifications (which a crash between a commit and its NOTIFY can lose):
   * wakes every waiting stream whose task moved past what it has, or no longer exists.
   */
  async #pollFollowed(): Promise<void> {
    if (this.#followPolling) return;
    this.#followPolling = true;
    try {
      const taskIds = [...this.#waiting.keys()];
      for (let start = 0; start < taskIds.length; start += FOLLOW_POLL_BATCH) {
        const batch = taskIds.slice(start, start + FOLLOW_POLL_BATCH);
        const versions = await this.store.getVersions(batch);
        for (const taskId of batch) {
          const version = versions.get(taskId);
          for (const follower of multiMapValues(this.#waiting, taskId)) {
            if (version === undefined || version > follower.last) follower.wake?.(false);
          }
        }
      }
    } catch (error) {
      this.#log.warn({ err: error }, 'a2a: the safety poll of open streams failed; it runs again next interval');
    } finally {
      this.#followPolling = false;
    }
  }
}
