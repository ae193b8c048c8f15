import { randomUUID } from 'node:crypto';
import {
  A2AError,
  type A2AStore,
  type ClaimPushDeliveriesRequest,
  type Clock,
  type CommitRequest,
  type CommitResult,
  type CompletePushDeliveryRequest,
  type ContextRecord,
  checkCommitRequest,
  checkPushConfigRequest,
  cloneJson,
  DuplicateMessageError,
  type EnqueueTurnRequest,
  type ExpiredWorker,
  type FailPushAttemptRequest,
  INTERRUPTED_STATES,
  type IndexedMessage,
  type InterruptedTasksQuery,
  indexedMessages,
  isFinalState,
  isTerminalState,
  type ListTasksOptions,
  type MessageIndexEntry,
  NO_STATUS_TIMESTAMP,
  type PurgeResult,
  type PushClaimKey,
  type PushConfigRecord,
  type PushDelivery,
  type PushDeliveryFilter,
  type PushDeliveryState,
  type PushStore,
  type QueueSlot,
  type ReadEventsOptions,
  type SavePushConfigRequest,
  type StoreCallContext,
  type StoreCapabilities,
  type StoredEvent,
  Subscribers,
  statusTimestampOf,
  systemClock,
  type TaskListCursor,
  type TaskListPage,
  type TaskListQuery,
  type TaskRecord,
  type TurnReadiness,
  taskNotFound,
  type Unsubscribe,
  VersionConflictError,
  type WorkerDescription,
  type WorkerRecord,
} from '@fastify-a2a/core';
import { listOrder } from './list-order.js';
import { TerminalQueue } from './terminal-queue.js';

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
  /** The entries this task holds in the message index (owner scope and id), dropped with the task. */
  messages: IndexKey[];
  /** Its push configs by id, in save order (a replace keeps its place); dropped with the task. */
  push?: Map<string, PushEntry>;
}

/** Where an entry of the message index is: the owner's scope (undefined: anonymous) and the id. */
interface IndexKey {
  owner: string | undefined;
  messageId: string;
}

interface PushEntry {
  record: PushConfigRecord;
  state: PushDeliveryState;
  /** Save order across all tasks, to list deliveries oldest first. */
  order: number;
}

interface Lease {
  leaseUntil: number;
  lastHeartbeat: number;
  description: WorkerDescription | null;
}

const DEFAULT_MAX_TASKS = 10_000;

/**
 * The reference A2AStore: everything in this process's memory, deep-copied in and out with JSON's
 * rules (`cloneJson`), so it gives back what the SQL stores would. Lost on restart and not shared between processes; use it for tests, demos
 * and single-process agents that can lose their tasks.
 */
export class MemoryStore implements A2AStore, PushStore {
  readonly supports: StoreCapabilities = Object.freeze({
    durable: false,
    crossProcess: false,
    ttl: true,
    namespaces: false,
    listTasks: true,
    push: true,
    interruptedTasks: true,
    cluster: true,
  });

