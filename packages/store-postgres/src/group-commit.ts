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

import type { Writable } from 'node:stream';
import type { CommitRequest, CommitResult, StoreCallContext } from '@fastify-a2a/core';
import pg from 'pg';
import { statementName } from './statements.js';

export interface Queued {
  /** What the entry locks in the database; see the module comment. */
  readonly keys: readonly string[];
}

/** How long batches may wait for company, and which entries may (see {@link CommitQueue}). */
export interface BatchInterval<T> {
  ms: number;
  mayWait(entry: T): boolean;
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
  readonly #interval: BatchInterval<T> | undefined;
  /** When the last batch went (performance.now()). */
  #lastSentAt = Number.NEGATIVE_INFINITY;
  /** Set while the queue waits out the interval. */
  #timer: NodeJS.Timeout | undefined;

  /**
   * `interval`: after a batch goes, the next waits until `interval.ms` after it (or until it is
   * full), gathering what is committed meanwhile, as long as every entry queued `mayWait`. A
   * commit made after a quiet moment goes at once, alone, as without it, and so does a queue
   * holding any entry that may not wait, taking the others with it.
   */
  constructor(
    lanes: number,
    maxBatch: number,
    run: (batch: T[], lane: number) => Promise<void>,
    interval?: BatchInterval<T>,
  ) {
    this.#lanes = lanes;
    this.#maxBatch = maxBatch;
    this.#run = run;
    this.#interval = interval;
    this.#free = Array.from({ length: lanes }, (_, lane) => lanes - 1 - lane);
  }

