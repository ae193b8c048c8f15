/**
 * The storage contract every adapter implements (memory, SQLite, Postgres).
 *
 * Model: a task is a snapshot plus an append-only, per-task event log. Every event gets the next
 * sequence number of its task (1, 2, 3, …) and the snapshot's `version` is always the sequence of
 * the last event applied to it. Writers send the version they read (`expectedVersion`); a store
 * that finds another version refuses the write with {@link VersionConflictError}, so two workers
 * (or an agent event racing a cancel) never silently overwrite each other.
 *
 * Stores are deliberately dumb: they persist what the runtime computed (see `applyEvents` in
 * `task-state.ts`) and never interpret protocol rules, so every adapter behaves the same.
 *
 * All data is copied in and out: callers may mutate what they pass or receive. Data is JSON: a
 * store gives back what `JSON.parse(JSON.stringify(x))` of what it was given would be (a `Date`
 * comes back as its ISO string, `undefined` properties are gone), whatever the backend.
 *
 * Rules every adapter follows (the conformance suite checks them):
 * - `supports` can be read right after construction, before `open()`.
 * - Every method returns a promise and fails by rejecting (never a synchronous throw); calls
 *   before `open()` or after `close()` reject with A2AError `STORE_UNAVAILABLE`. A store need not
 *   support `open()` again after `close()`.
 * - A listener that throws affects neither the commit nor the other listeners (stores take an
 *   `onListenerError` option to see such errors).
 * - Context state is any JSON value; `undefined` is stored as `null`.
 * - `limit` arguments are integers ≥ 0.
 */
import type { Task, TaskEvent, TaskState } from '../model/types.js';
import type { StoreCallContext } from './call-context.js';
import type { StoreCapabilities } from './capabilities.js';
import type { CoordinationStore, QueueSlot } from './coordination.js';
import type { PushStore } from './push.js';

export type { TaskEvent, TurnEndEvent } from '../model/types.js';

export interface StoredEvent {
  /** Per-task sequence number, starting at 1, without gaps. */
  seq: number;
  event: TaskEvent;
  /** When the store recorded it, in epoch milliseconds (the store's clock). */
  createdAt: number;
}

export interface TaskRecord {
  task: Task;
  /** Sequence number of the last event applied to `task`. */
  version: number;
  /** Epoch milliseconds (the store's clock). */
  createdAt: number;
  updatedAt: number;
  /**
   * The principal the task belongs to: the `owner` of the commit that created it, never changed
   * since. Present exactly when the task has one; a task created without an owner (and every task
   * stored before owners existed) has no `owner` property at all, not `null`, so its record reads
   * back as it did before. Stores record it and return it; deciding who may see the task is the
   * runtime's job.
   */
  owner?: string;
  /**
   * The W3C trace context (`traceparent` value) of the commit that last changed the task, as that
   * commit's {@link CommitRequest.traceContext} gave it; absent when it gave none. Work another
   * worker does for the task later (its push notifications) joins that trace. Stores keep it
   * opaque.
   */
  traceContext?: string;
}

export interface CommitRequest {
  taskId: string;
  /** The version the caller read; 0 creates the task. */
  expectedVersion: number;
  /**
   * The principal on whose behalf the commit is made (an authenticated caller's id), or absent for
   * none (an open agent, or a write of the runtime's own). A non-empty string.
   *
   * Two things follow from it:
   * - A commit that creates the task (`expectedVersion: 0`) stores it as the task's
   *   {@link TaskRecord.owner}, for good: the `owner` of later commits never changes it (nor
   *   removes it), whoever makes them. Checking that the caller may write the task is the
   *   runtime's job, before it commits.
   * - The user message ids the commit indexes go into this owner's scope of the message index
   *   (absent: the anonymous scope, distinct from every principal's). See
   *   {@link CoordinationStore.findMessage}.
   */
  owner?: string;
  /** The snapshot after applying `events`. */
  task: Task;
  /** At least one event; they get sequence numbers expectedVersion+1, expectedVersion+2, … */
  events: TaskEvent[];
  /**
   * Also appends a turn of this task to its context's queue, in the same transaction (the slot's
   * `taskId` and `contextId` are the task's): the same as {@link CoordinationStore.enqueueTurn}
   * right before the commit, in one round trip. A refused commit enqueues nothing.
   */
  enqueueTurn?: { messageId: string; workerId: string };
  /**
   * Also removes this slot from its queue, in the same transaction: the turn ended with these
   * events (its final status, or its turn end). It must be a slot of this task. Subscribers of
   * the task hear of the commit as usual, which is what a turn waiting behind this one waits for.
   * A refused commit removes nothing.
   */
  finishTurn?: QueueSlot;
  /**
   * No other process can be listening for this task yet: its id has not been shown outside the
   * caller's process (the runtime sets it on the commit that creates a task, whose id it generated
   * and has told no one). A store may then skip telling other processes of this commit (the
   * Postgres store sends no NOTIFY for it); subscribers on this store instance are told as usual,
   * and the commit is the same in every other way. Anyone who learns of the task later reads its
   * log, which has the commit.
   */
  unknownElsewhere?: boolean;
  /**
   * The W3C trace context (a `traceparent` value) of the request making this commit, when it is
   * traced: the store keeps it with the task, replacing the previous commit's (a commit without one
   * clears it), and returns it as {@link TaskRecord.traceContext}. At most 256 characters.
   */
  traceContext?: string;
  /**
   * The caller hands `task` and `events` over: it never mutates them (nor anything they reference)
   * after this call, so a store that keeps objects (the memory store) may keep these instead of
   * copying them. Stores that serialise ignore it. The runtime sets it; its snapshots are built
   * copy-on-write and never changed once made.
   */
  transfer?: boolean;
}

