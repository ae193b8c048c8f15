/**
 * Versioned schema migrations for the SQLite store.
 *
 * Each step has a number and is recorded in `a2a_migrations` once applied. All pending steps run in
 * one `BEGIN IMMEDIATE` transaction: the write lock is taken before the applied versions are read,
 * so two processes opening the same new file at once serialise (the second waits up to the busy
 * timeout, then finds every step already recorded and does nothing).
 *
 * Never edit a released step; add a new one.
 */

import { NO_STATUS_TIMESTAMP, statusTimestampOf } from '@fastify-a2a/core';
import type BetterSqlite3 from 'better-sqlite3';

export interface Migration {
  /** 1, 2, 3, …; migrate() applies whichever a file lacks, so a gap (a step landing later) is fine. */
  version: number;
  name: string;
  /** SQL run with `db.exec`, inside the migration transaction. */
  sql: string;
}

/** The table that records applied steps. */
export const MIGRATIONS_TABLE = 'a2a_migrations';

/**
 * Every row is keyed by `namespace` so several agents can share one file. Tasks and events are
 * plain rowid tables (not WITHOUT ROWID) because their JSON can be large, and the rowid gives a
 * stable insertion-order tie-breaker for tasks created in the same millisecond.
 */
export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'tasks, events and contexts',
    sql: `
      CREATE TABLE a2a_tasks (
        namespace  TEXT    NOT NULL,
        task_id    TEXT    NOT NULL,
        context_id TEXT    NOT NULL,
        state      TEXT    NOT NULL,
        version    INTEGER NOT NULL,
        task_json  TEXT    NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (namespace, task_id)
      );
      -- listTasksByContext: one context's tasks, oldest first.
      CREATE INDEX a2a_tasks_by_context ON a2a_tasks (namespace, context_id, created_at);
      -- listActiveTasks (state IN …) and purgeExpired (terminal state AND updated_at < cutoff).
      CREATE INDEX a2a_tasks_by_state ON a2a_tasks (namespace, state, updated_at);

      CREATE TABLE a2a_events (
        namespace  TEXT    NOT NULL,
        task_id    TEXT    NOT NULL,
        seq        INTEGER NOT NULL,
        event_json TEXT    NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (namespace, task_id, seq)
      );

      CREATE TABLE a2a_contexts (
        namespace  TEXT    NOT NULL,
        context_id TEXT    NOT NULL,
        state_json TEXT    NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (namespace, context_id)
      );
      -- purgeExpired: contexts last updated before the cutoff.
      CREATE INDEX a2a_contexts_by_updated ON a2a_contexts (namespace, updated_at);
    `,
  },
  {
    version: 2,
    name: 'turn queue, worker leases and message index',
    sql: `
      -- One row per queued or running turn. \`position\` is the rowid, drawn by AUTOINCREMENT under
      -- the write lock: it grows in the order enqueues commit, across processes, and is never
      -- reused (not even once a context's queue is empty), so a stale ticket never matches a newer
      -- turn. One counter serves every context and namespace: a context's positions have gaps, and
      -- only their order means something.
      CREATE TABLE a2a_turns (
        position    INTEGER PRIMARY KEY AUTOINCREMENT,
        namespace   TEXT    NOT NULL,
        context_id  TEXT    NOT NULL,
        task_id     TEXT    NOT NULL,
        turn_id     TEXT    NOT NULL,
        worker_id   TEXT    NOT NULL,
        enqueued_at INTEGER NOT NULL
      );
      -- turnReadiness: the turn directly ahead within one context.
      CREATE INDEX a2a_turns_by_context ON a2a_turns (namespace, context_id, position);
      -- claimExpiredWorkers, listWorkerTurns: one worker's turns in arrival order.
      CREATE INDEX a2a_turns_by_worker ON a2a_turns (namespace, worker_id, position);
      -- The poll loop: which subscribed tasks still have a turn queued.
      CREATE INDEX a2a_turns_by_task ON a2a_turns (namespace, task_id);

      -- Plain rowid tables, like those of step 1: without statistics, SQLite's planner ignores the
      -- secondary indexes of a WITHOUT ROWID table here (it scans the namespace's primary key range).
      CREATE TABLE a2a_workers (
        namespace      TEXT    NOT NULL,
        worker_id      TEXT    NOT NULL,
        lease_until    INTEGER NOT NULL,
        last_heartbeat INTEGER NOT NULL,
        PRIMARY KEY (namespace, worker_id)
      );
      -- claimExpiredWorkers: leases that ended before now.
      CREATE INDEX a2a_workers_by_lease ON a2a_workers (namespace, lease_until);

      CREATE TABLE a2a_messages (
        namespace  TEXT NOT NULL,
        message_id TEXT NOT NULL,
        task_id    TEXT NOT NULL,
        context_id TEXT NOT NULL,
        PRIMARY KEY (namespace, message_id)
      );
      -- purgeExpired: the index rows of purged tasks.
      CREATE INDEX a2a_messages_by_task ON a2a_messages (namespace, task_id);

      -- Index the user messages already in the logs, so a retry of a message sent before the
      -- upgrade is recognised too: the first history message of each task event when the user sent
      -- it, and every message event. Event rowids follow commit order, so the first commit of an id
      -- wins, as it would have at commit time.
      INSERT OR IGNORE INTO a2a_messages (namespace, message_id, task_id, context_id)
      SELECT namespace, message_id, task_id, context_id FROM (
        SELECT e.rowid AS event_order, e.namespace, e.task_id, t.context_id,
          CASE e.event_json ->> '$.kind'
            WHEN 'message' THEN e.event_json ->> '$.messageId'
            WHEN 'task' THEN iif(e.event_json ->> '$.history[0].role' = 'user', e.event_json ->> '$.history[0].messageId', NULL)
          END AS message_id
        FROM a2a_events e JOIN a2a_tasks t ON t.namespace = e.namespace AND t.task_id = e.task_id
      )
      WHERE message_id IS NOT NULL
      ORDER BY event_order;
    `,
  },
  {
    version: 3,
    name: 'status timestamp and indexes for listTasks',
    sql: `
      -- listTasks sorts by the snapshot's status timestamp (epoch ms, see statusTimestampOf in
      -- @fastify-a2a/core), kept in this column by every commit. A number, never NULL: a task
      -- without one holds NO_STATUS_TIMESTAMP, so the keyset comparison needs no NULL case.
      -- Processes of the previous release, still running during an upgrade, do not write it: a
      -- task they create gets the default (listed last) and one they update keeps its old value,
      -- until a process of this release commits to it.
      ALTER TABLE a2a_tasks ADD COLUMN status_ts INTEGER NOT NULL DEFAULT ${NO_STATUS_TIMESTAMP};
      -- a2a_status_timestamp is statusTimestampOf, registered by migrate(): the rows written
      -- before this step get exactly the value a commit would have written.
      UPDATE a2a_tasks SET status_ts = a2a_status_timestamp(task_json ->> '$.status.timestamp');

      -- One page of listTasks is a seek and a read of limit + 1 index entries, whatever the filter:
      -- newest first, ties by task id (both DESC, so that the cursor is one row-value comparison,
      -- (status_ts, task_id) < (?, ?), which SQLite turns into a range of these indexes). The
      -- BINARY collation of task_id compares UTF-8 bytes, i.e. code points, as the contract says.
      CREATE INDEX a2a_tasks_by_status_ts ON a2a_tasks (namespace, status_ts DESC, task_id DESC);
      CREATE INDEX a2a_tasks_by_context_status_ts ON a2a_tasks (namespace, context_id, status_ts DESC, task_id DESC);
      CREATE INDEX a2a_tasks_by_state_status_ts ON a2a_tasks (namespace, state, status_ts DESC, task_id DESC);
    `,
  },
  {
    version: 4,
    name: 'push notification configs and delivery state',
    sql: `
      -- One row per (task, config id). Secrets (token, authentication.credentials) are in
      -- config_json as given: encrypting them at rest is the file system's or the disk's job. They
      -- live in this table only, so the delivery table can be read for monitoring without them.
      -- savePushConfig replaces a config in place (UPSERT), so its rowid, the save order that
      -- breaks created_at ties, and its created_at keep its place in the lists. Tasks own their
      -- configs: see the trigger below.
      CREATE TABLE a2a_push_configs (
        namespace        TEXT    NOT NULL,
        task_id          TEXT    NOT NULL,
        config_id        TEXT    NOT NULL,
        config_json      TEXT    NOT NULL,
        protocol_version TEXT    NOT NULL,
        created_at       INTEGER NOT NULL,
        updated_at       INTEGER NOT NULL,
        PRIMARY KEY (namespace, task_id, config_id)
      );
      -- No index on created_at: lists of one task's configs read its primary key range and sort
      -- those few rows (without statistics, SQLite would rather scan a created_at index over the
      -- whole namespace to skip that sort); only the monitoring list across tasks sorts them all.

      -- The delivery state of each config, written on every claim, POST and retry. NULL means
      -- "none" (no retry time, nothing sent, no claim); failed is 0 or 1.
      CREATE TABLE a2a_push_deliveries (
        namespace       TEXT    NOT NULL,
        task_id         TEXT    NOT NULL,
        config_id       TEXT    NOT NULL,
        cursor          INTEGER NOT NULL,
        attempts        INTEGER NOT NULL,
        next_attempt_at INTEGER,
        last_sent_at    INTEGER,
        failed          INTEGER NOT NULL,
        last_error      TEXT,
        last_status     INTEGER,
        claimed_by      TEXT,
        claim_id        TEXT,
        claim_until     INTEGER,
        PRIMARY KEY (namespace, task_id, config_id)
      );
      -- claimPushDeliveries, every few hundred ms on every worker: it reads only the deliveries
      -- still in play (failed ones leave this index for good), soonest first, and looks up each
      -- one's task by primary key for its version and state.
      CREATE INDEX a2a_push_deliveries_pending ON a2a_push_deliveries (namespace, next_attempt_at) WHERE failed = 0;
      -- renewPushClaims: one worker's claims.
      CREATE INDEX a2a_push_deliveries_by_worker ON a2a_push_deliveries (namespace, claimed_by)
        WHERE claimed_by IS NOT NULL;

      -- A task's configs and deliveries go with the task, whoever deletes it: purgeExpired of this
      -- release, and of the previous one, which knows nothing of these tables, while both run
      -- during a rolling upgrade. A trigger rather than a foreign key, which SQLite enforces only
      -- on connections that turn foreign_keys on. It runs inside the deleting statement, so in its
      -- transaction: a purge never leaves configs of a task that is gone.
      CREATE TRIGGER a2a_tasks_delete_push AFTER DELETE ON a2a_tasks BEGIN
        DELETE FROM a2a_push_deliveries WHERE namespace = OLD.namespace AND task_id = OLD.task_id;
        DELETE FROM a2a_push_configs WHERE namespace = OLD.namespace AND task_id = OLD.task_id;
      END;
    `,
  },
  {
    version: 5,
    name: 'task owners and a message index per owner',
    sql: `
      -- The principal a task belongs to (CommitRequest.owner in @fastify-a2a/core), written once, by
      -- the commit that creates the task. NULL for a task without one, which every task of an
      -- earlier release is, so their records read back as before. Adding a nullable column without
      -- a default rewrites nothing.
      ALTER TABLE a2a_tasks ADD COLUMN owner TEXT;
      -- listTasks of one owner, the common listing once callers authenticate: the same keyset
      -- order as the indexes of step 3, one range per owner. \`owner IS ?\` is an equality to
      -- SQLite, NULL included, so the tasks without an owner are one range of it too.
      CREATE INDEX a2a_tasks_by_owner_status_ts ON a2a_tasks (namespace, owner, status_ts DESC, task_id DESC);

      -- The message index, per owner: the same id may be used by two principals, never twice by
      -- one. The owner is the commit's, '' for the anonymous scope (commits without an owner): a
      -- key column cannot be NULL, and no principal id is '' (commit refuses it). digest is
      -- messageDigest of the message, NULL for rows indexed before this step. SQLite cannot
      -- change a primary key in place: the table is rebuilt (create, copy, drop, rename, the
      -- documented way), its rows going to the anonymous scope, where every commit of an earlier
      -- release indexed them. Processes of the previous release still running afterwards fail
      -- their commits that carry user messages (their INSERT names the old key in ON CONFLICT):
      -- restart them. Like every step, this one holds the write lock throughout (the copy and two
      -- index builds): writers wait, up to their busy timeout; readers of a WAL file do not.
      CREATE TABLE a2a_messages_by_owner (
        namespace  TEXT NOT NULL,
        owner      TEXT NOT NULL,
        message_id TEXT NOT NULL,
        task_id    TEXT NOT NULL,
        context_id TEXT NOT NULL,
        digest     TEXT,
        -- Owner last: lookups give all three, and those of the previous release (namespace and
        -- message id) still find their prefix.
        PRIMARY KEY (namespace, message_id, owner)
      );
      INSERT INTO a2a_messages_by_owner (namespace, owner, message_id, task_id, context_id)
      SELECT namespace, '', message_id, task_id, context_id FROM a2a_messages;
      DROP TABLE a2a_messages;
      ALTER TABLE a2a_messages_by_owner RENAME TO a2a_messages;
      -- purgeExpired: the index rows of purged tasks (dropped with the old table).
      CREATE INDEX a2a_messages_by_task ON a2a_messages (namespace, task_id);
    `,
  },
  {
    version: 6,
    name: 'trace context of the last commit of each task',
    sql: `
      -- The W3C traceparent of the commit that last changed the task (CommitRequest.traceContext),
      -- so that another worker's work for it (push notifications) joins the request's trace.
      -- Nullable, no default: adding it rewrites nothing.
      ALTER TABLE a2a_tasks ADD COLUMN trace_context TEXT;
    `,
  },
  {
    version: 7,
    name: 'worker incarnations and descriptions, and the all-tasks change feed',
    sql: `
      -- joinWorker and listWorkers (WorkerDescription in @fastify-a2a/core): which start of a
      -- process holds a worker id's lease, and where it runs. NULL for leases written by
      -- heartbeat() alone (a worker of an earlier release).
      ALTER TABLE a2a_workers ADD COLUMN incarnation TEXT;
      ALTER TABLE a2a_workers ADD COLUMN host TEXT;
      ALTER TABLE a2a_workers ADD COLUMN pid INTEGER;
      ALTER TABLE a2a_workers ADD COLUMN started_at INTEGER;
    `,
  },
];

