/**
 * A2A store on SQLite through better-sqlite3: a single file shared by every worker process on one
 * machine. better-sqlite3 is synchronous, so each write is one `BEGIN IMMEDIATE` transaction that
 * never spans an `await`: the version check and the write happen under the file's write lock, and
 * two processes writing the same task serialise (the loser gets a VersionConflictError, never a
 * lost update).
 */

import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
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
  DuplicateMessageError,
  type EnqueueTurnRequest,
  type ExpiredWorker,
  type FailPushAttemptRequest,
  INTERRUPTED_STATES,
  type IndexedMessage,
  type InterruptedTasksQuery,
  indexedMessages,
  type ListTasksOptions,
  type MessageIndexEntry,
  type MultiMap,
  multiMapAdd,
  multiMapDelete,
  multiMapValues,
  NO_STATUS_TIMESTAMP,
  type PurgeResult,
  type PushClaimKey,
  type PushConfigRecord,
  type PushDelivery,
  type PushDeliveryFilter,
  type PushProtocolVersion,
  type PushStore,
  type SavePushConfigRequest,
  type StoreCallContext,
  type StoreCapabilities,
  type StoredEvent,
  type StoredPushConfig,
  statusTimestampOf,
  systemClock,
  type Task,
  type TaskEvent,
  type TaskListPage,
  type TaskListQuery,
  type TaskRecord,
  type TaskState,
  TERMINAL_STATES,
  type TurnReadiness,
  type QueueSlot,
  taskNotFound,
  type Unsubscribe,
  VersionConflictError,
  type WorkerDescription,
  type WorkerRecord,
} from '@fastify-a2a/core';
import Database from 'better-sqlite3';
import { notOpen, openError, sqliteCode, storeError } from './errors.js';
import { migrate } from './migrations.js';

export interface SqliteStoreOptions {
  /**
   * Path of the database file, or `':memory:'` for a private in-memory database (not durable, not
   * shared with other processes). The parent directory is created when missing. Required unless
   * `database` is given.
   */
  filename?: string;
  /**
   * An open better-sqlite3 connection to use instead of opening `filename`. The store migrates it
   * and sets its busy timeout (and WAL mode, for a file) but never closes it: its owner does.
   */
  database?: Database.Database;
  /**
   * Isolates several agents sharing one file: every row is keyed by it, and a store only sees its
   * own namespace.
   * @default 'default'
   */
  namespace?: string;
  /**
   * Source of `createdAt`/`updatedAt` timestamps (epoch milliseconds).
   * @default systemClock (Date.now)
   */
  clock?: Clock;
  /**
   * How long a statement waits for another connection's write lock before failing with
   * STORE_UNAVAILABLE.
   * @default 5000
   */
  busyTimeoutMs?: number;
  /**
   * How often the store checks the file for commits made by other processes while at least one
   * subscriber is listening. Smaller is snappier and costs one cheap query per tick.
   * @default 50
   */
  pollIntervalMs?: number;
  /**
   * Group commit: commits made while this process is busy (after one commit ran and before the
   * event loop came round again) wait for that moment and go together, in one `BEGIN IMMEDIATE`
   * transaction with a SAVEPOINT each: one write lock and one WAL append for many, each commit
   * with its own version check and its own result. Nothing waits on a timer: a commit made while
   * no other is waiting runs at once, as without group commit. Set it to false to give every
   * commit its own transaction.
   * @default true
   */
  groupCommit?: boolean;
  /**
   * Called when a `subscribe()` listener throws. The error never fails the commit (which is already
   * durable) nor keeps the other listeners from being called.
   * @default undefined (the error is ignored)
   */
  onListenerError?: (error: unknown, taskId: string) => void;
}

export const DEFAULT_NAMESPACE = 'default';
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;
export const DEFAULT_POLL_INTERVAL_MS = 50;

/**
 * The owner column of a2a_messages for commits without an owner (see migration 5): a key column
 * cannot be NULL, and commits refuse '' as an owner, so no principal shares this scope.
 */
const ANONYMOUS_SCOPE = '';

/** §6.3: neither terminal nor interrupted. */
const ACTIVE_STATES: readonly TaskState[] = ['submitted', 'working', 'unknown'];

/** §6.3: terminal or interrupted, the states a push throttle window does not hold back. */
const FINAL_STATES: readonly TaskState[] = [...TERMINAL_STATES, ...INTERRUPTED_STATES];

/** SQL list literal of constant state names (never user input). */
const sqlList = (states: Iterable<string>): string => [...states].map((state) => `'${state}'`).join(', ');

interface TaskRow {
  task_json: string;
  version: number;
  created_at: number;
  updated_at: number;
  owner: string | null;
  /** Migration 7: the trace context of the commit that last changed the task. */
  trace_context: string | null;
}

interface ListedRow extends TaskRow {
  status_ts: number;
  task_id: string;
}

/** The named parameters of the listTasks statements; each shape uses the ones its filters need. */
interface ListParams {
  namespace: string;
  /** A principal id, or null for the tasks without an owner. */
  owner?: string | null;
  contextId?: string;
  state?: string;
  since?: number;
  afterTs?: number;
  afterId?: string;
  limit?: number;
}

// The filters a listTasks statement has, as bits: one statement per combination.
const BY_CONTEXT = 1;
const BY_STATE = 2;
const SINCE = 4;
const AFTER = 8;
const BY_OWNER = 16;

/**
 * The listTasks statements for every combination of filters (page: 32, count: 16), prepared once.
 * The page names its index: without statistics (nobody runs ANALYZE) SQLite's planner takes the
 * state index over the context index when both filters are given, and the plain status index over
 * the state index when a timestamp bound is given, both of which read far more than one page.
 * With a context, the context index is the narrow one (a context has few tasks); then with an
 * owner, the owner index (what a caller lists is bounded by its own tasks, whatever the other
 * filters, and a state filter is read along); with a state only, the state index; otherwise the
 * status index.
 */
function listStatements(db: Database.Database, columns: string) {
  const where = (bits: number): string => {
    const conditions = ['namespace = @namespace'];
    // IS rather than =: a NULL @owner selects the tasks without one, through the same index range.
    if (bits & BY_OWNER) conditions.push('owner IS @owner');
    if (bits & BY_CONTEXT) conditions.push('context_id = @contextId');
    if (bits & BY_STATE) conditions.push('state = @state');
    if (bits & SINCE) conditions.push('status_ts >= @since');
    if (bits & AFTER) conditions.push('(status_ts, task_id) < (@afterTs, @afterId)');
    return conditions.join(' AND ');
  };
  const pageIndex = (bits: number): string =>
    bits & BY_CONTEXT
      ? 'a2a_tasks_by_context_status_ts'
      : bits & BY_OWNER
        ? 'a2a_tasks_by_owner_status_ts'
        : bits & BY_STATE
          ? 'a2a_tasks_by_state_status_ts'
          : 'a2a_tasks_by_status_ts';
  const pages = Array.from({ length: 32 }, (_, bits) =>
    db.prepare<[ListParams], ListedRow>(
      `SELECT ${columns}, status_ts, task_id FROM a2a_tasks INDEXED BY ${pageIndex(bits)} WHERE ${where(bits)}
       ORDER BY status_ts DESC, task_id DESC LIMIT @limit`,
    ),
  );
  // Counts read index entries only where they can: the planner's choices are covering indexes,
  // except with a context or an owner, where the index of the page is the one to narrow by.
  const countIndex = (bits: number): string =>
    bits & BY_CONTEXT
      ? ' INDEXED BY a2a_tasks_by_context_status_ts'
      : bits & BY_OWNER
        ? ' INDEXED BY a2a_tasks_by_owner_status_ts'
        : '';
  const counts = Array.from({ length: 32 }, (_, bits) =>
    bits & AFTER
      ? undefined
      : db
          .prepare<[ListParams], number>(`SELECT count(*) FROM a2a_tasks${countIndex(bits)} WHERE ${where(bits)}`)
          .pluck(),
  );
  // One read transaction: the page and its total see the same commits.
  return db.transaction((params: ListParams, bits: number): { rows: ListedRow[]; total: number } => ({
    rows: (pages[bits] as (typeof pages)[number]).all(params),
    total: (counts[bits & ~AFTER] as NonNullable<(typeof counts)[number]>).get(params) as number,
  }));
}

interface EventRow {
  seq: number;
  event_json: string;
  created_at: number;
}

interface ContextRow {
  state_json: string;
  updated_at: number;
}

interface TaskWrite {
  namespace: string;
  taskId: string;
  contextId: string;
  /** The owner, written when the commit creates the task (NULL for none). */
  owner: string | null;
  /** The commit's trace context, replacing the previous one (NULL for none). */
  traceContext: string | null;
  state: string;
  /** statusTimestampOf(task): what listTasks sorts by. */
  statusTs: number;
  version: number;
  taskJson: string;
  now: number;
}

