import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExpiredWorker, Task, TaskState } from '@fastify-a2a/core';
import Database from 'better-sqlite3';
import { afterEach, beforeEach } from 'vitest';
import { SqliteStore } from '../src/index.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const childScript = fileURLToPath(new URL('./fixtures/child.ts', import.meta.url));

/** A fresh directory under the OS temp dir; call the returned `remove` when done. */
export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-sqlite-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface VerboseStore {
  store: SqliteStore;
  database: Database.Database;
  /** Every statement the connection ran, expanded (better-sqlite3's `verbose` hook). */
  statements: string[];
}

/**
 * For a test file: each test gets a fresh directory, and `open()` a store on a file in it whose
 * connection records the statements it runs; stores and directory go after each test.
 */
export function verboseStores(): { open(): Promise<VerboseStore> } {
  let dir: ReturnType<typeof tempDir> | undefined;
  const cleanup: (() => Promise<void> | void)[] = [];
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
    dir?.remove();
  });
  return {
    async open() {
      if (dir === undefined) throw new Error('verboseStores().open() runs inside a test');
      const statements: string[] = [];
      const database = new Database(join(dir.dir, 'a2a.db'), { verbose: (sql) => statements.push(String(sql)) });
      const store = new SqliteStore({ database });
      cleanup.push(() => {
        database.close();
      });
      cleanup.push(() => store.close());
      await store.open();
      return { store, database, statements };
    },
  };
}

export interface ChildOutput {
  ok: boolean;
  code?: string;
  message?: string;
  data?: unknown;
  version?: number;
  conflicts?: number;
  positions?: number[];
  elapsedMs?: number;
  claimed?: ExpiredWorker[];
  pushClaims?: string[];
}

export interface ChildResult {
  exitCode: number | null;
  stderr: string;
  /** The JSON line the child printed, if any. */
  output: ChildOutput | undefined;
}

/** Runs test/fixtures/child.ts in a real Node process (see that file for the commands). */
export function runChild(args: string[], env: Record<string, string> = {}): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@fastify-a2a/source', '--import', 'tsx', childScript, ...args],
      { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (exitCode) => {
      const line = stdout.trim().split('\n').at(-1);
      resolve({ exitCode, stderr, output: line ? JSON.parse(line) : undefined });
    });
  });
}

export function makeTask(id: string, contextId: string, state: TaskState = 'submitted'): Task {
  return { kind: 'task', id, contextId, status: { state } };
}

/** A clock tests move by hand. */
export function manualClock(start = 1_700_000_000_000): { now: () => number; advance: (ms: number) => void } {
  let time = start;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}
