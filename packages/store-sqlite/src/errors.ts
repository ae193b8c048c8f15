/**
 * Turns better-sqlite3 failures into coded {@link A2AError}s whose message says what to do.
 */

import { A2AError } from '@fastify-a2a/core';
import { SchemaTooNewError } from './migrations.js';

/** better-sqlite3's `SqliteError` carries SQLite's extended result code as a string. */
export function sqliteCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

const isLocked = (code: string | undefined): boolean =>
  code !== undefined && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Codes that mean "the storage cannot be used right now", as opposed to a bug in a query. */
const UNAVAILABLE = [
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
  'SQLITE_READONLY',
  'SQLITE_FULL',
  'SQLITE_CORRUPT',
  'SQLITE_NOTADB',
  'SQLITE_PERM',
  'SQLITE_AUTH',
];

export const notOpen = (filename: string, closed: boolean): A2AError =>
  new A2AError(
    'STORE_UNAVAILABLE',
    closed
      ? `The SQLite store for "${filename}" is closed; create a new store (or call open() again) before using it.`
      : `The SQLite store for "${filename}" is not open yet; call (and await) store.open() before using it.`,
    { data: { filename } },
  );

/** Errors from opening the file or migrating it. Names the path so the operator can fix it. */
export function openError(error: unknown, filename: string, busyTimeoutMs: number): A2AError {
  if (A2AError.is(error)) return error;
  if (error instanceof SchemaTooNewError) {
    return new A2AError('STORE_UNAVAILABLE', `Cannot use the SQLite database "${filename}": ${error.message}`, {
      cause: error,
      data: { filename, found: error.found, known: error.known },
    });
  }
  // Another process held the write lock (e.g. migrating) for longer than the busy timeout.
  if (isLocked(sqliteCode(error))) return storeError(error, filename, busyTimeoutMs) as A2AError;
  return new A2AError(
    'STORE_UNAVAILABLE',
    `Cannot open the SQLite database "${filename}": ${messageOf(error)}. ` +
      'Check that the path is a file (not a directory), that its directory exists or can be created, and that this process may read and write both.',
    { cause: error, data: { filename, sqliteCode: sqliteCode(error) } },
  );
}

/**
 * Errors from a query. Lock timeouts and I/O failures become STORE_UNAVAILABLE; anything else is
 * returned unchanged (it is a bug, and its own message and stack say more than a wrapper would).
 */
export function storeError(error: unknown, filename: string, busyTimeoutMs: number): unknown {
  if (A2AError.is(error)) return error;
  const code = sqliteCode(error);
  if (isLocked(code)) {
    return new A2AError(
      'STORE_UNAVAILABLE',
      `The SQLite database "${filename}" is locked: another connection held its write lock for longer than busyTimeoutMs (${busyTimeoutMs} ms). ` +
        'Retry the request; if it keeps happening, look for a process holding a long transaction on this file, or raise busyTimeoutMs.',
      { cause: error, data: { filename, sqliteCode: code } },
    );
  }
  if (code !== undefined && UNAVAILABLE.some((prefix) => code.startsWith(prefix))) {
    return new A2AError('STORE_UNAVAILABLE', `The SQLite database "${filename}" failed: ${messageOf(error)}.`, {
      cause: error,
      data: { filename, sqliteCode: code },
    });
  }
  // better-sqlite3 throws a TypeError once the connection was closed behind our back (e.g. a
  // database handle passed in and closed by its owner).
  if (error instanceof TypeError && /database connection is not open/i.test(error.message)) {
    return new A2AError(
      'STORE_UNAVAILABLE',
      `The SQLite connection for "${filename}" was closed; open a new store before using it.`,
      { cause: error, data: { filename } },
    );
  }
  return error;
}
