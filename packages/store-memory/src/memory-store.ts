import {
  A2AError,
  type A2AStore,
  type Clock,
  type CommitRequest,
  type CommitResult,
  type ContextRecord,
  checkCommitRequest,
  cloneJson,
  DuplicateMessageError,
  type EnqueueTurnRequest,
  type ExpiredWorker,
  INTERRUPTED_STATES,
  indexedMessageIds,
  isTerminalState,
  type ListTasksOptions,
  type MessageIndexEntry,
  type MultiMap,
  multiMapAdd,
  multiMapDelete,
  multiMapHas,
  multiMapValues,
  type PurgeResult,
  type StoreCallContext,
  type StoreCapabilities,
  type StoredEvent,
  systemClock,
  type TaskRecord,
  type TurnReadiness,
  type TurnTicket,
  type Unsubscribe,
  VersionConflictError,
} from '@fastify-a2a/core';

export interface MemoryStoreOptions {
  /**
   * Source of every timestamp the store records (`createdAt`, `updatedAt`), in epoch milliseconds.
   * Tests inject a controllable one.
   * @default systemClock (Date.now)
   */
  clock?: Clock;
  /**
   * Soft bound on the number of tasks kept. When a commit takes the count above it, the least
   * recently updated terminal tasks are evicted (with their events and message index entries)
   * until the count is back at the bound. Non-terminal tasks are never evicted, nor is the task
   * the commit just wrote, so the count can stay above the bound while that many tasks are still
   * running.
   * @default 10_000
   */
  maxTasks?: number;
  /**
   * Called when a `subscribe` listener throws. The commit has already succeeded and the other
   * listeners are still called; this only lets you see the error.
   * @default ignore the error
   */
  onListenerError?: (error: unknown, taskId: string) => void;
}

interface Entry {
  record: TaskRecord;
  events: StoredEvent[];
  /** Creation order, to break createdAt ties in listTasksByContext. */
  order: number;
  /** The ids this task holds in the message index, dropped with the task. */
  messageIds: string[];
}

interface Lease {
  leaseUntil: number;
  lastHeartbeat: number;
}

interface Subscription {
  listener: (seq: number) => void;
}

const DEFAULT_MAX_TASKS = 10_000;

/**
 * The reference A2AStore: everything in this process's memory, deep-copied in and out with JSON's
 * rules (`cloneJson`), so it gives back what the SQL stores would. Lost on restart and not shared between processes; use it for tests, demos
 * and single-process agents that can lose their tasks.
 */
export class MemoryStore implements A2AStore {
  readonly supports: StoreCapabilities = Object.freeze({
    durable: false,
    crossProcess: false,
    ttl: true,
    namespaces: false,
  });

