/**
 * Background checkpoints: a worker thread with its own connection to the file copies the WAL's
 * pages into the database, so the event loop never does.
 *
 * SQLite's automatic checkpoint runs inside the commit that took the WAL past 1,000 pages, on the
 * committing connection: with `synchronous = NORMAL` it fsyncs the WAL, copies every page into the
 * database file and fsyncs that too, all on the event loop, which waits for the disk meanwhile.
 * Under a steady stream of commits that is a stall every few megabytes (issue 30: a blocking send
 * gained 15–20 % without it). Here the store's connection checkpoints only past a far larger WAL (a
 * fallback, should this thread fall behind or die) and a worker thread checkpoints instead:
 * - PASSIVE every `intervalMs`: it takes no lock writers wait for, and costs nothing (no fsync)
 *   when no frame is new;
 * - RESTART when the WAL still holds `restartFrames` or more after it: a WAL is only written from
 *   its start again by a commit that begins when every frame is in the database, which steady
 *   writes on another thread may never leave room for; RESTART waits (on this thread) for that
 *   moment and holds new writers back only while it copies the last frames.
 */

import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** The pages past which the store's own connection still checkpoints (the fallback). */
export const FALLBACK_AUTOCHECKPOINT_PAGES = 10_000;
/** SQLite's default `wal_autocheckpoint`, restored when the worker cannot run. */
export const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

export interface CheckpointerOptions {
  filename: string;
  /** How often the worker checkpoints (PASSIVE). */
  intervalMs: number;
  /** WAL frames left after a PASSIVE checkpoint that make the worker RESTART the log. */
  restartFrames: number;
  /** The worker stopped on an error: the store checkpoints inline again. */
  onFailure(error: unknown): void;
}

/** What the worker reports after each checkpoint that found frames in the WAL (copied now or before). */
export interface CheckpointReport {
  mode: 'PASSIVE' | 'RESTART';
  /** Frames in the WAL when it ran. */
  log: number;
  /** Frames of them now in the database file. */
  checkpointed: number;
}

// Run with `eval`, so that it needs no file of its own beside this module's (the store is bundled,
// run from its TypeScript sources in tests, and from dist/ when installed). CommonJS: `require`
// is what an eval'd worker has.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const failed = (error) => parentPort.postMessage({ failed: String((error && error.message) || error) });
let db;
try {
  db = new Database(workerData.filename, { fileMustExist: true, timeout: workerData.restartWaitMs });
} catch (error) {
  failed(error);
}
let timer;
const checkpoint = (mode) => {
  const [row] = db.pragma('wal_checkpoint(' + mode + ')');
  return { mode, log: row.log, checkpointed: row.checkpointed };
};
const tick = () => {
  try {
    const passive = checkpoint('PASSIVE');
    if (passive.log > 0) parentPort.postMessage(passive);
    if (passive.log >= workerData.restartFrames) parentPort.postMessage(checkpoint('RESTART'));
  } catch (error) {
    failed(error);
    clearInterval(timer);
    db.close();
  }
};
if (db !== undefined) timer = setInterval(tick, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'close') return;
  clearInterval(timer);
  if (db !== undefined) db.close();
  parentPort.close();
});
`;

/**
 * The worker thread of one store. Starts at once; `close()` stops it after its current checkpoint.
 */
export class Checkpointer {
  readonly #worker: Worker;
  readonly #listeners = new Set<(report: CheckpointReport) => void>();
  readonly #exited: Promise<void>;

  constructor(options: CheckpointerOptions) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        driver,
        filename: options.filename,
        intervalMs: options.intervalMs,
        restartFrames: options.restartFrames,
        // RESTART waits this long for readers and writers; PASSIVE never waits.
        restartWaitMs: 1000,
      },
      // A few MB of heap is all it needs.
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
    });
    // Never what keeps the process alive.
    this.#worker.unref();
    let failed = false;
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      options.onFailure(error);
    };
    this.#worker.on('message', (message: CheckpointReport | { failed: string }) => {
      if ('failed' in message) fail(new Error(message.failed));
      else for (const listener of this.#listeners) listener(message);
    });
    this.#worker.on('error', fail);
    this.#exited = new Promise((resolve) => {
      this.#worker.once('exit', (code) => {
        if (code !== 0) fail(new Error(`the checkpoint thread exited with code ${code}`));
        resolve();
      });
    });
  }

  /** Calls `listener` after each checkpoint that found frames (tests, diagnostics). */
  onCheckpoint(listener: (report: CheckpointReport) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Stops the thread once its current checkpoint is done; resolves when it has exited. */
  async close(): Promise<void> {
    // Held while it stops, or a process with nothing else left would end with close() pending.
    this.#worker.ref();
    this.#worker.postMessage('close');
    await this.#exited;
  }
}
