/**
 * The WAL is checkpointed by a worker thread, not inside commits on the event loop (issue 30):
 * the thread copies the frames into the database file, restarts a WAL that steady writes keep
 * from ever being fully copied, stops with the store, and `checkpointIntervalMs: 0` leaves
 * checkpoints to SQLite.
 */

import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { A2AError, applyEvents, type Task } from '@fastify-a2a/core';
import { artifactUpdate, createTask, taskFixture } from '@fastify-a2a/core/testing';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Checkpointer, type CheckpointReport } from '../src/checkpointer.js';
import { SqliteStore } from '../src/index.js';
import { tempDir } from './helpers.js';

const PAGE = 4096;
let dir: ReturnType<typeof tempDir>;
const stores: SqliteStore[] = [];

beforeEach(() => {
  dir = tempDir();
});
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  dir.remove();
});

async function openStore(options: { checkpointIntervalMs?: number } = {}) {
  const filename = join(dir.dir, 'a2a.db');
  const store = new SqliteStore({ filename, ...options });
  stores.push(store);
  await store.open();
  return { store, filename, wal: `${filename}-wal` };
}

/** A new working task at version 1. */
async function bigTask(store: SqliteStore): Promise<Task> {
  const task = taskFixture({ state: 'working' });
  await createTask(store, task);
  return task;
}

/**
 * Commits `count` artifact updates of `bytes` each to `task` (at `version`), one after another,
 * each awaited; resolves with the task's version after them.
 */
async function writeSteadily(store: SqliteStore, task: Task, count: number, bytes: number, from = 1): Promise<number> {
  let current = task;
  let version = from;
  for (let i = 0; i < count; i++) {
    const events = [artifactUpdate(current, `${i}:${'x'.repeat(bytes)}`)];
    const next = applyEvents(current, events);
    // A fresh artifact body each time, so the task row stays small and each commit's pages are
    // the event's.
    await store.commit({ taskId: task.id, expectedVersion: version, task: { ...next, artifacts: [] }, events });
    current = { ...next, artifacts: [] };
    version += 1;
  }
  return version;
}

/** A WAL-mode file of its own (no store) whose writer never checkpoints, with `pages` one-page rows in its WAL. */
function walFile(name: string, pages: number) {
  const filename = join(dir.dir, name);
  const writer = new Database(filename);
  writer.pragma('journal_mode = WAL');
  writer.pragma('wal_autocheckpoint = 0');
  writer.exec('CREATE TABLE t (x BLOB)');
  const insert = writer.prepare('INSERT INTO t VALUES (randomblob(4000))');
  for (let i = 0; i < pages; i++) insert.run();
  return { filename, writer, insert };
}

const walPages = (wal: string) => (existsSync(wal) ? statSync(wal).size / (PAGE + 24) : 0);

