/** Opening a database file that several processes may be opening at the same moment. */

import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { sqliteCode } from './errors.js';

/**
 * `PRAGMA journal_mode = WAL`, retried on SQLITE_BUSY for up to `timeoutMs`. Switching a file that
 * is not in WAL mode yet rewrites its header: SQLite upgrades its read lock to a write lock for
 * that and, unlike for a plain write, does not call the busy handler when another connection holds
 * the write lock. So several processes opening a new file at once (one migrating while another
 * switches) would fail at once without this loop. Once the file is in WAL mode the pragma needs no
 * write and never waits.
 */
export async function enableWal(db: Database.Database, timeoutMs: number): Promise<string> {
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

/**
 * Creates `dir` and its missing parents, one level at a time. Not `mkdirSync(dir, { recursive: true })`:
 * on Node 20 that never returns for a path under /proc (and other special file systems), and a
 * misconfigured store path must fail at start with a message, not hang.
 */
export function ensureDirectory(dir: string): void {
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
