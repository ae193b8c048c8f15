/** The options of {@link PostgresStore}, and the checks the constructor makes on them. */

import { A2AError, type Clock } from '@fastify-a2a/core';
import type pg from 'pg';

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
   * How often a listening store tells the other processes on its channel that it listens (a NOTIFY
   * of its own), and looks for other live workers in the worker leases (a worker of an earlier
   * release says nothing). A store that has heard no other listener and seen no other live worker
   * for three intervals sends no NOTIFY after its commits: nobody would hear it, and this process's
   * own subscribers are told without one. On a lone worker that NOTIFY, and hearing it back, was
   * about a third of the database's CPU per streamed chunk (issue 30, bench/TOKENS.md). A store that
   * starts, or whose LISTEN connection comes back, says so at once, and the others notify again
   * once they hear it; a commit made before that reaches its streams on their next poll
   * (`followPollIntervalMs` of the runtime), never lost. `0` notifies after every commit, always.
   * A store with `listen: false` notifies after every commit too (it cannot hear who listens).
   * @default 5000
   */
  presenceIntervalMs?: number;
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
   * streams catch up on their next poll), or the announcement of `presenceIntervalMs` does
   * (`taskId` is then `'presence'`; the store notifies after every commit until one succeeds).
   * @default undefined (the error is ignored)
   */
  onListenerError?: (error: unknown, taskId: string) => void;
}

export const DEFAULT_CONNECTION_TIMEOUT_MS = 5_000;
export const DEFAULT_PRESENCE_INTERVAL_MS = 5_000;
/** How long another process is taken to listen after it last said so: three intervals, two may be lost. */
export const PRESENCE_INTERVALS_HELD = 3;
export const RECONNECT_MIN_DELAY_MS = 100;
export const RECONNECT_MAX_DELAY_MS = 5_000;

/**
 * Refuses options that cannot work, naming the fix.
 * @throws {A2AError} `INVALID_OPTIONS`.
 */
export function checkOptions(options: PostgresStoreOptions): void {
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
  const presence = options.presenceIntervalMs;
  if (
    presence !== undefined &&
    (typeof presence !== 'number' || !Number.isInteger(presence) || presence < 0 || presence > 3_600_000)
  ) {
    throw invalid(
      `PostgresStore: \`presenceIntervalMs\` must be a whole number of milliseconds from 0 (always notify) to 3600000; got ${String(presence)}.`,
    );
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
