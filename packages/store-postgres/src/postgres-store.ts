/**
 * A2AStore on PostgreSQL (node-postgres), for many workers behind a load balancer acting as one
 * server: every worker opens a PostgresStore on the same database, optimistic versions keep their
 * writes from overwriting each other, LISTEN/NOTIFY tells each worker's subscribers about events
 * committed by the others, and the turns, workers and messages tables coordinate them (one turn at
 * a time per context in arrival order, leases of live workers, user message ids already received).
 */

import { createHash, randomUUID } from 'node:crypto';
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
  type TaskEvent,
  type TaskListPage,
  type TaskListQuery,
  type TaskRecord,
  TERMINAL_STATES,
  type TurnReadiness,
  type QueueSlot,
  taskNotFound,
  type Unsubscribe,
  VersionConflictError,
  type WorkerDescription,
  type WorkerRecord,
} from '@fastify-a2a/core';
import pg from 'pg';
import { describeTarget, messageOf, notOpen, openError, resolveTarget, storeError, type Target } from './errors.js';
import { CommitQueue, type Queued } from './group-commit.js';
import { NotificationListener } from './listener.js';
import { appliedVersions, LATEST_VERSION, migrate, pendingMigrations } from './migrations.js';
import { escapeIdentifier, notificationChannel, turnLockKey } from './sql.js';

export interface PostgresStoreOptions {
  /**
   * A pool you created and manage. The store never ends it (unless `closePool: true`). Give either
   * this or `connectionString` / `poolConfig`.
   */
  pool?: pg.Pool;
  /**
   * Where to connect, e.g. `postgres://user:password@host:5432/db`. The store creates (and, on
   * close(), ends) a pool for it. Without `pool`, `connectionString` and `poolConfig`, pg's
   * defaults and `PG*` environment variables apply.
   */
  connectionString?: string;
  /**
   * Settings for the pool the store creates (`max`, `ssl`, `host`, …).
   * `connectionTimeoutMillis` defaults to 5000 here (pg's own default waits forever).
   */
  poolConfig?: pg.PoolConfig;
  /**
   * End the pool on close() even though it was given in `pool`.
   * @default false (a pool the store created is always ended)
   */
  closePool?: boolean;
  /**
   * The schema holding the tables; created by the migrations when missing. At most 63 bytes.
   * @default 'a2a'
   */
  schema?: string;
  /**
   * Isolates agents sharing one schema: every row is keyed by namespace and a store only sees its
   * own.
   * @default 'default'
   */
  namespace?: string;
  /**
   * Apply pending migrations at open(). Set it to false when a DBA applies them (see
   * `migrationSql()`); open() then fails if the schema is not current.
   * @default true
   */
  migrate?: boolean;
  /**
   * Clock for `createdAt` / `updatedAt` (stored as bigint epoch milliseconds).
   * @default systemClock (Date.now)
   */
  clock?: Clock;
  /**
   * Receive events committed by other processes (LISTEN on one dedicated connection). Without it,
   * subscribers only hear about this process's commits; the store still NOTIFYs the others.
   * @default true
   */
  listen?: boolean;
  /**
   * Send each statement as a named prepared statement, so Postgres parses and plans it once per
   * connection instead of on every call (the commit statement is a five-part CTE: planning it was
   * a large part of Postgres's work per commit). Set it to false behind a pooler that cannot keep
   * prepared statements per client, such as PgBouncer before 1.21 in transaction mode (1.21+
   * handles them with `max_prepared_statements`).
   * @default true
   */
  preparedStatements?: boolean;
  /**
   * Group commit: commits of different tasks made while earlier ones are still on their way go to
   * the database together, as one pipelined transaction (one round trip, one WAL flush), each with
   * its own version check and its own result. Nothing waits for a batch to fill: a commit that
   * finds the way free goes at once, alone. Uses up to two more connections (outside the pool).
   * Set it to false to send every commit as its own statement on the pool.
   * @default true
   */
  groupCommit?: boolean;
  /**
   * Called when a subscriber throws (a throwing subscriber neither fails the commit nor keeps the
   * other subscribers, or the LISTEN connection, from being called), and when the NOTIFY telling
   * other processes about commits fails (`taskId` is then the comma-separated payloads; their
   * streams catch up on their next poll).
   * @default undefined (the error is ignored)
   */
  onListenerError?: (error: unknown, taskId: string) => void;
}

const DEFAULT_CONNECTION_TIMEOUT_MS = 5_000;
const RECONNECT_MIN_DELAY_MS = 100;
const RECONNECT_MAX_DELAY_MS = 5_000;

interface TaskRow {
  task: string;
  version: number;
  created_at: string | number;
  updated_at: string | number;
  owner: string | null;
  /** Migration 7: the trace context of the commit that last changed the task. */
  trace_context: string | null;
}

/** A row of a listTasks statement: the total, and a page row's columns (NULL when the page is empty). */
interface ListedRow extends Omit<TaskRow, 'task'> {
  total: number;
  task: string | null;
  status_ts: string | number | null;
  task_id: string | null;
}

interface EventRow {
  seq: number;
  event: string;
  created_at: string | number;
}

interface TurnRow {
  context_id: string;
  position: string | number;
  task_id: string;
  turn_id: string;
  worker_id: string;
}

type Listener = (seq: number) => void;

interface WorkerDescriptionRow {
  worker_id: string;
  lease_until: string | number;
  last_heartbeat: string | number;
  incarnation: string | null;
  host: string | null;
  pid: number | null;
  started_at: string | number | null;
}

interface PushConfigRow {
  task_id: string;
  config_id: string;
  config: string;
  protocol_version: string;
  created_at: string | number;
  updated_at: string | number;
}

interface PushDeliveryRow extends PushConfigRow {
  cursor: number;
  attempts: number;
  next_attempt_at: string | number | null;
  last_sent_at: string | number | null;
  failed: boolean;
  last_error: string | null;
  last_status: number | null;
  claimed_by: string | null;
  claim_id: string | null;
  claim_until: string | number | null;
  task_version: number;
}

/** bigint columns come back as strings (pg's default for int8); NULL stays null. */
const epochOrNull = (value: string | number | null): number | null => (value === null ? null : Number(value));