interface EventWrite {
  namespace: string;
  taskId: string;
  seq: number;
  eventJson: string;
  now: number;
}

interface CommitArgs {
  write: TaskWrite;
  expectedVersion: number;
  eventJsons: string[];
  /** User messages to index (see `indexedMessages` in @fastify-a2a/core). */
  messages: IndexedMessage[];
  /** Their scope in the index: the commit's owner, '' for the anonymous scope. */
  scope: string;
  /** A turn of this task to enqueue in the same transaction. */
  enqueueTurn: { messageId: string; workerId: string } | undefined;
  /** A ticket to remove in the same transaction. */
  finishTurn: QueueSlot | undefined;
}

type CommitOutcome = { ok: true; turn: QueueSlot | undefined } | { ok: false; error: unknown };

/** A commit of a batch failed with something other than a conflict or a duplicate. */
class BatchItemError extends Error {
  constructor(
    readonly index: number,
    readonly error: unknown,
  ) {
    super('a commit of the batch failed', { cause: error });
  }
}

/** A commit waiting for the next batch. */
interface PendingCommit {
  args: CommitArgs;
  taskId: string;
  version: number;
  resolve(result: CommitResult): void;
  reject(error: unknown): void;
}

interface TurnRow {
  context_id: string;
  position: number;
  task_id: string;
  turn_id: string;
  worker_id: string;
}

interface WorkerRow {
  worker_id: string;
  last_heartbeat: number;
}

interface WorkerDescriptionRow extends WorkerRow {
  lease_until: number;
  incarnation: string | null;
  host: string | null;
  pid: number | null;
  started_at: number | null;
}

interface JoinArgs {
  namespace: string;
  workerId: string;
  leaseUntil: number;
  description: WorkerDescription;
  now: number;
}

interface EnqueueArgs {
  namespace: string;
  request: EnqueueTurnRequest;
  now: number;
}

interface PushConfigRow {
  task_id: string;
  config_id: string;
  config_json: string;
  protocol_version: string;
  created_at: number;
  updated_at: number;
}

interface PushDeliveryRow extends PushConfigRow {
  cursor: number;
  attempts: number;
  next_attempt_at: number | null;
  last_sent_at: number | null;
  failed: number;
  last_error: string | null;
  last_status: number | null;
  claimed_by: string | null;
  claim_id: string | null;
  claim_until: number | null;
  task_version: number;
}

/** The key of one delivery; `claimId` only where the claim is checked. */
interface PushKey {
  namespace: string;
  taskId: string;
  configId: string;
}

interface PushSave extends PushKey {
  configJson: string;
  protocolVersion: string;
  now: number;
}

interface PushClaimArgs {
  namespace: string;
  workerId: string;
  claimId: string;
  now: number;
  claimUntil: number;
  limit: number;
}

type Statements = ReturnType<typeof prepare>;