/** The SQL functions the steps call, defined on the connection that migrates. */
function defineFunctions(db: BetterSqlite3.Database): void {
  db.function('a2a_status_timestamp', { deterministic: true }, (timestamp: unknown) =>
    statusTimestampOf({ status: { timestamp: typeof timestamp === 'string' ? timestamp : undefined } }),
  );
}

export interface MigrateResult {
  /** Versions applied by this call (empty when the schema was already current). */
  applied: number[];
  /** The schema version after the call. */
  version: number;
}

/** Raised when the file was migrated by a newer release than this one. */
export class SchemaTooNewError extends Error {
  constructor(
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `The database schema is at version ${found}, but this @fastify-a2a/store-sqlite only knows up to version ${known}. ` +
        'A newer release migrated this file: upgrade @fastify-a2a/store-sqlite, or point this process at another file.',
    );
    this.name = 'SchemaTooNewError';
  }
}

/**
 * Applies the pending steps of `steps` (default: {@link migrations}) to `db`. Idempotent and safe to
 * run from several processes at once. Uses `clock` for `applied_at`.
 */
export function migrate(
  db: BetterSqlite3.Database,
  clock: () => number = Date.now,
  steps: readonly Migration[] = migrations,
): MigrateResult {
  const known = steps.reduce((max, step) => Math.max(max, step.version), 0);
  defineFunctions(db);
  const run = db.transaction((): MigrateResult => {
    db.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
      version    INTEGER PRIMARY KEY,
      name       TEXT    NOT NULL,
      applied_at INTEGER NOT NULL
    )`);
    const done = new Set(db.prepare<[], number>(`SELECT version FROM ${MIGRATIONS_TABLE}`).pluck().all());
    const found = Math.max(0, ...done);
    if (found > known) throw new SchemaTooNewError(found, known);
    const record = db.prepare<[number, string, number]>(
      `INSERT INTO ${MIGRATIONS_TABLE} (version, name, applied_at) VALUES (?, ?, ?)`,
    );
    const applied: number[] = [];
    for (const step of [...steps].sort((a, b) => a.version - b.version)) {
      if (done.has(step.version)) continue;
      db.exec(step.sql);
      record.run(step.version, step.name, clock());
      applied.push(step.version);
    }
    return { applied, version: Math.max(found, ...applied) };
  });
  return run.immediate();
}