  readonly #clock: Clock;
  readonly #maxTasks: number;
  /** Ids of terminal tasks, least recently updated first: the eviction candidates. */
  readonly #terminal = new TerminalQueue();
  readonly #onListenerError: (error: unknown, taskId: string) => void;
  /** In creation order. */
  readonly #tasks = new Map<string, Entry>();
  readonly #contexts = new Map<string, ContextRecord>();
  /** Task id → its subscriptions (one kept as itself: see MultiMap). */
  readonly #subscriptions: MultiMap<string, Subscription> = new Map();
  /** messageId → the task it was committed to. */
  readonly #messages = new Map<string, MessageIndexEntry>();
  /** contextId → its queued tickets, in position order; a context without tickets has no entry. */
  readonly #queues = new Map<string, TurnTicket[]>();
  readonly #leases = new Map<string, Lease>();
  /**
   * One counter for all contexts: positions grow with arrival in every context and are never
   * reused, even after a context's queue emptied and its entry was dropped.
   */
  #lastPosition = 0;
  #created = 0;
  #closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    const maxTasks = options.maxTasks ?? DEFAULT_MAX_TASKS;
    if (!Number.isSafeInteger(maxTasks) || maxTasks < 1) {
      throw new A2AError(
        'INVALID_OPTIONS',
        `MemoryStore: maxTasks must be a positive integer, got ${String(maxTasks)}. Omit it for the default (${DEFAULT_MAX_TASKS}).`,
      );
    }
    if (options.clock !== undefined && typeof options.clock !== 'function') {
      throw new A2AError('INVALID_OPTIONS', 'MemoryStore: clock must be a function returning epoch milliseconds.');
    }
    this.#clock = options.clock ?? systemClock;
    this.#maxTasks = maxTasks;
    this.#onListenerError = options.onListenerError ?? (() => {});
  }

  async open(): Promise<void> {
    this.#assertOpen();
  }

  /** Drops all data and listeners; the instance cannot be used again. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#tasks.clear();
    this.#contexts.clear();
    this.#subscriptions.clear();
    this.#messages.clear();
    this.#queues.clear();
    this.#leases.clear();
    this.#terminal.clear();
  }

  async ping(): Promise<void> {
    this.#assertOpen();
  }

  async commit(request: CommitRequest, ctx?: StoreCallContext): Promise<CommitResult> {
    this.#check(ctx);
    // Validate everything before touching state, so a failed commit leaves no trace.
    checkCommitRequest(request, 'MemoryStore');
    const { taskId, expectedVersion, events } = request;
    const existing = this.#tasks.get(taskId);
    if ((existing?.record.version ?? 0) !== expectedVersion) {
      throw new VersionConflictError(taskId, expectedVersion, existing?.record.version);
    }
    const messageIds = indexedMessageIds(events);
    for (let i = 0; i < messageIds.length; i++) {
      const messageId = messageIds[i] as string;
      const indexed = this.#messages.get(messageId);
      if (indexed !== undefined || messageIds.indexOf(messageId) < i) {
        throw new DuplicateMessageError(messageId, indexed === undefined ? undefined : { ...indexed });
      }
    }
    // Copied in, unless the caller handed the objects over (`transfer`: it never mutates them).
    const copy = request.transfer === true ? <T>(value: T): T => value : cloneJson;
    const task = copy(request.task);
    const now = this.#clock();
    // A creating commit's `task` event usually is the snapshot itself: one copy serves both, as
    // nothing here mutates what it stored.
    const stored: StoredEvent[] = events.map((event, i) => ({
      seq: expectedVersion + i + 1,
      event: event === request.task ? task : copy(event),
      createdAt: now,
    }));
    const version = expectedVersion + events.length;

    let entry: Entry;
    if (existing === undefined) {
      // The new task's arrays start at their exact size (`[]` plus a push reserves 17 slots).
      entry = {
        record: { task, version, createdAt: now, updatedAt: now },
        events: stored,
        order: this.#created++,
        messageIds,
      };
    } else {
      entry = existing;
      entry.record = { task, version, createdAt: entry.record.createdAt, updatedAt: now };
      for (const event of stored) entry.events.push(event);
      for (const messageId of messageIds) entry.messageIds.push(messageId);
    }
    for (const messageId of messageIds) this.#messages.set(messageId, { taskId, contextId: task.contextId });
    if (existing === undefined) this.#tasks.set(taskId, entry);
    // Eviction walks the terminal tasks, least recently updated first: a commit moves its task to
    // the end of that set (only terminal commits touch it, so a running task costs nothing here).
    if (isTerminalState(task.status.state)) this.#terminal.touch(taskId);
    else if (existing !== undefined) this.#terminal.remove(taskId);

    let turn: TurnTicket | undefined;
    if (request.enqueueTurn !== undefined) {
      const { turnId, workerId } = request.enqueueTurn;
      turn = this.#enqueue({ contextId: task.contextId, taskId, turnId, workerId });
    }
    if (request.finishTurn !== undefined) this.#removeTicket(request.finishTurn);

    this.#evict(taskId);
    this.#notify(taskId, version);
    return turn === undefined ? { version } : { version, turn };
  }

  async getTask(taskId: string, ctx?: StoreCallContext): Promise<TaskRecord | undefined> {
    this.#check(ctx);
    const entry = this.#tasks.get(taskId);
    return entry === undefined ? undefined : cloneJson(entry.record);
  }

  async getVersions(taskIds: readonly string[], ctx?: StoreCallContext): Promise<Map<string, number>> {
    this.#check(ctx);
    const versions = new Map<string, number>();
    for (const taskId of taskIds) {
      const entry = this.#tasks.get(taskId);
      if (entry !== undefined) versions.set(taskId, entry.record.version);
    }
    return versions;
  }

  async readEvents(taskId: string, afterSeq: number, limit?: number, ctx?: StoreCallContext): Promise<StoredEvent[]> {
    this.#check(ctx);
    const events = this.#tasks.get(taskId)?.events ?? [];
    // events[i] has seq i + 1: the log has no gaps.
    const start = Math.max(0, afterSeq);
    return cloneJson(events.slice(start, limit === undefined ? undefined : start + Math.max(0, limit)));
  }

  async listTasksByContext(
    contextId: string,
    options: ListTasksOptions = {},
    ctx?: StoreCallContext,
  ): Promise<TaskRecord[]> {
    this.#check(ctx);
    const entries = [...this.#tasks.values()]
      .filter((entry) => entry.record.task.contextId === contextId)
      .sort((a, b) => a.record.createdAt - b.record.createdAt || a.order - b.order);
    const limited = options.limit === undefined ? entries : entries.slice(0, Math.max(0, options.limit));
    return limited.map((entry) => cloneJson(entry.record));
  }

  async listActiveTasks(ctx?: StoreCallContext): Promise<TaskRecord[]> {
    this.#check(ctx);
    const active: TaskRecord[] = [];
    for (const { record } of this.#tasks.values()) {
      const state = record.task.status.state;
      if (!isTerminalState(state) && !INTERRUPTED_STATES.has(state)) active.push(cloneJson(record));
    }
    return active;
  }

  async getContext(contextId: string, ctx?: StoreCallContext): Promise<ContextRecord | undefined> {
    this.#check(ctx);
    const record = this.#contexts.get(contextId);
    return record === undefined ? undefined : cloneJson(record);
  }

  async setContext(contextId: string, state: unknown, ctx?: StoreCallContext): Promise<void> {
    this.#check(ctx);
    // `undefined` (which has no JSON form) is stored as null, as the SQL stores do.
    this.#contexts.set(contextId, { contextId, state: cloneJson(state) ?? null, updatedAt: this.#clock() });
  }

  subscribe(taskId: string, listener: (seq: number) => void): Unsubscribe {
    const subscription: Subscription = { listener };
    multiMapAdd(this.#subscriptions, taskId, subscription);
    return () => {
      multiMapDelete(this.#subscriptions, taskId, subscription);
    };
  }

  async purgeExpired(cutoff: number, ctx?: StoreCallContext): Promise<PurgeResult> {
    this.#check(ctx);
    let tasks = 0;
    for (const [taskId, entry] of this.#tasks) {
      if (isTerminalState(entry.record.task.status.state) && entry.record.updatedAt < cutoff) {
        this.#deleteTask(taskId, entry);
        tasks++;
      }
    }
    const inUse = new Set<string>();
    for (const { record } of this.#tasks.values()) inUse.add(record.task.contextId);
    let contexts = 0;
    for (const [contextId, record] of this.#contexts) {
      if (record.updatedAt < cutoff && !inUse.has(contextId)) {
        this.#contexts.delete(contextId);
        contexts++;
      }
    }
    return { tasks, contexts };
  }

  // ---- Coordination (one process: the queue, the leases and the index are plain maps) ----

  async heartbeat(workerId: string, leaseUntil: number, ctx?: StoreCallContext): Promise<void> {
    this.#check(ctx);
    this.#leases.set(workerId, { leaseUntil, lastHeartbeat: this.#clock() });
  }

  async enqueueTurn(request: EnqueueTurnRequest, ctx?: StoreCallContext): Promise<TurnTicket> {
    this.#check(ctx);
    const { contextId, taskId, turnId, workerId } = request;
    return this.#enqueue({ contextId, taskId, turnId, workerId });
  }

  async turnReadiness(ticket: TurnTicket, ctx?: StoreCallContext): Promise<TurnReadiness> {
    this.#check(ctx);
    const queue = this.#queues.get(ticket.contextId) ?? [];
    const ahead = queue.findLast((queued) => queued.position < ticket.position);
    return ahead === undefined ? { ready: true } : { ready: false, ahead: { ...ahead } };
  }

  /** Also wakes local subscribers of the ticket's task with seq 0, so turns waiting behind it re-check. */
  async finishTurn(ticket: TurnTicket, ctx?: StoreCallContext): Promise<void> {
    this.#check(ctx);
    if (this.#removeTicket(ticket)) this.#notify(ticket.taskId, 0);
  }

  async claimExpiredWorkers(now: number, exceptWorkerId?: string, ctx?: StoreCallContext): Promise<ExpiredWorker[]> {
    this.#check(ctx);
    const claimed: ExpiredWorker[] = [];
    for (const [workerId, lease] of this.#leases) {
      if (lease.leaseUntil >= now || workerId === exceptWorkerId) continue;
      this.#leases.delete(workerId);
      claimed.push({ workerId, lastHeartbeat: lease.lastHeartbeat, turns: this.#turnsOf(workerId) });
    }
    return claimed;
  }

  async removeWorker(workerId: string, ctx?: StoreCallContext): Promise<void> {
    this.#check(ctx);
    this.#leases.delete(workerId);
  }

  async listWorkerTurns(workerId: string, ctx?: StoreCallContext): Promise<TurnTicket[]> {
    this.#check(ctx);
    return this.#turnsOf(workerId);
  }

  async findMessage(messageId: string, ctx?: StoreCallContext): Promise<MessageIndexEntry | undefined> {
    this.#check(ctx);
    const entry = this.#messages.get(messageId);
    return entry === undefined ? undefined : { ...entry };
  }

  /** Appends a ticket with the next position; returns a copy of it. */
  #enqueue(request: EnqueueTurnRequest): TurnTicket {
    const { contextId, taskId, turnId, workerId } = request;
    const ticket: TurnTicket = { contextId, position: ++this.#lastPosition, taskId, turnId, workerId };
    const queue = this.#queues.get(contextId);
    if (queue === undefined) this.#queues.set(contextId, [ticket]);
    else queue.push(ticket); // the highest position so far: the queue stays sorted
    return { ...ticket };
  }

  /** Removes the queued ticket at the ticket's position, if it is of the same turn; whether it did. */
  #removeTicket(ticket: TurnTicket): boolean {
    const queue = this.#queues.get(ticket.contextId);
    const index =
      queue?.findIndex(
        (queued) =>
          queued.position === ticket.position && queued.taskId === ticket.taskId && queued.turnId === ticket.turnId,
      ) ?? -1;
    if (queue === undefined || index === -1) return false;
    queue.splice(index, 1);
    if (queue.length === 0) this.#queues.delete(ticket.contextId);
    return true;
  }

  /** Copies of the worker's queued tickets in arrival (= position) order, across contexts. */
  #turnsOf(workerId: string): TurnTicket[] {
    const turns: TurnTicket[] = [];
    for (const queue of this.#queues.values()) {
      for (const ticket of queue) if (ticket.workerId === workerId) turns.push({ ...ticket });
    }
    return turns.sort((a, b) => a.position - b.position);
  }

  /**
   * Evicts least recently updated terminal tasks beyond maxTasks, never `justWritten`. Walks only
   * the terminal tasks, so a store full of running tasks costs nothing per commit.
   */
  #evict(justWritten: string): void {
    while (this.#tasks.size > this.#maxTasks) {
      const taskId = this.#terminal.shift();
      if (taskId === undefined) return;
      if (taskId === justWritten) {
        // The newest terminal task is the last candidate: nothing else is left to evict.
        this.#terminal.touch(taskId);
        return;
      }
      const entry = this.#tasks.get(taskId);
      if (entry !== undefined) this.#deleteTask(taskId, entry);
    }
  }

  /** Deletes the task with its events and its message index entries. */
  #deleteTask(taskId: string, entry: Entry): void {
    this.#tasks.delete(taskId);
    this.#terminal.remove(taskId);
    for (const messageId of entry.messageIds) this.#messages.delete(messageId);
  }

  /**
   * Listeners run in a microtask, outside the commit, so they can neither break it nor observe a
   * half-finished one. Whoever unsubscribes before then is not called.
   */
  #notify(taskId: string, seq: number): void {
    if (!this.#subscriptions.has(taskId)) return;
    const subscriptions = multiMapValues(this.#subscriptions, taskId);
    queueMicrotask(() => {
      for (const subscription of subscriptions) {
        if (!multiMapHas(this.#subscriptions, taskId, subscription)) continue;
        try {
          subscription.listener(seq);
        } catch (error) {
          this.#reportListenerError(error, taskId);
        }
      }
    });
  }

  #reportListenerError(error: unknown, taskId: string): void {
    try {
      this.#onListenerError(error, taskId);
    } catch {
      // A failing error handler must not stop the remaining listeners either.
    }
  }

  #check(ctx: StoreCallContext | undefined): void {
    ctx?.signal?.throwIfAborted();
    this.#assertOpen();
  }

  #assertOpen(): void {
    if (this.#closed) {
      throw new A2AError(
        'STORE_UNAVAILABLE',
        'MemoryStore is closed: close() dropped its data. Create a new MemoryStore instead of reusing this one.',
      );
    }
  }
}