/** How a caller of {@link TaskStore.readEvents} uses what it reads. */
export interface ReadEventsOptions {
  /**
   * The caller never mutates the events it gets (nor anything they reference): a store that keeps
   * event objects may then return its own instead of copies, and several readers the same objects
   * (the memory store does; a SQL store's `RecentEvents` hands a committed object to its first
   * shared reader). Without it, every answer is the caller's own copy. The runtime's streams set
   * it when their consumer has said it only reads frames (issue 30: one copy less per event and
   * per stream).
   */
  shared?: boolean;
}

export interface CommitResult {
  /** The task's version after the commit: the sequence number of its last event. */
  version: number;
  /** The slot `enqueueTurn` added (not yet known to be ready: ask {@link CoordinationStore.turnReadiness}). */
  turn?: QueueSlot;
}

export interface ContextRecord {
  contextId: string;
  /** The agent's own state for this conversation, any JSON value (e.g. an upstream conversation id). */
  state: unknown;
  updatedAt: number;
}

export interface ListTasksOptions {
  /** At most this many, oldest first. */
  limit?: number;
}

/**
 * Where a page of {@link TaskStore.listTasks} ended: the sort key of its last task. The next page
 * starts strictly after it in list order. A key, not a position, so tasks created or purged
 * between two page reads shift nothing (keyset pagination).
 */
export interface TaskListCursor {
  /** The task's status timestamp as the store sorted it (see {@link statusTimestampOf}): an integer. */
  statusTimestamp: number;
  taskId: string;
}

/**
 * What {@link TaskStore.listTasks} selects. Filters combine with AND; a filter left out selects
 * every task.
 */
export interface TaskListQuery {
  /** Only tasks of this context (exact, case-sensitive match). */
  contextId?: string;
  /** Only tasks whose current `status.state` is this. */
  state?: TaskState;
  /**
   * Only tasks whose status timestamp, in epoch milliseconds (an integer), is at or after this
   * value (≥, A2A 1.0 ListTasksRequest `statusTimestampAfter`). A task without a status timestamp
   * never matches it.
   */
  statusTimestampAfter?: number;
  /**
   * Only tasks of this owner ({@link TaskRecord.owner}, exact, case-sensitive match); `null`: only
   * tasks without an owner; left out: tasks of any owner or none. The runtime sets it to the
   * caller's principal id so that an authenticated caller lists only its own tasks.
   */
  owner?: string | null;
  /** At most this many records: an integer ≥ 1 (the runtime passes 1 to 100). */
  limit: number;
  /** Start strictly after this key (the `next` of the previous page); the first page without it. */
  after?: TaskListCursor;
}

export interface TaskListPage {
  /** The matching tasks after `after`, in list order, at most `limit`. */
  records: TaskRecord[];
  /** How many tasks match the filters, ignoring `after` and `limit` (A2A `totalSize`). */
  total: number;
  /**
   * The key of the last record, present exactly when more matching tasks follow it (at the time
   * of the read); absent on the last page, so a reader never fetches an empty page to learn it.
   */
  next?: TaskListCursor;
}

export interface PurgeResult {
  tasks: number;
  contexts: number;
}