describe('SQLite checkpoints on a worker thread', () => {
  it('the thread copies the WAL into the database file while commits go on', async () => {
    const { store, filename } = await openStore({ checkpointIntervalMs: 20 });
    const reports: CheckpointReport[] = [];
    store.checkpointer?.onCheckpoint((report) => reports.push(report));
    const task = await bigTask(store);
    const databaseBefore = statSync(filename).size;
    // ~1,500 pages: past SQLite's own 1,000-page checkpoint, below the store's 10,000-page fallback.
    await writeSteadily(store, task, 300, 5 * PAGE);
    await expect.poll(() => reports.some((report) => report.checkpointed > 0), { timeout: 5000 }).toBe(true);
    expect(reports.every((report) => report.checkpointed <= report.log)).toBe(true);
    await expect.poll(() => statSync(filename).size, { timeout: 5000 }).toBeGreaterThan(databaseBefore + 1000 * PAGE);
  });

  it('steady writes do not grow the WAL without bound: the thread restarts it', async () => {
    const { store, wal } = await openStore({ checkpointIntervalMs: 10 });
    const reports: CheckpointReport[] = [];
    store.checkpointer?.onCheckpoint((report) => reports.push(report));
    const task = await bigTask(store);
    // ~10,000 pages (the events, the task row and its indexes) written back to back, where nothing
    // waits for the thread: without its RESTART the WAL grows to the connection's 10,000-page
    // fallback (its checkpoint inside a commit, what the thread is there to avoid).
    const version = await writeSteadily(store, task, 1200, 5 * PAGE);
    await expect.poll(() => reports.some((report) => report.mode === 'RESTART'), { timeout: 10_000 }).toBe(true);
    expect(walPages(wal)).toBeGreaterThanOrEqual(2000);
    // Once the thread has copied every frame, the next commits write the WAL from its start
    // (~800 more pages): the file, at least 2,000 pages long, does not grow.
    const seen = reports.length;
    await expect
      .poll(() => reports.slice(seen).some((report) => report.checkpointed === report.log), { timeout: 10_000 })
      .toBe(true);
    const walBytes = statSync(wal).size;
    await writeSteadily(store, task, 100, 5 * PAGE, version);
    expect(statSync(wal).size).toBe(walBytes);
  });

  it('the thread restarts a WAL that holds restartFrames frames or more after its PASSIVE checkpoint', async () => {
    const { filename, writer, insert } = walFile('plain.db', 300);
    const reports: CheckpointReport[] = [];
    const checkpointer = new Checkpointer({ filename, intervalMs: 10, restartFrames: 100, onFailure: () => {} });
    checkpointer.onCheckpoint((report) => reports.push(report));
    await expect.poll(() => reports.some((report) => report.mode === 'RESTART'), { timeout: 5000 }).toBe(true);
    const passive = reports.find((report) => report.mode === 'PASSIVE');
    expect(passive?.log).toBeGreaterThanOrEqual(300);
    expect(passive?.checkpointed).toBe(passive?.log);
    // After the RESTART the next commit writes the WAL from its start: the file does not grow.
    const walBytes = statSync(`${filename}-wal`).size;
    for (let i = 0; i < 50; i++) insert.run();
    expect(statSync(`${filename}-wal`).size).toBe(walBytes);
    await checkpointer.close();
    writer.close();
  });

  it('a WAL shorter than restartFrames gets PASSIVE checkpoints only', async () => {
    const { filename, writer } = walFile('short.db', 50);
    const reports: CheckpointReport[] = [];
    const checkpointer = new Checkpointer({ filename, intervalMs: 10, restartFrames: 1000, onFailure: () => {} });
    checkpointer.onCheckpoint((report) => reports.push(report));
    await expect.poll(() => reports.length, { timeout: 5000 }).toBeGreaterThan(2);
    expect(reports.every((report) => report.mode === 'PASSIVE')).toBe(true);
    expect(reports[0]?.checkpointed).toBe(reports[0]?.log);
    await checkpointer.close();
    writer.close();
  });

  it('close stops the thread: the last connection removes the WAL, and the file opens again', async () => {
    const { store, wal, filename } = await openStore();
    const task = await bigTask(store);
    await writeSteadily(store, task, 20, PAGE);
    expect(store.checkpointer).toBeDefined();
    await store.close();
    expect(store.checkpointer).toBeUndefined();
    // SQLite deletes the WAL when its last connection closes: the thread's connection is closed too.
    expect(existsSync(wal)).toBe(false);
    const again = new SqliteStore({ filename });
    stores.push(again);
    await again.open();
    expect((await again.getTask(task.id))?.version).toBe(21);
  });

  it('checkpointIntervalMs 0 runs no thread: SQLite checkpoints inside commits, the WAL stays near 1,000 pages', async () => {
    const { store, wal } = await openStore({ checkpointIntervalMs: 0 });
    expect(store.checkpointer).toBeUndefined();
    const task = await bigTask(store);
    await writeSteadily(store, task, 600, 5 * PAGE);
    expect(walPages(wal)).toBeLessThan(1200);
  });

  it('refuses a checkpointIntervalMs that is not a non-negative number', () => {
    for (const checkpointIntervalMs of [-1, Number.NaN, '100' as unknown as number]) {
      let error: unknown;
      try {
        new SqliteStore({ filename: join(dir.dir, 'x.db'), checkpointIntervalMs });
      } catch (caught) {
        error = caught;
      }
      expect(A2AError.is(error) && error.code).toBe('INVALID_OPTIONS');
      expect((error as Error).message).toContain('checkpointIntervalMs');
    }
  });

  it('a thread that cannot open the file reports the failure (on which the store checkpoints inline again)', async () => {
    const failures: unknown[] = [];
    const checkpointer = new Checkpointer({
      filename: join(dir.dir, 'missing.db'),
      intervalMs: 10,
      restartFrames: 2000,
      onFailure: (error) => failures.push(error),
    });
    await expect.poll(() => failures.length, { timeout: 5000 }).toBe(1);
    // The worker's error arrives cloned (its message and stack, not always as an Error).
    expect(inspect(failures[0])).toMatch(/unable to open database file/i);
    await checkpointer.close();
  });
});
