/**
 * The queue behind group commit: commits wait here only while every lane is busy, and a lane that
 * comes free takes everything queued (up to `maxBatch`) as its next batch. Nothing waits for a
 * batch to fill: a commit that finds a lane free goes at once, alone.
 *
 * Each entry names the keys it locks in the database (its task row; the context's advisory lock
 * when it enqueues a turn). A batch holds those locks until it commits, so two batches of this
 * process in flight at once must never share a key, or each could wait on the other (a deadlock
 * Postgres breaks only after `deadlock_timeout`). An entry whose key is held by a batch in flight
 * stays queued, and so does every later entry with one of its keys: commits of one task go to the
 * database in the order they were made.
 */

export interface Queued {
  /** What the entry locks in the database; see the module comment. */
  readonly keys: readonly string[];
}

export class CommitQueue<T extends Queued> {
  readonly #lanes: number;
  readonly #maxBatch: number;
  readonly #run: (batch: T[], lane: number) => Promise<void>;
  #queue: T[] = [];
  /** Keys held by the batches in flight. */
  readonly #busy = new Set<string>();
  /** Free lane numbers (each lane keeps its own connection). */
  readonly #free: number[];
  #idle: (() => void) | undefined;

  constructor(lanes: number, maxBatch: number, run: (batch: T[], lane: number) => Promise<void>) {
    this.#lanes = lanes;
    this.#maxBatch = maxBatch;
    this.#run = run;
    this.#free = Array.from({ length: lanes }, (_, lane) => lanes - 1 - lane);
  }

  push(entry: T): void {
    this.#queue.push(entry);
    this.#pump();
  }

  /** Resolves once nothing is queued or in flight. */
  drained(): Promise<void> {
    if (this.#queue.length === 0 && this.#free.length === this.#lanes) return Promise.resolve();
    return new Promise((resolve) => {
      const previous = this.#idle;
      this.#idle = () => {
        previous?.();
        resolve();
      };
    });
  }

  #pump(): void {
    while (this.#free.length > 0 && this.#queue.length > 0) {
      const batch: T[] = [];
      const rest: T[] = [];
      const blocked = new Set<string>();
      for (const entry of this.#queue) {
        const free = entry.keys.every((key) => !this.#busy.has(key) && !blocked.has(key));
        if (free && batch.length < this.#maxBatch) {
          batch.push(entry);
        } else {
          rest.push(entry);
          for (const key of entry.keys) blocked.add(key);
        }
      }
      if (batch.length === 0) break;
      this.#queue = rest;
      const lane = this.#free.pop() as number;
      const keys = batch.flatMap((entry) => entry.keys);
      for (const key of keys) this.#busy.add(key);
      // `run` settles every entry itself and never rejects; the catch only keeps the queue moving.
      void this.#run(batch, lane)
        .catch(() => {})
        .finally(() => {
          for (const key of keys) this.#busy.delete(key);
          this.#free.push(lane);
          this.#pump();
        });
    }
    if (this.#queue.length === 0 && this.#free.length === this.#lanes && this.#idle !== undefined) {
      const idle = this.#idle;
      this.#idle = undefined;
      idle();
    }
  }
}
