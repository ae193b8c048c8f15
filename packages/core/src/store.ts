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

import { hash } from 'node:crypto';
import type { CoordinationStore, TurnTicket } from './coordination.js';
import { A2AError } from './errors.js';
import type { Message, PushNotificationConfig, Task, TaskEvent, TaskState } from './model/types.js';
import type { CallContext, Principal } from './protocol/context.js';

export type { TaskEvent, TurnEndEvent } from './model/types.js';

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
   * Also appends a turn of this task to its context's queue, in the same transaction (the ticket's
   * `taskId` and `contextId` are the task's): the same as {@link CoordinationStore.enqueueTurn}
   * right before the commit, in one round trip. A refused commit enqueues nothing.
   */
  enqueueTurn?: { turnId: string; workerId: string };
  /**
   * Also removes this ticket from its queue, in the same transaction: the turn ended with these
   * events (its final status, or its turn end). It must be a ticket of this task. Subscribers of
   * the task hear of the commit as usual, which is what a turn waiting behind this one waits for.
   * A refused commit removes nothing.
   */
  finishTurn?: TurnTicket;
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

export interface CommitResult {
  /** The task's version after the commit: the sequence number of its last event. */
  version: number;
  /** The ticket `enqueueTurn` added (not yet known to be ready: ask {@link CoordinationStore.turnReadiness}). */
  turn?: TurnTicket;
}

export interface ContextRecord {
  contextId: string;
  /** The agent's own state for this conversation, any JSON value (e.g. an upstream conversation id). */
  state: unknown;
  updatedAt: number;
}

/**
 * Per-call information a store may use: cancellation, and the caller on whose behalf it is called
 * (the runtime passes the principal and tenant of the request it serves). Optional in every call.
 */
export interface StoreCallContext {
  signal?: AbortSignal;
  principal?: Principal;
  tenant?: string;
}

/**
 * The store context of a call: its principal and tenant (undefined when it has neither, the common
 * case, so that costs nothing). The request's stream signal is not passed: a turn's writes must go
 * on when the client that sent its message goes away.
 */
