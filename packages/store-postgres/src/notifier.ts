/**
 * The sending side of cross-process notifications: after a commit, other processes are told that
 * a task has events up to a sequence number, coalesced so that one NOTIFY statement is in flight at
 * a time, carrying the latest seq of every task committed since the previous one.
 *
 * Not inside the commit: Postgres holds a server-wide lock from a notifying transaction's
 * pre-commit until its commit is flushed, so a NOTIFY in every commit made all commits of all
 * workers wait on one another (the cross-worker bench had 2 workers slower than 1). The NOTIFY
 * transaction writes nothing else and skips the WAL flush wait, so it holds that lock briefly. A
 * notification lost in a crash right after a commit costs a stream nothing but latency: it
 * re-reads the log on its poll interval.
 */

import type pg from 'pg';

export interface CommitNotifierOptions {
  /** The store's pool while it is open; undefined once closed (pending notifications are dropped). */
  pool(): pg.Pool | undefined;
  /** The statement taking the channel and the payloads (text[]). */
  statement: string;
  channel: string;
  /** A failed NOTIFY, with the comma-separated payloads it carried. */
  onError(error: unknown, payloads: string): void;
}

export class CommitNotifier {
  readonly #options: CommitNotifierOptions;
  /** Task id → latest seq, waiting for the next coalesced NOTIFY. */
  #pending = new Map<string, number>();
  #sending = false;

  constructor(options: CommitNotifierOptions) {
    this.#options = options;
  }

  /** Tells other processes, soon, that `taskId` has events up to `seq`. */
  notify(taskId: string, seq: number): void {
    const pending = this.#pending;
    pending.set(taskId, Math.max(pending.get(taskId) ?? 0, seq));
    if (!this.#sending) {
      this.#sending = true;
      setImmediate(() => void this.#send());
    }
  }

  /** Sends what is pending, and keeps sending what piled up meanwhile: one NOTIFY in flight at a time. */
  async #send(): Promise<void> {
    const { statement, channel } = this.#options;
    while (this.#pending.size > 0) {
      const payloads = [...this.#pending].map(([id, last]) => `${id}:${last}`);
      this.#pending = new Map();
      const pool = this.#options.pool();
      if (pool === undefined) break;
      try {
        await pool.query(statement, [channel, payloads]);
      } catch (error) {
        this.#options.onError(error, payloads.join(','));
      }
    }
    this.#sending = false;
  }
}
