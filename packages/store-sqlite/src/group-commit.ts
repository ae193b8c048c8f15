/**
 * Group commit: commits made while this process is busy (after one commit ran and before the event
 * loop came round again) wait for that moment and go together, in one `BEGIN IMMEDIATE`
 * transaction with a SAVEPOINT each: one write lock and one WAL append for many, each commit with
 * its own version check and its own result. Nothing waits on a timer: a commit made while no other
 * is waiting runs at once, as without group commit.
 */

import { A2AError, type CommitResult, type QueueSlot } from '@fastify-a2a/core';
import type Database from 'better-sqlite3';
import type { CommitArgs } from './rows.js';

export type CommitOutcome = { ok: true; turn: QueueSlot | undefined } | { ok: false; error: unknown };

/** A commit of a batch failed with something other than a conflict or a duplicate. */
export class BatchItemError extends Error {
  constructor(
    readonly index: number,
    readonly error: unknown,
  ) {
    super('a commit of the batch failed', { cause: error });
  }
}

/**
 * Several commits in one transaction (run it with `.immediate`). A commit that indexes two or more
 * message ids runs as a nested transaction, which better-sqlite3 wraps in a SAVEPOINT, so a
 * duplicate id found after another of its ids was indexed (our own A2AError) rolls back that commit
 * alone and the others go on. The rest need none: the errors of ours they can meet, a version
 * conflict and a duplicate of their only message id, are thrown before they wrote anything (the
 * version is read first, and the message's `INSERT … DO NOTHING` is what finds the duplicate).
 * Skipping the SAVEPOINT and RELEASE saves two statements per streamed chunk and per blocking send,
 * and a send's copies of every page it touches into the statement journal (issue 30).
 * Any other error ends the batch, rolled back whole, as a BatchItemError.
 * @internal (its inferred type names better-sqlite3's internal namespace)
 */
export function batchTransaction(db: Database.Database, writeCommit: (args: CommitArgs) => QueueSlot | undefined) {
  const nested = db.transaction(writeCommit);
  return db.transaction((batch: CommitArgs[]): CommitOutcome[] =>
    batch.map((args, index): CommitOutcome => {
      try {
        return { ok: true, turn: args.messages.length > 1 ? nested(args) : writeCommit(args) };
      } catch (error) {
        if (A2AError.is(error)) return { ok: false, error };
        throw new BatchItemError(index, error);
      }
    }),
  );
}

/** A commit waiting for the next batch. */
export interface PendingCommit {
  args: CommitArgs;
  taskId: string;
  version: number;
  resolve(result: CommitResult): void;
  reject(error: unknown): void;
}

/** What {@link GroupCommit} needs of its store. */
export interface GroupCommitHost {
  /** Whether the store is open (its statements prepared). */
  isOpen(): boolean;
  /** One commit in its own `BEGIN IMMEDIATE` transaction. */
  commitAlone(args: CommitArgs): QueueSlot | undefined;
  /** Several in one (see {@link batchTransaction}). */
  commitBatch(batch: CommitArgs[]): CommitOutcome[];
  /** The error to reject a commit with (not open, or the store's error for what went wrong). */
  failure(error: unknown): unknown;
  /** A commit was written: tell the subscribers. */
  committed(taskId: string, version: number): void;
}

export class GroupCommit {
  readonly #host: GroupCommitHost;
  readonly #enabled: boolean;
  /** Commits waiting for the next batch (see {@link flush}). */
  #pending: PendingCommit[] = [];
  /** A commit ran during this turn of the event loop; later ones wait for the batch at its end. */
  #batchOpen = false;

  /** `enabled` false (the `groupCommit` option) gives every commit its own transaction. */
  constructor(host: GroupCommitHost, enabled: boolean) {
    this.#host = host;
    this.#enabled = enabled;
  }

  /** Whether commits are waiting: an operation must {@link flush} them first to see them. */
  get waiting(): boolean {
    return this.#pending.length > 0;
  }

  push(commit: PendingCommit): void {
    this.#pending.push(commit);
    if (!this.#enabled) {
      this.flush();
    } else if (!this.#batchOpen) {
      // Nothing is waiting: run now, alone. Commits made before the event loop comes round
      // again wait, and go as one batch at its end.
      this.flush();
      this.#batchOpen = true;
      setImmediate(() => this.flush());
    }
  }

  /**
   * Writes the commits waiting for a batch: several in one `BEGIN IMMEDIATE` transaction, a
   * SAVEPOINT each, so each gets its own result and a task's commits go in the order they were
   * made. Runs at the end of the event loop turn in which a commit ran, and before any other
   * operation of the store (which therefore sees every commit made before it).
   */
  flush(): void {
    this.#batchOpen = false;
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    const host = this.#host;
    const fail = (commit: PendingCommit, error: unknown) => commit.reject(host.failure(error));
    const settle = (commit: PendingCommit, outcome: CommitOutcome): void => {
      if (!outcome.ok) {
        fail(commit, outcome.error);
        return;
      }
      host.committed(commit.taskId, commit.version);
      const { version } = commit;
      commit.resolve(outcome.turn === undefined ? { version } : { version, turn: outcome.turn });
    };
    const alone = (commit: PendingCommit): CommitOutcome => {
      try {
        return { ok: true, turn: host.commitAlone(commit.args) };
      } catch (error) {
        return { ok: false, error };
      }
    };
    if (!host.isOpen()) {
      for (const commit of batch) fail(commit, undefined);
      return;
    }
    if (batch.length === 1) {
      const [commit] = batch as [PendingCommit];
      settle(commit, alone(commit));
      return;
    }
    let outcomes: CommitOutcome[];
    try {
      outcomes = host.commitBatch(batch.map((commit) => commit.args));
    } catch (error) {
      if (!(error instanceof BatchItemError)) {
        // BEGIN or COMMIT failed (the file is locked past busyTimeoutMs, I/O): nothing was
        // written, and alone each commit would have met the same.
        for (const commit of batch) fail(commit, error);
        return;
      }
      // One commit failed in a way that ended the batch (rolled back whole): run each alone, so
      // the one that fails fails by itself.
      outcomes = batch.map(alone);
    }
    for (const [index, commit] of batch.entries()) settle(commit, outcomes[index] as CommitOutcome);
  }
}