/** Every statement the store runs, prepared once per connection (after migrating, so tables exist). */
function prepare(db: Database.Database) {
  const columns = 'task_json, version, created_at, updated_at, owner, trace_context';
  const turnColumns = 'context_id, position, task_id, turn_id, worker_id';
  const pushConfigColumns = 'c.task_id, c.config_id, c.config_json, c.protocol_version, c.created_at, c.updated_at';
  const pushDeliveryColumns = `${pushConfigColumns}, d.cursor, d.attempts, d.next_attempt_at, d.last_sent_at, d.failed,
    d.last_error, d.last_status, d.claimed_by, d.claim_id, d.claim_until, t.version AS task_version`;
  const pushDeliveryJoin = `a2a_push_configs c
    JOIN a2a_push_deliveries d ON d.namespace = c.namespace AND d.task_id = c.task_id AND d.config_id = c.config_id
    JOIN a2a_tasks t ON t.namespace = c.namespace AND t.task_id = c.task_id`;
  const statements = {
    ping: db.prepare<[], number>('SELECT 1').pluck(),
    // Changes whenever another connection commits to the file (not on our own commits).
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    taskVersion: db
      .prepare<[string, string], number>('SELECT version FROM a2a_tasks WHERE namespace = ? AND task_id = ?')
      .pluck(),
    // One statement for any number of subscribed tasks: the ids come as one JSON array parameter.
    taskVersions: db.prepare<[string, string], { task_id: string; version: number }>(
      'SELECT task_id, version FROM a2a_tasks WHERE namespace = ? AND task_id IN (SELECT value FROM json_each(?))',
    ),
    insertTask: db.prepare<[TaskWrite]>(
      `INSERT INTO a2a_tasks (namespace, task_id, context_id, owner, state, status_ts, version, task_json, created_at, updated_at, trace_context)
       VALUES (@namespace, @taskId, @contextId, @owner, @state, @statusTs, @version, @taskJson, @now, @now, @traceContext)`,
    ),
    updateTask: db.prepare<[TaskWrite]>(
      `UPDATE a2a_tasks SET context_id = @contextId, state = @state, status_ts = @statusTs, version = @version,
       task_json = @taskJson, updated_at = @now, trace_context = @traceContext
       WHERE namespace = @namespace AND task_id = @taskId`,
    ),
    insertEvent: db.prepare<[EventWrite]>(
      `INSERT INTO a2a_events (namespace, task_id, seq, event_json, created_at)
       VALUES (@namespace, @taskId, @seq, @eventJson, @now)`,
    ),
    getTask: db.prepare<[string, string], TaskRow>(
      `SELECT ${columns} FROM a2a_tasks WHERE namespace = ? AND task_id = ?`,
    ),
    // LIMIT -1 means no limit in SQLite.
    readEvents: db.prepare<[string, string, number, number], EventRow>(
      `SELECT seq, event_json, created_at FROM a2a_events
       WHERE namespace = ? AND task_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
    ),
    // rowid breaks ties between tasks created in the same millisecond: insertion order.
    tasksByContext: db.prepare<[string, string, number], TaskRow>(
      `SELECT ${columns} FROM a2a_tasks WHERE namespace = ? AND context_id = ? ORDER BY created_at, rowid LIMIT ?`,
    ),
    // Through the index ListTasks filters by state with (one range per interrupted state).
    interruptedTasks: db.prepare<[string, number, number, number], TaskRow>(
      `SELECT ${columns} FROM a2a_tasks INDEXED BY a2a_tasks_by_state_status_ts
       WHERE namespace = ? AND state IN (${sqlList(INTERRUPTED_STATES)}) AND status_ts < ? AND status_ts > ?
       ORDER BY status_ts, task_id LIMIT ?`,
    ),
    activeTasks: db.prepare<[string], TaskRow>(
      `SELECT ${columns} FROM a2a_tasks WHERE namespace = ? AND state IN (${sqlList(ACTIVE_STATES)})
       ORDER BY created_at, rowid`,
    ),
    getContext: db.prepare<[string, string], ContextRow>(
      'SELECT state_json, updated_at FROM a2a_contexts WHERE namespace = ? AND context_id = ?',
    ),
    setContext: db.prepare<[string, string, string, number]>(
      `INSERT INTO a2a_contexts (namespace, context_id, state_json, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (namespace, context_id) DO UPDATE SET state_json = excluded.state_json, updated_at = excluded.updated_at`,
    ),
    // Cross-process finishTurn: which subscribed tasks still have turns queued.
    queuedTasks: db
      .prepare<[string, string], string>(
        'SELECT DISTINCT task_id FROM a2a_turns WHERE namespace = ? AND task_id IN (SELECT value FROM json_each(?))',
      )
      .pluck(),
    heartbeat: db.prepare<[string, string, number, number]>(
      `INSERT INTO a2a_workers (namespace, worker_id, lease_until, last_heartbeat) VALUES (?, ?, ?, ?)
       ON CONFLICT (namespace, worker_id) DO UPDATE SET lease_until = excluded.lease_until,
       last_heartbeat = excluded.last_heartbeat`,
    ),
    removeWorker: db.prepare<[string, string]>('DELETE FROM a2a_workers WHERE namespace = ? AND worker_id = ?'),
    // ---- The cluster view (see migration 8) ----
    worker: db.prepare<[string, string], WorkerDescriptionRow>(
      `SELECT worker_id, lease_until, last_heartbeat, incarnation, host, pid, started_at FROM a2a_workers
       WHERE namespace = ? AND worker_id = ?`,
    ),
    workers: db.prepare<[string], WorkerDescriptionRow>(
      `SELECT worker_id, lease_until, last_heartbeat, incarnation, host, pid, started_at FROM a2a_workers
       WHERE namespace = ? ORDER BY worker_id`,
    ),
    joinWorker: db.prepare<[string, string, number, number, string, string, number, number]>(
      `INSERT INTO a2a_workers (namespace, worker_id, lease_until, last_heartbeat, incarnation, host, pid, started_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (namespace, worker_id) DO UPDATE SET lease_until = excluded.lease_until,
       last_heartbeat = excluded.last_heartbeat, incarnation = excluded.incarnation, host = excluded.host,
       pid = excluded.pid, started_at = excluded.started_at`,
    ),
    queuedTurns: db.prepare<[string], TurnRow>(
      `SELECT ${turnColumns} FROM a2a_turns WHERE namespace = ? ORDER BY position`,
    ),
    // subscribeAll's poll: tasks updated at or after a time.
    tasksUpdatedSince: db.prepare<[string, number], { task_id: string; version: number; updated_at: number }>(
      TASKS_UPDATED_SINCE_SQL,
    ),
    // position is AUTOINCREMENT: the next value of the one counter, never reused (see migration 2).
    insertTurn: db
      .prepare<[string, string, string, string, string, number], number>(
        `INSERT INTO a2a_turns (namespace, context_id, task_id, turn_id, worker_id, enqueued_at)
         VALUES (?, ?, ?, ?, ?, ?) RETURNING position`,
      )
      .pluck(),
    // The turn directly ahead of a position: nothing ahead means the turn may run.
    turnAhead: db.prepare<[string, string, number], TurnRow>(
      `SELECT ${turnColumns} FROM a2a_turns WHERE namespace = ? AND context_id = ? AND position < ?
       ORDER BY position DESC LIMIT 1`,
    ),
    // Positions are never reused, so (context, position) is the ticket; the turn id is a safeguard.
    deleteTurn: db.prepare<[string, string, number, string]>(
      'DELETE FROM a2a_turns WHERE namespace = ? AND context_id = ? AND position = ? AND turn_id = ?',
    ),
    // Position order is commit order across every context.
    workerTurns: db.prepare<[string, string], TurnRow>(
      `SELECT ${turnColumns} FROM a2a_turns WHERE namespace = ? AND worker_id = ? ORDER BY position`,
    ),
    // \`IS NOT ?\` with NULL (no exception) matches every worker.
    expiredWorkers: db.prepare<[string, number, string | null], WorkerRow>(
      `SELECT worker_id, last_heartbeat FROM a2a_workers WHERE namespace = ? AND lease_until < ? AND worker_id IS NOT ?
       ORDER BY lease_until, worker_id`,
    ),
    // ---- Push notifications (see migration 4) ----
    savePushConfig: db.prepare<[PushSave], { created_at: number; updated_at: number }>(
      `INSERT INTO a2a_push_configs (namespace, task_id, config_id, config_json, protocol_version, created_at, updated_at)
       VALUES (@namespace, @taskId, @configId, @configJson, @protocolVersion, @now, @now)
       ON CONFLICT (namespace, task_id, config_id) DO UPDATE SET config_json = excluded.config_json,
       protocol_version = excluded.protocol_version, updated_at = excluded.updated_at
       RETURNING created_at, updated_at`,
    ),
    // A new or replaced config starts afresh: see savePushConfig in core's PushStore.
    resetPushDelivery: db.prepare<[PushKey]>(
      `INSERT INTO a2a_push_deliveries (namespace, task_id, config_id, cursor, attempts, failed)
       VALUES (@namespace, @taskId, @configId, 0, 0, 0)
       ON CONFLICT (namespace, task_id, config_id) DO UPDATE SET cursor = 0, attempts = 0, next_attempt_at = NULL,
       last_sent_at = NULL, failed = 0, last_error = NULL, last_status = NULL, claimed_by = NULL, claim_id = NULL,
       claim_until = NULL`,
    ),
    getPushConfig: db.prepare<[string, string, string], PushConfigRow>(
      `SELECT ${pushConfigColumns} FROM a2a_push_configs c WHERE namespace = ? AND task_id = ? AND config_id = ?`,
    ),
    // rowid: save order, kept by a replace (an UPSERT updates the row in place).
    listPushConfigs: db.prepare<[string, string], PushConfigRow>(
      `SELECT ${pushConfigColumns} FROM a2a_push_configs c WHERE namespace = ? AND task_id = ? ORDER BY created_at, rowid`,
    ),
    deletePushDelivery: db.prepare<[PushKey]>(
      'DELETE FROM a2a_push_deliveries WHERE namespace = @namespace AND task_id = @taskId AND config_id = @configId',
    ),
    deletePushConfig: db.prepare<[PushKey]>(
      'DELETE FROM a2a_push_configs WHERE namespace = @namespace AND task_id = @taskId AND config_id = @configId',
    ),
    // The rules of claimPushDeliveries (core's PushStore), over the pending index (the literal
    // `failed = 0` is what lets SQLite use that partial index; INDEXED BY makes sure it does) with
    // one task lookup by primary key per delivery. Soonest first: NULL (at once) sorts first.
    duePushDeliveries: db.prepare<[Omit<PushClaimArgs, 'workerId' | 'claimId' | 'claimUntil'>], PushKey>(
      `SELECT d.task_id AS taskId, d.config_id AS configId, d.namespace AS namespace
       FROM a2a_push_deliveries d INDEXED BY a2a_push_deliveries_pending
       JOIN a2a_tasks t ON t.namespace = d.namespace AND t.task_id = d.task_id
       WHERE d.namespace = @namespace AND d.failed = 0
         AND (d.claim_until IS NULL OR d.claim_until < @now)
         AND t.version > d.cursor
         AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= @now
              OR (d.attempts = 0 AND t.state IN (${sqlList(FINAL_STATES)})))
       ORDER BY d.next_attempt_at LIMIT @limit`,
    ),
    claimPushDelivery: db.prepare<[PushKey & Pick<PushClaimArgs, 'workerId' | 'claimId' | 'claimUntil'>]>(
      `UPDATE a2a_push_deliveries SET claimed_by = @workerId, claim_id = @claimId, claim_until = @claimUntil
       WHERE namespace = @namespace AND task_id = @taskId AND config_id = @configId`,
    ),
    pushDelivery: db.prepare<[PushKey], PushDeliveryRow>(
      `SELECT ${pushDeliveryColumns} FROM ${pushDeliveryJoin}
       WHERE c.namespace = @namespace AND c.task_id = @taskId AND c.config_id = @configId`,
    ),
    renewPushClaims: db.prepare<[number, string, string]>(
      'UPDATE a2a_push_deliveries SET claim_until = ? WHERE namespace = ? AND claimed_by = ?',
    ),
    // Every write of a claim holder names its claim: a claim taken over, released, or gone with a
    // replaced or deleted config matches no row, and nothing is written.
    completePushDelivery: db.prepare<
      [PushKey & { claimId: string; cursor: number; sentAt: number; next: number | null; status: number | null }]
    >(
      `UPDATE a2a_push_deliveries SET cursor = max(cursor, @cursor), attempts = 0, next_attempt_at = @next,
       last_sent_at = @sentAt, last_error = NULL, last_status = @status, claimed_by = NULL, claim_id = NULL,
       claim_until = NULL
       WHERE namespace = @namespace AND task_id = @taskId AND config_id = @configId AND claim_id = @claimId`,
    ),
    failPushAttempt: db.prepare<
      [PushKey & { claimId: string; next: number | null; error: string; status: number | null }]
    >(
      `UPDATE a2a_push_deliveries SET attempts = attempts + 1, next_attempt_at = @next, failed = (@next IS NULL),
       last_error = @error, last_status = @status, claimed_by = NULL, claim_id = NULL, claim_until = NULL
       WHERE namespace = @namespace AND task_id = @taskId AND config_id = @configId AND claim_id = @claimId`,
    ),
    releasePushClaim: db.prepare<[PushKey & { claimId: string }]>(
      `UPDATE a2a_push_deliveries SET claimed_by = NULL, claim_id = NULL, claim_until = NULL
       WHERE namespace = @namespace AND task_id = @taskId AND config_id = @configId AND claim_id = @claimId`,
    ),
    // LIMIT -1 means no limit; a NULL failed filter lists both.
    listPushDeliveries: db.prepare<[{ namespace: string; failed: number | null; limit: number }], PushDeliveryRow>(
      `SELECT ${pushDeliveryColumns} FROM ${pushDeliveryJoin}
       WHERE c.namespace = @namespace AND (@failed IS NULL OR d.failed = @failed)
       ORDER BY c.created_at, c.rowid LIMIT @limit`,
    ),
    listTaskPushDeliveries: db.prepare<
      [{ namespace: string; taskId: string; failed: number | null; limit: number }],
      PushDeliveryRow
    >(
      `SELECT ${pushDeliveryColumns} FROM ${pushDeliveryJoin}
       WHERE c.namespace = @namespace AND c.task_id = @taskId AND (@failed IS NULL OR d.failed = @failed)
       ORDER BY c.created_at, c.rowid LIMIT @limit`,
    ),
    // The owner is '' for the anonymous scope (see migration 5).
    indexMessage: db.prepare<[string, string, string, string, string, string]>(
      `INSERT INTO a2a_messages (namespace, owner, message_id, task_id, context_id, digest) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (namespace, owner, message_id) DO NOTHING`,
    ),
    findMessage: db.prepare<[string, string, string], { task_id: string; context_id: string; digest: string | null }>(
      'SELECT task_id, context_id, digest FROM a2a_messages WHERE namespace = ? AND owner = ? AND message_id = ?',
    ),
    purgeMessages: db.prepare<[{ namespace: string; cutoff: number }]>(
      `DELETE FROM a2a_messages WHERE namespace = @namespace AND task_id IN (
         SELECT task_id FROM a2a_tasks WHERE namespace = @namespace
         AND state IN (${sqlList(TERMINAL_STATES)}) AND updated_at < @cutoff)`,
    ),
    purgeEvents: db.prepare<[{ namespace: string; cutoff: number }]>(
      `DELETE FROM a2a_events WHERE namespace = @namespace AND task_id IN (
         SELECT task_id FROM a2a_tasks WHERE namespace = @namespace
         AND state IN (${sqlList(TERMINAL_STATES)}) AND updated_at < @cutoff)`,
    ),
    purgeTasks: db.prepare<[{ namespace: string; cutoff: number }]>(
      `DELETE FROM a2a_tasks WHERE namespace = @namespace
       AND state IN (${sqlList(TERMINAL_STATES)}) AND updated_at < @cutoff`,
    ),
    purgeContexts: db.prepare<[{ namespace: string; cutoff: number }]>(
      `DELETE FROM a2a_contexts WHERE namespace = @namespace AND updated_at < @cutoff
       AND NOT EXISTS (SELECT 1 FROM a2a_tasks t
                       WHERE t.namespace = a2a_contexts.namespace AND t.context_id = a2a_contexts.context_id)`,
    ),
  };

  const commit = db.transaction((args: CommitArgs): QueueSlot | undefined => {
    const { write, expectedVersion, eventJsons, messages, scope } = args;
    const actual = statements.taskVersion.get(write.namespace, write.taskId);
    if ((actual ?? 0) !== expectedVersion) throw new VersionConflictError(write.taskId, expectedVersion, actual);
    // A repeat inside this commit meets its own row, inserted a moment before: also a duplicate.
    for (const { messageId, digest } of messages) {
      const inserted = statements.indexMessage.run(
        write.namespace,
        scope,
        messageId,
        write.taskId,
        write.contextId,
        digest,
      ).changes;
      if (inserted === 0) {
        const existing = statements.findMessage.get(write.namespace, scope, messageId);
        throw new DuplicateMessageError(
          messageId,
          existing && { taskId: existing.task_id, contextId: existing.context_id },
        );
      }
    }
    if (actual === undefined) statements.insertTask.run(write);
    else statements.updateTask.run(write);
    eventJsons.forEach((eventJson, index) => {
      statements.insertEvent.run({
        namespace: write.namespace,
        taskId: write.taskId,
        seq: expectedVersion + index + 1,
        eventJson,
        now: write.now,
      });
    });
    if (args.finishTurn !== undefined) {
      const { contextId, position, messageId } = args.finishTurn;
      statements.deleteTurn.run(write.namespace, contextId, position, messageId);
    }
    if (args.enqueueTurn === undefined) return undefined;
    const { messageId, workerId } = args.enqueueTurn;
    const { namespace, contextId, taskId, now } = write;
    const position = statements.insertTurn.get(namespace, contextId, taskId, messageId, workerId, now) as number;
    return { contextId, position, taskId, messageId, workerId };
  });

  // Group commit (see SqliteStore.#flushCommits): several commits in one BEGIN IMMEDIATE … COMMIT.
  // Each runs as a nested transaction, which better-sqlite3 wraps in a SAVEPOINT, so a version
  // conflict or a duplicate message id (our own A2AErrors) rolls back that commit alone and the
  // others go on. Any other error ends the batch, rolled back whole, as a BatchItemError.
  const commitBatch = db.transaction((batch: CommitArgs[]): CommitOutcome[] =>
    batch.map((args, index): CommitOutcome => {
      try {
        return { ok: true, turn: commit(args) };
      } catch (error) {
        if (A2AError.is(error)) return { ok: false, error };
        throw new BatchItemError(index, error);
      }
    }),
  );

  const enqueue = db.transaction(({ namespace, request, now }: EnqueueArgs): QueueSlot => {
    const { contextId, taskId, messageId, workerId } = request;
    const position = statements.insertTurn.get(namespace, contextId, taskId, messageId, workerId, now) as number;
    return { contextId, position, taskId, messageId, workerId };
  });

  const claimExpired = db.transaction(
    (namespace: string, now: number, exceptWorkerId: string | null): ExpiredWorker[] =>
      statements.expiredWorkers.all(namespace, now, exceptWorkerId).map((worker) => {
        statements.removeWorker.run(namespace, worker.worker_id);
        return {
          workerId: worker.worker_id,
          lastHeartbeat: worker.last_heartbeat,
          turns: statements.workerTurns.all(namespace, worker.worker_id).map(toTicket),
        };
      }),
  );

  const joinWorker = db.transaction(
    ({ namespace, workerId, leaseUntil, description, now }: JoinArgs): ExpiredWorker | undefined => {
      const previous = statements.worker.get(namespace, workerId);
      const { incarnation, host, pid, startedAt } = description;
      statements.joinWorker.run(namespace, workerId, leaseUntil, now, incarnation, host, pid, startedAt);
      if (previous !== undefined && previous.incarnation === incarnation) return undefined;
      // Without a row (a reaper claimed it), turns of this id are still a previous start's: a new
      // incarnation owns none yet.
      const turns = statements.workerTurns.all(namespace, workerId).map(toTicket);
      if (previous === undefined && turns.length === 0) return undefined;
      return { workerId, lastHeartbeat: previous?.last_heartbeat ?? 0, turns };
    },
  );

  // One read transaction, so the workers and their turns are seen at one point in time.
  const listWorkers = db.transaction((namespace: string): WorkerRecord[] => {
    const turns = new Map<string, QueueSlot[]>();
    for (const row of statements.queuedTurns.all(namespace)) {
      const list = turns.get(row.worker_id);
      if (list === undefined) turns.set(row.worker_id, [toTicket(row)]);
      else list.push(toTicket(row));
    }
    const workers = statements.workers.all(namespace).map((row) => toWorkerRecord(row, turns.get(row.worker_id) ?? []));
    // Turns whose worker has no lease row any more (claimed, its reaping failed) are listed under
    // that id with no lease, so operators can still see and release them.
    const leased = new Set(workers.map((worker) => worker.workerId));
    for (const [workerId, list] of turns) {
      if (!leased.has(workerId)) {
        workers.push({ workerId, leaseUntil: 0, lastHeartbeat: 0, description: null, turns: list });
      }
    }
    return workers.sort((a, b) => (a.workerId < b.workerId ? -1 : a.workerId > b.workerId ? 1 : 0));
  });

  const purge = db.transaction((namespace: string, cutoff: number): PurgeResult => {
    statements.purgeMessages.run({ namespace, cutoff });
    // Push configs and deliveries: the trigger of migration 4 deletes them with each task.
    statements.purgeEvents.run({ namespace, cutoff });
    const tasks = statements.purgeTasks.run({ namespace, cutoff }).changes;
    const contexts = statements.purgeContexts.run({ namespace, cutoff }).changes;
    return { tasks, contexts };
  });

  // The task check and the write under one write lock: a config never outlives its task, whose
  // purge deletes its configs in its own transaction.
  const savePush = db.transaction((args: PushSave): { created_at: number; updated_at: number } => {
    if (statements.taskVersion.get(args.namespace, args.taskId) === undefined) throw taskNotFound(args.taskId);
    const saved = statements.savePushConfig.get(args) as { created_at: number; updated_at: number };
    statements.resetPushDelivery.run({ namespace: args.namespace, taskId: args.taskId, configId: args.configId });
    return saved;
  });

  const deletePush = db.transaction((key: PushKey): boolean => {
    statements.deletePushDelivery.run(key);
    return statements.deletePushConfig.run(key).changes > 0;
  });

  // Read and write under the write lock (BEGIN IMMEDIATE): a claimant in another process waits,
  // then finds the claims taken.
  const claimPush = db.transaction((args: PushClaimArgs): PushDelivery[] => {
    const { namespace, now, limit, workerId, claimId, claimUntil } = args;
    return statements.duePushDeliveries.all({ namespace, now, limit }).map((key) => {
      statements.claimPushDelivery.run({ ...key, workerId, claimId, claimUntil });
      return toPushDelivery(statements.pushDelivery.get(key) as PushDeliveryRow);
    });
  });

  return {
    ...statements,
    commit,
    commitBatch,
    enqueue,
    claimExpired,
    joinWorker,
    listWorkers,
    purge,
    savePush,
    deletePush,
    claimPush,
    listTasks: listStatements(db, columns),
  };
}

/** Every task state (a missing or unknown key fails to compile). */
const ALL_TASK_STATES = Object.keys({
  submitted: true,
  working: true,
  'input-required': true,
  completed: true,
  canceled: true,
  failed: true,
  rejected: true,
  'auth-required': true,
  unknown: true,
} satisfies Record<TaskState, true>);

/**
 * subscribeAll's poll: the tasks committed to since a time. Every state is named so that the poll
 * seeks in a2a_tasks_by_state (namespace, state, updated_at), once per state: an index of its own
 * on updated_at would cost every commit of every deployment a B-tree update for the monitor alone.
 */
export const TASKS_UPDATED_SINCE_SQL = `SELECT task_id, version, updated_at FROM a2a_tasks
  WHERE namespace = ? AND state IN (${ALL_TASK_STATES.map((state) => `'${state}'`).join(', ')}) AND updated_at >= ?`;

function toWorkerRecord(row: WorkerDescriptionRow, turns: QueueSlot[]): WorkerRecord {
  const { incarnation, host, pid, started_at: startedAt } = row;
  return {
    workerId: row.worker_id,
    leaseUntil: row.lease_until,
    lastHeartbeat: row.last_heartbeat,
    description:
      incarnation === null || host === null || pid === null || startedAt === null
        ? null
        : { incarnation, host, pid, startedAt },
    turns,
  };
}

const toTicket = (row: TurnRow): QueueSlot => ({
  contextId: row.context_id,
  position: row.position,
  taskId: row.task_id,
  messageId: row.turn_id,
  workerId: row.worker_id,
});

const toPushConfigRecord = (row: PushConfigRow): PushConfigRecord => ({
  taskId: row.task_id,
  config: JSON.parse(row.config_json) as StoredPushConfig,
  protocolVersion: row.protocol_version as PushProtocolVersion,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toPushDelivery = (row: PushDeliveryRow): PushDelivery => ({
  config: toPushConfigRecord(row),
  state: {
    cursor: row.cursor,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastSentAt: row.last_sent_at,
    failed: row.failed !== 0,
    lastError: row.last_error,
    lastStatus: row.last_status,
    claimedBy: row.claimed_by,
    claimId: row.claim_id,
    claimUntil: row.claim_until,
  },
  taskVersion: row.task_version,
});

const toTaskRecord = (row: TaskRow): TaskRecord => {
  const record: TaskRecord = {
    task: JSON.parse(row.task_json) as Task,
    version: row.version,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  // No owner: no property at all (the contract's "absent, not null").
  if (row.owner !== null) record.owner = row.owner;
  // Migration 7; absent, not null, like the owner.
  if (row.trace_context !== null) record.traceContext = row.trace_context;
  return record;
};

/**
 * `PRAGMA journal_mode = WAL`, retried on SQLITE_BUSY for up to `timeoutMs`. Switching a file that
 * is not in WAL mode yet rewrites its header: SQLite upgrades its read lock to a write lock for
 * that and, unlike for a plain write, does not call the busy handler when another connection holds
 * the write lock. So several processes opening a new file at once (one migrating while another
 * switches) would fail at once without this loop. Once the file is in WAL mode the pragma needs no
 * write and never waits.
 */
async function enableWal(db: Database.Database, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
    try {
      return String(db.pragma('journal_mode = WAL', { simple: true }));
    } catch (error) {
      if (sqliteCode(error) !== 'SQLITE_BUSY' || Date.now() + delay > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

function positiveNumber(value: unknown, name: string, fallback: number, allowZero: boolean): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new A2AError(
      'INVALID_OPTIONS',
      `SqliteStore option "${name}" must be a ${allowZero ? 'non-negative' : 'positive'} number of milliseconds; got ${String(value)}.`,
    );
  }
  return value;
}

interface Subscription {
  listener: (seq: number) => void;
}

/**
 * Creates `dir` and its missing parents, one level at a time. Not `mkdirSync(dir, { recursive: true })`:
 * on Node 20 that never returns for a path under /proc (and other special file systems), and a
 * misconfigured store path must fail at start with a message, not hang.
 */
function ensureDirectory(dir: string): void {
  const missing: string[] = [];
  for (let current = dir; !existsSync(current); current = dirname(current)) {
    missing.push(current);
    if (dirname(current) === current) break;
  }
  for (const path of missing.reverse()) {
    try {
      mkdirSync(path);
    } catch (error) {
      // Another process starting on the same file created it first.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(path).isDirectory()) throw error;
    }
  }
}

/**
 * {@link A2AStore} on a SQLite file. Several processes (or several stores in one process) may use
 * the same file: writes serialise on SQLite's write lock, and subscribers learn about other
 * processes' commits by polling while they listen.
 *
 * ```ts
 * const store = new SqliteStore({ filename: './.data/a2a.db' });
 * await store.open();
 * ```
 */
export class SqliteStore implements A2AStore, PushStore {
  readonly supports: StoreCapabilities;

  readonly #filename: string;
  readonly #database: Database.Database | undefined;
  readonly #namespace: string;
  readonly #clock: Clock;
  readonly #busyTimeoutMs: number;
  readonly #pollIntervalMs: number;
  readonly #onListenerError: ((error: unknown, taskId: string) => void) | undefined;

  #db: Database.Database | undefined;
  #statements: Statements | undefined;
  #closed = false;

  /** Task id → its subscriptions (one kept as itself: see MultiMap in @fastify-a2a/core). */
  readonly #subscriptions: MultiMap<string, Subscription> = new Map();
  /** The version each subscribed task was last notified at (or had when first subscribed). */
  readonly #seen = new Map<string, number>();
  /** Subscribed tasks that had a turn queued when last checked (to notice another process's finishTurn). */
  readonly #queued = new Set<string>();
  /** subscribeAll() listeners. */
  readonly #allSubscriptions = new Set<{ listener: (taskId: string, seq: number) => void }>();
  /** For subscribeAll's poll: the version and update time each recently changed task was seen at. */
  readonly #allSeen = new Map<string, { version: number; updatedAt: number }>();
  /** subscribeAll's poll reads tasks updated at or after this (the store's clock). */
  #allSince = 0;
  #timer: NodeJS.Timeout | undefined;
  #dataVersion: number | undefined;
  readonly #groupCommit: boolean;
  /** Commits waiting for the next batch (see #flushCommits). */
  #pendingCommits: PendingCommit[] = [];
  /** A commit ran during this turn of the event loop; later ones wait for the batch at its end. */
  #batchOpen = false;

  constructor(options: SqliteStoreOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new A2AError('INVALID_OPTIONS', 'SqliteStore needs options: { filename: "./.data/a2a.db" } at least.');
    }
    const { filename, database } = options;
    if (database !== undefined && filename !== undefined) {
      throw new A2AError(
        'INVALID_OPTIONS',
        'SqliteStore takes either "filename" or "database", not both: the database handle already has a file.',
      );
    }
    if (database === undefined && (typeof filename !== 'string' || filename === '')) {
      throw new A2AError(
        'INVALID_OPTIONS',
        'SqliteStore option "filename" must be a path (e.g. "./.data/a2a.db") or ":memory:"; or pass an open better-sqlite3 handle as "database".',
      );
    }
    const namespace = options.namespace ?? DEFAULT_NAMESPACE;
    if (typeof namespace !== 'string' || namespace === '') {
      throw new A2AError('INVALID_OPTIONS', 'SqliteStore option "namespace" must be a non-empty string.');
    }
    if (options.clock !== undefined && typeof options.clock !== 'function') {
      throw new A2AError('INVALID_OPTIONS', 'SqliteStore option "clock" must be a function returning epoch ms.');
    }
    if (options.onListenerError !== undefined && typeof options.onListenerError !== 'function') {
      throw new A2AError('INVALID_OPTIONS', 'SqliteStore option "onListenerError" must be a function.');
    }
    if (options.groupCommit !== undefined && typeof options.groupCommit !== 'boolean') {
      throw new A2AError('INVALID_OPTIONS', 'SqliteStore option "groupCommit" must be true or false.');
    }
    this.#groupCommit = options.groupCommit ?? true;
    this.#onListenerError = options.onListenerError;
    this.#database = database;
    this.#filename = database?.name ?? (filename as string);
    this.#namespace = namespace;
    this.#clock = options.clock ?? systemClock;
    this.#busyTimeoutMs = positiveNumber(options.busyTimeoutMs, 'busyTimeoutMs', DEFAULT_BUSY_TIMEOUT_MS, true);
    this.#pollIntervalMs = positiveNumber(options.pollIntervalMs, 'pollIntervalMs', DEFAULT_POLL_INTERVAL_MS, false);
    // An in-memory database lives and dies with its single connection.
    const onDisk = database === undefined ? filename !== ':memory:' : !database.memory;
    this.supports = Object.freeze({
      durable: onDisk,
      crossProcess: onDisk,
      ttl: true,
      namespaces: true,
      listTasks: true,
      push: true,
      interruptedTasks: true,
      cluster: true,
    });
  }

  /** The namespace this store reads and writes. */
  get namespace(): string {
    return this.#namespace;
  }

  /** Opens the file (creating its directory), enables WAL and applies pending migrations. Idempotent. */
  async open(): Promise<void> {
    if (this.#statements !== undefined) return;
    const owned = this.#database === undefined;
    let db: Database.Database | undefined;
    try {
      if (this.#database !== undefined) {
        db = this.#database;
      } else {
        if (this.supports.durable) ensureDirectory(dirname(resolve(this.#filename)));
        db = new Database(this.#filename, { timeout: this.#busyTimeoutMs });
      }
      db.pragma(`busy_timeout = ${Math.round(this.#busyTimeoutMs)}`);
      if (!db.memory) {
        // WAL lets readers (and the subscription poll) run while another process writes. With WAL,
        // synchronous=NORMAL cannot corrupt the file; a power loss (not a process crash) may lose
        // the last commits, a fair trade for not fsyncing on every commit.
        const mode = await enableWal(db, this.#busyTimeoutMs);
        if (mode.toLowerCase() === 'wal') db.pragma('synchronous = NORMAL');
      }
      migrate(db, this.#clock);
      this.#statements = prepare(db);
      this.#db = db;
    } catch (error) {
      if (owned && db?.open) db.close();
      throw openError(error, this.#filename, this.#busyTimeoutMs);
    }
    this.#closed = false;
    this.#dataVersion = undefined;
    this.#syncTimer();
  }

  /** Stops the subscription poll and closes the connection if this store opened it. Idempotent. */
  async close(): Promise<void> {
    // Commits already accepted are written first.
    this.#flushCommits();
    const db = this.#db;
    this.#db = undefined;
    this.#statements = undefined;
    this.#closed = true;
    this.#subscriptions.clear();
    this.#seen.clear();
    this.#queued.clear();
    this.#syncTimer();
    if (db !== undefined && this.#database === undefined && db.open) db.close();
  }

  async ping(): Promise<void> {
    await this.#run(undefined, (s) => {
      s.ping.get();
    });
  }

  // Not async: the commit is run or queued before this returns, like every other write of this
  // store, so an operation called after it (even without awaiting it) sees it.
  commit(request: CommitRequest, ctx?: StoreCallContext): Promise<CommitResult> {
    const { taskId, expectedVersion, task, events } = request;
    const version = expectedVersion + events.length;
    let args: CommitArgs;
    try {
      ctx?.signal?.throwIfAborted();
      if (this.#statements === undefined) throw notOpen(this.#filename, this.#closed);
      checkCommitRequest(request, 'SqliteStore');
      // Serialise before taking the write lock, to hold it as briefly as possible.
      args = {
        expectedVersion,
        eventJsons: events.map((event) => JSON.stringify(event)),
        messages: indexedMessages(events),
        scope: request.owner ?? ANONYMOUS_SCOPE,
        write: {
          namespace: this.#namespace,
          taskId,
          contextId: task.contextId,
          owner: request.owner ?? null,
          traceContext: request.traceContext ?? null,
          state: task.status.state,
          statusTs: statusTimestampOf(task),
          version,
          taskJson: JSON.stringify(task),
          now: this.#clock(),
        },
        enqueueTurn: request.enqueueTurn,
        finishTurn: request.finishTurn,
      };
    } catch (error) {
      return Promise.reject(storeError(error, this.#filename, this.#busyTimeoutMs));
    }
    return new Promise<CommitResult>((resolve, reject) => {
      this.#pendingCommits.push({ args, taskId, version, resolve, reject });
      if (!this.#groupCommit) {
        this.#flushCommits();
      } else if (!this.#batchOpen) {
        // Nothing is waiting: run now, alone. Commits made before the event loop comes round
        // again wait, and go as one batch at its end.
        this.#flushCommits();
        this.#batchOpen = true;
        setImmediate(() => this.#flushCommits());
      }
    });
  }

  /**
   * Writes the commits waiting for a batch: several in one `BEGIN IMMEDIATE` transaction, a
   * SAVEPOINT each (see `commitBatch`), so each gets its own result and a task's commits go in the
   * order they were made. Runs at the end of the event loop turn in which a commit ran, and before
   * any other operation of this store (which therefore sees every commit made before it).
   */
  #flushCommits(): void {
    this.#batchOpen = false;
    const batch = this.#pendingCommits;
    if (batch.length === 0) return;
    this.#pendingCommits = [];
    const statements = this.#statements;
    const fail = (commit: PendingCommit, error: unknown) =>
      commit.reject(
        statements === undefined
          ? notOpen(this.#filename, this.#closed)
          : storeError(error, this.#filename, this.#busyTimeoutMs),
      );
    const settle = (commit: PendingCommit, outcome: CommitOutcome): void => {
      if (!outcome.ok) {
        fail(commit, outcome.error);
        return;
      }
      this.#notify(commit.taskId, commit.version);
      const { version } = commit;
      commit.resolve(outcome.turn === undefined ? { version } : { version, turn: outcome.turn });
    };
    const alone = (commit: PendingCommit): CommitOutcome => {
      try {
        return { ok: true, turn: (statements as Statements).commit.immediate(commit.args) };
      } catch (error) {
        return { ok: false, error };
      }
    };
    if (statements === undefined) {
      for (const commit of batch) fail(commit, undefined);
      return;
    }
    if (batch.length === 1) {
      const [commit] = batch as [PendingCommit];
      settle(commit, alone(commit));
      return;
    }
    let outcomes: CommitOutcome[];
    try {
      outcomes = statements.commitBatch.immediate(batch.map((commit) => commit.args));
    } catch (error) {
      if (!(error instanceof BatchItemError)) {
        // BEGIN or COMMIT failed (the file is locked past busyTimeoutMs, I/O): nothing was
        // written, and alone each commit would have met the same.
        for (const commit of batch) fail(commit, error);
        return;
      }
      // One commit failed in a way that ended the batch (rolled back whole): run each alone, so
      // the one that fails fails by itself.
      outcomes = batch.map(alone);
    }
    for (const [index, commit] of batch.entries()) settle(commit, outcomes[index] as CommitOutcome);
  }

  async getTask(taskId: string, ctx?: StoreCallContext): Promise<TaskRecord | undefined> {
    return this.#run(ctx, (s) => {
      const row = s.getTask.get(this.#namespace, taskId);
      return row === undefined ? undefined : toTaskRecord(row);
    });
  }

  async getVersions(taskIds: readonly string[], ctx?: StoreCallContext): Promise<Map<string, number>> {
    if (taskIds.length === 0) return new Map();
    return this.#run(ctx, (s) => {
      const rows = s.taskVersions.all(this.#namespace, JSON.stringify(taskIds));
      return new Map(rows.map((row) => [row.task_id, row.version]));
    });
  }

  async readEvents(taskId: string, afterSeq: number, limit?: number, ctx?: StoreCallContext): Promise<StoredEvent[]> {
    return this.#run(ctx, (s) =>
      s.readEvents.all(this.#namespace, taskId, afterSeq, sqlLimit(limit)).map((row) => ({
        seq: row.seq,
        event: JSON.parse(row.event_json) as TaskEvent,
        createdAt: row.created_at,
      })),
    );
  }

  async listTasksByContext(
    contextId: string,
    options?: ListTasksOptions,
    ctx?: StoreCallContext,
  ): Promise<TaskRecord[]> {
    return this.#run(ctx, (s) =>
      s.tasksByContext.all(this.#namespace, contextId, sqlLimit(options?.limit)).map(toTaskRecord),
    );
  }

  async listActiveTasks(ctx?: StoreCallContext): Promise<TaskRecord[]> {
    return this.#run(ctx, (s) => s.activeTasks.all(this.#namespace).map(toTaskRecord));
  }

  async listInterruptedTasks(query: InterruptedTasksQuery, ctx?: StoreCallContext): Promise<TaskRecord[]> {
    const { before, limit } = query;
    return this.#run(ctx, (s) =>
      s.interruptedTasks.all(this.#namespace, before, NO_STATUS_TIMESTAMP, sqlLimit(limit)).map(toTaskRecord),
    );
  }

  /** One read transaction: the page (limit + 1 rows, to know whether more follow) and its count. */
  async listTasks(query: TaskListQuery, ctx?: StoreCallContext): Promise<TaskListPage> {
    const { contextId, state, statusTimestampAfter, after, limit, owner } = query;
    const params: ListParams = { namespace: this.#namespace, limit: Math.max(0, Math.trunc(limit)) + 1 };
    let bits = 0;
    if (owner !== undefined) {
      bits |= BY_OWNER;
      params.owner = owner;
    }
    if (contextId !== undefined) {
      bits |= BY_CONTEXT;
      params.contextId = contextId;
    }
    if (state !== undefined) {
      bits |= BY_STATE;
      params.state = state;
    }
    if (statusTimestampAfter !== undefined) {
      bits |= SINCE;
      params.since = statusTimestampAfter;
    }
    if (after !== undefined) {
      bits |= AFTER;
      params.afterTs = after.statusTimestamp;
      params.afterId = after.taskId;
    }
    const { rows, total } = await this.#run(ctx, (s) => s.listTasks(params, bits));
    const more = rows.length > limit;
    const listed = more ? rows.slice(0, limit) : rows;
    const page: TaskListPage = { records: listed.map(toTaskRecord), total };
    const last = listed.at(-1);
    if (more && last !== undefined) page.next = { statusTimestamp: last.status_ts, taskId: last.task_id };
    return page;
  }

  async getContext(contextId: string, ctx?: StoreCallContext): Promise<ContextRecord | undefined> {
    return this.#run(ctx, (s) => {
      const row = s.getContext.get(this.#namespace, contextId);
      return row === undefined
        ? undefined
        : { contextId, state: JSON.parse(row.state_json) as unknown, updatedAt: row.updated_at };
    });
  }

  /** Stores `state` as JSON: `undefined` (not a JSON value) is stored, and read back, as `null`. */
  async setContext(contextId: string, state: unknown, ctx?: StoreCallContext): Promise<void> {
    await this.#run(ctx, (s) => {
      s.setContext.run(this.#namespace, contextId, JSON.stringify(state) ?? 'null', this.#clock());
    });
  }

  /**
   * Deletes old terminal tasks with their events, message index rows, push configs and delivery
   * state, in one transaction (turn rows stay: they belong to live turns).
   */
  async purgeExpired(cutoff: number, ctx?: StoreCallContext): Promise<PurgeResult> {
    return this.#run(ctx, (s) => s.purge.immediate(this.#namespace, cutoff));
  }

  async heartbeat(workerId: string, leaseUntil: number, ctx?: StoreCallContext): Promise<void> {
    await this.#run(ctx, (s) => {
      s.heartbeat.run(this.#namespace, workerId, leaseUntil, this.#clock());
    });
  }

  /**
   * Takes the next position in one `BEGIN IMMEDIATE` transaction: enqueues from every process
   * serialise on the write lock, so positions follow the order they commit. Positions come from one
   * AUTOINCREMENT counter for all contexts: never reused, with gaps within a context.
   */
  async enqueueTurn(request: EnqueueTurnRequest, ctx?: StoreCallContext): Promise<QueueSlot> {
    const { contextId, taskId, messageId, workerId } = request;
    return this.#run(ctx, (s) =>
      s.enqueue.immediate({
        namespace: this.#namespace,
        request: { contextId, taskId, messageId, workerId },
        now: this.#clock(),
      }),
    );
  }

  /** Ready when no turn of the context has a lower position; otherwise the one directly ahead. */
  async turnReadiness(ticket: QueueSlot, ctx?: StoreCallContext): Promise<TurnReadiness> {
    return this.#run(ctx, (s) => {
      const ahead = s.turnAhead.get(this.#namespace, ticket.contextId, ticket.position);
      return ahead === undefined ? { ready: true } : { ready: false, ahead: toTicket(ahead) };
    });
  }

  /**
   * Deletes the ticket, then tells this store's subscribers of its task (with seq 0, which followers
   * ignore) so turns waiting behind it re-check at once. Other processes' waiters hear of it from
   * the poll loop (which notices that a subscribed task has no turn left) or by polling readiness.
   */
  async finishTurn(ticket: QueueSlot, ctx?: StoreCallContext): Promise<void> {
    const removed = await this.#run(
      ctx,
      (s) => s.deleteTurn.run(this.#namespace, ticket.contextId, ticket.position, ticket.messageId).changes > 0,
    );
    if (removed) this.#notify(ticket.taskId, 0);
  }

  /** One `BEGIN IMMEDIATE` transaction: of several concurrent reapers, one gets each dead worker. */
  async claimExpiredWorkers(now: number, exceptWorkerId?: string, ctx?: StoreCallContext): Promise<ExpiredWorker[]> {
    return this.#run(ctx, (s) => s.claimExpired.immediate(this.#namespace, now, exceptWorkerId ?? null));
  }

  /** One `BEGIN IMMEDIATE` transaction: the previous row is read and replaced under the write lock. */
  async joinWorker(
    workerId: string,
    leaseUntil: number,
    description: WorkerDescription,
    ctx?: StoreCallContext,
  ): Promise<ExpiredWorker | undefined> {
    return this.#run(ctx, (s) =>
      s.joinWorker.immediate({ namespace: this.#namespace, workerId, leaseUntil, description, now: this.#clock() }),
    );
  }

  async listWorkers(ctx?: StoreCallContext): Promise<WorkerRecord[]> {
    return this.#run(ctx, (s) => s.listWorkers.deferred(this.#namespace));
  }

  async removeWorker(workerId: string, ctx?: StoreCallContext): Promise<void> {
    await this.#run(ctx, (s) => {
      s.removeWorker.run(this.#namespace, workerId);
    });
  }

  async listWorkerTurns(workerId: string, ctx?: StoreCallContext): Promise<QueueSlot[]> {
    return this.#run(ctx, (s) => s.workerTurns.all(this.#namespace, workerId).map(toTicket));
  }

  async findMessage(messageId: string, ctx?: StoreCallContext, owner?: string): Promise<MessageIndexEntry | undefined> {
    return this.#run(ctx, (s) => {
      // '' is how the anonymous scope is keyed, not a principal: no commit indexes under owner ''.
      if (owner === ANONYMOUS_SCOPE) return undefined;
      const row = s.findMessage.get(this.#namespace, owner ?? ANONYMOUS_SCOPE, messageId);
      if (row === undefined) return undefined;
      const entry: MessageIndexEntry = { taskId: row.task_id, contextId: row.context_id };
      if (row.digest !== null) entry.digest = row.digest;
      return entry;
    });
  }

  // ---- Push notifications ----

  /** One `BEGIN IMMEDIATE` transaction: the task check, the config and its fresh delivery state. */
  async savePushConfig(request: SavePushConfigRequest, ctx?: StoreCallContext): Promise<PushConfigRecord> {
    return this.#run(ctx, (s) => {
      checkPushConfigRequest(request, 'SqliteStore');
      const { taskId, config, protocolVersion } = request;
      const configJson = JSON.stringify(config);
      const saved = s.savePush.immediate({
        namespace: this.#namespace,
        taskId,
        configId: config.id,
        configJson,
        protocolVersion,
        now: this.#clock(),
      });
      return {
        taskId,
        config: JSON.parse(configJson) as StoredPushConfig,
        protocolVersion,
        createdAt: saved.created_at,
        updatedAt: saved.updated_at,
      };
    });
  }

  async getPushConfig(taskId: string, configId: string, ctx?: StoreCallContext): Promise<PushConfigRecord | undefined> {
    return this.#run(ctx, (s) => {
      const row = s.getPushConfig.get(this.#namespace, taskId, configId);
      return row === undefined ? undefined : toPushConfigRecord(row);
    });
  }

  async listPushConfigs(taskId: string, ctx?: StoreCallContext): Promise<PushConfigRecord[]> {
    return this.#run(ctx, (s) => s.listPushConfigs.all(this.#namespace, taskId).map(toPushConfigRecord));
  }

  async deletePushConfig(taskId: string, configId: string, ctx?: StoreCallContext): Promise<boolean> {
    return this.#run(ctx, (s) => s.deletePush.immediate({ namespace: this.#namespace, taskId, configId }));
  }

  /** One `BEGIN IMMEDIATE` transaction: claimants in every process serialise on the write lock. */
  async claimPushDeliveries(request: ClaimPushDeliveriesRequest, ctx?: StoreCallContext): Promise<PushDelivery[]> {
    const { workerId, now, claimUntil, limit } = request;
    return this.#run(ctx, (s) =>
      s.claimPush.immediate({
        namespace: this.#namespace,
        workerId,
        claimId: randomUUID(),
        now,
        claimUntil,
        limit: Math.max(0, Math.trunc(limit)),
      }),
    );
  }

  async renewPushClaims(workerId: string, claimUntil: number, ctx?: StoreCallContext): Promise<number> {
    return this.#run(ctx, (s) => s.renewPushClaims.run(claimUntil, this.#namespace, workerId).changes);
  }

  async completePushDelivery(request: CompletePushDeliveryRequest, ctx?: StoreCallContext): Promise<boolean> {
    const { taskId, configId, claimId, cursor, sentAt } = request;
    return this.#run(
      ctx,
      (s) =>
        s.completePushDelivery.run({
          namespace: this.#namespace,
          taskId,
          configId,
          claimId,
          cursor,
          sentAt,
          next: request.nextAttemptAt ?? null,
          status: request.status ?? null,
        }).changes > 0,
    );
  }

  async failPushAttempt(request: FailPushAttemptRequest, ctx?: StoreCallContext): Promise<boolean> {
    const { taskId, configId, claimId, nextAttemptAt, error } = request;
    return this.#run(
      ctx,
      (s) =>
        s.failPushAttempt.run({
          namespace: this.#namespace,
          taskId,
          configId,
          claimId,
          next: nextAttemptAt,
          error,
          status: request.status ?? null,
        }).changes > 0,
    );
  }

  async releasePushClaim(key: PushClaimKey, ctx?: StoreCallContext): Promise<boolean> {
    const { taskId, configId, claimId } = key;
    return this.#run(
      ctx,
      (s) => s.releasePushClaim.run({ namespace: this.#namespace, taskId, configId, claimId }).changes > 0,
    );
  }

  async listPushDeliveries(filter: PushDeliveryFilter = {}, ctx?: StoreCallContext): Promise<PushDelivery[]> {
    const { taskId, failed, limit } = filter;
    const params = {
      namespace: this.#namespace,
      failed: failed === undefined ? null : failed ? 1 : 0,
      limit: sqlLimit(limit),
    };
    return this.#run(ctx, (s) =>
      (taskId === undefined
        ? s.listPushDeliveries.all(params)
        : s.listTaskPushDeliveries.all({ ...params, taskId })
      ).map(toPushDelivery),
    );
  }

  /**
   * Listeners run synchronously right after a commit by this store, and from the poll loop for
   * commits by other connections to the file. A listener that throws does not affect the commit or
   * the other listeners; its error goes to the `onListenerError` option, if any.
   */
  /**
   * Listeners hear of this store's commits right away, and of other processes' commits from the
   * poll loop, which reads the tasks updated since its last look (by `updated_at`, with a margin
   * for clocks of processes on one machine that disagree a little).
   */
  subscribeAll(listener: (taskId: string, seq: number) => void): Unsubscribe {
    const subscription = { listener };
    if (this.#allSubscriptions.size === 0) this.#allSince = this.#clock() - ALL_TASKS_CLOCK_MARGIN_MS;
    this.#allSubscriptions.add(subscription);
    this.#syncTimer();
    return () => {
      if (!this.#allSubscriptions.delete(subscription)) return;
      if (this.#allSubscriptions.size === 0) this.#allSeen.clear();
      this.#syncTimer();
    };
  }

  subscribe(taskId: string, listener: (seq: number) => void): Unsubscribe {
    if (!this.#subscriptions.has(taskId)) {
      if (!this.#seen.has(taskId)) this.#seen.set(taskId, this.#currentVersion(taskId));
      if (this.supports.crossProcess && this.#hasQueuedTurn(taskId)) this.#queued.add(taskId);
    }
    // A wrapper per call, so subscribing the same function twice needs two unsubscribes.
    const subscription: Subscription = { listener };
    multiMapAdd(this.#subscriptions, taskId, subscription);
    this.#syncTimer();
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      if (!multiMapDelete(this.#subscriptions, taskId, subscription) || this.#subscriptions.has(taskId)) return;
      this.#seen.delete(taskId);
      this.#queued.delete(taskId);
      this.#syncTimer();
    };
  }

  async #run<T>(ctx: StoreCallContext | undefined, fn: (statements: Statements) => T): Promise<T> {
    ctx?.signal?.throwIfAborted();
    // Every operation sees the commits made before it, also those still waiting for their batch.
    if (this.#pendingCommits.length > 0) this.#flushCommits();
    const statements = this.#statements;
    if (statements === undefined) throw notOpen(this.#filename, this.#closed);
    try {
      return fn(statements);
    } catch (error) {
      throw storeError(error, this.#filename, this.#busyTimeoutMs);
    }
  }

  #currentVersion(taskId: string): number {
    try {
      return this.#statements?.taskVersion.get(this.#namespace, taskId) ?? 0;
    } catch {
      // Unknown for now: the poll loop will report whatever version it finds.
      return 0;
    }
  }

  #hasQueuedTurn(taskId: string): boolean {
    try {
      return (this.#statements?.queuedTasks.all(this.#namespace, JSON.stringify([taskId])).length ?? 0) > 0;
    } catch {
      return false;
    }
  }

  /** `seq` 0 means "no new events, re-check" (a turn ended); it is not recorded as seen. */
  #notify(taskId: string, seq: number): void {
    if (this.#allSubscriptions.size > 0) this.#notifyAll(taskId, seq);
    if (!this.#subscriptions.has(taskId)) return;
    if (seq > 0) this.#seen.set(taskId, seq);
    for (const { listener } of multiMapValues(this.#subscriptions, taskId)) {
      try {
        listener(seq);
      } catch (error) {
        try {
          this.#onListenerError?.(error, taskId);
        } catch {
          // The error handler failed too; nothing is left to report it to.
        }
      }
    }
  }

  #notifyAll(taskId: string, seq: number): void {
    for (const { listener } of [...this.#allSubscriptions]) {
      try {
        listener(taskId, seq);
      } catch (error) {
        try {
          this.#onListenerError?.(error, taskId);
        } catch {
          // The error handler failed too; nothing is left to report it to.
        }
      }
    }
  }

  /** Tells subscribeAll's listeners of the tasks whose version changed since they were last seen. */
  #pollAll(changed: { task_id: string; version: number; updated_at: number }[], since: number): void {
    let latest = since + ALL_TASKS_CLOCK_MARGIN_MS;
    for (const { task_id: taskId, version, updated_at: updatedAt } of changed) {
      latest = Math.max(latest, updatedAt);
      const seen = this.#allSeen.get(taskId);
      this.#allSeen.set(taskId, { version, updatedAt });
      if (seen?.version !== version) this.#notifyAll(taskId, version);
    }
    this.#allSince = latest - ALL_TASKS_CLOCK_MARGIN_MS;
    // Only tasks the next look can return again need remembering.
    for (const [taskId, { updatedAt }] of this.#allSeen) {
      if (updatedAt < this.#allSince) this.#allSeen.delete(taskId);
    }
  }

  /** Runs the poll loop exactly while the store is open, shared and has subscribers. */
  #syncTimer(): void {
    const wanted =
      this.supports.crossProcess &&
      this.#statements !== undefined &&
      (this.#subscriptions.size > 0 || this.#allSubscriptions.size > 0);
    if (wanted && this.#timer === undefined) {
      this.#timer = setInterval(() => this.#poll(), this.#pollIntervalMs);
      this.#timer.unref();
    } else if (!wanted && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  #poll(): void {
    const statements = this.#statements;
    if (statements === undefined || (this.#subscriptions.size === 0 && this.#allSubscriptions.size === 0)) return;
    let rows: { task_id: string; version: number }[] = [];
    let queued = new Set<string>();
    let changed: { task_id: string; version: number; updated_at: number }[] = [];
    let dataVersion: number | undefined;
    const since = this.#allSince;
    try {
      // Cheap check first: data_version only moves when another connection committed.
      dataVersion = statements.dataVersion.get();
      if (dataVersion === this.#dataVersion) return;
      if (this.#subscriptions.size > 0) {
        const ids = JSON.stringify([...this.#subscriptions.keys()]);
        rows = statements.taskVersions.all(this.#namespace, ids);
        queued = new Set(statements.queuedTasks.all(this.#namespace, ids));
      }
      if (this.#allSubscriptions.size > 0) changed = statements.tasksUpdatedSince.all(this.#namespace, since);
    } catch {
      // Transient (locked, or closed between ticks): the next tick tries again.
      return;
    }
    this.#dataVersion = dataVersion;
    if (this.#allSubscriptions.size > 0) this.#pollAll(changed, since);
    const notified = new Set<string>();
    for (const { task_id: taskId, version } of rows) {
      // Versions only grow, except when a purged task id is created again: report any change.
      if (version !== this.#seen.get(taskId)) {
        this.#notify(taskId, version);
        notified.add(taskId);
      }
    }
    // A turn of a subscribed task ended in another process: wake the turns waiting behind it.
    for (const taskId of [...this.#queued]) {
      if (queued.has(taskId)) continue;
      this.#queued.delete(taskId);
      if (!notified.has(taskId)) this.#notify(taskId, 0);
    }
    for (const taskId of queued) if (this.#subscriptions.has(taskId)) this.#queued.add(taskId);
  }
}

/**
 * How far back subscribeAll's poll looks before the last update it saw: processes on one machine
 * read one clock, but a commit may take its `updated_at` a little before an earlier one commits.
 */
const ALL_TASKS_CLOCK_MARGIN_MS = 2000;

function sqlLimit(limit: number | undefined): number {
  return limit === undefined ? -1 : Math.max(0, Math.trunc(limit));
}