/**
 * Ids in the order they were last touched, least recent first. An array with a moving head rather
 * than a Set iterated from its start: a Set added to at the end and deleted from at the front keeps
 * the deleted slots at its front until it rehashes, and every new iteration walks them all. At
 * 10,000 tasks that walk was three quarters of a commit's time.
 */
class TerminalQueue {
  #ids: string[] = [];
  /** The touch each entry of #ids records; only an id's latest touch counts. */
  #touches: number[] = [];
  #head = 0;
  #lastTouch = 0;
  /** Each id that is in the queue, with its latest touch. */
  readonly #latest = new Map<string, number>();

  /** Puts `id` last (again). */
  touch(id: string): void {
    const touch = ++this.#lastTouch;
    this.#ids.push(id);
    this.#touches.push(touch);
    this.#latest.set(id, touch);
  }

  /** Takes `id` out; its entries in the array are skipped when they come up. */
  remove(id: string): void {
    this.#latest.delete(id);
  }

  /** Removes and returns the least recently touched id, or undefined when there is none. */
  shift(): string | undefined {
    let found: string | undefined;
    while (found === undefined && this.#head < this.#ids.length) {
      const id = this.#ids[this.#head] as string;
      const touch = this.#touches[this.#head];
      this.#head++;
      // An entry is current only if it records the id's latest touch (not removed, not re-touched).
      if (this.#latest.get(id) === touch) {
        this.#latest.delete(id);
        found = id;
      }
    }
    if (this.#head > 1024 && this.#head * 2 > this.#ids.length) {
      this.#ids = this.#ids.slice(this.#head);
      this.#touches = this.#touches.slice(this.#head);
      this.#head = 0;
    }
    return found;
  }

  clear(): void {
    this.#ids = [];
    this.#touches = [];
    this.#head = 0;
    this.#latest.clear();
  }
}

/** Same as `new MemoryStore(options)`. */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  return new MemoryStore(options);
}