  push(entry: T): void {
    this.#queue.push(entry);
    if (this.#timer !== undefined && this.#interval?.mayWait(entry) !== true) {
      // What may not wait ends the wait, and takes the waiting entries with it.
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
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
    if (this.#timer !== undefined) return;
    const interval = this.#interval;
    while (this.#free.length > 0 && this.#queue.length > 0) {
      const wait = interval === undefined ? 0 : this.#lastSentAt + interval.ms - performance.now();
      if (
        wait >= 0.5 &&
        this.#queue.length < this.#maxBatch &&
        this.#queue.every((entry) => interval?.mayWait(entry))
      ) {
        this.#timer = setTimeout(() => {
          this.#timer = undefined;
          this.#pump();
        }, wait);
        return;
      }
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
      this.#lastSentAt = performance.now();
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

// ---- Batches on their own connections ----

/** What a commit statement returns: one row when written (the enqueued turn's position, if any). */
export interface CommitRow {
  position: string | number | null;
}

/** A commit, checked and turned into its statement. */
export interface PreparedCommit extends Queued {
  request: CommitRequest;
  text: string;
  values: unknown[];
  /** The task's version once written. */
  version: number;
  /** The message index scope of its ids ('' for none). */
  scope: string;
  messageIds: string[];
  ctx: StoreCallContext | undefined;
  /**
   * An agent's update to a task already written (no creation, message ids or turn): in a batch
   * it may go in the one statement of such updates (see `plainUpdates` in statements.ts), and it
   * may wait for its batch (see {@link BATCH_INTERVAL_MS}). Its `values` are the per-commit
   * statement's, of which that statement takes $2–$9, $11 and $14.
   */
  plain: boolean;
}

export interface QueuedCommit extends PreparedCommit {
  resolve(result: CommitResult): void;
  reject(error: unknown): void;
}

type BatchOutcome =
  | { kind: 'committed'; rows: CommitRow[][] }
  /** The server rolled the whole batch back, or it was never sent: running its commits again is safe. */
  | { kind: 'rolledBack' }
  /** The connection failed: the batch may or may not be written. */
  | { kind: 'unknown'; error: unknown };

/**
 * Batches of group commit in flight at once, each on its own connection: two, so that one batch
 * is being built and sent while the other waits for its WAL flush. More lanes did not help on
 * the bench machine (bench/GROUP_COMMIT.md).
 */
const COMMIT_LANES = 2;
/**
 * Batches of nothing but plain updates (see {@link PreparedCommit.plain}: an agent's streamed
 * chunks, mostly) go at most this often: what is committed meanwhile joins the next. Each batch
 * is a transaction, three statements and a WAL flush, the database's main cost per chunk when
 * hundreds of tasks stream (issue 30: 8 ms took its CPU per chunk at 100 streams from ~157 µs to
 * ~90 µs). Any other commit (a task created, a turn queued or finished: what a blocking send
 * waits for) goes at once and takes the waiting ones with it.
 */
const BATCH_INTERVAL_MS = 8;
/** At most this many commits per batch, so that one batch holds its row locks briefly. */
const MAX_BATCH = 128;

/**
 * A commit lane's connection: the pool's settings, pipelining, and one planner rule. A batch of
 * plain updates joins its commits (a JSON recordset the planner counts as 100 rows) with the tasks
 * table: on a table of a few hundred tasks a hash join over every task of the namespace looked
 * cheaper than 100 primary-key lookups, and ran once per batch (issue 30: 409 such scans reading
 * 111,913 index entries in one 100-stream level). A lane runs nothing but commits, each a lookup by
 * task id, so on a lane a join is a nested loop.
 */
export function laneClientConfig(poolOptions: pg.PoolConfig, applicationName: string): pg.ClientConfig {
  return {
    ...poolOptions,
    options: [poolOptions.options, '-c enable_hashjoin=off -c enable_mergejoin=off']
      .filter((part) => part !== undefined)
      .join(' '),
    pipeline: true,
    application_name: applicationName,
  } as pg.ClientConfig;
}

/** What {@link GroupCommit} needs of its store. */
export interface GroupCommitHost {
  /** The store's pool, whose settings the lanes' connections take; throws when the store is not open. */
  pool(): pg.Pool;
  /** Runs one commit alone on the pool; no rows back means a version conflict. */
  execute(commit: PreparedCommit): Promise<CommitRow[]>;
  /** What a commit statement's rows mean: a conflict, or the result (after telling subscribers). */
  settle(commit: PreparedCommit, rows: CommitRow[]): Promise<CommitResult>;
  /** The error to give the commits of a batch whose outcome is unknown. */
  failure(error: unknown): unknown;
  /** Whether statements go as named prepared statements. */
  readonly preparedStatements: boolean;
  /** The `application_name` of the lanes' connections. */
  readonly applicationName: string;
  /** The statement of a batch's plain updates (see {@link PreparedCommit.plain}). */
  readonly plainUpdates: string;
}

/**
 * The commits of a batch that go in its one statement of plain updates: the first commit of each
 * task, when plain (a later one of the same task must see the earlier one's write, so it goes as
 * its own statement, after). Sorted by task id, so that two workers' batches lock shared tasks in
 * the same order.
 */
function plainUpdatesOf(batch: readonly PreparedCommit[]): number[] {
  const seen = new Set<string>();
  const together: number[] = [];
  for (const [index, commit] of batch.entries()) {
    const { taskId } = commit.request;
    if (commit.plain && !seen.has(taskId)) together.push(index);
    seen.add(taskId);
  }
  if (together.length < 2) return [];
  return together.sort((a, b) => {
    const x = (batch[a] as PreparedCommit).request.taskId;
    const y = (batch[b] as PreparedCommit).request.taskId;
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/**
 * The values of the plain-updates statement for `commits` (see `plainUpdates` in statements.ts):
 * the namespace, the commits as one JSON text, and their snapshots as another. Built by hand so
 * that each task and its events, already JSON texts, go in as they are rather than being escaped
 * into strings.
 */
function plainUpdateValues(commits: readonly PreparedCommit[]): unknown[] {
  // Positions in the per-commit statement's values (see `commitStatements`).
  const items = commits.map(({ values }) => {
    const traceContext = values[13];
    return (
      `{"task_id":${JSON.stringify(values[1])},"context_id":${JSON.stringify(values[2])}` +
      `,"state":${JSON.stringify(values[3])},"version":${Number(values[4])},"expected":${Number(values[7])}` +
      `,"status_ts":${Number(values[10])},"now":${Number(values[6])}` +
      `,"events":${values[8] as string},"trace_context":${traceContext == null ? 'null' : JSON.stringify(traceContext)}}`
    );
  });
  const tasks = commits.map(({ values }) => values[5] as string);
  return [commits[0]?.values[0], `[${items.join(',')}]`, `[${tasks.join(',')}]`];
}

/**
 * Group commit: commits of different tasks made while earlier ones are on their way go to the
 * database together, each batch pipelined on one of {@link COMMIT_LANES} connections of its own.
 */
export class GroupCommit {
  readonly #host: GroupCommitHost;
  readonly #queue: CommitQueue<QueuedCommit>;
  /** Each lane's connection, while connecting and once connected. */
  readonly #laneClients: (Promise<pg.Client> | undefined)[] = [];
  readonly #laneConnections: (pg.Client | undefined)[] = [];

  constructor(host: GroupCommitHost) {
    this.#host = host;
    this.#queue = new CommitQueue(COMMIT_LANES, MAX_BATCH, (batch, lane) => this.#runBatch(batch, lane), {
      ms: BATCH_INTERVAL_MS,
      mayWait: (commit) => commit.plain,
    });
  }

  push(commit: QueuedCommit): void {
    this.#queue.push(commit);
  }

  /** Resolves once nothing is queued or in flight. */
  drained(): Promise<void> {
    return this.#queue.drained();
  }

  /** Ends the lanes' connections (after {@link drained}). */
  async close(): Promise<void> {
    const lanes = this.#laneClients.splice(0);
    this.#laneConnections.splice(0);
    await Promise.all(lanes.map(async (client) => (await client?.catch(() => undefined))?.end().catch(() => {})));
  }

  /**
   * One batch of group commit. A batch of one is the plain statement on the pool (no BEGIN/COMMIT:
   * light load pays nothing). A larger one goes as BEGIN, each commit's statement, COMMIT, all
   * pipelined on the lane's own connection: one round trip and one WAL flush for the whole batch,
   * each statement still checking its own expected version (no rows back: that commit alone
   * conflicts; it wrote nothing, and the others go on).
   *
   * Why not a SAVEPOINT per commit: with the statements pipelined, a failed one cannot be rolled
   * back to its savepoint before the next runs (that takes a round trip per commit, which is what
   * batching saves), and a version conflict is not an error anyway. What does fail a statement
   * (a duplicate message id: a unique violation; a deadlock with another worker's batch; bad
   * data) is rare, so then the whole transaction rolls back (Postgres answers the COMMIT with
   * ROLLBACK) and each commit of the batch runs again alone, getting its own result: commits of
   * one task in order, different tasks concurrently. Nor one multi-row statement: a statement
   * cannot see its own writes, so two commits of one task could not share it, and one duplicate
   * would fail them all with no way to tell which. Measurements: bench/GROUP_COMMIT.md.
   *
   * Never rejects: every commit of the batch is settled.
   */
  async #runBatch(batch: QueuedCommit[], lane: number): Promise<void> {
    const settle = async (commit: QueuedCommit, rows: () => Promise<CommitRow[]>): Promise<void> => {
      try {
        commit.resolve(await this.#host.settle(commit, await rows()));
      } catch (error) {
        commit.reject(error);
      }
    };
    const alone = async (commits: QueuedCommit[]): Promise<void> => {
      const byTask = new Map<string, QueuedCommit[]>();
      for (const commit of commits) {
        const ofTask = byTask.get(commit.request.taskId);
        if (ofTask === undefined) byTask.set(commit.request.taskId, [commit]);
        else ofTask.push(commit);
      }
      await Promise.all(
        [...byTask.values()].map(async (ofTask) => {
          for (const commit of ofTask) await settle(commit, () => this.#host.execute(commit));
        }),
      );
    };
    if (batch.length === 1) return alone(batch);
    let outcome: BatchOutcome;
    try {
      outcome = await this.#pipeline(batch, lane);
    } catch (error) {
      outcome = { kind: 'unknown', error };
    }
    if (outcome.kind === 'rolledBack') return alone(batch);
    if (outcome.kind === 'unknown') {
      // The connection failed, perhaps after the COMMIT reached the server: whether the batch was
      // written is unknown, as for a lone commit whose connection drops. Say so; never run it again.
      const error = this.#host.failure(outcome.error);
      for (const commit of batch) commit.reject(error);
      return;
    }
    await Promise.all(batch.map((commit, i) => settle(commit, async () => outcome.rows[i] as CommitRow[])));
  }

  /** BEGIN, the batch's statements and COMMIT, pipelined on the lane's connection. */
  async #pipeline(batch: QueuedCommit[], lane: number): Promise<BatchOutcome> {
    let client: pg.Client | undefined;
    try {
      client = await this.#laneClient(lane);
      // Lost while we waited (its 'error' or 'end' dropped it): once more, on a new one.
      if (this.#laneConnections[lane] !== client) client = await this.#laneClient(lane);
    } catch {
      client = undefined;
    }
    // Nothing was sent: the pool may still serve them (the error, if any, comes from there).
    if (client === undefined || this.#laneConnections[lane] !== client) return { kind: 'rolledBack' };
    const statement = ({ text, values }: { text: string; values: unknown[] }) =>
      this.#host.preparedStatements ? { name: statementName(text), text, values } : { text, values };
    const together = plainUpdatesOf(batch);
    const inTogether = new Set(together);
    const alone = batch.filter((_, index) => !inTogether.has(index));
    // pg corks the socket around each query, so each would still be its own write: one system call
    // per commit of the batch (the largest native cost of a token-streaming server, issue 30).
    // Queries on a connected pipelining client are written synchronously, so one outer cork makes
    // the whole batch one write.
    const socket = (client as unknown as { connection?: { stream?: Partial<Writable> } }).connection?.stream;
    const corked = typeof socket?.cork === 'function' && typeof socket.uncork === 'function';
    if (corked) socket.cork?.();
    let queries: Promise<pg.QueryResult>[];
    try {
      queries = [client.query('BEGIN')];
      // The plain updates first: each is its task's first commit in the batch, so nothing of its
      // task comes before it, and the commits that follow see its write.
      if (together.length > 0) {
        const text = this.#host.plainUpdates;
        const values = plainUpdateValues(together.map((index) => batch[index] as PreparedCommit));
        queries.push(client.query<{ task_id: string }>(statement({ text, values })));
      }
      for (const commit of alone) queries.push(client.query<CommitRow>(statement(commit)));
      queries.push(client.query('COMMIT'));
    } finally {
      if (corked) socket.uncork?.();
    }
    const settled = await Promise.allSettled(queries);
    const end = settled[settled.length - 1] as PromiseSettledResult<pg.QueryResult>;
    const failed = settled.some((result) => result.status === 'rejected');
    if (!failed && end.status === 'fulfilled' && end.value.command === 'COMMIT') {
      const rowsOf = (index: number) => (settled[index] as PromiseFulfilledResult<pg.QueryResult>).value.rows;
      const rows: CommitRow[][] = new Array(batch.length);
      let next = 1;
      if (together.length > 0) {
        const written = new Set((rowsOf(next++) as { task_id: string }[]).map((row) => row.task_id));
        for (const index of together) {
          rows[index] = written.has((batch[index] as PreparedCommit).request.taskId) ? [{ position: null }] : [];
        }
      }
      for (const [index] of batch.entries()) if (!inTogether.has(index)) rows[index] = rowsOf(next++) as CommitRow[];
      return { kind: 'committed', rows };
    }
    // Running the commits again is safe only on the server's word that none was written. The
    // first failure decides: a statement's own error (ERROR: the transaction is aborted and can
    // never commit; FATAL: the backend ended before the COMMIT), or BEGIN's FATAL (the backend
    // ended before running anything, e.g. an idle connection killed as the batch was sent).
    // Anything else (the connection lost with no word, an error at COMMIT) leaves it unknown.
    const first = settled.findIndex((result) => result.status === 'rejected');
    const reason = first < 0 ? undefined : (settled[first] as PromiseRejectedResult).reason;
    const dbError = reason instanceof pg.DatabaseError ? reason : undefined;
    if (dbError?.severity !== 'ERROR') this.#dropLane(lane, client);
    const inside = first > 0 && first < settled.length - 1;
    if (dbError !== undefined && (inside || (first === 0 && dbError.severity === 'FATAL')))
      return { kind: 'rolledBack' };
    const error = reason ?? new Error(`COMMIT answered ${end.status === 'fulfilled' ? end.value.command : 'nothing'}`);
    return { kind: 'unknown', error };
  }

  /** Forgets the lane's connection (if it is still `client`) and ends it. */
  #dropLane(lane: number, client: pg.Client): void {
    if (this.#laneConnections[lane] !== client) return;
    this.#laneConnections[lane] = undefined;
    this.#laneClients[lane] = undefined;
    void client.end().catch(() => {});
  }

  /** The lane's pipelining connection, connected on first use and again after it failed. */
  async #laneClient(lane: number): Promise<pg.Client> {
    const existing = this.#laneClients[lane];
    if (existing !== undefined) return existing;
    const pool = this.#host.pool();
    const connecting = (async () => {
      const client = new pg.Client(laneClientConfig(pool.options, this.#host.applicationName));
      // A dropped connection must not crash the process: forget it, the next batch connects anew
      // (the batch it was running gets its error from its queries).
      client.on('error', () => this.#dropLane(lane, client));
      client.on('end', () => this.#dropLane(lane, client));
      await client.connect();
      this.#laneConnections[lane] = client;
      return client;
    })();
    this.#laneClients[lane] = connecting;
    try {
      return await connecting;
    } catch (error) {
      if (this.#laneClients[lane] === connecting) this.#laneClients[lane] = undefined;
      throw error;
    }
  }
}