const toPushConfig = (row: PushConfigRow): PushConfigRecord => ({
  taskId: row.task_id,
  config: JSON.parse(row.config) as StoredPushConfig,
  protocolVersion: row.protocol_version as PushProtocolVersion,
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

const toPushDelivery = (row: PushDeliveryRow): PushDelivery => ({
  config: toPushConfig(row),
  state: {
    cursor: row.cursor,
    attempts: row.attempts,
    nextAttemptAt: epochOrNull(row.next_attempt_at),
    lastSentAt: epochOrNull(row.last_sent_at),
    failed: row.failed,
    lastError: row.last_error,
    lastStatus: row.last_status,
    claimedBy: row.claimed_by,
    claimId: row.claim_id,
    claimUntil: epochOrNull(row.claim_until),
  },
  taskVersion: row.task_version,
});

/** §6.3 terminal and interrupted states, as an SQL list of constants: what a push throttle window lets through. */
const FINAL_STATES_SQL = [...TERMINAL_STATES, ...INTERRUPTED_STATES].map((state) => `'${state}'`).join(', ');

// Documents are read as text (`::text`) and parsed here, so a global `pg.types` override of the
// json parser can't change what we return, and a SQL NULL context state stays `undefined`.
const toRecord = (row: TaskRow): TaskRecord => {
  const record: TaskRecord = {
    task: JSON.parse(row.task),
    version: row.version,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
  // No owner: no property at all (the contract's "absent, not null").
  if (row.owner !== null) record.owner = row.owner;
  // Migration 7; absent, not null, like the owner.
  if (row.trace_context !== null && row.trace_context !== undefined) record.traceContext = row.trace_context;
  return record;
};

/**
 * `messages.owner` of commits without an owner (see migration 5): a key column cannot be NULL, and
 * commits refuse '' as an owner, so no principal shares this scope.
 */
const ANONYMOUS_SCOPE = '';

const toEvent = (row: EventRow): StoredEvent => ({
  seq: row.seq,
  event: JSON.parse(row.event) as TaskEvent,
  createdAt: Number(row.created_at),
});

function toWorkerRecord(row: WorkerDescriptionRow, turns: QueueSlot[]): WorkerRecord {
  const { incarnation, host, pid, started_at: startedAt } = row;
  return {
    workerId: row.worker_id,
    leaseUntil: Number(row.lease_until),
    lastHeartbeat: Number(row.last_heartbeat),
    description:
      incarnation === null || host === null || pid === null || startedAt === null
        ? null
        : { incarnation, host, pid, startedAt: Number(startedAt) },
    turns,
  };
}

const toTicket = (row: TurnRow): QueueSlot => ({
  contextId: row.context_id,
  position: Number(row.position),
  taskId: row.task_id,
  messageId: row.turn_id,
  workerId: row.worker_id,
});

/** The first id that occurs twice, or undefined. */
function firstRepeat(ids: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) return id;
    seen.add(id);
  }
  return undefined;
}

function validate(options: PostgresStoreOptions): void {
  const invalid = (message: string) => new A2AError('INVALID_OPTIONS', message);
  if (options.pool !== undefined && (options.connectionString !== undefined || options.poolConfig !== undefined)) {
    throw invalid(
      'PostgresStore: give either `pool` (a pool you manage) or `connectionString` / `poolConfig` (a pool the store creates), not both.',
    );
  }
  for (const key of ['schema', 'namespace'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      throw invalid(`PostgresStore: \`${key}\` must be a non-empty string.`);
    }
  }
  if (options.groupCommit !== undefined && typeof options.groupCommit !== 'boolean') {
    throw invalid('PostgresStore: `groupCommit` must be true or false.');
  }
  if (options.onListenerError !== undefined && typeof options.onListenerError !== 'function') {
    throw invalid('PostgresStore: `onListenerError` must be a function.');
  }
  if (options.schema?.startsWith('pg_')) {
    throw invalid(
      `PostgresStore: schema "${options.schema}" starts with pg_, which Postgres reserves for system schemas.`,
    );
  }
  if (options.schema !== undefined && Buffer.byteLength(options.schema) > 63) {
    throw invalid(
      `PostgresStore: schema "${options.schema}" is longer than 63 bytes; Postgres would truncate it. Choose a shorter name.`,
    );
  }
}

const statementNames = new Map<string, string>();

/** A stable name per statement text: the same text gets the same prepared statement on a connection. */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `a2a_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    statementNames.set(text, name);
  }
  return name;
}

/** What a commit statement returns: one row when written (the enqueued turn's position, if any). */
interface CommitRow {
  position: string | number | null;
}

/** A commit, checked and turned into its statement. */
interface PreparedCommit extends Queued {
  request: CommitRequest;
  text: string;
  values: unknown[];
  /** The task's version once written. */
  version: number;
  /** The message index scope of its ids ('' for none). */
  scope: string;
  messageIds: string[];
  ctx: StoreCallContext | undefined;
}

interface QueuedCommit extends PreparedCommit {
  resolve(result: CommitResult): void;
  reject(error: unknown): void;
}

type BatchOutcome =
  | { kind: 'committed'; rows: CommitRow[][] }
  /** The server rolled the whole batch back, or it was never sent: running its commits again is safe. */
  | { kind: 'rolledBack' }
  /** The connection failed: the batch may or may not be written. */
  | { kind: 'unknown'; error: unknown };

/**
 * Batches of group commit in flight at once, each on its own connection: two, so that one batch
 * is being built and sent while the other waits for its WAL flush. On the 2-core bench machine one
 * and two were within noise of each other and four was slower (bench/GROUP_COMMIT.md).
 */
const COMMIT_LANES = 2;
/** At most this many commits per batch, so that one batch holds its row locks briefly. */
const MAX_BATCH = 128;

/** Which commit statement: creating or updating the task, and whether it enqueues or finishes a turn. */
interface CommitShape {
  create: boolean;
  enqueue: boolean;
  finish: boolean;
}

/**
 * The commit statements, one per {@link CommitShape}, each one statement = one implicit
 * transaction and one round trip: write the snapshot only at the expected version; only if it was
 * written, append the events, index the user message ids, and enqueue or remove a turn. Zero rows
 * back means a version conflict; a unique violation on messages means a duplicate message id (the
 * whole statement, task and events included, is then rolled back). The NOTIFY is not part of it:
 * see `notify` in {@link statements}.
 *
 * $1 namespace, $2 task id, $3 context id, $4 state, $5 new version, $6 task, $7 now,
 * $8 expected version, $9 events (json[]), $10 message ids (text[]), $11 status timestamp (what
 * listTasks sorts by), $12 the commit's owner (NULL for none: the task's owner when it creates
 * the task, and the scope of the message ids, '' for none), $13 the messages' digests (text[],
 * one per id), $14 the commit's trace context (NULL for none); then, when enqueueing, the turn id, the worker id and the context's lock key; then,
 * when finishing, the ticket's position and turn id.
 */
function commitStatements(s: string): (shape: CommitShape) => string {
  const build = ({ create, enqueue, finish }: CommitShape): string => {
    let next = 15;
    // The owner is written by the creating commit only: an update never touches the column.
    const written = create
      ? `INSERT INTO ${s}.tasks (namespace, task_id, context_id, owner, state, status_ts, version, task, created_at, updated_at, trace_context)
         VALUES ($1, $2, $3, $12::text, $4, $11, $5, $6::json, $7, $7, $14::text)
         ON CONFLICT DO NOTHING
         RETURNING 1`
      : `UPDATE ${s}.tasks SET context_id = $3, state = $4, status_ts = $11, version = $5, task = $6::json,
         updated_at = $7, trace_context = $14::text
         WHERE namespace = $1 AND task_id = $2 AND version = $8
         RETURNING 1`;
    const ctes = [
      `written AS (${written})`,
      `events AS (
        INSERT INTO ${s}.events (namespace, task_id, seq, event, created_at)
        SELECT $1::text, $2::text, ($8::integer + e.ord)::integer, e.event, $7::bigint
        FROM written, unnest($9::json[]) WITH ORDINALITY AS e(event, ord))`,
      `indexed AS (
        INSERT INTO ${s}.messages (namespace, owner, message_id, task_id, context_id, digest)
        SELECT $1::text, coalesce($12::text, ''), m.id, $2::text, $3::text, m.digest
        FROM written, unnest($10::text[], $13::text[]) AS m(id, digest))`,
    ];
    let result = 'NULL::bigint';
    if (enqueue) {
      const [messageId, workerId, lockKey] = [next++, next++, next++];
      // As in the standalone `enqueue`: the position is drawn once the context's advisory lock is
      // ours (held until commit), so positions follow commit order.
      ctes.push(
        `locked AS (SELECT pg_advisory_xact_lock($${lockKey}::bigint) FROM written)`,
        `enqueued AS (
          INSERT INTO ${s}.turns (namespace, context_id, task_id, turn_id, worker_id, enqueued_at)
          SELECT $1::text, $3::text, $2::text, $${messageId}::text, $${workerId}::text, $7::bigint FROM locked
          RETURNING position)`,
      );
      result = '(SELECT position FROM enqueued)';
    }
    if (finish) {
      const [position, messageId] = [next++, next++];
      ctes.push(
        `finished AS (
          DELETE FROM ${s}.turns
          WHERE namespace = $1 AND context_id = $3 AND position = $${position}::bigint AND task_id = $2
            AND turn_id = $${messageId}::text AND EXISTS (SELECT 1 FROM written))`,
      );
    }
    return `WITH ${ctes.join(',\n')}\nSELECT ${result} AS position FROM written`;
  };
  // All eight built once, indexed by the shape's bits: no key to build on each commit.
  const texts = Array.from({ length: 8 }, (_, bits) =>
    build({ create: (bits & 1) !== 0, enqueue: (bits & 2) !== 0, finish: (bits & 4) !== 0 }),
  );
  return ({ create, enqueue, finish }) => texts[(create ? 1 : 0) | (enqueue ? 2 : 0) | (finish ? 4 : 0)] as string;
}

// The filters a listTasks statement has, as bits: one statement per combination.
const BY_CONTEXT = 1;
const BY_STATE = 2;
const SINCE = 4;
const AFTER = 8;
/** One owner's tasks, or with '' those without one (the expression of the owner index, migration 5). */
const BY_OWNER = 16;

/**
 * The listTasks statements, one per combination of filters, each one round trip: the page and its
 * total from one snapshot. The page is one range of one of the (namespace[, context_id | state |
 * owner], status_ts DESC, task_id "C" DESC) indexes, the cursor a row comparison the index evaluates;
 * the outer ORDER BY only restores the order of at most limit + 1 rows the join may shuffle. The
 * total is a count over the same filters (an index-only scan once the table is vacuumed).
 * $1 namespace, $2 limit (+ 1, to learn whether more follow), then the filters in the order below.
 */
function listStatements(s: string): (bits: number) => string {
  const build = (bits: number): string => {
    let next = 3;
    const filters: string[] = [];
    if (bits & BY_OWNER) filters.push(`coalesce(owner, '') = $${next++}`);
    if (bits & BY_CONTEXT) filters.push(`context_id = $${next++}`);
    if (bits & BY_STATE) filters.push(`state = $${next++}`);
    if (bits & SINCE) filters.push(`status_ts >= $${next++}::bigint`);
    const matching = ['namespace = $1', ...filters].join(' AND ');
    const after = bits & AFTER ? ` AND (status_ts, task_id COLLATE "C") < ($${next++}::bigint, $${next++}::text)` : '';
    return `
      WITH page AS (
        SELECT task::text AS task, version, created_at, updated_at, owner, trace_context, status_ts, task_id
        FROM ${s}.tasks WHERE ${matching}${after}
        ORDER BY status_ts DESC, task_id COLLATE "C" DESC LIMIT $2
      ),
      matching AS (SELECT count(*)::int AS total FROM ${s}.tasks WHERE ${matching})
      SELECT matching.total, page.* FROM matching LEFT JOIN page ON true
      ORDER BY page.status_ts DESC, page.task_id COLLATE "C" DESC`;
  };
  const texts = Array.from({ length: 32 }, (_, bits) => build(bits));
  return (bits) => texts[bits] as string;
}

/**
 * Builds every statement once, for one schema. Plain (unnamed) statements rather than named
 * prepared ones, so the store works behind PgBouncer in transaction mode.
 */
function statements(schema: string) {
  const s = escapeIdentifier(schema);
  const taskColumns = 'task::text AS task, version, created_at, updated_at, owner, trace_context';
  const turnColumns = 'context_id, position, task_id, turn_id, worker_id';
  const pushConfigColumns =
    'c.task_id, c.config_id, c.config::text AS config, c.protocol_version, c.created_at, c.updated_at';
  const pushStateColumns = (d: string) =>
    `${d}.cursor, ${d}.attempts, ${d}.next_attempt_at, ${d}.last_sent_at, ${d}.failed, ${d}.last_error,
     ${d}.last_status, ${d}.claimed_by, ${d}.claim_id, ${d}.claim_until`;
  const pushDeliveryJoin = `FROM ${s}.push_configs c
    JOIN ${s}.push_deliveries d ON d.namespace = c.namespace AND d.task_id = c.task_id AND d.config_id = c.config_id
    JOIN ${s}.tasks t ON t.namespace = c.namespace AND t.task_id = c.task_id`;
  return {
    commit: commitStatements(s),
    list: listStatements(s),
    version: `SELECT version FROM ${s}.tasks WHERE namespace = $1 AND task_id = $2`,
    getTask: `SELECT ${taskColumns} FROM ${s}.tasks WHERE namespace = $1 AND task_id = $2`,
    readEvents: `
      SELECT seq, event::text AS event, created_at FROM ${s}.events
      WHERE namespace = $1 AND task_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
    byContext: `
      SELECT ${taskColumns} FROM ${s}.tasks
      WHERE namespace = $1 AND context_id = $2 ORDER BY created_at, row_id LIMIT $3`,
    // Through tasks_by_state_status_ts, the index ListTasks filters by state with.
    interrupted: `
      SELECT ${taskColumns} FROM ${s}.tasks
      WHERE namespace = $1 AND state IN ('input-required', 'auth-required') AND status_ts < $2 AND status_ts > $3
      ORDER BY status_ts, task_id COLLATE "C" LIMIT $4`,
    // The state list matches the partial index `tasks_active` (see migrations.ts).
    active: `
      SELECT ${taskColumns} FROM ${s}.tasks
      WHERE namespace = $1 AND state IN ('submitted', 'working', 'unknown') ORDER BY created_at, row_id`,
    versions: `SELECT task_id, version FROM ${s}.tasks WHERE namespace = $1 AND task_id = ANY($2::text[])`,
    getContext: `SELECT state::text AS state, updated_at FROM ${s}.contexts WHERE namespace = $1 AND context_id = $2`,
    setContext: `
      INSERT INTO ${s}.contexts (namespace, context_id, state, updated_at) VALUES ($1, $2, $3::json, $4)
      ON CONFLICT (namespace, context_id) DO UPDATE SET state = EXCLUDED.state, updated_at = EXCLUDED.updated_at`,
    // The state list matches the partial index `tasks_terminal`. Events, push configs and push
    // deliveries go with their task (ON DELETE CASCADE); the message ids indexed for the tasks go
    // in the same statement.
    purgeTasks: `
      WITH purged AS (
        DELETE FROM ${s}.tasks
        WHERE namespace = $1 AND state IN ('completed', 'canceled', 'failed', 'rejected') AND updated_at < $2
        RETURNING task_id
      ),
      unindexed AS (
        DELETE FROM ${s}.messages WHERE namespace = $1 AND task_id IN (SELECT task_id FROM purged)
      )
      SELECT count(*)::int AS tasks FROM purged`,
    // A separate statement, run after purgeTasks: inside one statement it would still see the tasks
    // just deleted.
    purgeContexts: `
      DELETE FROM ${s}.contexts c WHERE c.namespace = $1 AND c.updated_at < $2
      AND NOT EXISTS (SELECT 1 FROM ${s}.tasks t WHERE t.namespace = $1 AND t.context_id = c.context_id)`,
    // ---- Push notifications (see migration 4) ----
    // The config and a fresh delivery row in one statement, only if the task exists. The foreign
    // key to tasks is what makes it safe against a concurrent purge: its check (at the end of the
    // statement) locks the task row, waits for a purge deleting it, and fails with 23503 if it did;
    // a purge that comes after deletes the config by cascade. $1 namespace, $2 task id, $3 config
    // id, $4 config, $5 protocol version, $6 now.
    savePushConfig: `
      WITH saved AS (
        INSERT INTO ${s}.push_configs (namespace, task_id, config_id, config, protocol_version, created_at, updated_at)
        SELECT $1, $2, $3, $4::json, $5, $6, $6
        WHERE EXISTS (SELECT 1 FROM ${s}.tasks WHERE namespace = $1 AND task_id = $2)
        ON CONFLICT (namespace, task_id, config_id) DO UPDATE SET config = EXCLUDED.config,
          protocol_version = EXCLUDED.protocol_version, updated_at = EXCLUDED.updated_at
        RETURNING created_at, updated_at
      ),
      reset AS (
        INSERT INTO ${s}.push_deliveries (namespace, task_id, config_id, cursor, attempts, failed)
        SELECT $1, $2, $3, 0, 0, false FROM saved
        ON CONFLICT (namespace, task_id, config_id) DO UPDATE SET cursor = 0, attempts = 0, next_attempt_at = NULL,
          last_sent_at = NULL, failed = false, last_error = NULL, last_status = NULL, claimed_by = NULL,
          claim_id = NULL, claim_until = NULL
      )
      SELECT created_at, updated_at FROM saved`,
    getPushConfig: `
      SELECT ${pushConfigColumns} FROM ${s}.push_configs c WHERE namespace = $1 AND task_id = $2 AND config_id = $3`,
    // row_id: save order, kept by a replace (an upsert updates the row).
    listPushConfigs: `
      SELECT ${pushConfigColumns} FROM ${s}.push_configs c WHERE namespace = $1 AND task_id = $2
      ORDER BY created_at, row_id`,
    // The delivery row goes by cascade.
    deletePushConfig: `DELETE FROM ${s}.push_configs WHERE namespace = $1 AND task_id = $2 AND config_id = $3`,
    // The rules of claimPushDeliveries (core's PushStore) in one statement. FOR UPDATE SKIP LOCKED:
    // a row another claimant has locked is skipped; one it claimed and committed meanwhile is
    // re-checked against the new row version (claim_until is then in the future) and left out. So
    // of concurrent claimants exactly one gets each delivery, and none waits for another.
    // $1 namespace, $2 now, $3 limit, $4 worker id, $5 claim id, $6 claim until.
    claimPushDeliveries: `
      WITH due AS (
        SELECT d.namespace, d.task_id, d.config_id, t.version
        FROM ${s}.push_deliveries d
        JOIN ${s}.tasks t ON t.namespace = d.namespace AND t.task_id = d.task_id
        WHERE d.namespace = $1 AND NOT d.failed
          AND (d.claim_until IS NULL OR d.claim_until < $2)
          AND t.version > d.cursor
          AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= $2
               OR (d.attempts = 0 AND t.state IN (${FINAL_STATES_SQL})))
        ORDER BY d.next_attempt_at NULLS FIRST
        LIMIT $3
        FOR UPDATE OF d SKIP LOCKED
      ),
      claimed AS (
        UPDATE ${s}.push_deliveries d SET claimed_by = $4, claim_id = $5, claim_until = $6
        FROM due
        WHERE d.namespace = due.namespace AND d.task_id = due.task_id AND d.config_id = due.config_id
        RETURNING d.*, due.version AS task_version
      )
      SELECT ${pushConfigColumns}, ${pushStateColumns('d')}, d.task_version
      FROM claimed d
      JOIN ${s}.push_configs c ON c.namespace = d.namespace AND c.task_id = d.task_id AND c.config_id = d.config_id`,
    renewPushClaims: `UPDATE ${s}.push_deliveries SET claim_until = $3 WHERE namespace = $1 AND claimed_by = $2`,
    // Every write of a claim holder names its claim: a claim taken over, released, or gone with a
    // replaced or deleted config matches no row, and nothing is written. $4 claim id.
    completePushDelivery: `
      UPDATE ${s}.push_deliveries SET cursor = GREATEST(cursor, $5::integer), attempts = 0, next_attempt_at = $6,
        last_sent_at = $7, last_error = NULL, last_status = $8, claimed_by = NULL, claim_id = NULL, claim_until = NULL
      WHERE namespace = $1 AND task_id = $2 AND config_id = $3 AND claim_id = $4`,
    failPushAttempt: `
      UPDATE ${s}.push_deliveries SET attempts = attempts + 1, next_attempt_at = $5::bigint,
        failed = ($5::bigint IS NULL), last_error = $6, last_status = $7, claimed_by = NULL, claim_id = NULL,
        claim_until = NULL
      WHERE namespace = $1 AND task_id = $2 AND config_id = $3 AND claim_id = $4`,
    releasePushClaim: `
      UPDATE ${s}.push_deliveries SET claimed_by = NULL, claim_id = NULL, claim_until = NULL
      WHERE namespace = $1 AND task_id = $2 AND config_id = $3 AND claim_id = $4`,
    // $2 failed filter (NULL: both), $3 limit (NULL: all); the second one for one task ($4).
    listPushDeliveries: `
      SELECT ${pushConfigColumns}, ${pushStateColumns('d')}, t.version AS task_version ${pushDeliveryJoin}
      WHERE c.namespace = $1 AND ($2::boolean IS NULL OR d.failed = $2)
      ORDER BY c.created_at, c.row_id LIMIT $3`,
    listTaskPushDeliveries: `
      SELECT ${pushConfigColumns}, ${pushStateColumns('d')}, t.version AS task_version ${pushDeliveryJoin}
      WHERE c.namespace = $1 AND c.task_id = $4 AND ($2::boolean IS NULL OR d.failed = $2)
      ORDER BY c.created_at, c.row_id LIMIT $3`,
    // $1 namespace, $2 owner scope ('' for none), $3 message ids: which of them are indexed there
    // (after a duplicate).
    findMessages: `
      SELECT message_id, task_id, context_id FROM ${s}.messages
      WHERE namespace = $1 AND owner = $2 AND message_id = ANY($3::text[])`,
    findMessage: `
      SELECT task_id, context_id, digest FROM ${s}.messages WHERE namespace = $1 AND owner = $2 AND message_id = $3`,
    heartbeat: `
      INSERT INTO ${s}.workers (namespace, worker_id, lease_until, last_heartbeat) VALUES ($1, $2, $3, $4)
      ON CONFLICT (namespace, worker_id)
      DO UPDATE SET lease_until = EXCLUDED.lease_until, last_heartbeat = EXCLUDED.last_heartbeat`,
    removeWorker: `DELETE FROM ${s}.workers WHERE namespace = $1 AND worker_id = $2`,
    // joinWorker in one statement: "previous" reads the row as it was before the upsert
    // (every part of a statement sees the same snapshot), so a predecessor is returned exactly by
    // the start that replaced it. Its turns: all of the worker id's (the new start has none yet),
    // also when the row is gone (a reaper claimed it): then there is a predecessor only if it left turns.
    // $1 namespace, $2 worker id, $3 lease until, $4 now, $5 incarnation, $6 host, $7 pid, $8 started.
    joinWorker: `
      WITH previous AS (
        SELECT last_heartbeat, incarnation FROM ${s}.workers WHERE namespace = $1 AND worker_id = $2
      ), upsert AS (
        INSERT INTO ${s}.workers (namespace, worker_id, lease_until, last_heartbeat, incarnation, host, pid, started_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
        ON CONFLICT (namespace, worker_id) DO UPDATE SET lease_until = EXCLUDED.lease_until,
          last_heartbeat = EXCLUDED.last_heartbeat, incarnation = EXCLUDED.incarnation, host = EXCLUDED.host,
          pid = EXCLUDED.pid, started_at = EXCLUDED.started_at
        RETURNING 1
      )
      SELECT p.last_heartbeat, t.context_id, t.position, t.task_id, t.turn_id, t.worker_id
      FROM (SELECT 1) one LEFT JOIN previous p ON true
        LEFT JOIN ${s}.turns t ON t.namespace = $1 AND t.worker_id = $2
      WHERE p.incarnation IS DISTINCT FROM $5 AND (SELECT count(*) FROM upsert) = 1
        AND (p.last_heartbeat IS NOT NULL OR t.context_id IS NOT NULL)
      ORDER BY t.position`,
    // listWorkers: every lease with its turns, one row per turn (or one with null turn columns),
    // and, with no lease (0, no description), each worker id owning turns but no row any more (a
    // reaper claimed it and failed to reap them): operators must still see and release them.
    listWorkers: `
      SELECT w.worker_id, w.lease_until, w.last_heartbeat, w.incarnation, w.host, w.pid, w.started_at,
        t.context_id, t.position, t.task_id, t.turn_id
      FROM (
        SELECT worker_id, lease_until, last_heartbeat, incarnation, host, pid, started_at
        FROM ${s}.workers WHERE namespace = $1
        UNION ALL
        SELECT DISTINCT o.worker_id, 0::bigint, 0::bigint, NULL::text, NULL::text, NULL::integer, NULL::bigint
        FROM ${s}.turns o
        WHERE o.namespace = $1
          AND NOT EXISTS (SELECT 1 FROM ${s}.workers x WHERE x.namespace = $1 AND x.worker_id = o.worker_id)
      ) w LEFT JOIN ${s}.turns t ON t.namespace = $1 AND t.worker_id = w.worker_id
      ORDER BY w.worker_id COLLATE "C", t.position`,
    // enqueueTurn in one statement. The position is the identity's nextval, computed for the row
    // the CTE produces, so after the context's advisory lock is ours; the lock is held until
    // commit. Two enqueues on one context therefore draw their positions in commit order: the
    // later one draws only once the earlier one has committed (a bare sequence would let a turn
    // that commits later hold a smaller position, and be found ready while an earlier-numbered one
    // had not committed yet). The CTE runs exactly once: it calls a volatile function, so it is
    // never inlined. $1 namespace, $2 context id, $3 task id, $4 turn id, $5 worker id, $6 now,
    // $7 lock key.
    enqueue: `
      WITH locked AS (SELECT pg_advisory_xact_lock($7::bigint))
      INSERT INTO ${s}.turns (namespace, context_id, task_id, turn_id, worker_id, enqueued_at)
      SELECT $1, $2, $3, $4, $5, $6 FROM locked
      RETURNING position`,
    // The ticket directly ahead of position $3; none means the ticket is the head (or gone).
    ahead: `
      SELECT ${turnColumns} FROM ${s}.turns
      WHERE namespace = $1 AND context_id = $2 AND position < $3 ORDER BY position DESC LIMIT 1`,
    // Positions are never reused, so (context, position) names one turn; task and turn ids are
    // matched too, so that a forged or corrupted ticket cannot remove another turn. $6 channel,
    // $7 payload.
    finishTurn: `
      WITH finished AS (
        DELETE FROM ${s}.turns
        WHERE namespace = $1 AND context_id = $2 AND position = $3 AND task_id = $4 AND turn_id = $5
        RETURNING 1
      )
      SELECT pg_notify($6, $7) FROM finished
      -- Only when a turn waits behind this one: a transaction that ran NOTIFY takes a
      -- server-wide lock at commit, so notifying on every finish would serialise all workers.
      WHERE EXISTS (SELECT 1 FROM ${s}.turns WHERE namespace = $1 AND context_id = $2 AND position > $3)`,
    workerTurns: `SELECT ${turnColumns} FROM ${s}.turns WHERE namespace = $1 AND worker_id = $2 ORDER BY position`,
    // $1 channel, $2 payloads (text[]). Nothing here needs to survive a crash, so the commit does
    // not wait for its WAL flush, and releases the notification lock at once.
    notify: `
      WITH fast AS (SELECT set_config('synchronous_commit', 'off', true))
      SELECT pg_notify($1, p) FROM fast, unnest($2::text[]) AS p`,
    // One statement: the DELETE locks each expired row, so a concurrent claimer waits, then finds
    // the row gone (or renewed by a heartbeat meanwhile: the lease is checked again) and skips it.
    // Each dead worker goes to exactly one claimer, with its turns. $2 now, $3 except (or null).
    claimExpired: `
      WITH claimed AS (
        DELETE FROM ${s}.workers
        WHERE namespace = $1 AND lease_until < $2 AND worker_id IS DISTINCT FROM $3::text
        RETURNING worker_id, last_heartbeat
      )
      SELECT c.worker_id, c.last_heartbeat, t.context_id, t.position, t.task_id, t.turn_id
      FROM claimed c LEFT JOIN ${s}.turns t ON t.namespace = $1 AND t.worker_id = c.worker_id
      ORDER BY c.last_heartbeat, c.worker_id, t.position`,
  };
}