export function storeContextOf(ctx: CallContext): StoreCallContext | undefined {
  const { principal, tenant } = ctx;
  if (principal === undefined && tenant === undefined) return undefined;
  const storeContext: StoreCallContext = {};
  if (principal !== undefined) storeContext.principal = principal;
  if (tenant !== undefined) storeContext.tenant = tenant;
  return storeContext;
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

/**
 * The sort key {@link TaskStore.listTasks} uses for a task without a status timestamp, or with
 * one `Date.parse` cannot read: below every date (`Date` ends at ±8.64e15 ms), so such tasks sort
 * after all others and no `statusTimestampAfter` selects them. A number rather than SQL NULL, so
 * the keyset comparison and its index need no special case.
 */
export const NO_STATUS_TIMESTAMP: number = Number.MIN_SAFE_INTEGER;

/**
 * A task's status timestamp as listTasks sorts and filters it: `status.timestamp` (ISO 8601) in
 * epoch milliseconds, or {@link NO_STATUS_TIMESTAMP}. Stores compute it with this function when
 * they commit, so every adapter agrees on the order.
 */
export function statusTimestampOf(task: { status: { timestamp?: string | undefined } }): number {
  const timestamp = task.status.timestamp;
  const parsed = typeof timestamp === 'string' ? Date.parse(timestamp) : Number.NaN;
  return Number.isFinite(parsed) ? parsed : NO_STATUS_TIMESTAMP;
}

export interface PurgeResult {
  tasks: number;
  contexts: number;
}

/**
 * What a store can do, as data (abstract-level's manifest). The conformance suite skips a module
 * only when the store declares the capability false; users read it too.
 */
export interface StoreCapabilities {
  /** Data survives close() and a new instance on the same location. */
  durable: boolean;
  /** Events committed by one process reach subscribers in another. */
  crossProcess: boolean;
  /** purgeExpired() deletes terminal tasks and their contexts. */
  ttl: boolean;
  /** Several agents (namespaces) can share one database without seeing each other. */
  namespaces: boolean;
  /**
   * listTasks() pages through all tasks (A2A ListTasks). Optional, so a store written before it
   * existed still satisfies the contract: absent means false.
   */
  listTasks?: boolean;
  /**
   * The {@link PushStore} methods are present: push notification configs kept with their task, and
   * the delivery state (cursor, retries, claims) the push delivery job works from. Optional like
   * `listTasks`: absent means false.
   */
  push?: boolean;
  /**
   * listInterruptedTasks() finds interrupted tasks by age, for the runtime's `interruptedExpiry`.
   * Optional like `listTasks`: absent means false (the runtime then refuses the option).
   */
  interruptedTasks?: boolean;
  /**
   * The cluster-wide view an operator's monitor reads is present: {@link CoordinationStore.joinWorker},
   * {@link CoordinationStore.listWorkers} and {@link EventNotifier.subscribeAll}. Optional like
   * `listTasks`: absent means false.
   */
  cluster?: boolean;
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
   * @returns the new version (and the enqueued ticket); read the stored events with `readEvents`.
   * @throws {VersionConflictError} when the task's version is not `expectedVersion`
   *   (including: creating a task that exists, or updating one that does not).
   * @throws {DuplicateMessageError} when a user message id in `events` is already indexed in the
   *   scope of `request.owner` (for this or another task), or repeats within `events`; nothing is
   *   written. The same id in another owner's scope is no conflict.
   * @throws {A2AError} `INTERNAL` for an empty `events` list, a snapshot whose id is not `taskId`,
   *   a `finishTurn` ticket of another task, or an `owner` that is not a non-empty string.
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

  /** Events with `seq > afterSeq` in sequence order (at most `limit`); `[]` for an unknown task. */
  readEvents(taskId: string, afterSeq: number, limit?: number, ctx?: StoreCallContext): Promise<StoredEvent[]>;

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

// ---- Push notifications (A2A 0.3 §6.8–6.10, §9.5; A2A 1.0 TaskPushNotificationConfig) ----

/** Which A2A version a config was set with; it decides the form of the notifications' bodies. */
export type PushProtocolVersion = '0.3' | '1.0';

/**
 * A push notification config as stored: the model's {@link PushNotificationConfig} with its `id`
 * required. The runtime assigns an id when the client gave none, so every stored config has one.
 * Both token shapes are kept as given: the top-level `token` (sent back as
 * `X-A2A-Notification-Token`) and `authentication` (`schemes`, and `credentials` when given).
 */
export interface StoredPushConfig extends PushNotificationConfig {
  id: string;
}

/** What {@link PushStore.savePushConfig} stores. */
export interface SavePushConfigRequest {
  taskId: string;
  /** Its `id` names the config within the task; saving the same id again replaces it. */
  config: StoredPushConfig;
  /** The A2A version of the call that set it: the delivery job writes that version's payload. */
  protocolVersion: PushProtocolVersion;
}

export interface PushConfigRecord {
  taskId: string;
  config: StoredPushConfig;
  protocolVersion: PushProtocolVersion;
  /** When the config was first saved, in epoch ms (the store's clock); a replace keeps it. */
  createdAt: number;
  /** When it was last saved (the store's clock). */
  updatedAt: number;
}

/**
 * Where the delivery of one config of one task stands. Fields without a value are `null` (not
 * left out), so a row of any store reads back the same.
 */
export interface PushDeliveryState {
  /**
   * The task version (the seq of its last event) whose state was last delivered; 0 until the first
   * successful POST. The delivery is due whenever the task's version is above it.
   */
  cursor: number;
  /** Failed attempts since the last success (0 after a success and for a new config). */
  attempts: number;
  /**
   * Not before this instant (epoch ms); `null`: as soon as there is something to deliver. After a
   * success it is the end of the throttle window the job asked for (`attempts` is then 0), after
   * a failure the time of the retry (`attempts` ≥ 1). See {@link PushStore.claimPushDeliveries}
   * for what each holds back.
   */
  nextAttemptAt: number | null;
  /** When the last successful POST was sent (the job's `sentAt`); `null` before the first. */
  lastSentAt: number | null;
  /** True once the job gave up (the last retry failed): never claimed again until the config is saved anew. */
  failed: boolean;
  /** What went wrong in the last failed attempt; `null` after a success. */
  lastError: string | null;
  /** The HTTP status of the last attempt, when it got an answer. */
  lastStatus: number | null;
  /** The worker holding the claim, or `null` when nobody does. */
  claimedBy: string | null;
  /** The id of the current claim (see {@link PushClaimKey}), or `null`. */
  claimId: string | null;
  /** When the current claim ends (epoch ms): another worker may take it over after this. */
  claimUntil: number | null;
}

/** One config of one task with its delivery state, and the task's current version. */
export interface PushDelivery {
  config: PushConfigRecord;
  state: PushDeliveryState;
  /** The task's version when this was read: `taskVersion - state.cursor` events are undelivered. */
  taskVersion: number;
}

/**
 * The claim a worker acts on: {@link PushStore.completePushDelivery}, `failPushAttempt`,
 * `releasePushClaim`. A claim is held from the claim until it is completed, failed or released, or
 * until another worker takes the delivery over once `claimUntil` has passed: an expired claim
 * nobody took yet is still held (its worker was only slow, and nobody else POSTed meanwhile).
 */
export interface PushClaimKey {
  taskId: string;
  configId: string;
  /**
   * The `state.claimId` of the claimed delivery. A fresh id per claim (a fencing token): a worker
   * whose claim was taken over, or whose config was replaced or deleted, holds an id the store no
   * longer has, even if it claimed the same delivery again since, so its late writes are refused.
   * Comparing worker ids would not do: the same worker may hold the delivery again by then.
   */
  claimId: string;
}

export interface ClaimPushDeliveriesRequest {
  /** The claiming worker, recorded as `claimedBy` (what {@link PushStore.renewPushClaims} renews). */
  workerId: string;
  /** The caller's clock (epoch ms): what is due, and which claims have expired, is judged by it. */
  now: number;
  /** The end of the claims taken (epoch ms), normally `now` plus the claim TTL. */
  claimUntil: number;
  /** At most this many deliveries: an integer ≥ 1. */
  limit: number;
}

export interface CompletePushDeliveryRequest extends PushClaimKey {
  /**
   * The task version whose state was POSTed: the version of the snapshot sent (it may be above the
   * claim's `taskVersion` when the task moved since). The cursor never moves back: a lower value
   * leaves it where it is.
   */
  cursor: number;
  /** When the POST was sent (epoch ms, the job's clock): becomes `lastSentAt`. */
  sentAt: number;
  /** The end of the throttle window (epoch ms); absent or `null` for none. */
  nextAttemptAt?: number | null;
  /** The HTTP status the webhook answered. */
  status?: number;
}

export interface FailPushAttemptRequest extends PushClaimKey {
  /**
   * When to try again (epoch ms, the job's backoff); `null` gives up: the delivery is `failed` and
   * never claimed again.
   */
  nextAttemptAt: number | null;
  /** Why the attempt failed, for monitoring (it is listed, and may name hosts: never show it to clients). */
  error: string;
  /** The HTTP status, when the webhook answered (a 5xx, a 429…). */
  status?: number;
}

/** What {@link PushStore.listPushDeliveries} lists. Filters combine with AND. */
export interface PushDeliveryFilter {
  /** Only this task's configs. */
  taskId?: string;
  /** Only failed (`true`) or only not failed (`false`) deliveries. */
  failed?: boolean;
  /** At most this many. */
  limit?: number;
}

/**
 * Push notification configs and the state of their delivery, present when `supports.push`.
 *
 * Configs belong to their task: several per task, each named by its `id` (A2A 0.3 §6.8 and 1.0
 * allow several; the client chooses the id or the runtime does). They live as long as the task:
 * {@link A2AStore.purgeExpired} (and a memory store's eviction) removes a task's configs and their
 * delivery state in the same transaction as the task, and a task created again under the same id
 * starts without any. Secrets (`token`, `authentication.credentials`) are stored as given;
 * encrypting them at rest is the database's job.
 *
 * The event log is the outbox. Each (task, config) has a delivery state ({@link PushDeliveryState})
 * whose `cursor` says which task version was last delivered; a delivery is due while the task's
 * version is above it. A worker claims due deliveries (a lease, like the worker leases of
 * {@link CoordinationStore}), POSTs the task's current state, and completes (the cursor moves up) or
 * fails (a retry later, or `failed`). One claim at a time per delivery, so POSTs of one config go
 * out one after another, in version order; a worker that dies leaves its claims to expire, and
 * another worker takes them over at the cursor: at least once, never silently dropped.
 *
 * Every method is scoped to the store's namespace, like the rest of the contract. Data is copied
 * in and out.
 */
export interface PushStore {
  /**
   * Inserts the config, or replaces the one with the same (task, config id).
   *
   * Its delivery starts afresh, for a new config and for a replaced one alike: cursor 0, no
   * attempts, not failed, no error, no claim. Cursor 0 rather than the task's version at save
   * time, so the first POST carries the task's current state, the state after the config was
   * set, and nothing is missed when the task moved (or ended) between the call that created it and
   * this save (a `message/send` with a config races the agent's first events). A replace is a new
   * start on purpose: it is how a client points a failing config at a fixed URL or rotates its
   * token, and it drops the claim of a worker still POSTing with the old one (that worker's
   * complete is refused). A replace keeps `createdAt`, and so its place in the lists.
   *
   * @returns the stored record (`createdAt`, `updatedAt` from the store's clock).
   * @throws {A2AError} `TASK_NOT_FOUND` when the task does not exist (or was purged); nothing is
   *   stored. Checked in the same transaction as the write, so a config never outlives its task.
   * @throws {A2AError} `INTERNAL` for a malformed request (see {@link checkPushConfigRequest}).
   */
  savePushConfig(request: SavePushConfigRequest, ctx?: StoreCallContext): Promise<PushConfigRecord>;

  /** The config, or `undefined` when the task has no config with that id (or no such task). */
  getPushConfig(taskId: string, configId: string, ctx?: StoreCallContext): Promise<PushConfigRecord | undefined>;

  /** The task's configs, oldest first (by `createdAt`, then save order); `[]` for an unknown task. */
  listPushConfigs(taskId: string, ctx?: StoreCallContext): Promise<PushConfigRecord[]>;

  /**
   * Deletes the config and its delivery state; a claim on it is gone too (its holder's complete is
   * refused).
   * @returns whether there was such a config.
   */
  deletePushConfig(taskId: string, configId: string, ctx?: StoreCallContext): Promise<boolean>;

  /**
   * Atomically claims up to `limit` deliveries that have work now, for `workerId` until
   * `claimUntil`, each with a fresh `claimId`. A delivery is claimed when all hold:
   * - it is not `failed`;
   * - nobody holds its claim, or the claim ended strictly before `now` (`claimUntil < now`, the
   *   rule of worker leases): a dead worker's claims are taken over once they expire;
   * - its task's version is above its cursor (a failed attempt leaves the cursor behind, so a
   *   retry is this case too);
   * - `nextAttemptAt` is `null` or ≤ `now`, with one exception: the throttle window (the wait
   *   after a success, `attempts` 0) does not hold back a task whose state is terminal or
   *   interrupted (A2A §6.3): that state goes out at once. A retry wait (`attempts` ≥ 1) holds
   *   back everything.
   *
   * Of several concurrent claimants (calls on one instance, instances on one database) exactly one
   * gets each delivery. The order of the claims is left open.
   *
   * @returns the claimed deliveries with their config, their state (now showing the claim) and the
   *   task's version; `[]` when nothing has work.
   */
  claimPushDeliveries(request: ClaimPushDeliveriesRequest, ctx?: StoreCallContext): Promise<PushDelivery[]>;

  /**
   * Moves the end of every claim `workerId` still holds to `claimUntil` (a heartbeat while slow
   * POSTs run). A claim that expired but was not taken over yet is still held, and renewed.
   * @returns how many claims were renewed.
   */
  renewPushClaims(workerId: string, claimUntil: number, ctx?: StoreCallContext): Promise<number>;

  /**
   * Records a successful POST and releases the claim: the cursor moves up to `cursor`, `attempts`
   * goes back to 0, `lastSentAt` is `sentAt`, `lastError` is cleared, `lastStatus` is `status`,
   * and `nextAttemptAt` is the throttle window's end (or `null`).
   * @returns false, writing nothing, when the claim is no longer held: taken over by another
   *   worker, released, or its config replaced or deleted (or its task purged).
   */
  completePushDelivery(request: CompletePushDeliveryRequest, ctx?: StoreCallContext): Promise<boolean>;

  /**
   * Records a failed attempt and releases the claim: `attempts` grows by one (the store counts),
   * `lastError` and `lastStatus` (or `null`) are recorded, the cursor stays. With a `nextAttemptAt`
   * the delivery is due again then; with `null` it is `failed`: listed, never claimed again.
   * @returns false, writing nothing, when the claim is no longer held (as for complete).
   */
  failPushAttempt(request: FailPushAttemptRequest, ctx?: StoreCallContext): Promise<boolean>;

  /**
   * Gives the claim back without an attempt (a worker shutting down): the delivery is claimable
   * again at once, its state otherwise unchanged.
   * @returns false when the claim was not held (nothing changes).
   */
  releasePushClaim(key: PushClaimKey, ctx?: StoreCallContext): Promise<boolean>;

  /**
   * Deliveries with their state, for monitoring: failed ones included, claims shown. Oldest config
   * first (by `createdAt`, then save order).
   */
  listPushDeliveries(filter?: PushDeliveryFilter, ctx?: StoreCallContext): Promise<PushDelivery[]>;
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

/** Clock injected into stores and the runtime so tests control time without sleeping. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

/**
 * The checks every store makes on a commit request before touching its data; stores call it so
 * that they refuse the same requests with the same messages.
 * @throws {A2AError} `INTERNAL` naming what is wrong with the request.
 */
export function checkCommitRequest(request: CommitRequest, storeName: string): void {
  const problem = commitRequestProblem(request);
  if (problem !== undefined) {
    throw new A2AError('INTERNAL', `${storeName}: commit() for task "${request.taskId}" ${problem}.`, {
      data: { taskId: request.taskId },
    });
  }
}

function commitRequestProblem(request: CommitRequest): string | undefined {
  const { taskId, expectedVersion, task, events, finishTurn, owner } = request;
  if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 0) {
    return `needs expectedVersion to be an integer >= 0, got ${String(expectedVersion)}`;
  }
  // The empty string is refused so that no principal can share the anonymous scope of the
  // message index, which the SQL stores key as ''.
  if (owner !== undefined && (typeof owner !== 'string' || owner === '')) {
    return `got owner ${JSON.stringify(owner) ?? String(owner)}; pass the principal's id (a non-empty string), or leave owner out for none`;
  }
  if (!Array.isArray(events) || events.length === 0) return 'has no events; send at least one';
  const { traceContext } = request;
  if (traceContext !== undefined && (typeof traceContext !== 'string' || traceContext.length > 256)) {
    return 'got a traceContext that is not a string of at most 256 characters (a W3C traceparent); leave it out for none';
  }
  if (task?.id !== taskId) return `carries the snapshot of task "${String(task?.id)}"; they must match`;
  if (finishTurn !== undefined && (finishTurn.taskId !== taskId || finishTurn.contextId !== task.contextId)) {
    return `was asked to finish a turn of task "${finishTurn.taskId}" in context "${finishTurn.contextId}"; only a turn of this task can end with its commit`;
  }
  return undefined;
}

/**
 * The user messages a commit indexes (see {@link CoordinationStore.findMessage}), in event order:
 * every `message` event, and the first history message of a `task` event when the user sent it.
 */
function indexedMessageList(events: readonly TaskEvent[]): Message[] {
  const messages: Message[] = [];
  for (const event of events) {
    if (event.kind === 'message') messages.push(event);
    else if (event.kind === 'task' && event.history?.[0]?.role === 'user') messages.push(event.history[0]);
  }
  return messages;
}

/** The ids of the user messages a commit indexes, in event order (see {@link indexedMessages}). */
export function indexedMessageIds(events: readonly TaskEvent[]): string[] {
  return indexedMessageList(events).map((message) => message.messageId);
}

/** One entry a commit adds to the message index. */
export interface IndexedMessage {
  messageId: string;
  /** {@link messageDigest} of the message. */
  digest: string;
}

/**
 * The user messages a commit indexes (see {@link CoordinationStore.findMessage}), in event order,
 * each with its {@link messageDigest}: every `message` event, and the first history message of a
 * `task` event when the user sent it. Stores call it at commit so that they all index the same
 * messages with the same digests.
 */
export function indexedMessages(events: readonly TaskEvent[]): IndexedMessage[] {
  return indexedMessageList(events).map((message) => ({
    messageId: message.messageId,
    digest: messageDigest(message),
  }));
}

/**
 * A digest of what a message says: SHA-256, in lower-case hex, of the canonical JSON of its
 * `role`, `parts`, `metadata`, `extensions` and `referenceTaskIds` (those present).
 *
 * Not of `messageId`, `taskId`, `contextId` or `kind`: a retried message that started a new task
 * carries no `taskId` or `contextId`, while the copy the store indexed has the ids the runtime
 * generated, and both must digest the same; the message id is the key the digest is looked up
 * by. So a runtime can tell a retry (same id, same digest) from a client reusing an id for
 * another message (same id, other digest).
 *
 * Canonical JSON: the JSON value (what `JSON.stringify` would keep: a `Date` as its ISO string,
 * no `undefined` properties) written with object keys sorted by UTF-16 code units and no
 * whitespace, as RFC 8785 (JCS) does, so key order never changes the digest. The same message
 * read back from any store digests the same.
 * @throws {TypeError} for what JSON cannot carry (a BigInt, a cycle), as `JSON.stringify` does.
 */
export function messageDigest(message: Message): string {
  // Written straight from the message, with JSON's rules, rather than from a JSON copy of it: the
  // digest is taken once per message sent, on the hot path of every message/send. The members are
  // written in their sorted order, without an object to sort them out of.
  const ancestors: object[] = [];
  let text = '{';
  for (const key of DIGESTED_FIELDS) {
    const member = canonicalJson(message[key], ancestors);
    if (member !== undefined) text += text.length === 1 ? `"${key}":${member}` : `,"${key}":${member}`;
  }
  return hash('sha256', `${text}}`, 'hex');
}

/** The fields {@link messageDigest} covers, in the order canonical JSON writes them (sorted). */
const DIGESTED_FIELDS = ['extensions', 'metadata', 'parts', 'referenceTaskIds', 'role'] as const;

/** What JSON.stringify escapes in a string: a quote, a backslash, a control character, a surrogate (when lone). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `JSON.stringify(text)`, without its cost for the usual string that needs no escape. */
function jsonString(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/**
 * Sorts keys by UTF-16 code units, as `Array.prototype.sort` does by default, in place: insertion
 * sort for the few keys an object of a message usually has (the default sort's string conversions
 * cost more than the sorting there).
 */
function sortKeys(keys: string[]): void {
  if (keys.length > 16) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = key;
  }
}

/**
 * `value` as JSON text with object keys sorted by UTF-16 code units and no whitespace; undefined
 * where JSON.stringify leaves the value out (undefined, a function, a symbol), so that the caller
 * drops the member (or writes null in an array). `toJSON` is honoured, as JSON.stringify does.
 * @throws {TypeError} for a BigInt (from JSON.stringify) or a cycle (`ancestors` holds the path).
 */
function canonicalJson(input: unknown, ancestors: object[]): string | undefined {
  let value = input;
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  if (typeof value === 'string') return jsonString(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (ancestors.includes(value)) throw new TypeError('Converting circular structure to JSON');
  ancestors.push(value);
  let text: string;
  if (Array.isArray(value)) {
    text = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) text += ',';
      text += canonicalJson(value[i], ancestors) ?? 'null';
    }
    text += ']';
  } else {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object);
    sortKeys(keys);
    text = '{';
    for (const key of keys) {
      const member = canonicalJson(object[key], ancestors);
      if (member !== undefined)
        text += text.length === 1 ? `${jsonString(key)}:${member}` : `,${jsonString(key)}:${member}`;
    }
    text += '}';
  }
  ancestors.pop();
  return text;
}

