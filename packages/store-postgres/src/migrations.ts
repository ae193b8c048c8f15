/**
 * Versioned schema migrations for the Postgres store.
 *
 * Each step has a number and is recorded in `<schema>.migrations` once applied. Every step runs in a
 * transaction of its own behind `pg_advisory_xact_lock(<key of the schema>)` and re-reads the applied
 * versions after taking the lock, so any number of workers starting together on a fresh database
 * apply each step exactly once (the others wait for the lock, then find the step recorded).
 *
 * The SQL lives here as TypeScript constants (not `.sql` files read at runtime) so it ships inside
 * the compiled package; {@link migrationSql} prints it for DBAs who apply migrations themselves.
 *
 * Never edit a released step; add a new one.
 */

import type pg from 'pg';
import { escapeIdentifier, migrationLockKey } from './sql.js';

export interface Migration {
  /** 1, 2, 3, … without gaps. */
  version: number;
  name: string;
  /** The step's SQL for the schema `s` (already quoted with `escapeIdentifier`). No parameters. */
  sql(s: string): string;
}

/** States that `listActiveTasks` returns (§6.3: neither terminal nor interrupted). Literal in SQL for the partial index. */
const ACTIVE_STATES = `('submitted', 'working', 'unknown')`;
/** States that `purgeExpired` deletes (§6.3 terminal states). */
const TERMINAL_STATES = `('completed', 'canceled', 'failed', 'rejected')`;

/**
 * Documents are `json`, not `jsonb`: `json` keeps the text exactly as written (key order,
 * duplicate keys) and accepts every string JSON can carry, while `jsonb` rejects `\u0000` and lone
 * surrogates (`\ud800`) in strings and so would refuse tasks the protocol allows. We never query
 * inside the documents, so nothing is lost; DBAs can still use `->` and `->>` on them.
 *
 * `row_id` orders tasks created in the same millisecond (or under a fixed test clock) by creation.
 * Events belong to their task (ON DELETE CASCADE), so purging a task removes its log.
 *
 * Step 2 adds what several workers coordinate through (see `CoordinationStore` in core):
 * - `turns`: one row per queued or running turn. `position` comes from the table's identity
 *   sequence, drawn while holding the context's advisory lock (see `enqueue` in
 *   postgres-store.ts): within a context it grows in commit order across workers, and it is never
 *   reused, not even once the context's queue is empty (so a stale ticket never matches a newer
 *   turn). Positions of one context have gaps; only their order means something.
 * - `workers`: one lease per live worker, renewed by heartbeat, deleted by whoever claims it.
 * - `messages`: user message id → task, written by commit in the same statement as the events.
 *   The primary key is what refuses a duplicate. purgeExpired deletes a task's rows with the task.
 *   No foreign key to `tasks`: adding one would lock `tasks` against writes for the whole step (the
 *   backfill included), stalling workers of the previous release during a rolling deploy.
 */
export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'tasks, events and contexts',
    sql: (s) => `
CREATE TABLE ${s}.tasks (
  namespace  text    NOT NULL,
  task_id    text    NOT NULL,
  context_id text    NOT NULL,
  state      text    NOT NULL,
  version    integer NOT NULL,
  task       json    NOT NULL,
  created_at bigint  NOT NULL,
  updated_at bigint  NOT NULL,
  row_id     bigint  GENERATED ALWAYS AS IDENTITY,
  PRIMARY KEY (namespace, task_id)
);
-- listTasksByContext: one context's tasks, oldest first.
CREATE INDEX tasks_by_context ON ${s}.tasks (namespace, context_id, created_at, row_id);
-- listActiveTasks: the few tasks still running, oldest first.
CREATE INDEX tasks_active ON ${s}.tasks (namespace, created_at, row_id) WHERE state IN ${ACTIVE_STATES};
-- purgeExpired: terminal tasks last updated before the cutoff.
CREATE INDEX tasks_terminal ON ${s}.tasks (namespace, updated_at) WHERE state IN ${TERMINAL_STATES};

CREATE TABLE ${s}.events (
  namespace  text    NOT NULL,
  task_id    text    NOT NULL,
  seq        integer NOT NULL,
  event      json    NOT NULL,
  created_at bigint  NOT NULL,
  PRIMARY KEY (namespace, task_id, seq),
  FOREIGN KEY (namespace, task_id) REFERENCES ${s}.tasks (namespace, task_id) ON DELETE CASCADE
);

CREATE TABLE ${s}.contexts (
  namespace  text   NOT NULL,
  context_id text   NOT NULL,
  state      json,
  updated_at bigint NOT NULL,
  PRIMARY KEY (namespace, context_id)
);
-- purgeExpired: contexts last updated before the cutoff.
CREATE INDEX contexts_by_updated ON ${s}.contexts (namespace, updated_at);
`,
  },
  {
    version: 2,
    name: 'turn queue, worker leases and message index',
    // See the comment above `migrations` for the turns, workers and messages tables.
    sql: (s) => `
CREATE TABLE ${s}.turns (
  namespace   text   NOT NULL,
  context_id  text   NOT NULL,
  position    bigint GENERATED ALWAYS AS IDENTITY,
  task_id     text   NOT NULL,
  turn_id     text   NOT NULL,
  worker_id   text   NOT NULL,
  enqueued_at bigint NOT NULL,
  PRIMARY KEY (namespace, context_id, position)
);
-- listWorkerTurns, claimExpiredWorkers: one worker's turns in arrival order.
CREATE INDEX turns_by_worker ON ${s}.turns (namespace, worker_id, position);

CREATE TABLE ${s}.workers (
  namespace      text   NOT NULL,
  worker_id      text   NOT NULL,
  lease_until    bigint NOT NULL,
  last_heartbeat bigint NOT NULL,
  PRIMARY KEY (namespace, worker_id)
);

CREATE TABLE ${s}.messages (
  namespace  text NOT NULL,
  message_id text NOT NULL,
  task_id    text NOT NULL,
  context_id text NOT NULL,
  PRIMARY KEY (namespace, message_id)
);
-- purgeExpired deletes the purged tasks' ids through this index.
CREATE INDEX messages_by_task ON ${s}.messages (namespace, task_id);

-- Index the user messages already in the logs, so a retry of a message sent before the upgrade is
-- recognised too: the first history message of each task event when the user sent it, and every
-- message event. The first commit of an id wins, as it would have at commit time.
INSERT INTO ${s}.messages (namespace, message_id, task_id, context_id)
SELECT e.namespace, m.message_id, e.task_id, t.context_id
FROM ${s}.events e
JOIN ${s}.tasks t ON t.namespace = e.namespace AND t.task_id = e.task_id
CROSS JOIN LATERAL (
  SELECT CASE
    WHEN e.event->>'kind' = 'message' THEN e.event->>'messageId'
    WHEN e.event->>'kind' = 'task' AND e.event->'history'->0->>'role' = 'user' THEN e.event->'history'->0->>'messageId'
  END AS message_id
) m
WHERE m.message_id IS NOT NULL
ORDER BY t.row_id, e.seq
ON CONFLICT DO NOTHING;
`,
  },
];