export class PostgresStore implements A2AStore, PushStore {
  readonly supports: StoreCapabilities;
  /** The schema holding the tables. */
  readonly schema: string;
  /** The namespace this store reads and writes. */
  readonly namespace: string;
  /** Whether statements go as named prepared statements (the `preparedStatements` option). */
  readonly preparedStatements: boolean;

  readonly #options: Readonly<PostgresStoreOptions>;
  readonly #clock: Clock;
  readonly #sql: ReturnType<typeof statements>;
  readonly #channel: string;
  /** Task id → latest seq, waiting for the next coalesced NOTIFY. */
  #pendingNotifications = new Map<string, number>();
  #notifying = false;
  readonly #target: Target;
  /** Task id → its subscribers (one kept as itself: see MultiMap in @fastify-a2a/core). */
  readonly #subscribers: MultiMap<string, { listener: Listener }> = new Map();
  /** subscribeAll() listeners: every task's notifications. */
  readonly #allSubscribers = new Set<{ listener: (taskId: string, seq: number) => void }>();
  /** Set while open (or opening). */
  #pool: pg.Pool | undefined;
  #listener: NotificationListener | undefined;
  #opening: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  #open = false;
  #closed = false;
  /** Group commit's queue; undefined when `groupCommit: false`. */
  readonly #commitQueue: CommitQueue<QueuedCommit> | undefined;
  /** Each lane's connection, while connecting and once connected. */
  readonly #laneClients: (Promise<pg.Client> | undefined)[] = [];
  readonly #laneConnections: (pg.Client | undefined)[] = [];

