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

import type BetterSqlite3 from 'better-sqlite3';

export interface Migration {
  /** 1, 2, 3, … without gaps. */
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
];

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
