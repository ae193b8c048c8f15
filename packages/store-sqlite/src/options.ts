/** The options of {@link SqliteStore}, and the checks the constructor makes on them. */

import { A2AError, type Clock } from '@fastify-a2a/core';
import type Database from 'better-sqlite3';

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
   * How often a worker thread checkpoints the WAL into the database file (a file the store opened
   * itself). SQLite's own automatic checkpoint runs inside a commit, on the event loop, with two
   * fsyncs; with this thread the store's connection checkpoints only past a 10,000-page WAL (a
   * fallback, as when the thread fails) and the thread also restarts the WAL once it holds 2,000
   * pages. `0` leaves checkpoints to SQLite, inside commits (its default: past 1,000 pages). A
   * `database` handle passed in is never changed: its owner decides.
   * @default 100
   */
  checkpointIntervalMs?: number;
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
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 100;
/** WAL frames past which the checkpoint thread restarts the log (8 MB of 4 KB pages). */
export const CHECKPOINT_RESTART_FRAMES = 2000;

/**
 * Refuses options that cannot work, naming the fix.
 * @throws {A2AError} `INVALID_OPTIONS`.
 */
export function checkOptions(options: SqliteStoreOptions): void {
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
}

/** A duration option in milliseconds, or its default. */
export function positiveNumber(value: unknown, name: string, fallback: number, allowZero: boolean): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new A2AError(
      'INVALID_OPTIONS',
      `SqliteStore option "${name}" must be a ${allowZero ? 'non-negative' : 'positive'} number of milliseconds; got ${String(value)}.`,
    );
  }
  return value;
}