/**
 * The checks every store makes on a push config before saving it, so that they refuse the same
 * requests with the same messages. The runtime validates what clients send; this guards against
 * its own bugs (a config without an id would be impossible to address).
 * @throws {A2AError} `INTERNAL` naming what is wrong with the request.
 */
export function checkPushConfigRequest(request: SavePushConfigRequest, storeName: string): void {
  const problem = pushConfigRequestProblem(request);
  if (problem !== undefined) {
    throw new A2AError('INTERNAL', `${storeName}: savePushConfig() for task "${String(request?.taskId)}" ${problem}.`, {
      data: { taskId: request?.taskId },
    });
  }
}

function pushConfigRequestProblem(request: SavePushConfigRequest): string | undefined {
  const { taskId, config, protocolVersion } = request ?? {};
  if (typeof taskId !== 'string' || taskId === '') return 'needs a taskId';
  if (typeof config !== 'object' || config === null) return 'needs a config';
  if (typeof config.id !== 'string' || config.id === '') {
    return 'got a config without an id; assign one (the runtime does when the client gave none)';
  }
  if (typeof config.url !== 'string' || config.url === '') return `got config "${config.id}" without a url`;
  if (protocolVersion !== '0.3' && protocolVersion !== '1.0') {
    return `got protocolVersion ${JSON.stringify(protocolVersion)}; it must be '0.3' or '1.0'`;
  }
  return undefined;
}
