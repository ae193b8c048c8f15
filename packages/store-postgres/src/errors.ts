/**
 * Turns pg failures into coded {@link A2AError}s whose message names the server and says what to do.
 */

import { A2AError } from '@fastify-a2a/core';
import pg from 'pg';

/** Where the store connects, resolved the way pg resolves it (connection string, PG* env, defaults). */
export interface Target {
  host: string;
  port: number;
  database: string;
  user: string;
}

export function resolveTarget(config: pg.ClientConfig): Target {
  // An unconnected Client resolves the settings exactly as a real connection would; it opens nothing.
  const client = new pg.Client(config);
  return {
    host: client.host,
    port: client.port,
    database: client.database ?? '',
    user: client.user ?? '',
  };
}

export const describeTarget = (t: Target): string => `${t.host}:${t.port} (database "${t.database}", user "${t.user}")`;

/** The error's own words. Connecting to `localhost` may fail on ::1 and 127.0.0.1 at once: an AggregateError with an empty message. */
export function messageOf(error: unknown): string {
  const err = error as { message?: unknown; errors?: unknown };
  if (Array.isArray(err.errors) && err.errors.length > 0) return err.errors.map(messageOf).join('; ');
  return typeof err.message === 'string' && err.message !== '' ? err.message : String(error);
}

function codeOf(error: unknown): string | undefined {
  const err = error as { code?: unknown; errors?: unknown };
  if (Array.isArray(err.errors) && err.errors.length > 0) return codeOf(err.errors[0]);
  return typeof err.code === 'string' ? err.code : undefined;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** pg reports these without a code. */
const CONNECTION_MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|not queryable|cannot use a pool after calling end|connection timeout/i;

/**
 * True when the error means "the database cannot be reached or dropped us", as opposed to a
 * problem with one query: network errors, SQLSTATE class 08 (connection exception), 57P01-57P03
 * (shutdown, crash recovery) and 53300 (too many connections).
 */
export function isConnectionError(error: unknown): boolean {
  const code = codeOf(error);
  if (code !== undefined) {
    if (NETWORK_CODES.has(code) || code.startsWith('08') || code === '53300') return true;
    if (code === '57P01' || code === '57P02' || code === '57P03') return true;
  }
  return CONNECTION_MESSAGES.test(messageOf(error));
}

/** open() failed before the store could be used. */
export function openError(error: unknown, target: Target): A2AError {
  if (A2AError.is(error)) return error;
  const where = describeTarget(target);
  const code = codeOf(error);
  const hint = isConnectionError(error)
    ? 'Check that the server is running and accepts connections there, or fix connectionString / poolConfig (or the pool you passed).'
    : code === '42501'
      ? 'The role may not create the schema or its tables: grant it, or have a DBA apply migrationSql() and set migrate: false.'
      : 'Check the connection settings and the role’s privileges.';
  return new A2AError(
    'STORE_UNAVAILABLE',
    `Cannot open the PostgreSQL store at ${where}: ${messageOf(error)}. ${hint}`,
    {
      cause: error,
      data: { ...target, pgCode: code },
    },
  );
}

/**
 * SQLSTATEs of a statement the server could not run *now*, which the same statement may pass
 * shortly after: 55000 object not in prerequisite state (seen while a server fails over or a
 * replica is promoted), 55006 object in use, 55P03 lock not available, 57014 query canceled
 * (statement_timeout), 40001 serialization failure, 40P01 deadlock detected, 25006 read-only
 * transaction (connected to a standby after a failover), and class 53 (insufficient resources).
 */
const TRANSIENT_CODES = new Set(['55000', '55006', '55P03', '57014', '40001', '40P01', '25006']);

/** True when the statement failed for a passing state of the server (see TRANSIENT_CODES), not for what it says. */
export function isTransientError(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && (TRANSIENT_CODES.has(code) || code.startsWith('53'));
}

/**
 * Errors from a query. Connection failures and transient server states become STORE_UNAVAILABLE
 * naming the server (clients get 503 "retry shortly", the runtime retries its last writes);
 * anything else is returned unchanged (a bug or a constraint, whose own message and stack say more).
 */
export function storeError(error: unknown, target: Target): unknown {
  if (A2AError.is(error)) return error;
  if (!isConnectionError(error)) {
    if (!isTransientError(error)) return error;
    return new A2AError(
      'STORE_UNAVAILABLE',
      `The PostgreSQL server at ${describeTarget(target)} could not run a statement now (SQLSTATE ${codeOf(error)}: ${messageOf(error)}). Retry shortly; if it persists, check the server's state.`,
      { cause: error, data: { ...target, pgCode: codeOf(error) } },
    );
  }
  return new A2AError(
    'STORE_UNAVAILABLE',
    `The PostgreSQL server at ${describeTarget(target)} is unavailable: ${messageOf(error)}. Retry; if it persists, check the server and the network.`,
    { cause: error, data: { ...target, pgCode: codeOf(error) } },
  );
}

export const notOpen = (closed: boolean): A2AError =>
  new A2AError(
    'STORE_UNAVAILABLE',
    closed
      ? 'The PostgreSQL store is closed; call (and await) store.open() again, or create a new store, before using it.'
      : 'The PostgreSQL store is not open yet; call (and await) store.open() before using it.',
  );