  readonly #clock: Clock;
  readonly #maxTasks: number;
  /** Ids of terminal tasks, least recently updated first: the eviction candidates. */
  readonly #terminal = new TerminalQueue();
  /** In creation order. */
  readonly #tasks = new Map<string, Entry>();
  /**
   * Context id → the ids of its tasks, in creation order: listTasksByContext reads one context's
   * tasks, not every task (the runtime asks it for each new task sent into an existing context).
   * A context with one task (most of them: every message sent without a contextId starts one)
   * holds its id as itself; a Set is made for the second.
   */
  readonly #tasksByContext = new Map<string, string | Set<string>>();
  readonly #contexts = new Map<string, ContextRecord>();
  readonly #subscribers: Subscribers;
  /**
   * Owner (undefined: the anonymous scope) → messageId → the task it was committed to. A Map key
   * can be undefined, so the anonymous scope is a key no principal id can be.
   */
  readonly #messages = new Map<string | undefined, Map<string, MessageIndexEntry>>();
  /** contextId → its queued slots, in position order; a context without slots has no entry. */
  readonly #queues = new Map<string, QueueSlot[]>();
  readonly #leases = new Map<string, Lease>();
  /**
   * One counter for all contexts: positions grow with arrival in every context and are never
   * reused, even after a context's queue emptied and its entry was dropped.
   */
  #lastPosition = 0;
  #created = 0;
  /** Ids of the tasks that have push configs: what claims and listings walk. */
  readonly #pushTasks = new Set<string>();
  #pushSaved = 0;
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
    this.#subscribers = new Subscribers(options.onListenerError);
  }

  async open(): Promise<void> {
    this.#assertOpen();
  }

  /** Drops all data and listeners; the instance cannot be used again. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#tasks.clear();
    this.#tasksByContext.clear();
    this.#contexts.clear();
    this.#subscribers.clear();
    this.#messages.clear();
    this.#queues.clear();
    this.#leases.clear();
    this.#terminal.clear();
    this.#pushTasks.clear();
  }

  async ping(): Promise<void> {
    this.#assertOpen();
  }

  async commit(request: CommitRequest, ctx?: StoreCallContext): Promise<CommitResult> {
    this.#check(ctx);
    // Validate everything before touching state, so a failed commit leaves no trace.
    checkCommitRequest(request, 'MemoryStore');
    const { taskId, expectedVersion, events, owner } = request;
    const existing = this.#tasks.get(taskId);
    if ((existing?.record.version ?? 0) !== expectedVersion) {
      throw new VersionConflictError(taskId, expectedVersion, existing?.record.version);
    }
    const indexed = indexedMessages(events);
    const scope = this.#messages.get(owner);
    for (let i = 0; i < indexed.length; i++) {
      const { messageId } = indexed[i] as IndexedMessage;
      const known = scope?.get(messageId);
      if (known !== undefined || indexed.findIndex((m) => m.messageId === messageId) < i) {
        throw new DuplicateMessageError(
          messageId,
          known === undefined ? undefined : { taskId: known.taskId, contextId: known.contextId },
        );
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

    const keys = indexed.map(({ messageId }): IndexKey => ({ owner, messageId }));
    let entry: Entry;
    if (existing === undefined) {
      // The new task's arrays start at their exact size (`[]` plus a push reserves 17 slots).
      const record: TaskRecord = { task, version, createdAt: now, updatedAt: now };
      // Only a creating commit sets the owner; without one the record has no owner property.
      if (owner !== undefined) record.owner = owner;
      if (request.traceContext !== undefined) record.traceContext = request.traceContext;
      entry = { record, events: stored, order: this.#created++, messages: keys };
    } else {
      entry = existing;
      const record: TaskRecord = { task, version, createdAt: entry.record.createdAt, updatedAt: now };
      if (entry.record.owner !== undefined) record.owner = entry.record.owner;
      if (request.traceContext !== undefined) record.traceContext = request.traceContext;
      entry.record = record;
      for (const event of stored) entry.events.push(event);
      for (const key of keys) entry.messages.push(key);
    }
    if (indexed.length > 0) {
      const into = scope ?? new Map<string, MessageIndexEntry>();
      if (scope === undefined) this.#messages.set(owner, into);
      for (const { messageId, digest } of indexed) into.set(messageId, { taskId, contextId: task.contextId, digest });
    }
    if (existing === undefined) {
      this.#tasks.set(taskId, entry);
      const siblings = this.#tasksByContext.get(task.contextId);
      if (siblings === undefined) this.#tasksByContext.set(task.contextId, taskId);
      else if (typeof siblings === 'string') this.#tasksByContext.set(task.contextId, new Set([siblings, taskId]));
      else siblings.add(taskId);
    }
    // Eviction walks the terminal tasks, least recently updated first: a commit moves its task to
    // the end of that set (only terminal commits touch it, so a running task costs nothing here).
    if (isTerminalState(task.status.state)) this.#terminal.touch(taskId);
    else if (existing !== undefined) this.#terminal.remove(taskId);

    let turn: QueueSlot | undefined;
    if (request.enqueueTurn !== undefined) {
      const { messageId, workerId } = request.enqueueTurn;
      turn = this.#enqueue({ contextId: task.contextId, taskId, messageId, workerId });
    }
    if (request.finishTurn !== undefined) this.#removeSlot(request.finishTurn);

    this.#evict(taskId);
    this.#subscribers.notifyLater(taskId, version);
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

  async readEvents(
    taskId: string,
    afterSeq: number,
    limit?: number,
    ctx?: StoreCallContext,
    options?: ReadEventsOptions,
  ): Promise<StoredEvent[]> {
    this.#check(ctx);
    const events = this.#tasks.get(taskId)?.events ?? [];
    // events[i] has seq i + 1: the log has no gaps.
    const start = Math.max(0, afterSeq);
    const read = events.slice(start, limit === undefined ? undefined : start + Math.max(0, limit));
    // A shared read gets the log's own entries: its caller never changes them (issue 30: one copy
    // less per event and per stream). The entries are never changed here either once appended.
    return options?.shared === true ? read : cloneJson(read);
  }

  async listTasksByContext(
    contextId: string,
    options: ListTasksOptions = {},
    ctx?: StoreCallContext,
  ): Promise<TaskRecord[]> {
    this.#check(ctx);
    const entries: Entry[] = [];
    const siblings = this.#tasksByContext.get(contextId);
    for (const taskId of typeof siblings === 'string' ? [siblings] : (siblings ?? [])) {
      const entry = this.#tasks.get(taskId);
      if (entry !== undefined) entries.push(entry);
    }
    // Creation order already; the sort keeps the contract's order should the clock go backwards.
    entries.sort((a, b) => a.record.createdAt - b.record.createdAt || a.order - b.order);
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

  /**
   * Filters every task and sorts the matches on each call: O(n + m log m) for n tasks and m
   * matches, no index to keep in step with commits: cheap enough at the default maxTasks; the SQL
   * stores read a page through an index instead.
   */
  async listTasks(query: TaskListQuery, ctx?: StoreCallContext): Promise<TaskListPage> {
    this.#check(ctx);
    const { contextId, state, statusTimestampAfter, after, limit, owner } = query;
    const matching: { key: TaskListCursor; record: TaskRecord }[] = [];
    for (const { record } of this.#tasks.values()) {
      const { task } = record;
      // null selects the tasks without an owner, whose record.owner is undefined.
      if (owner !== undefined && record.owner !== (owner ?? undefined)) continue;
      if (contextId !== undefined && task.contextId !== contextId) continue;
      if (state !== undefined && task.status.state !== state) continue;
      const key = { statusTimestamp: statusTimestampOf(task), taskId: task.id };
      if (statusTimestampAfter !== undefined && key.statusTimestamp < statusTimestampAfter) continue;
      matching.push({ key, record });
    }
    matching.sort((a, b) => listOrder(a.key, b.key));
    const rest = after === undefined ? matching : matching.filter((entry) => listOrder(entry.key, after) > 0);
    const page = rest.slice(0, Math.max(0, limit));
    const last = page.at(-1);
    const result: TaskListPage = { records: page.map((entry) => cloneJson(entry.record)), total: matching.length };
    if (rest.length > page.length && last !== undefined) result.next = { ...last.key };
    return result;
  }

  /** Filters every task, as listTasks does. */
  async listInterruptedTasks(query: InterruptedTasksQuery, ctx?: StoreCallContext): Promise<TaskRecord[]> {
    this.#check(ctx);
    const waiting: { key: TaskListCursor; record: TaskRecord }[] = [];
    for (const { record } of this.#tasks.values()) {
      const { task } = record;
      if (!INTERRUPTED_STATES.has(task.status.state)) continue;
      const key = { statusTimestamp: statusTimestampOf(task), taskId: task.id };
      if (key.statusTimestamp === NO_STATUS_TIMESTAMP || key.statusTimestamp >= query.before) continue;
      waiting.push({ key, record });
    }
    // Oldest first: the reverse of listTasks order.
    waiting.sort((a, b) => listOrder(b.key, a.key));
    return waiting.slice(0, Math.max(0, query.limit)).map((entry) => cloneJson(entry.record));
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

  /**
   * Listeners run in a microtask, outside the commit, so they can neither break it nor observe a
   * half-finished one. Whoever unsubscribes before then is not called.
   */
  subscribeAll(listener: (taskId: string, seq: number) => void): Unsubscribe {
    return this.#subscribers.subscribeAll(listener);
  }

  subscribe(taskId: string, listener: (seq: number) => void): Unsubscribe {
    return this.#subscribers.subscribe(taskId, listener);
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
    const description = this.#leases.get(workerId)?.description ?? null;
    this.#leases.set(workerId, { leaseUntil, lastHeartbeat: this.#clock(), description });
  }

  async joinWorker(
    workerId: string,
    leaseUntil: number,
    description: WorkerDescription,
    ctx?: StoreCallContext,
  ): Promise<ExpiredWorker | undefined> {
    this.#check(ctx);
    const previous = this.#leases.get(workerId);
    this.#leases.set(workerId, { leaseUntil, lastHeartbeat: this.#clock(), description: { ...description } });
    if (previous?.description?.incarnation === description.incarnation) return undefined;
    // Without a row (a reaper claimed it), turns of this id are still a previous start's: a new
    // incarnation owns none yet.
    const turns = this.#turnsOf(workerId);
    if (previous === undefined && turns.length === 0) return undefined;
    return { workerId, lastHeartbeat: previous?.lastHeartbeat ?? 0, turns };
  }

  async listWorkers(ctx?: StoreCallContext): Promise<WorkerRecord[]> {
    this.#check(ctx);
    const leases = new Map(this.#leases);
    // Turns whose worker has no lease row any more (claimed, its reaping failed) are listed under
    // that id with no lease, so operators can still see and release them.
    for (const queue of this.#queues.values()) {
      for (const slot of queue) {
        if (!leases.has(slot.workerId))
          leases.set(slot.workerId, { leaseUntil: 0, lastHeartbeat: 0, description: null });
      }
    }
    return [...leases]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([workerId, lease]) => ({
        workerId,
        leaseUntil: lease.leaseUntil,
        lastHeartbeat: lease.lastHeartbeat,
        description: lease.description === null ? null : { ...lease.description },
        turns: this.#turnsOf(workerId),
      }));
  }

  async enqueueTurn(request: EnqueueTurnRequest, ctx?: StoreCallContext): Promise<QueueSlot> {
    this.#check(ctx);
    const { contextId, taskId, messageId, workerId } = request;
    return this.#enqueue({ contextId, taskId, messageId, workerId });
  }

  async turnReadiness(slot: QueueSlot, ctx?: StoreCallContext): Promise<TurnReadiness> {
    this.#check(ctx);
    const queue = this.#queues.get(slot.contextId) ?? [];
    const ahead = queue.findLast((queued) => queued.position < slot.position);
    return ahead === undefined ? { ready: true } : { ready: false, ahead: { ...ahead } };
  }

  /** Also wakes local subscribers of the slot's task with seq 0, so turns waiting behind it re-check. */
  async finishTurn(slot: QueueSlot, ctx?: StoreCallContext): Promise<void> {
    this.#check(ctx);
    if (this.#removeSlot(slot)) this.#subscribers.notifyLater(slot.taskId, 0);
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

  async listWorkerTurns(workerId: string, ctx?: StoreCallContext): Promise<QueueSlot[]> {
    this.#check(ctx);
    return this.#turnsOf(workerId);
  }

  async findMessage(messageId: string, ctx?: StoreCallContext, owner?: string): Promise<MessageIndexEntry | undefined> {
    this.#check(ctx);
    const entry = this.#messages.get(owner)?.get(messageId);
    return entry === undefined ? undefined : { ...entry };
  }

  // ---- Push notifications (kept in the task's entry, so they go wherever the task goes) ----

  async savePushConfig(request: SavePushConfigRequest, ctx?: StoreCallContext): Promise<PushConfigRecord> {
    this.#check(ctx);
    checkPushConfigRequest(request, 'MemoryStore');
    const { taskId, protocolVersion } = request;
    const entry = this.#tasks.get(taskId);
    if (entry === undefined) throw taskNotFound(taskId);
    const configs = entry.push ?? new Map<string, PushEntry>();
    entry.push = configs;
    this.#pushTasks.add(taskId);
    const now = this.#clock();
    const config = cloneJson(request.config);
    const existing = configs.get(config.id);
    const record: PushConfigRecord = {
      taskId,
      config,
      protocolVersion,
      createdAt: existing?.record.createdAt ?? now,
      updatedAt: now,
    };
    // Map.set on an existing key keeps its place: a replace stays where the config was first saved.
    configs.set(config.id, { record, state: newDeliveryState(), order: existing?.order ?? this.#pushSaved++ });
    return cloneJson(record);
  }

  async getPushConfig(taskId: string, configId: string, ctx?: StoreCallContext): Promise<PushConfigRecord | undefined> {
    this.#check(ctx);
    const entry = this.#tasks.get(taskId)?.push?.get(configId);
    return entry === undefined ? undefined : cloneJson(entry.record);
  }

  async listPushConfigs(taskId: string, ctx?: StoreCallContext): Promise<PushConfigRecord[]> {
    this.#check(ctx);
    const configs = this.#tasks.get(taskId)?.push;
    if (configs === undefined) return [];
    return [...configs.values()].sort(byCreation).map((entry) => cloneJson(entry.record));
  }

  async deletePushConfig(taskId: string, configId: string, ctx?: StoreCallContext): Promise<boolean> {
    this.#check(ctx);
    const entry = this.#tasks.get(taskId);
    const deleted = entry?.push?.delete(configId) ?? false;
    if (entry?.push?.size === 0) {
      delete entry.push;
      this.#pushTasks.delete(taskId);
    }
    return deleted;
  }

  async claimPushDeliveries(request: ClaimPushDeliveriesRequest, ctx?: StoreCallContext): Promise<PushDelivery[]> {
    this.#check(ctx);
    const { workerId, now, claimUntil, limit } = request;
    const claimId = randomUUID();
    const claimed: PushDelivery[] = [];
    for (const taskId of this.#pushTasks) {
      const task = this.#tasks.get(taskId);
      if (task?.push === undefined) continue;
      for (const entry of task.push.values()) {
        if (claimed.length >= limit) return claimed;
        const { state } = entry;
        if (state.failed) continue;
        if (state.claimUntil !== null && state.claimUntil >= now) continue;
        if (task.record.version <= state.cursor) continue;
        // The throttle window (after a success) lets a terminal or interrupted state through; a retry wait does not.
        const waiting = state.nextAttemptAt !== null && state.nextAttemptAt > now;
        if (waiting && (state.attempts > 0 || !isFinalState(task.record.task.status.state))) continue;
        entry.state = { ...state, claimedBy: workerId, claimId, claimUntil };
        claimed.push(this.#delivery(entry, task));
      }
    }
    return claimed;
  }

  async renewPushClaims(workerId: string, claimUntil: number, ctx?: StoreCallContext): Promise<number> {
    this.#check(ctx);
    let renewed = 0;
    for (const entry of this.#pushEntries()) {
      if (entry.state.claimedBy !== workerId) continue;
      entry.state = { ...entry.state, claimUntil };
      renewed++;
    }
    return renewed;
  }

  async completePushDelivery(request: CompletePushDeliveryRequest, ctx?: StoreCallContext): Promise<boolean> {
    this.#check(ctx);
    const entry = this.#claimed(request);
    if (entry === undefined) return false;
    entry.state = {
      ...entry.state,
      ...NO_CLAIM,
      cursor: Math.max(entry.state.cursor, request.cursor),
      attempts: 0,
      nextAttemptAt: request.nextAttemptAt ?? null,
      lastSentAt: request.sentAt,
      lastError: null,
      lastStatus: request.status ?? null,
    };
    return true;
  }

  async failPushAttempt(request: FailPushAttemptRequest, ctx?: StoreCallContext): Promise<boolean> {
    this.#check(ctx);
    const entry = this.#claimed(request);
    if (entry === undefined) return false;
    entry.state = {
      ...entry.state,
      ...NO_CLAIM,
      attempts: entry.state.attempts + 1,
      nextAttemptAt: request.nextAttemptAt,
      failed: request.nextAttemptAt === null,
      lastError: request.error,
      lastStatus: request.status ?? null,
    };
    return true;
  }

  async releasePushClaim(key: PushClaimKey, ctx?: StoreCallContext): Promise<boolean> {
    this.#check(ctx);
    const entry = this.#claimed(key);
    if (entry === undefined) return false;
    entry.state = { ...entry.state, ...NO_CLAIM };
    return true;
  }

  async listPushDeliveries(filter: PushDeliveryFilter = {}, ctx?: StoreCallContext): Promise<PushDelivery[]> {
    this.#check(ctx);
    const { taskId, failed, limit } = filter;
    const listed: { entry: PushEntry; task: Entry }[] = [];
    for (const id of taskId === undefined ? this.#pushTasks : [taskId]) {
      const task = this.#tasks.get(id);
      for (const entry of task?.push?.values() ?? []) {
        if (failed === undefined || entry.state.failed === failed) listed.push({ entry, task: task as Entry });
      }
    }
    listed.sort((a, b) => byCreation(a.entry, b.entry));
    const limited = limit === undefined ? listed : listed.slice(0, Math.max(0, limit));
    return limited.map(({ entry, task }) => this.#delivery(entry, task));
  }

  /** The entry whose claim `key` names, or undefined when that claim is no longer held. */
  #claimed(key: PushClaimKey): PushEntry | undefined {
    const entry = this.#tasks.get(key.taskId)?.push?.get(key.configId);
    return entry !== undefined && entry.state.claimId === key.claimId ? entry : undefined;
  }

  *#pushEntries(): Iterable<PushEntry> {
    for (const taskId of this.#pushTasks) yield* this.#tasks.get(taskId)?.push?.values() ?? [];
  }

  #delivery(entry: PushEntry, task: Entry): PushDelivery {
    return { config: cloneJson(entry.record), state: { ...entry.state }, taskVersion: task.record.version };
  }

  /** Appends a slot with the next position; returns a copy of it. */
  #enqueue(request: EnqueueTurnRequest): QueueSlot {
    const { contextId, taskId, messageId, workerId } = request;
    const slot: QueueSlot = { contextId, position: ++this.#lastPosition, taskId, messageId, workerId };
    const queue = this.#queues.get(contextId);
    if (queue === undefined) this.#queues.set(contextId, [slot]);
    else queue.push(slot); // the highest position so far: the queue stays sorted
    return { ...slot };
  }

  /** Removes the queued slot at the slot's position, if it is of the same turn; whether it did. */
  #removeSlot(slot: QueueSlot): boolean {
    const queue = this.#queues.get(slot.contextId);
    const index =
      queue?.findIndex(
        (queued) =>
          queued.position === slot.position && queued.taskId === slot.taskId && queued.messageId === slot.messageId,
      ) ?? -1;
    if (queue === undefined || index === -1) return false;
    queue.splice(index, 1);
    if (queue.length === 0) this.#queues.delete(slot.contextId);
    return true;
  }

  /** Copies of the worker's queued slots in arrival (= position) order, across contexts. */
  #turnsOf(workerId: string): QueueSlot[] {
    const turns: QueueSlot[] = [];
    for (const queue of this.#queues.values()) {
      for (const slot of queue) if (slot.workerId === workerId) turns.push({ ...slot });
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

  /** Deletes the task with its events, its message index entries and its push configs. */
  #deleteTask(taskId: string, entry: Entry): void {
    this.#tasks.delete(taskId);
    const { contextId } = entry.record.task;
    const siblings = this.#tasksByContext.get(contextId);
    if (siblings === taskId) this.#tasksByContext.delete(contextId);
    else if (typeof siblings === 'object') {
      siblings.delete(taskId);
      if (siblings.size === 0) this.#tasksByContext.delete(contextId);
    }
    this.#terminal.remove(taskId);
    this.#pushTasks.delete(taskId);
    for (const { owner, messageId } of entry.messages) {
      const scope = this.#messages.get(owner);
      scope?.delete(messageId);
      if (scope?.size === 0) this.#messages.delete(owner);
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

const NO_CLAIM = { claimedBy: null, claimId: null, claimUntil: null } as const;

/** Oldest config first: by createdAt, then save order. */
const byCreation = (a: PushEntry, b: PushEntry): number => a.record.createdAt - b.record.createdAt || a.order - b.order;

/** A new (or replaced) config's delivery: from cursor 0, so the first POST carries the current state. */
function newDeliveryState(): PushDeliveryState {
  return {
    cursor: 0,
    attempts: 0,
    nextAttemptAt: null,
    lastSentAt: null,
    failed: false,
    lastError: null,
    lastStatus: null,
    ...NO_CLAIM,
  };
}

/** Same as `new MemoryStore(options)`. */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  return new MemoryStore(options);
}