  constructor(options: PostgresStoreOptions = {}) {
    validate(options);
    this.#options = { ...options };
    this.schema = options.schema ?? 'a2a';
    this.namespace = options.namespace ?? 'default';
    this.#clock = options.clock ?? systemClock;
    this.#sql = statements(this.schema);
    this.#channel = notificationChannel(this.schema, this.namespace);
    try {
      this.#target = resolveTarget(options.pool?.options ?? this.#poolConfig());
    } catch (error) {
      throw new A2AError(
        'INVALID_OPTIONS',
        `PostgresStore: the connection settings are not valid (${messageOf(error)}). Write connectionString as postgres://user:password@host:5432/database.`,
        { cause: error },
      );
    }
    this.preparedStatements = options.preparedStatements ?? true;
    this.#commitQueue =
      options.groupCommit === false
        ? undefined
        : new CommitQueue(COMMIT_LANES, MAX_BATCH, (batch, lane) => this.#runBatch(batch, lane));
    const listen = options.listen ?? true;
    this.supports = {
      durable: true,
      crossProcess: listen,
      ttl: true,
      namespaces: true,
      listTasks: true,
      push: true,
      interruptedTasks: true,
      cluster: true,
    };
  }

  #poolConfig(): pg.PoolConfig {
    const { connectionString, poolConfig } = this.#options;
    return {
      connectionTimeoutMillis: DEFAULT_CONNECTION_TIMEOUT_MS,
      ...poolConfig,
      ...(connectionString === undefined ? {} : { connectionString }),
    };
  }