/** The highest version this release knows. */
export const LATEST_VERSION: number = Math.max(...migrations.map((m) => m.version));

const migrationsTable = (s: string): string => `
CREATE TABLE IF NOT EXISTS ${s}.migrations (
  version    integer     PRIMARY KEY,
  name       text        NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;

/** SQL string literal for the DBA script (the only literals it has are our own step names). */
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

export interface MigrationSqlOptions {
  /** Only the steps after this version (for a schema already at that version). @default 0 */
  after?: number;
}

/**
 * The migrations as one SQL script, for DBA-managed databases (`migrate: false`): creates the
 * schema and its `migrations` table and applies (and records) every step after `options.after`, in
 * one transaction. Run it as a role that may create the schema, e.g.
 * `psql -v ON_ERROR_STOP=1 -f a2a.sql`.
 */
export function migrationSql(schema = 'a2a', options: MigrationSqlOptions = {}): string {
  const s = escapeIdentifier(schema);
  const after = options.after ?? 0;
  const parts = [
    `-- @fastify-a2a/store-postgres: schema ${s}, migrations ${after + 1} to ${LATEST_VERSION}.`,
    'BEGIN;',
    `CREATE SCHEMA IF NOT EXISTS ${s};`,
    `${migrationsTable(s).trim()};`,
  ];
  for (const step of migrations) {
    if (step.version <= after) continue;
    parts.push(
      `\n-- ${step.version}: ${step.name}`,
      step.sql(s).trim(),
      `INSERT INTO ${s}.migrations (version, name) VALUES (${step.version}, ${literal(step.name)});`,
    );
  }
  parts.push('COMMIT;', '');
  return parts.join('\n');
}

type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.ClientBase, 'query'>;

/** The versions recorded in `<schema>.migrations`; `[]` when that table does not exist. */
export async function appliedVersions(db: Queryable, schema: string): Promise<number[]> {
  const s = escapeIdentifier(schema);
  const { rows } = await db.query<{ exists: boolean }>('SELECT to_regclass($1) IS NOT NULL AS exists', [
    `${s}.migrations`,
  ]);
  if (!rows[0]?.exists) return [];
  const applied = await db.query<{ version: number }>(`SELECT version FROM ${s}.migrations ORDER BY version`);
  return applied.rows.map((row) => row.version);
}

/** The steps of this release missing from `applied`. */
export function pendingMigrations(applied: readonly number[]): Migration[] {
  const done = new Set(applied);
  return migrations.filter((step) => !done.has(step.version));
}

export interface MigrateResult {
  /** Versions applied by this call (empty when the schema was already current). */
  applied: number[];
}

async function inTransaction(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<void>): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await work(client);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: Error) => {
      broken = rollbackError; // the connection is unusable: don't return it to the pool
    });
    throw error;
  } finally {
    client.release(broken);
  }
}

/**
 * Creates `schema` if needed and applies the pending steps. Idempotent, and safe to run from many
 * processes at once. A schema migrated by a newer release is left alone: its extra steps are not
 * ours to judge, and refusing to start would break rolling deploys.
 */
export async function migrate(pool: pg.Pool, schema: string): Promise<MigrateResult> {
  // Fast path, without the lock: every worker of a running deployment finds nothing to do.
  if (pendingMigrations(await appliedVersions(pool, schema)).length === 0) return { applied: [] };

  const s = escapeIdentifier(schema);
  const lockKey = migrationLockKey(schema);
  const lock = (client: pg.PoolClient) => client.query('SELECT pg_advisory_xact_lock($1::bigint)', [lockKey]);

  await inTransaction(pool, async (client) => {
    await lock(client);
    // CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the schema exists, so
    // skip it for a schema a DBA created for us.
    const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${s}`);
    await client.query(migrationsTable(s));
  });

  const applied: number[] = [];
  for (const step of migrations) {
    await inTransaction(pool, async (client) => {
      await lock(client);
      // Re-check under the lock: another process may have applied it while we waited.
      const done = await client.query(`SELECT 1 FROM ${s}.migrations WHERE version = $1`, [step.version]);
      if (done.rowCount !== 0) return;
      await client.query(step.sql(s));
      await client.query(`INSERT INTO ${s}.migrations (version, name) VALUES ($1, $2)`, [step.version, step.name]);
      applied.push(step.version);
    });
  }
  return { applied };
}
