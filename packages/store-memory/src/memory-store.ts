import {
  A2AError,
  type A2AStore,
  type Clock,
  type CommitRequest,
  type ContextRecord,
  INTERRUPTED_STATES,
  isTerminalState,
  type ListTasksOptions,
  type PurgeResult,
  type StoreCallContext,
  type StoreCapabilities,
  type StoredEvent,
  systemClock,
  type TaskRecord,
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
   * recently updated terminal tasks are evicted (with their events) until the count is back at
   * the bound. Non-terminal tasks are never evicted, nor is the task the commit just wrote, so the
   * count can stay above the bound while that many tasks are still running.
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
}

interface Subscription {
  listener: (seq: number) => void;
}

const DEFAULT_MAX_TASKS = 10_000;

/**
 * The reference A2AStore: everything in this process's memory, deep-copied in and out with
 * `structuredClone`. Lost on restart and not shared between processes; use it for tests, demos
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
  readonly #onListenerError: (error: unknown, taskId: string) => void;
  /** Ordered least recently updated first: a commit moves its task to the end. */
  readonly #tasks = new Map<string, Entry>();
  readonly #contexts = new Map<string, ContextRecord>();
  readonly #subscriptions = new Map<string, Set<Subscription>>();
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
  }

  async ping(): Promise<void> {
    this.#assertOpen();
  }

  async commit(request: CommitRequest, ctx?: StoreCallContext): Promise<StoredEvent[]> {
    this.#check(ctx);
    const { taskId, expectedVersion, events } = request;
    // Validate everything before touching state, so a failed commit leaves no trace.
    if (events.length === 0) {
      throw new A2AError('INTERNAL', `MemoryStore: commit for task "${taskId}" has no events; send at least one.`);
    }
    if (request.task.id !== taskId) {
      throw new A2AError(
        'INTERNAL',
        `MemoryStore: commit for task "${taskId}" carries a snapshot of task "${request.task.id}"; they must match.`,
      );
    }
    const existing = this.#tasks.get(taskId);
    if ((existing?.record.version ?? 0) !== expectedVersion) {
      throw new VersionConflictError(taskId, expectedVersion, existing?.record.version);
    }
    const task = structuredClone(request.task);
    const now = this.#clock();
    const stored: StoredEvent[] = events.map((event, i) => ({
      seq: expectedVersion + i + 1,
      event: structuredClone(event),
      createdAt: now,
    }));
    const version = expectedVersion + events.length;

    const entry: Entry = existing ?? {
      record: { task, version, createdAt: now, updatedAt: now },
      events: [],
      order: this.#created++,
    };
    entry.record = { task, version, createdAt: entry.record.createdAt, updatedAt: now };
    entry.events.push(...stored);
    // Re-insert so the map stays ordered by last update, which eviction walks.
    this.#tasks.delete(taskId);
    this.#tasks.set(taskId, entry);

    this.#evict(taskId);
    this.#notify(taskId, version);
    return structuredClone(stored);
  }

  async getTask(taskId: string, ctx?: StoreCallContext): Promise<TaskRecord | undefined> {
    this.#check(ctx);
    const entry = this.#tasks.get(taskId);
    return entry === undefined ? undefined : structuredClone(entry.record);
  }

  async readEvents(taskId: string, afterSeq: number, limit?: number, ctx?: StoreCallContext): Promise<StoredEvent[]> {
    this.#check(ctx);
    const events = this.#tasks.get(taskId)?.events ?? [];
    // events[i] has seq i + 1: the log has no gaps.
    const start = Math.max(0, afterSeq);
    return structuredClone(events.slice(start, limit === undefined ? undefined : start + Math.max(0, limit)));
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
    return limited.map((entry) => structuredClone(entry.record));
  }

  async listActiveTasks(ctx?: StoreCallContext): Promise<TaskRecord[]> {
    this.#check(ctx);
    const active: TaskRecord[] = [];
    for (const { record } of this.#tasks.values()) {
      const state = record.task.status.state;
      if (!isTerminalState(state) && !INTERRUPTED_STATES.has(state)) active.push(structuredClone(record));
    }
    return active;
  }

  async getContext(contextId: string, ctx?: StoreCallContext): Promise<ContextRecord | undefined> {
    this.#check(ctx);
    const record = this.#contexts.get(contextId);
    return record === undefined ? undefined : structuredClone(record);
  }

  async setContext(contextId: string, state: unknown, ctx?: StoreCallContext): Promise<void> {
    this.#check(ctx);
    this.#contexts.set(contextId, { contextId, state: structuredClone(state), updatedAt: this.#clock() });
  }

  subscribe(taskId: string, listener: (seq: number) => void): Unsubscribe {
    const subscription: Subscription = { listener };
    let set = this.#subscriptions.get(taskId);
    if (set === undefined) {
      set = new Set();
      this.#subscriptions.set(taskId, set);
    }
    set.add(subscription);
    return () => {
      const current = this.#subscriptions.get(taskId);
      if (current?.delete(subscription) && current.size === 0) this.#subscriptions.delete(taskId);
    };
  }

  async purgeExpired(cutoff: number, ctx?: StoreCallContext): Promise<PurgeResult> {
    this.#check(ctx);
    let tasks = 0;
    for (const [taskId, { record }] of this.#tasks) {
      if (isTerminalState(record.task.status.state) && record.updatedAt < cutoff) {
        this.#tasks.delete(taskId);
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

  /** Evicts least recently updated terminal tasks beyond maxTasks, never `justWritten`. */
  #evict(justWritten: string): void {
    if (this.#tasks.size <= this.#maxTasks) return;
    for (const [taskId, { record }] of this.#tasks) {
      if (this.#tasks.size <= this.#maxTasks) return;
      if (taskId !== justWritten && isTerminalState(record.task.status.state)) this.#tasks.delete(taskId);
    }
  }

  /**
   * Listeners run in a microtask, outside the commit, so they can neither break it nor observe a
   * half-finished one. Whoever unsubscribes before then is not called.
   */
  #notify(taskId: string, seq: number): void {
    const set = this.#subscriptions.get(taskId);
    if (set === undefined || set.size === 0) return;
    const subscriptions = [...set];
    queueMicrotask(() => {
      for (const subscription of subscriptions) {
        if (!this.#subscriptions.get(taskId)?.has(subscription)) continue;
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

/** Same as `new MemoryStore(options)`. */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  return new MemoryStore(options);
}