  get #ownsPool(): boolean {
    return this.#options.pool === undefined || this.#options.closePool === true;
  }

  /** Connects, migrates (or checks the schema when `migrate: false`) and starts listening. Idempotent. */
  open(): Promise<void> {
    if (this.#open) return Promise.resolve();
    this.#opening ??= this.#doOpen().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  async #doOpen(): Promise<void> {
    await this.#closing;
    const pool = this.#options.pool ?? new pg.Pool(this.#poolConfig());
    // An idle pooled connection dropped by the server emits 'error' on the pool, which would crash
    // the process without a listener. The next query gets a fresh connection or reports the failure.
    if (this.#options.pool === undefined) pool.on('error', () => {});
    let listener: NotificationListener | undefined;
    try {
      if (this.#options.migrate ?? true) {
        await migrate(pool, this.schema);
      } else {
        const pending = pendingMigrations(await appliedVersions(pool, this.schema));
        if (pending.length > 0) throw this.#notMigrated(pending.map((m) => m.version));
      }
      if (this.supports.crossProcess) {
        listener = this.#createListener(pool);
        await listener.start();
      }
    } catch (error) {
      await listener?.close();
      if (this.#options.pool === undefined) await pool.end().catch(() => {});
      throw openError(error, this.#target);
    }
    this.#pool = pool;
    this.#listener = listener;
    this.#open = true;
    this.#closed = false;
  }

  #notMigrated(missing: number[]): A2AError {
    return new A2AError(
      'STORE_UNAVAILABLE',
      `The schema "${this.schema}" at ${describeTarget(this.#target)} is missing migration(s) ${missing.join(', ')} ` +
        `(this release needs 1 to ${LATEST_VERSION}) and the store was created with migrate: false. ` +
        `Have a DBA apply the SQL from migrationSql(${JSON.stringify(this.schema)}) (exported by @fastify-a2a/store-postgres), ` +
        'or set migrate: true to let the store apply it.',
      { data: { schema: this.schema, missing } },
    );
  }

  #createListener(pool: pg.Pool): NotificationListener {
    return new NotificationListener({
      channel: this.#channel,
      // A dedicated client with the pool's settings. TCP keepalive notices a silently dead peer.
      createClient: () =>
        new pg.Client({
          ...pool.options,
          keepAlive: true,
          keepAliveInitialDelayMillis: 10_000,
          application_name: `fastify-a2a listen ${this.#channel}`,
        }),
      onNotification: (payload) => {
        const at = payload.lastIndexOf(':');
        const seq = Number(payload.slice(at + 1));
        if (at > 0 && Number.isInteger(seq)) this.#dispatch(payload.slice(0, at), seq);
      },
      onReconnect: async (client) => {
        // Notifications sent while we were disconnected are gone: tell every subscriber the
        // task's current version, and they read what they missed from the log.
        // subscribeAll's listeners cannot be told what they missed: ('', 0) asks them to read again.
        if (this.#allSubscribers.size > 0) this.#dispatch('', 0);
        const taskIds = [...this.#subscribers.keys()];
        if (taskIds.length === 0) return;
        const { rows } = await client.query<{ task_id: string; version: number }>(this.#sql.versions, [
          this.namespace,
          taskIds,
        ]);
        for (const row of rows) this.#dispatch(row.task_id, row.version);
      },
      minDelayMs: RECONNECT_MIN_DELAY_MS,
      maxDelayMs: RECONNECT_MAX_DELAY_MS,
    });
  }

  /** Stops listening and ends the pool if the store created it (or `closePool: true`). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#doClose().finally(() => {
      this.#closing = undefined;
    });
    return this.#closing;
  }

  async #doClose(): Promise<void> {
    await this.#opening?.catch(() => {});
    if (!this.#open) return;
    // Commits already accepted finish first (their batches need the pool and the lane connections).
    await this.#commitQueue?.drained();
    this.#open = false;
    this.#closed = true;
    // No await before the pool is gone: a commit made from here on is refused as closed.
    const pool = this.#pool;
    const listener = this.#listener;
    this.#pool = undefined;
    this.#listener = undefined;
    const lanes = this.#laneClients.splice(0);
    this.#laneConnections.splice(0);
    await Promise.all(lanes.map(async (client) => (await client?.catch(() => undefined))?.end().catch(() => {})));
    await listener?.close();
    if (pool !== undefined && this.#ownsPool) await pool.end();
  }

  /** Whether the LISTEN connection for cross-process notifications is up (see A2AStore). */
  get notificationsConnected(): boolean {
    return this.#listener?.connected ?? false;
  }

  async ping(): Promise<void> {
    const pool = this.#ready();
    try {
      await pool.query('SELECT 1');
    } catch (error) {
      throw new A2AError(
        'STORE_UNAVAILABLE',
        `The PostgreSQL server at ${describeTarget(this.#target)} does not answer: ${messageOf(error)}.`,
        { cause: error, data: { ...this.#target } },
      );
    }
  }

  #ready(ctx?: StoreCallContext): pg.Pool {
    ctx?.signal?.throwIfAborted();
    if (this.#pool === undefined) throw notOpen(this.#closed);
    return this.#pool;
  }

  async #query<R extends pg.QueryResultRow>(
    text: string,
    values: unknown[],
    ctx: StoreCallContext | undefined,
  ): Promise<pg.QueryResult<R>> {
    const pool = this.#ready(ctx);
    try {
      if (!this.preparedStatements) return await pool.query<R>(text, values);
      return await pool.query<R>({ name: statementName(text), text, values });
    } catch (error) {
      throw storeError(error, this.#target);
    }
  }

  /**
   * Tells other processes that `taskId` has events up to `seq`, after the commit, coalesced: one
   * NOTIFY statement is in flight at a time, and it carries the latest seq of every task committed
   * since the previous one.
   *
   * Not inside the commit: Postgres holds a server-wide lock from a notifying transaction's
   * pre-commit until its commit is flushed, so a NOTIFY in every commit made all commits of all
   * workers wait on one another (the cross-worker bench measured 2 workers slower than 1). This
   * transaction writes nothing else and skips the WAL flush wait, so it holds that lock briefly.
   * A notification lost in a crash right after a commit costs a stream nothing but latency: it
   * re-reads the log on its poll interval.
   */
  #notifyOthers(taskId: string, seq: number): void {
    const pending = this.#pendingNotifications;
    pending.set(taskId, Math.max(pending.get(taskId) ?? 0, seq));
    if (!this.#notifying) {
      this.#notifying = true;
      setImmediate(() => void this.#sendNotifications());
    }
  }

  /** Sends what is pending, and keeps sending what piled up meanwhile: one NOTIFY in flight at a time. */
  async #sendNotifications(): Promise<void> {
    while (this.#pendingNotifications.size > 0) {
      const payloads = [...this.#pendingNotifications].map(([id, last]) => `${id}:${last}`);
      this.#pendingNotifications = new Map();
      const pool = this.#pool;
      if (pool === undefined) break;
      try {
        await pool.query(this.#sql.notify, [this.#channel, payloads]);
      } catch (error) {
        this.#options.onListenerError?.(storeError(error, this.#target), payloads.join(','));
      }
    }
    this.#notifying = false;
  }

  /**
   * One round trip when it succeeds (see `statements`); a conflict costs one more, to say what the
   * task's version, or the duplicate message's task, is. With `groupCommit` (the default) the
   * statement may go to the database in one transaction with other commits waiting at the same
   * moment: see {@link PostgresStore.#runBatch}.
   */
  async commit(request: CommitRequest, ctx?: StoreCallContext): Promise<CommitResult> {
    checkCommitRequest(request, 'PostgresStore');
    const { taskId, expectedVersion, task, events, enqueueTurn, finishTurn } = request;
    const owner = request.owner ?? null;
    const scope = owner ?? ANONYMOUS_SCOPE;
    const indexed = indexedMessages(events);
    const messageIds = indexed.map((message) => message.messageId);
    const repeated = firstRepeat(messageIds);
    if (repeated !== undefined) {
      // The second occurrence would be a duplicate of the first; tell about an earlier commit of any
      // of the ids first, as that is the message the client sent before.
      throw (await this.#duplicate(scope, messageIds, ctx)) ?? new DuplicateMessageError(repeated);
    }
    const version = expectedVersion + events.length;
    // Serialised here, once: pg would turn a JS array into a Postgres array literal rather than JSON.
    const values: unknown[] = [
      this.namespace,
      taskId,
      task.contextId,
      task.status.state,
      version,
      JSON.stringify(task),
      this.#clock(),
      expectedVersion,
      events.map((event) => JSON.stringify(event)),
      messageIds,
      statusTimestampOf(task),
      owner,
      indexed.map((message) => message.digest),
      request.traceContext ?? null,
    ];
    const keys = [`t:${taskId}`];
    if (enqueueTurn !== undefined) {
      const lockKey = turnLockKey(this.schema, this.namespace, task.contextId);
      values.push(enqueueTurn.messageId, enqueueTurn.workerId, lockKey);
      keys.push(`c:${lockKey}`);
    }
    if (finishTurn !== undefined) values.push(finishTurn.position, finishTurn.messageId);
    const text = this.#sql.commit({
      create: expectedVersion === 0,
      enqueue: enqueueTurn !== undefined,
      finish: finishTurn !== undefined,
    });
    const prepared: PreparedCommit = { request, text, values, version, scope, messageIds, ctx, keys };
    const queue = this.#commitQueue;
    if (queue === undefined) return this.#settle(prepared, await this.#execute(prepared), ctx);
    this.#ready(ctx);
    return new Promise<CommitResult>((resolve, reject) => queue.push({ ...prepared, resolve, reject }));
  }

  /** Runs one commit statement on the pool; no rows back means a version conflict. */
  async #execute(commit: PreparedCommit): Promise<CommitRow[]> {
    const { text, values, scope, messageIds, ctx } = commit;
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.#query<CommitRow>(text, values, ctx)).rows;
      } catch (error) {
        const { code, table } = error as { code?: string; table?: string };
        if (code === '23505' && table === 'messages') {
          // The row that refused ours was committed (a unique check waits for the other
          // transaction), so we can read it. Should it be purged in between, the id is free again:
          // try once more.
          const duplicate = await this.#duplicate(scope, messageIds, ctx);
          if (duplicate !== undefined) throw duplicate;
          if (attempt < 2) continue;
          throw error;
        }
        // A unique violation on tasks means a concurrent create won (ON CONFLICT normally absorbs it).
        if (code !== '23505' || table !== 'tasks') throw error;
        return [];
      }
    }
  }

  /** What a commit statement's rows mean: a conflict, or the result (after telling subscribers). */
  async #settle(commit: PreparedCommit, rows: CommitRow[], ctx: StoreCallContext | undefined): Promise<CommitResult> {
    const { request, version } = commit;
    const { taskId, task, enqueueTurn } = request;
    if (rows.length === 0) {
      const current = await this.#query<{ version: number }>(this.#sql.version, [this.namespace, taskId], ctx);
      throw new VersionConflictError(taskId, request.expectedVersion, current.rows[0]?.version);
    }
    // Tell this process's subscribers now rather than after the NOTIFY round trip; they get the
    // NOTIFY too (duplicates are allowed). A turn waiting behind `finishTurn` hears it this way.
    this.#dispatch(taskId, version);
    // A task no other process can know of yet (its creating commit, see CommitRequest) needs no NOTIFY.
    if (request.unknownElsewhere !== true) this.#notifyOthers(taskId, version);
    if (enqueueTurn === undefined) return { version };
    const position = Number(rows[0]?.position);
    const { messageId, workerId } = enqueueTurn;
    return { version, turn: { contextId: task.contextId, position, taskId, messageId, workerId } };
  }

  /**
   * One batch of group commit. A batch of one is the plain statement on the pool (no BEGIN/COMMIT:
   * light load pays nothing). A larger one goes as BEGIN, each commit's statement, COMMIT, all
   * pipelined on the lane's own connection: one round trip and one WAL flush for the whole batch,
   * each statement still checking its own expected version (no rows back: that commit alone
   * conflicts; it wrote nothing, and the others go on).
   *
   * Why not a SAVEPOINT per commit: with the statements pipelined, a failed one cannot be rolled
   * back to its savepoint before the next runs (that takes a round trip per commit, which is what
   * batching saves), and a version conflict is not an error anyway. What does fail a statement
   * (a duplicate message id: a unique violation; a deadlock with another worker's batch; bad
   * data) is rare, so then the whole transaction rolls back (Postgres answers the COMMIT with
   * ROLLBACK) and each commit of the batch runs again alone, getting its own result: commits of
   * one task in order, different tasks concurrently. Nor one multi-row statement: a statement
   * cannot see its own writes, so two commits of one task could not share it, and one duplicate
   * would fail them all with no way to tell which. Numbers: bench/GROUP_COMMIT.md.
   *
   * Never rejects: every commit of the batch is settled.
   */
  async #runBatch(batch: QueuedCommit[], lane: number): Promise<void> {
    const settle = async (commit: QueuedCommit, rows: () => Promise<CommitRow[]>): Promise<void> => {
      try {
        commit.resolve(await this.#settle(commit, await rows(), commit.ctx));
      } catch (error) {
        commit.reject(error);
      }
    };
    const alone = async (commits: QueuedCommit[]): Promise<void> => {
      const byTask = new Map<string, QueuedCommit[]>();
      for (const commit of commits) {
        const ofTask = byTask.get(commit.request.taskId);
        if (ofTask === undefined) byTask.set(commit.request.taskId, [commit]);
        else ofTask.push(commit);
      }
      await Promise.all(
        [...byTask.values()].map(async (ofTask) => {
          for (const commit of ofTask) await settle(commit, () => this.#execute(commit));
        }),
      );
    };
    if (batch.length === 1) return alone(batch);
    let outcome: BatchOutcome;
    try {
      outcome = await this.#pipeline(batch, lane);
    } catch (error) {
      outcome = { kind: 'unknown', error };
    }
    if (outcome.kind === 'rolledBack') return alone(batch);
    if (outcome.kind === 'unknown') {
      // The connection failed, perhaps after the COMMIT reached the server: whether the batch was
      // written is unknown, as for a lone commit whose connection drops. Say so; never run it again.
      const error = storeError(outcome.error, this.#target);
      for (const commit of batch) commit.reject(error);
      return;
    }
    await Promise.all(batch.map((commit, i) => settle(commit, async () => outcome.rows[i] as CommitRow[])));
  }

  /** BEGIN, the batch's statements and COMMIT, pipelined on the lane's connection. */
  async #pipeline(batch: QueuedCommit[], lane: number): Promise<BatchOutcome> {
    let client: pg.Client | undefined;
    try {
      client = await this.#laneClient(lane);
      // Lost while we waited (its 'error' or 'end' dropped it): once more, on a new one.
      if (this.#laneConnections[lane] !== client) client = await this.#laneClient(lane);
    } catch {
      client = undefined;
    }
    // Nothing was sent: the pool may still serve them (the error, if any, comes from there).
    if (client === undefined || this.#laneConnections[lane] !== client) return { kind: 'rolledBack' };
    const statement = ({ text, values }: PreparedCommit) =>
      this.preparedStatements ? { name: statementName(text), text, values } : { text, values };
    const begin = client.query('BEGIN');
    const results = batch.map((commit) => client.query<CommitRow>(statement(commit)));
    const commit = client.query('COMMIT');
    const settled = await Promise.allSettled([begin, ...results, commit]);
    const end = settled[settled.length - 1] as PromiseSettledResult<pg.QueryResult>;
    const failed = settled.some((result) => result.status === 'rejected');
    if (!failed && end.status === 'fulfilled' && end.value.command === 'COMMIT') {
      return {
        kind: 'committed',
        rows: settled.slice(1, -1).map((r) => (r as PromiseFulfilledResult<pg.QueryResult<CommitRow>>).value.rows),
      };
    }
    // Running the commits again is safe only on the server's word that none was written. The
    // first failure decides: a statement's own error (ERROR: the transaction is aborted and can
    // never commit; FATAL: the backend ended before the COMMIT), or BEGIN's FATAL (the backend
    // ended before running anything, e.g. an idle connection killed as the batch was sent).
    // Anything else (the connection lost with no word, an error at COMMIT) leaves it unknown.
    const first = settled.findIndex((result) => result.status === 'rejected');
    const reason = first < 0 ? undefined : (settled[first] as PromiseRejectedResult).reason;
    const dbError = reason instanceof pg.DatabaseError ? reason : undefined;
    if (dbError?.severity !== 'ERROR') this.#dropLane(lane, client);
    const inside = first > 0 && first < settled.length - 1;
    if (dbError !== undefined && (inside || (first === 0 && dbError.severity === 'FATAL')))
      return { kind: 'rolledBack' };
    const error = reason ?? new Error(`COMMIT answered ${end.status === 'fulfilled' ? end.value.command : 'nothing'}`);
    return { kind: 'unknown', error };
  }

  /** Forgets the lane's connection (if it is still `client`) and ends it. */
  #dropLane(lane: number, client: pg.Client): void {
    if (this.#laneConnections[lane] !== client) return;
    this.#laneConnections[lane] = undefined;
    this.#laneClients[lane] = undefined;
    void client.end().catch(() => {});
  }

  /** The lane's pipelining connection, connected on first use and again after it failed. */
  async #laneClient(lane: number): Promise<pg.Client> {
    const existing = this.#laneClients[lane];
    if (existing !== undefined) return existing;
    const pool = this.#ready();
    const connecting = (async () => {
      const client = new pg.Client({
        ...pool.options,
        pipeline: true,
        application_name: `fastify-a2a commit ${this.#channel}`,
      } as pg.ClientConfig);
      // A dropped connection must not crash the process: forget it, the next batch connects anew
      // (the batch it was running gets its error from its queries).
      client.on('error', () => this.#dropLane(lane, client));
      client.on('end', () => this.#dropLane(lane, client));
      await client.connect();
      this.#laneConnections[lane] = client;
      return client;
    })();
    this.#laneClients[lane] = connecting;
    try {
      return await connecting;
    } catch (error) {
      if (this.#laneClients[lane] === connecting) this.#laneClients[lane] = undefined;
      throw error;
    }
  }

  /**
   * The error for the first of `messageIds` (in event order) that is indexed in the owner scope
   * `scope`; undefined when none is.
   */
  async #duplicate(
    scope: string,
    messageIds: string[],
    ctx: StoreCallContext | undefined,
  ): Promise<DuplicateMessageError | undefined> {
    const { rows } = await this.#query<{ message_id: string; task_id: string; context_id: string }>(
      this.#sql.findMessages,
      [this.namespace, scope, messageIds],
      ctx,
    );
    const found = new Map(rows.map((row) => [row.message_id, row]));
    for (const id of messageIds) {
      const row = found.get(id);
      if (row !== undefined) return new DuplicateMessageError(id, { taskId: row.task_id, contextId: row.context_id });
    }
    return undefined;
  }

  async getTask(taskId: string, ctx?: StoreCallContext): Promise<TaskRecord | undefined> {
    const { rows } = await this.#query<TaskRow>(this.#sql.getTask, [this.namespace, taskId], ctx);
    return rows[0] === undefined ? undefined : toRecord(rows[0]);
  }

  async getVersions(taskIds: readonly string[], ctx?: StoreCallContext): Promise<Map<string, number>> {
    if (taskIds.length === 0) return new Map();
    const { rows } = await this.#query<{ task_id: string; version: number }>(
      this.#sql.versions,
      [this.namespace, taskIds],
      ctx,
    );
    return new Map(rows.map((row) => [row.task_id, row.version]));
  }

  async readEvents(taskId: string, afterSeq: number, limit?: number, ctx?: StoreCallContext): Promise<StoredEvent[]> {
    const { rows } = await this.#query<EventRow>(
      this.#sql.readEvents,
      [this.namespace, taskId, afterSeq, limit ?? null],
      ctx,
    );
    return rows.map(toEvent);
  }

  async listTasksByContext(
    contextId: string,
    options: ListTasksOptions = {},
    ctx?: StoreCallContext,
  ): Promise<TaskRecord[]> {
    const { rows } = await this.#query<TaskRow>(
      this.#sql.byContext,
      [this.namespace, contextId, options.limit ?? null],
      ctx,
    );
    return rows.map(toRecord);
  }

  async listActiveTasks(ctx?: StoreCallContext): Promise<TaskRecord[]> {
    const { rows } = await this.#query<TaskRow>(this.#sql.active, [this.namespace], ctx);
    return rows.map(toRecord);
  }

  async listInterruptedTasks(query: InterruptedTasksQuery, ctx?: StoreCallContext): Promise<TaskRecord[]> {
    const limit = Math.max(0, Math.trunc(query.limit));
    // The column holds whole milliseconds, which Postgres refuses to compare to a fraction: an
    // integer timestamp is before x exactly when it is before ⌈x⌉.
    const values = [this.namespace, Math.ceil(query.before), NO_STATUS_TIMESTAMP, limit];
    const { rows } = await this.#query<TaskRow>(this.#sql.interrupted, values, ctx);
    return rows.map(toRecord);
  }

  /** One round trip: the page (limit + 1 rows, to know whether more follow) and its total. */
  async listTasks(query: TaskListQuery, ctx?: StoreCallContext): Promise<TaskListPage> {
    const { contextId, state, statusTimestampAfter, after, limit, owner } = query;
    // No task has the owner '' (commits refuse it), but the owner index reads '' as "none".
    if (owner === ANONYMOUS_SCOPE) return { records: [], total: 0 };
    const values: unknown[] = [this.namespace, Math.max(0, Math.trunc(limit)) + 1];
    let bits = 0;
    if (owner !== undefined) {
      bits |= BY_OWNER;
      values.push(owner ?? ANONYMOUS_SCOPE);
    }
    if (contextId !== undefined) {
      bits |= BY_CONTEXT;
      values.push(contextId);
    }
    if (state !== undefined) {
      bits |= BY_STATE;
      values.push(state);
    }
    if (statusTimestampAfter !== undefined) {
      bits |= SINCE;
      values.push(statusTimestampAfter);
    }
    if (after !== undefined) {
      bits |= AFTER;
      values.push(after.statusTimestamp, after.taskId);
    }
    // Without a page row (nothing matches after the cursor) the join still gives the total, with
    // NULL task columns.
    const { rows } = await this.#query<ListedRow>(this.#sql.list(bits), values, ctx);
    const listed = rows.filter((row): row is ListedRow & TaskRow => row.task !== null);
    const more = listed.length > limit;
    const page: TaskListPage = {
      records: (more ? listed.slice(0, limit) : listed).map(toRecord),
      total: rows[0]?.total ?? 0,
    };
    const last = more ? listed[limit - 1] : undefined;
    if (last !== undefined) page.next = { statusTimestamp: Number(last.status_ts), taskId: last.task_id as string };
    return page;
  }

  async getContext(contextId: string, ctx?: StoreCallContext): Promise<ContextRecord | undefined> {
    const { rows } = await this.#query<{ state: string | null; updated_at: string | number }>(
      this.#sql.getContext,
      [this.namespace, contextId],
      ctx,
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    // SQL NULL is what release 1 stored for `undefined`; it reads as JSON null, like `undefined` now.
    return { contextId, state: JSON.parse(row.state ?? 'null'), updatedAt: Number(row.updated_at) };
  }

  async setContext(contextId: string, state: unknown, ctx?: StoreCallContext): Promise<void> {
    // `undefined` (for which JSON.stringify returns undefined) is stored as JSON null.
    await this.#query(
      this.#sql.setContext,
      [this.namespace, contextId, JSON.stringify(state) ?? 'null', this.#clock()],
      ctx,
    );
  }

  async purgeExpired(cutoff: number, ctx?: StoreCallContext): Promise<PurgeResult> {
    const tasks = await this.#query<{ tasks: number }>(this.#sql.purgeTasks, [this.namespace, cutoff], ctx);
    const contexts = await this.#query(this.#sql.purgeContexts, [this.namespace, cutoff], ctx);
    return { tasks: tasks.rows[0]?.tasks ?? 0, contexts: contexts.rowCount ?? 0 };
  }

  async heartbeat(workerId: string, leaseUntil: number, ctx?: StoreCallContext): Promise<void> {
    await this.#query(this.#sql.heartbeat, [this.namespace, workerId, leaseUntil, this.#clock()], ctx);
  }

  /** One round trip; see `enqueue` in `statements` for why positions follow commit order. */
  async enqueueTurn(request: EnqueueTurnRequest, ctx?: StoreCallContext): Promise<QueueSlot> {
    const { contextId, taskId, messageId, workerId } = request;
    const { rows } = await this.#query<{ position: string }>(
      this.#sql.enqueue,
      [
        this.namespace,
        contextId,
        taskId,
        messageId,
        workerId,
        this.#clock(),
        turnLockKey(this.schema, this.namespace, contextId),
      ],
      ctx,
    );
    return { contextId, position: Number(rows[0]?.position), taskId, messageId, workerId };
  }

  async turnReadiness(ticket: QueueSlot, ctx?: StoreCallContext): Promise<TurnReadiness> {
    const { rows } = await this.#query<TurnRow>(
      this.#sql.ahead,
      [this.namespace, ticket.contextId, ticket.position],
      ctx,
    );
    return rows[0] === undefined ? { ready: true } : { ready: false, ahead: toTicket(rows[0]) };
  }

  async finishTurn(ticket: QueueSlot, ctx?: StoreCallContext): Promise<void> {
    // Sequence 0: "look again", never new events. Waiters behind this turn subscribe to its task;
    // rowCount is 1 only when the ticket was removed and some turn waits behind it.
    const { rowCount } = await this.#query(
      this.#sql.finishTurn,
      [
        this.namespace,
        ticket.contextId,
        ticket.position,
        ticket.taskId,
        ticket.messageId,
        this.#channel,
        `${ticket.taskId}:0`,
      ],
      ctx,
    );
    if (rowCount !== 0) this.#dispatch(ticket.taskId, 0);
  }

  async claimExpiredWorkers(now: number, exceptWorkerId?: string, ctx?: StoreCallContext): Promise<ExpiredWorker[]> {
    // One row per turn of a claimed worker, or one row with null turn columns for a worker without turns.
    const { rows } = await this.#query<
      Omit<TurnRow, 'context_id'> & { context_id: string | null; last_heartbeat: string | number }
    >(this.#sql.claimExpired, [this.namespace, now, exceptWorkerId ?? null], ctx);
    const claimed = new Map<string, ExpiredWorker>();
    for (const row of rows) {
      let worker = claimed.get(row.worker_id);
      if (worker === undefined) {
        worker = { workerId: row.worker_id, lastHeartbeat: Number(row.last_heartbeat), turns: [] };
        claimed.set(row.worker_id, worker);
      }
      if (row.context_id !== null) worker.turns.push(toTicket({ ...row, context_id: row.context_id }));
    }
    return [...claimed.values()];
  }

  async joinWorker(
    workerId: string,
    leaseUntil: number,
    description: WorkerDescription,
    ctx?: StoreCallContext,
  ): Promise<ExpiredWorker | undefined> {
    const { incarnation, host, pid, startedAt } = description;
    const { rows } = await this.#query<
      Omit<TurnRow, 'context_id' | 'worker_id'> & {
        context_id: string | null;
        worker_id: string | null;
        last_heartbeat: string | number | null;
      }
    >(
      this.#sql.joinWorker,
      [this.namespace, workerId, leaseUntil, this.#clock(), incarnation, host, pid, startedAt],
      ctx,
    );
    const first = rows[0];
    if (first === undefined) return undefined;
    const turns: QueueSlot[] = [];
    for (const row of rows) {
      if (row.context_id !== null) turns.push(toTicket({ ...row, context_id: row.context_id, worker_id: workerId }));
    }
    return { workerId, lastHeartbeat: Number(first.last_heartbeat ?? 0), turns };
  }

  async listWorkers(ctx?: StoreCallContext): Promise<WorkerRecord[]> {
    const { rows } = await this.#query<
      WorkerDescriptionRow & Omit<TurnRow, 'context_id' | 'worker_id'> & { context_id: string | null }
    >(this.#sql.listWorkers, [this.namespace], ctx);
    const workers = new Map<string, WorkerRecord>();
    for (const row of rows) {
      let worker = workers.get(row.worker_id);
      if (worker === undefined) {
        worker = toWorkerRecord(row, []);
        workers.set(row.worker_id, worker);
      }
      if (row.context_id !== null) worker.turns.push(toTicket({ ...row, context_id: row.context_id }));
    }
    return [...workers.values()];
  }

  async removeWorker(workerId: string, ctx?: StoreCallContext): Promise<void> {
    await this.#query(this.#sql.removeWorker, [this.namespace, workerId], ctx);
  }

  async listWorkerTurns(workerId: string, ctx?: StoreCallContext): Promise<QueueSlot[]> {
    const { rows } = await this.#query<TurnRow>(this.#sql.workerTurns, [this.namespace, workerId], ctx);
    return rows.map(toTicket);
  }

  async findMessage(messageId: string, ctx?: StoreCallContext, owner?: string): Promise<MessageIndexEntry | undefined> {
    this.#ready(ctx);
    // '' is how the anonymous scope is keyed, not a principal: no commit indexes under owner ''.
    if (owner === ANONYMOUS_SCOPE) return undefined;
    const { rows } = await this.#query<{ task_id: string; context_id: string; digest: string | null }>(
      this.#sql.findMessage,
      [this.namespace, owner ?? ANONYMOUS_SCOPE, messageId],
      ctx,
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    const entry: MessageIndexEntry = { taskId: row.task_id, contextId: row.context_id };
    if (row.digest !== null) entry.digest = row.digest;
    return entry;
  }

  // ---- Push notifications ----

  /** One statement: the task check, the config and its fresh delivery state (see `savePushConfig` in `statements`). */
  async savePushConfig(request: SavePushConfigRequest, ctx?: StoreCallContext): Promise<PushConfigRecord> {
    checkPushConfigRequest(request, 'PostgresStore');
    const { taskId, config, protocolVersion } = request;
    const configJson = JSON.stringify(config);
    let rows: { created_at: string | number; updated_at: string | number }[];
    try {
      ({ rows } = await this.#query<{ created_at: string | number; updated_at: string | number }>(
        this.#sql.savePushConfig,
        [this.namespace, taskId, config.id, configJson, protocolVersion, this.#clock()],
        ctx,
      ));
    } catch (error) {
      // The task was purged between the EXISTS check and the foreign key's.
      if ((error as { code?: string }).code === '23503') throw taskNotFound(taskId);
      throw error;
    }
    const saved = rows[0];
    if (saved === undefined) throw taskNotFound(taskId);
    return {
      taskId,
      config: JSON.parse(configJson) as StoredPushConfig,
      protocolVersion,
      createdAt: Number(saved.created_at),
      updatedAt: Number(saved.updated_at),
    };
  }

  async getPushConfig(taskId: string, configId: string, ctx?: StoreCallContext): Promise<PushConfigRecord | undefined> {
    const { rows } = await this.#query<PushConfigRow>(this.#sql.getPushConfig, [this.namespace, taskId, configId], ctx);
    return rows[0] === undefined ? undefined : toPushConfig(rows[0]);
  }

  async listPushConfigs(taskId: string, ctx?: StoreCallContext): Promise<PushConfigRecord[]> {
    const { rows } = await this.#query<PushConfigRow>(this.#sql.listPushConfigs, [this.namespace, taskId], ctx);
    return rows.map(toPushConfig);
  }

  async deletePushConfig(taskId: string, configId: string, ctx?: StoreCallContext): Promise<boolean> {
    const { rowCount } = await this.#query(this.#sql.deletePushConfig, [this.namespace, taskId, configId], ctx);
    return (rowCount ?? 0) > 0;
  }

  /** One statement (see `claimPushDeliveries` in `statements` for why claimants never share a delivery). */
  async claimPushDeliveries(request: ClaimPushDeliveriesRequest, ctx?: StoreCallContext): Promise<PushDelivery[]> {
    const { workerId, now, claimUntil, limit } = request;
    const { rows } = await this.#query<PushDeliveryRow>(
      this.#sql.claimPushDeliveries,
      [this.namespace, now, Math.max(0, Math.trunc(limit)), workerId, randomUUID(), claimUntil],
      ctx,
    );
    return rows.map(toPushDelivery);
  }

  async renewPushClaims(workerId: string, claimUntil: number, ctx?: StoreCallContext): Promise<number> {
    const { rowCount } = await this.#query(this.#sql.renewPushClaims, [this.namespace, workerId, claimUntil], ctx);
    return rowCount ?? 0;
  }

  async completePushDelivery(request: CompletePushDeliveryRequest, ctx?: StoreCallContext): Promise<boolean> {
    const { taskId, configId, claimId, cursor, sentAt } = request;
    const { rowCount } = await this.#query(
      this.#sql.completePushDelivery,
      [
        this.namespace,
        taskId,
        configId,
        claimId,
        cursor,
        request.nextAttemptAt ?? null,
        sentAt,
        request.status ?? null,
      ],
      ctx,
    );
    return (rowCount ?? 0) > 0;
  }

  async failPushAttempt(request: FailPushAttemptRequest, ctx?: StoreCallContext): Promise<boolean> {
    const { taskId, configId, claimId, nextAttemptAt, error } = request;
    const { rowCount } = await this.#query(
      this.#sql.failPushAttempt,
      [this.namespace, taskId, configId, claimId, nextAttemptAt, error, request.status ?? null],
      ctx,
    );
    return (rowCount ?? 0) > 0;
  }

  async releasePushClaim(key: PushClaimKey, ctx?: StoreCallContext): Promise<boolean> {
    const { rowCount } = await this.#query(
      this.#sql.releasePushClaim,
      [this.namespace, key.taskId, key.configId, key.claimId],
      ctx,
    );
    return (rowCount ?? 0) > 0;
  }

  async listPushDeliveries(filter: PushDeliveryFilter = {}, ctx?: StoreCallContext): Promise<PushDelivery[]> {
    const { taskId, failed, limit } = filter;
    const values: unknown[] = [this.namespace, failed ?? null, limit === undefined ? null : Math.max(0, limit)];
    const text = taskId === undefined ? this.#sql.listPushDeliveries : this.#sql.listTaskPushDeliveries;
    if (taskId !== undefined) values.push(taskId);
    const { rows } = await this.#query<PushDeliveryRow>(text, values, ctx);
    return rows.map(toPushDelivery);
  }

  subscribe(taskId: string, listener: (seq: number) => void): Unsubscribe {
    // A wrapper per call, so subscribing the same function twice gives two independent subscriptions.
    const entry = { listener };
    multiMapAdd(this.#subscribers, taskId, entry);
    return () => {
      multiMapDelete(this.#subscribers, taskId, entry);
    };
  }

  /** Every NOTIFY on the store's channel reaches them: the same path task subscribers hear from. */
  subscribeAll(listener: (taskId: string, seq: number) => void): Unsubscribe {
    const entry = { listener };
    this.#allSubscribers.add(entry);
    return () => {
      this.#allSubscribers.delete(entry);
    };
  }

  #dispatch(taskId: string, seq: number): void {
    for (const { listener } of this.#allSubscribers) {
      try {
        listener(taskId, seq);
      } catch (error) {
        try {
          this.#options.onListenerError?.(error, taskId);
        } catch {
          // A failing error handler must not stop the remaining subscribers either.
        }
      }
    }
    if (!this.#subscribers.has(taskId)) return;
    for (const { listener } of multiMapValues(this.#subscribers, taskId)) {
      try {
        listener(seq);
      } catch (error) {
        try {
          this.#options.onListenerError?.(error, taskId);
        } catch {
          // A failing error handler must not stop the remaining subscribers either.
        }
      }
    }
  }
}