/** What {@link TaskStore.listInterruptedTasks} selects. */
export interface InterruptedTasksQuery {
  /** Only tasks whose status timestamp ({@link statusTimestampOf}) is strictly before this, in epoch ms. */
  before: number;
  /** At most this many records: an integer ≥ 1. */
  limit: number;
}

export type Unsubscribe = () => void;

export interface TaskStore {
  /**
   * Atomically checks the task's version, stores the new snapshot and appends the events.
   * `expectedVersion: 0` creates the task, owned by `request.owner` when given, and fails if it
   * exists. In the same transaction it indexes user message ids in the scope of `request.owner`,
   * each with its {@link messageDigest} (see {@link CoordinationStore.findMessage}), and enqueues or
   * finishes a turn when asked to.
   * @returns the new version (and the enqueued slot); read the stored events with `readEvents`.
   * @throws {VersionConflictError} when the task's version is not `expectedVersion`
   *   (including: creating a task that exists, or updating one that does not).
   * @throws {DuplicateMessageError} when a user message id in `events` is already indexed in the
   *   scope of `request.owner` (for this or another task), or repeats within `events`; nothing is
   *   written. The same id in another owner's scope is no conflict.
   * @throws {A2AError} `INTERNAL` for an empty `events` list, a snapshot whose id is not `taskId`,
   *   a `finishTurn` slot of another task, or an `owner` that is not a non-empty string.
   */
  commit(request: CommitRequest, ctx?: StoreCallContext): Promise<CommitResult>;

  /**
   * The task with its version (and its `owner`, when it has one), or `undefined` when it does not
   * exist (or was purged).
   */
  getTask(taskId: string, ctx?: StoreCallContext): Promise<TaskRecord | undefined>;

  /**
   * The current version of each of `taskIds` that exists; ids of unknown (or purged) tasks are not
   * in the map. One round trip for any number of tasks: the runtime's safety poll of every stream
   * a process serves uses it.
   */
  getVersions(taskIds: readonly string[], ctx?: StoreCallContext): Promise<Map<string, number>>;

  /**
   * Events with `seq > afterSeq` in sequence order (at most `limit`); `[]` for an unknown task.
   * Where several instances write one log, an instance may answer from the events it committed
   * itself (see `RecentEvents`): the answer may then stop before events other instances committed
   * after them, but never before a version this instance has reported (in a task record, by
   * `getVersions`, a version conflict or a notification), and `[]` always means the log has
   * nothing after `afterSeq`. A reader that must reach the log's end reads until it gets `[]`, as
   * the followers do.
   *
   * The events are the caller's to change, unless `options.shared` says the caller never will.
   */
  readEvents(
    taskId: string,
    afterSeq: number,
    limit?: number,
    ctx?: StoreCallContext,
    options?: ReadEventsOptions,
  ): Promise<StoredEvent[]>;

  /** Tasks of one context (of every owner), oldest first; `[]` for an unknown context. */
  listTasksByContext(contextId: string, options?: ListTasksOptions, ctx?: StoreCallContext): Promise<TaskRecord[]>;

  /**
   * Tasks (of every owner) whose state is neither terminal nor interrupted (§6.3): submitted,
   * working, unknown.
   */
  listActiveTasks(ctx?: StoreCallContext): Promise<TaskRecord[]>;

  /**
   * One page of the tasks matching `query` (A2A 1.0 ListTasks), present when `supports.listTasks`.
   *
   * Order: newest status timestamp first ({@link statusTimestampOf}, the current snapshot's
   * `status.timestamp`); equal timestamps by task id, descending, comparing code points (UTF-8
   * byte order: what SQL's binary / "C" collation gives, not a locale's order). Tasks without a
   * status timestamp come last ({@link NO_STATUS_TIMESTAMP}), also ordered by id. The order is total
   * and the same in every store, so a cursor means the same thing everywhere.
   *
   * Paging: `after` is a key, so a page never repeats or skips a task because others were created
   * or purged since the previous page (created tasks usually sort before the cursor, where the
   * reader already was, and are simply not in this listing). A task whose status changes between
   * two page reads moves to its new place: a newer timestamp moves it ahead of the cursor, so it is
   * not listed again (and is missed, if the reader had not reached it yet); only a timestamp that
   * moves back (clocks of two workers disagreeing) can list it twice. Each page (records, total and
   * next) is read at one point in time.
   *
   * Edge cases: an unknown context, a state no task is in, or a cursor past the end give
   * `{ records: [], total }` (with the total of the filters, 0 for an unknown context) and no
   * `next`. A cursor naming a task that no longer exists still works: it is only a key. `limit`
   * larger than what matches returns what matches.
   *
   * Scope: only this store's namespace, and, when `query.owner` is given, only the tasks of that
   * owner (or, for `null`, only those without one); `total` counts the same tasks. The store reads
   * the owner from the query, never from `ctx.principal`: which tasks a caller may list is the
   * runtime's decision. With `owner` the page is still one index range in the SQL stores.
   *
   * Records are copies, like getTask's; trimming history and artifacts is the caller's job.
   */
  listTasks?(query: TaskListQuery, ctx?: StoreCallContext): Promise<TaskListPage>;

