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

import { NO_STATUS_TIMESTAMP } from '@fastify-a2a/core';
import type pg from 'pg';
import { escapeIdentifier, migrationLockKey } from './sql.js';

export interface Migration {
  /** 1, 2, 3, …; the runner applies whichever a schema lacks, so a gap (a step landing later) is fine. */
  version: number;
  name: string;
  /** The step's SQL for the schema `s` (already quoted with `escapeIdentifier`). No parameters. */
  sql(s: string): string;
}

/**
 * States that `listActiveTasks` returns (§6.3: neither terminal nor interrupted). Literal in SQL for
 * the partial index. A frozen copy of core's `ACTIVE_STATES`: a migration's SQL never changes once
 * released, and the statements that use the index build their list from core's.
 */
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
 *   statements.ts): within a context it grows in commit order across workers, and it is never
 *   reused, not even once the context's queue is empty (so a stale ticket never matches a newer
 *   turn). Positions of one context have gaps; only their order means something.
 * - `workers`: one lease per live worker, renewed by heartbeat, deleted by whoever claims it.
 * - `messages`: user message id → task, written by commit in the same statement as the events.
 *   The primary key is what refuses a duplicate. purgeExpired deletes a task's rows with the task.
 *   No foreign key to `tasks`: adding one would lock `tasks` against writes for the whole step (the
 *   backfill included), stalling workers of the previous release during a rolling deploy.
 *
 * Step 3 adds what listTasks reads: `status_ts`, the snapshot's status timestamp in epoch ms
 * (`statusTimestampOf` in core), which every commit of this release writes, and three indexes
 * ending in (status_ts DESC, task_id DESC). Unlike step 2 it cannot stay out of the writers' way:
 * adding a column locks `tasks` until the step commits, and the step rewrites every row (the
 * backfill) and builds three indexes, so commits wait for it (bench/LIST_TASKS.md has its duration
 * at 100k and 1M tasks; apply it with `migrationSql` in a quiet moment for a large table). Workers
 * of the previous release still running afterwards do not write `status_ts`: a task they create is
 * listed last, one they update keeps its place, until a worker of this release commits to it.
 *
 * Step 4 adds push notifications: `push_configs` (one row per task and config id, the config as
 * given, secrets included: encrypting them at rest is the database's job) and `push_deliveries`
 * (the delivery state and claim of each config; no secrets, so it can be read for monitoring).
 * Both belong to their task through foreign keys with ON DELETE CASCADE, so a purge, by a worker of
 * any release, deletes a task's configs and deliveries in its own statement. A foreign key to
 * `tasks` takes a SHARE ROW EXCLUSIVE lock on it until the step commits: commits wait for the
 * step, which only creates empty tables, so for milliseconds (unlike step 2's messages, whose
 * backfill made a foreign key too costly).
 *
 * Step 5 makes tasks belong to their caller (`CommitRequest.owner` in core): `tasks.owner` (NULL
 * for a task without one, which every earlier task is), an index for listTasks of one owner in the
 * keyset order of step 3, and the message index keyed by (namespace, owner, message_id) with the
 * message's digest. `messages.owner` is '' for the anonymous scope (commits without an owner; a
 * key column cannot be NULL, and commits refuse '' as an owner) and defaults to it, so the rows
 * already there, and those workers of the previous release insert during a rolling deploy, are in
 * the anonymous scope, where they were indexed; `digest` is NULL for them. Neither new column
 * rewrites its table (a constant default is metadata only since Postgres 11).
 *
 * What step 5 locks: ADD COLUMN takes ACCESS EXCLUSIVE on `tasks` and on `messages`, held until
 * the step commits, so every read and write of either table (about everything a worker does)
 * waits for the whole step. Its time goes into two index builds, each a full read and sort of its
 * table: the owner index over `tasks`, and the new primary key over `messages` (the README has a
 * measured duration; on a large database apply it with `migrationSql(schema, { after: 4 })` at a
 * quiet moment). Workers of the previous release keep working after it: their message rows go to
 * the anonymous scope, and their tasks have no owner.
 *
 * Step 9 drops the foreign key from `events` to `tasks`: its check, run for every event inserted,
 * was a quarter of the database's CPU per streamed chunk (issue 30), and it guarded nothing the
 * statements do not: events are inserted only by the statement that writes their task's row at
 * its expected version, and purgeExpired now deletes a purged task's events in its own statement.
 * What it locks: ACCESS EXCLUSIVE on `events` and SHARE ROW EXCLUSIVE on `tasks`, for the moment
 * the catalog change takes (no data is read or written). A worker of the previous release purging
 * after the step leaves its purged tasks' events behind (they counted on the cascade): rows no
 * one reads, as task ids are never reused; the next purge by a worker of this release does not see
 * them either. Run `DELETE FROM <schema>.events e WHERE NOT EXISTS (SELECT 1 FROM <schema>.tasks t
 * WHERE t.namespace = e.namespace AND t.task_id = e.task_id)` once every worker runs this release
 * to remove them.
 *
 * Step 8 lets the commits of a running task be heap-only (HOT) updates: Postgres writes no index
 * entry for an update that changes no indexed column and finds room on the row's page. Every
 * commit changes `updated_at`, which `tasks_terminal` indexed, so every commit (one per streamed
 * chunk, at worst) wrote an entry into each of the table's eight indexes (issue 30). Step 8 indexes
 * `terminal_at` instead: a stored generated column, NULL until the task is terminal, so a chunk's
 * commit changes `version`, `task` and `updated_at`, none of them indexed, and leaves the
 * indexes alone. Being generated, it is right for the commits of workers of the previous release
 * too, whose purge (on `state` and `updated_at`) still works, without an index. `fillfactor` 80
 * leaves a fifth of each new page free for such updates. What it locks: adding a stored generated
 * column rewrites `tasks` under ACCESS EXCLUSIVE, so commits wait for the whole step (apply it
 * with `migrationSql(schema, { after: 7 })` at a quiet moment on a large table).
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
  {
    version: 3,
    name: 'status timestamp and indexes for listTasks',
    // See the comment above `migrations` for what step 3 locks and what it leaves to the next commit.
    sql: (s) => `
ALTER TABLE ${s}.tasks ADD COLUMN status_ts bigint NOT NULL DEFAULT ${NO_STATUS_TIMESTAMP};

-- statusTimestampOf of @fastify-a2a/core, in SQL, for the rows written before this step: epoch
-- milliseconds of an ISO 8601 status timestamp, or NO_STATUS_TIMESTAMP for anything else.
-- Postgres also reads words such as 'yesterday' or 'infinity' as timestamps; Date.parse does not,
-- hence the shape check before the cast. A session-local function, gone with the step.
CREATE FUNCTION pg_temp.a2a_status_timestamp(value text) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  IF value !~ '^[+-]?[0-9]{4,6}-[0-9]{2}-[0-9]{2}T' THEN
    RETURN ${NO_STATUS_TIMESTAMP};
  END IF;
  -- Truncated to the millisecond (as Date.parse reads fractions), then rounded: extract() is a
  -- double before Postgres 14, and 1767261600.123 * 1000 is 1767261600122.9999 there.
  RETURN round(extract(epoch FROM date_trunc('milliseconds', value::timestamptz)) * 1000)::bigint;
EXCEPTION WHEN others THEN
  RETURN ${NO_STATUS_TIMESTAMP};
END $$;
UPDATE ${s}.tasks SET status_ts = pg_temp.a2a_status_timestamp(task->'status'->>'timestamp')
WHERE task->'status'->>'timestamp' IS NOT NULL;
DROP FUNCTION pg_temp.a2a_status_timestamp(text);

-- One page of listTasks is one index range read in order, whatever the filters: newest first,
-- ties by task id, both DESC so that the cursor is one row comparison
-- (status_ts, task_id COLLATE "C") < ($n, $m), which is an index condition. "C" compares bytes,
-- i.e. code points, the order the contract gives ties in every store; the database's default
-- collation would sort ids by a locale's rules.
CREATE INDEX tasks_by_status_ts ON ${s}.tasks (namespace, status_ts DESC, task_id COLLATE "C" DESC);
CREATE INDEX tasks_by_context_status_ts ON ${s}.tasks (namespace, context_id, status_ts DESC, task_id COLLATE "C" DESC);
CREATE INDEX tasks_by_state_status_ts ON ${s}.tasks (namespace, state, status_ts DESC, task_id COLLATE "C" DESC);
`,
  },
  {
    version: 4,
    name: 'push notification configs and delivery state',
    // See the comment above `migrations` for what the two tables hold and what step 4 locks.
    sql: (s) => `
CREATE TABLE ${s}.push_configs (
  namespace        text   NOT NULL,
  task_id          text   NOT NULL,
  config_id        text   NOT NULL,
  config           json   NOT NULL,
  protocol_version text   NOT NULL,
  created_at       bigint NOT NULL,
  updated_at       bigint NOT NULL,
  row_id           bigint GENERATED ALWAYS AS IDENTITY,
  PRIMARY KEY (namespace, task_id, config_id),
  FOREIGN KEY (namespace, task_id) REFERENCES ${s}.tasks (namespace, task_id) ON DELETE CASCADE
);

CREATE TABLE ${s}.push_deliveries (
  namespace       text    NOT NULL,
  task_id         text    NOT NULL,
  config_id       text    NOT NULL,
  cursor          integer NOT NULL,
  attempts        integer NOT NULL,
  next_attempt_at bigint,
  last_sent_at    bigint,
  failed          boolean NOT NULL,
  last_error      text,
  last_status     integer,
  claimed_by      text,
  claim_id        text,
  claim_until     bigint,
  PRIMARY KEY (namespace, task_id, config_id),
  FOREIGN KEY (namespace, task_id, config_id)
    REFERENCES ${s}.push_configs (namespace, task_id, config_id) ON DELETE CASCADE
);
-- claimPushDeliveries, every few hundred ms on every worker: the deliveries still in play (failed
-- ones leave this index for good), soonest first, each joined with its task by primary key.
CREATE INDEX push_deliveries_pending ON ${s}.push_deliveries (namespace, next_attempt_at NULLS FIRST) WHERE NOT failed;
-- renewPushClaims: one worker's claims.
CREATE INDEX push_deliveries_by_worker ON ${s}.push_deliveries (namespace, claimed_by) WHERE claimed_by IS NOT NULL;
`,
  },
  {
    version: 5,
    name: 'task owners and a message index per owner',
    // See the comment above `migrations` for what step 5 adds, locks, and leaves to old workers.
    sql: (s) => `
ALTER TABLE ${s}.tasks ADD COLUMN owner text;
-- listTasks of one owner, or of the tasks without one: one index range read in order, like the
-- indexes of step 3. On coalesce(owner, '') rather than owner: the planner takes \`owner IS NULL\`
-- for an index condition but not for an equality, so it would not read that range in index order
-- (it sorts, or filters the status index); \`coalesce(owner, '') = ''\` is an equality like any
-- other. No principal is '' (commits refuse it), so '' names the tasks without an owner.
CREATE INDEX tasks_by_owner_status_ts
  ON ${s}.tasks (namespace, (coalesce(owner, '')), status_ts DESC, task_id COLLATE "C" DESC);

ALTER TABLE ${s}.messages ADD COLUMN owner text NOT NULL DEFAULT '', ADD COLUMN digest text;
-- Keyed by namespace, owner and message id, owner last: lookups give all three, and the lookups
-- of workers of the previous release (namespace and message id) still find their prefix in it.
ALTER TABLE ${s}.messages DROP CONSTRAINT messages_pkey, ADD PRIMARY KEY (namespace, message_id, owner);
`,
  },
  {
    version: 6,
    name: 'trace context of the last commit of each task',
    sql: (s) => `
-- The W3C traceparent of the commit that last changed the task (CommitRequest.traceContext), so
-- that another worker's work for it (push notifications) joins the request's trace. Nullable, no
-- default: adding it rewrites nothing, and workers of earlier releases never write it.
ALTER TABLE ${s}.tasks ADD COLUMN trace_context text;
`,
  },
  {
    version: 7,
    name: 'worker incarnations and descriptions',
    // joinWorker and listWorkers (WorkerDescription in @fastify-a2a/core): which start of a process
    // holds a worker id's lease, and where it runs. NULL for leases written by heartbeat() alone
    // (a worker of an earlier release). Nullable columns without defaults: nothing is rewritten.
    sql: (s) => `
ALTER TABLE ${s}.workers ADD COLUMN incarnation text, ADD COLUMN host text, ADD COLUMN pid integer,
  ADD COLUMN started_at bigint;
`,
  },
  {
    version: 8,
    name: 'heap-only updates of a running task',
    // See the comment above `migrations` for why and what step 8 locks.
    sql: (s) => `
-- When a terminal task was finished, derived by Postgres from the state and the time of the last
-- commit, so that workers of every release keep it right: NULL while the task runs.
ALTER TABLE ${s}.tasks ADD COLUMN terminal_at bigint
  GENERATED ALWAYS AS (CASE WHEN state IN ${TERMINAL_STATES} THEN updated_at END) STORED;
-- purgeExpired: terminal tasks finished before the cutoff. Replaces tasks_terminal, the one index
-- on updated_at, the column every commit changes.
CREATE INDEX tasks_terminal_at ON ${s}.tasks (namespace, terminal_at) WHERE terminal_at IS NOT NULL;
DROP INDEX ${s}.tasks_terminal;
-- Room on each page for the next version of its rows, so an update can stay on the page.
ALTER TABLE ${s}.tasks SET (fillfactor = 80);
`,
  },
  {
    version: 9,
    name: 'events without a foreign key to tasks',
    // See the comment above `migrations` for why and what step 9 locks.
    sql: (s) => `
-- Every event row inserted ran the foreign key's check, a lookup and lock of its task row: a
-- quarter of the database's work per streamed chunk (issue 30). An event is only ever inserted by
-- the commit that writes its task's row, in the same statement; purgeExpired deletes the events
-- of the tasks it purges itself.
ALTER TABLE ${s}.events DROP CONSTRAINT IF EXISTS events_namespace_task_id_fkey;
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