  /**
   * Tasks (of every owner) waiting in an interrupted state (§6.3: input-required, auth-required)
   * since before `query.before`: their status timestamp ({@link statusTimestampOf}) is strictly
   * less. Oldest first, equal timestamps by task id ascending (code points), at most `query.limit`.
   * A task without a status timestamp never matches (its age is unknown). Only this store's
   * namespace. Present when `supports.interruptedTasks`; the runtime's interrupted-task expiry
   * reads it, then ends each task with a version-checked commit (so a task answered meanwhile, or
   * expired by another worker, is left alone). The SQL stores read it from the index on
   * (state, status timestamp) that ListTasks uses. Records are copies.
   */
  listInterruptedTasks?(query: InterruptedTasksQuery, ctx?: StoreCallContext): Promise<TaskRecord[]>;
}

export interface ContextStore {
  /** The context's state, or `undefined` when none was ever set (or it was purged). */
  getContext(contextId: string, ctx?: StoreCallContext): Promise<ContextRecord | undefined>;
  /** Creates or replaces the context's state. */
  setContext(contextId: string, state: unknown, ctx?: StoreCallContext): Promise<void>;
}

/** Delivery of "task X has events up to seq N" to live subscribers, in-process or across processes. */
export interface EventNotifier {
  /**
   * Calls `listener` with a sequence number after events of `taskId` are committed (by this process
   * or, when `supports.crossProcess`, by any). Notifications may be coalesced, repeated or arrive
   * late: subscribers read the log with `readEvents` and never trust a notification for content.
   */
  subscribe(taskId: string, listener: (seq: number) => void): Unsubscribe;

  /**
   * Calls `listener` with a task id and a sequence number after events of any task of this
   * namespace are committed (by this process or, when `supports.crossProcess`, by any), with the
   * same looseness as {@link subscribe}: coalesced, repeated, late, and seq 0 meaning only "look
   * again". A commit the store was told no other process can know of
   * ({@link CommitRequest.unknownElsewhere}) may reach other processes' listeners only with the
   * task's next commit. Notifications lost while a store could not listen (a dropped LISTEN
   * connection) are not replayed: a reader that must see every change reads the store again after
   * {@link subscribeAll} listeners are told `('', 0)`, which a store sends when it may have missed
   * some. Present when `supports.cluster`.
   */
  subscribeAll?(listener: (taskId: string, seq: number) => void): Unsubscribe;
}

/** Whether `store` declares push support: then it has every {@link PushStore} method. */
export function hasPushStore<S extends A2AStore>(store: S): store is S & PushStore {
  return store.supports.push === true;
}

export interface A2AStore
  extends TaskStore,
    ContextStore,
    EventNotifier,
    CoordinationStore,
    // Optional, like `listTasks`: a store written before push existed still satisfies the contract.
    Partial<PushStore> {
  readonly supports: StoreCapabilities;
  /**
   * The agent namespace this instance reads and writes, on a store whose `supports.namespaces` is
   * true; undefined on a store that keeps one agent's data only.
   */
  readonly namespace?: string;
  /** Connects and migrates; idempotent. The runtime calls it before first use. */
  open(): Promise<void>;
  /** Releases what the store created (a pool it was given stays open). Idempotent. */
  close(): Promise<void>;
  /** Resolves when the backing storage answers; rejects with an Error saying why otherwise. */
  ping(): Promise<void>;
  /**
   * Whether the store's cross-process notifications are being received now (a Postgres store's
   * LISTEN connection is up), for readiness checks. Absent on a store with nothing to connect (the
   * memory store; SQLite polls its file).
   */
  readonly notificationsConnected?: boolean;
  /**
   * Deletes terminal tasks (with their events, indexed message ids, and push configs with their
   * delivery state, in the same transaction) last updated strictly before `cutoff` (epoch ms), and
   * contexts that no longer have any task and were last updated before `cutoff`.
   */
  purgeExpired(cutoff: number, ctx?: StoreCallContext): Promise<PurgeResult>;
}
