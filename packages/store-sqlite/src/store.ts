/**
 * A2A store on SQLite through better-sqlite3: a single file shared by every worker process on one
 * machine. better-sqlite3 is synchronous, so each write is one `BEGIN IMMEDIATE` transaction that
 * never spans an `await`: the version check and the write happen under the file's write lock, and
 * two processes writing the same task serialise (the loser gets a VersionConflictError, never a
 * lost update).
 */

import { randomUUID } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import {
  type A2AStore,
  ANONYMOUS_SCOPE,
  type ClaimPushDeliveriesRequest,
  type Clock,
  type CommitRequest,
  type CommitResult,
  type CompletePushDeliveryRequest,
  type ContextRecord,
  checkCommitRequest,
  checkPushConfigRequest,
  type EnqueueTurnRequest,
  type ExpiredWorker,
  type FailPushAttemptRequest,
  fromRow,
  fullStoreCapabilities,
  type InterruptedTasksQuery,
  indexedMessages,
  type ListTasksOptions,
  type MessageIndexEntry,
  NO_STATUS_TIMESTAMP,
  type PurgeResult,
  type PushClaimKey,
  type PushConfigRecord,
  type PushDelivery,
  type PushDeliveryFilter,
  type PushStore,
  type QueueSlot,
  type ReadEventsOptions,
  RecentEvents,
  type SavePushConfigRequest,
  type StoreCallContext,
  type StoreCapabilities,
  type StoredEvent,
  statusTimestampOf,
  systemClock,
  type TaskListPage,
  type TaskListQuery,
  type TaskRecord,
  type TaskRow,
  type TurnReadiness,
  taskListPage,
  taskListShape,
  type Unsubscribe,
  type WorkerDescription,
  type WorkerRecord,
} from '@fastify-a2a/core';
import Database from 'better-sqlite3';
import { Checkpointer, FALLBACK_AUTOCHECKPOINT_PAGES, SQLITE_AUTOCHECKPOINT_PAGES } from './checkpointer.js';
import { enableWal, ensureDirectory } from './database-file.js';
import { notOpen, openError, storeError } from './errors.js';
import { GroupCommit } from './group-commit.js';
import { migrate } from './migrations.js';
import {
  CHECKPOINT_RESTART_FRAMES,
  checkOptions,
  DEFAULT_BUSY_TIMEOUT_MS,
  DEFAULT_CHECKPOINT_INTERVAL_MS,
  DEFAULT_NAMESPACE,
  DEFAULT_POLL_INTERVAL_MS,
  positiveNumber,
  type SqliteStoreOptions,
} from './options.js';
import { ChangePoller } from './poller.js';
import type { CommitArgs, ListParams } from './rows.js';
import { prepare, type Statements } from './statements.js';

export {
  DEFAULT_BUSY_TIMEOUT_MS,
  DEFAULT_NAMESPACE,
  DEFAULT_POLL_INTERVAL_MS,
  type SqliteStoreOptions,
} from './options.js';

/**
 * What this store advises, on a file, as the runtime's `streamCommitIntervalMs` (see core's
 * StoreCapabilities): a task's streamed chunks committed at most every 25 ms. Each commit's
 * transaction runs on the event loop and writes whole WAL pages, about half of the worker's time
 * under hundreds of token streams (issue 30). In `npm run bench:tokens` (full runs, 3 rounds,
 * without and with it) the bytes written per chunk fell by a fifth (24,279 → 19,520 at 100 streams,
 * ~17,300 → ~13,200 at 300) and one worker delivered 13,028 instead of 11,934 chunks/s at 300
 * streams (medians; the level asks for 13,500), for ~13 ms more p50 latency per chunk. `:memory:`
 * gets no advice.
 */
const STREAM_COMMIT_INTERVAL_MS = 25;

/**
 * {@link A2AStore} on a SQLite file. Several processes (or several stores in one process) may use
 * the same file: writes serialise on SQLite's write lock, and subscribers learn about other
 * processes' commits by polling while they listen.
 *
 * ```ts
 * const store = new SqliteStore({ filename: './.data/a2a.db' });
 * await store.open();
 * ```
 */
export class SqliteStore implements A2AStore, PushStore {
  readonly supports: StoreCapabilities;

  readonly #filename: string;
  readonly #database: Database.Database | undefined;
  readonly #namespace: string;
  readonly #clock: Clock;
  readonly #busyTimeoutMs: number;
  readonly #checkpointIntervalMs: number;
  /** The thread checkpointing the WAL (see Checkpointer), while open on a file this store opened. */
  #checkpointer: Checkpointer | undefined;

  #db: Database.Database | undefined;
  #statements: Statements | undefined;
  #closed = false;

  readonly #poller: ChangePoller;
  readonly #groupCommit: GroupCommit;
  /** What this instance committed lately, so that readEvents of it reads no row (see RecentEvents). */
  readonly #recent = new RecentEvents();
  /** A task row as its record, whose version the cache hears of (see RecentEvents). */
  readonly #taskRecord = (row: TaskRow): TaskRecord => {
    const record = fromRow.task(row);
    this.#recent.sawVersion(record.task.id, record.version);
    return record;
  };

  constructor(options: SqliteStoreOptions) {
    checkOptions(options);
    const { filename, database } = options;
    this.#database = database;
    this.#filename = database?.name ?? (filename as string);
    this.#namespace = options.namespace ?? DEFAULT_NAMESPACE;
    this.#clock = options.clock ?? systemClock;
    this.#busyTimeoutMs = positiveNumber(options.busyTimeoutMs, 'busyTimeoutMs', DEFAULT_BUSY_TIMEOUT_MS, true);
    this.#checkpointIntervalMs = positiveNumber(
      options.checkpointIntervalMs,
      'checkpointIntervalMs',
      DEFAULT_CHECKPOINT_INTERVAL_MS,
      true,
    );
    // An in-memory database lives and dies with its single connection.
    const onDisk = database === undefined ? filename !== ':memory:' : !database.memory;
    this.supports = Object.freeze(
      onDisk
        ? { ...fullStoreCapabilities(true, true), streamCommitIntervalMs: STREAM_COMMIT_INTERVAL_MS }
        : fullStoreCapabilities(false, false),
    );
    this.#poller = new ChangePoller({
      statements: () => this.#statements,
      namespace: this.#namespace,
      clock: this.#clock,
      crossProcess: onDisk,
      pollIntervalMs: positiveNumber(options.pollIntervalMs, 'pollIntervalMs', DEFAULT_POLL_INTERVAL_MS, false),
      onListenerError: options.onListenerError,
    });
    this.#groupCommit = new GroupCommit(
      {
        isOpen: () => this.#statements !== undefined,
        // Each commit is remembered once its transaction committed, before `committed` wakes the
        // subscribers (whose followers then read it back from the cache). One refused (a version
        // conflict: another process wrote the task) makes the cache forget the task, as the
        // caller now knows of a version past what it holds.
        commitAlone: (args) => {
          let turn: QueueSlot | undefined;
          try {
            turn = (this.#statements as Statements).commit.immediate(args);
          } catch (error) {
            this.#recent.forget(args.write.taskId);
            throw error;
          }
          this.#remember(args);
          return turn;
        },
        commitBatch: (batch) => {
          const outcomes = (this.#statements as Statements).commitBatch.immediate(batch);
          for (const [index, args] of batch.entries()) {
            if (outcomes[index]?.ok) this.#remember(args);
            else this.#recent.forget(args.write.taskId);
          }
          return outcomes;
        },
        failure: (error) =>
          this.#statements === undefined
            ? notOpen(this.#filename, this.#closed)
            : storeError(error, this.#filename, this.#busyTimeoutMs),
        committed: (taskId, version) => this.#poller.notify(taskId, version),
      },
      options.groupCommit ?? true,
    );
  }

  /** The namespace this store reads and writes. */
  get namespace(): string {
    return this.#namespace;
  }

  /** Opens the file (creating its directory), enables WAL and applies pending migrations. Idempotent. */
  async open(): Promise<void> {
    if (this.#statements !== undefined) return;
    const owned = this.#database === undefined;
    let db: Database.Database | undefined;
    try {
      if (this.#database !== undefined) {
        db = this.#database;
      } else {
        if (this.supports.durable) ensureDirectory(dirname(resolve(this.#filename)));
        db = new Database(this.#filename, { timeout: this.#busyTimeoutMs });
      }
      db.pragma(`busy_timeout = ${Math.round(this.#busyTimeoutMs)}`);
      // A savepoint's statement journal (a batch's commit with several message ids, a migration)
      // spills past 64 KiB into a temporary file, written through the kernel page by page on the
      // event loop; kept in memory it is a copy (issue 30).
      db.pragma('temp_store = MEMORY');
      if (!db.memory) {
        // WAL lets readers (and the subscription poll) run while another process writes. With WAL,
        // synchronous=NORMAL cannot corrupt the file; a power loss (not a process crash) may lose
        // the last commits, a fair trade for not fsyncing on every commit.
        const mode = await enableWal(db, this.#busyTimeoutMs);
        if (mode.toLowerCase() === 'wal') {
          db.pragma('synchronous = NORMAL');
          if (owned && this.#checkpointIntervalMs > 0) this.#startCheckpointer(db);
        }
      }
      migrate(db, this.#clock);
      this.#statements = prepare(db);
      this.#db = db;
    } catch (error) {
      await this.#stopCheckpointer();
      if (owned && db?.open) db.close();
      throw openError(error, this.#filename, this.#busyTimeoutMs);
    }
    this.#closed = false;
    this.#poller.opened();
  }

  /** Stops the subscription poll and closes the connection if this store opened it. Idempotent. */
  async close(): Promise<void> {
    // Commits already accepted are written first.
    this.#groupCommit.flush();
    const db = this.#db;
    this.#db = undefined;
    this.#statements = undefined;
    this.#closed = true;
    this.#recent.clear();
    this.#poller.closed();
    await this.#stopCheckpointer();
    if (db !== undefined && this.#database === undefined && db.open) db.close();
  }

  /**
   * Moves the WAL's checkpoints off the event loop (see Checkpointer). Should the thread fail, the
   * connection goes back to SQLite's own checkpoints inside commits.
   */
  #startCheckpointer(db: Database.Database): void {
    db.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
    this.#checkpointer = new Checkpointer({
      filename: db.name,
      intervalMs: this.#checkpointIntervalMs,
      restartFrames: CHECKPOINT_RESTART_FRAMES,
      onFailure: () => {
        if (db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
      },
    });
  }

  async #stopCheckpointer(): Promise<void> {
    const checkpointer = this.#checkpointer;
    this.#checkpointer = undefined;
    await checkpointer?.close();
  }

  /** The checkpoint thread, while one runs (tests and diagnostics). @internal */
  get checkpointer(): Checkpointer | undefined {
    return this.#checkpointer;
  }

  async ping(): Promise<void> {
    await this.#run(undefined, (s) => {
      s.ping.get();
    });
  }

  // Not async: the commit is run or queued before this returns, like every other write of this
  // store, so an operation called after it (even without awaiting it) sees it.
  commit(request: CommitRequest, ctx?: StoreCallContext): Promise<CommitResult> {
    const { taskId, expectedVersion, task, events } = request;
    const version = expectedVersion + events.length;
    let args: CommitArgs;
    try {
      ctx?.signal?.throwIfAborted();
      if (this.#statements === undefined) throw notOpen(this.#filename, this.#closed);
      checkCommitRequest(request, 'SqliteStore');
      // Serialise before taking the write lock, to hold it as briefly as possible.
      args = {
        expectedVersion,
        eventJsons: events.map((event) => JSON.stringify(event)),
        // Handed over (`transfer`): the committed objects are what shared reads answer (RecentEvents).
        transferred: request.transfer === true ? events : undefined,
        messages: indexedMessages(events),
        scope: request.owner ?? ANONYMOUS_SCOPE,
        write: {
          namespace: this.#namespace,
          taskId,
          contextId: task.contextId,
          owner: request.owner ?? null,
          traceContext: request.traceContext ?? null,
          state: task.status.state,
          statusTs: statusTimestampOf(task),
          version,
          taskJson: JSON.stringify(task),
          now: this.#clock(),
        },
        enqueueTurn: request.enqueueTurn,
        finishTurn: request.finishTurn,
      };
    } catch (error) {
      return Promise.reject(storeError(error, this.#filename, this.#busyTimeoutMs));
    }
    return new Promise<CommitResult>((resolve, reject) => {
      this.#groupCommit.push({ args, taskId, version, resolve, reject });
    });
  }

  async getTask(taskId: string, ctx?: StoreCallContext): Promise<TaskRecord | undefined> {
    return this.#run(ctx, (s) => {
      const row = s.getTask.get(this.#namespace, taskId);
      return row === undefined ? undefined : this.#taskRecord(row);
    });
  }

  async getVersions(taskIds: readonly string[], ctx?: StoreCallContext): Promise<Map<string, number>> {
    if (taskIds.length === 0) return new Map();
    return this.#run(ctx, (s) => {
      const rows = s.taskVersions.all(this.#namespace, JSON.stringify(taskIds));
      for (const row of rows) this.#recent.sawVersion(row.task_id, row.version);
      return new Map(rows.map((row) => [row.task_id, row.version]));
    });
  }

  /**
   * Answered from the events this instance committed lately when they start right after
   * `afterSeq` (no row read), else from the file. See RecentEvents (in core's store kit) for why
   * such an answer may end before events other processes committed after them, and why that is
   * never before a version this instance reported.
   */
  async readEvents(
    taskId: string,
    afterSeq: number,
    limit?: number,
    ctx?: StoreCallContext,
    options?: ReadEventsOptions,
  ): Promise<StoredEvent[]> {
    return this.#run(
      ctx,
      (s) =>
        this.#recent.read(taskId, afterSeq, limit, options?.shared === true) ??
        s.readEvents.all(this.#namespace, taskId, afterSeq, sqlLimit(limit)).map(fromRow.event),
    );
  }

  async listTasksByContext(
    contextId: string,
    options?: ListTasksOptions,
    ctx?: StoreCallContext,
  ): Promise<TaskRecord[]> {
    return this.#run(ctx, (s) =>
      s.tasksByContext.all(this.#namespace, contextId, sqlLimit(options?.limit)).map(this.#taskRecord),
    );
  }

  async listActiveTasks(ctx?: StoreCallContext): Promise<TaskRecord[]> {
    return this.#run(ctx, (s) => s.activeTasks.all(this.#namespace).map(this.#taskRecord));
  }

  async listInterruptedTasks(query: InterruptedTasksQuery, ctx?: StoreCallContext): Promise<TaskRecord[]> {
    const { before, limit } = query;
    return this.#run(ctx, (s) =>
      s.interruptedTasks.all(this.#namespace, before, NO_STATUS_TIMESTAMP, sqlLimit(limit)).map(this.#taskRecord),
    );
  }

  /** One read transaction: the page (limit + 1 rows, to know whether more follow) and its count. */
  async listTasks(query: TaskListQuery, ctx?: StoreCallContext): Promise<TaskListPage> {
    const { limit, after } = query;
    const params: ListParams = {
      namespace: this.#namespace,
      owner: query.owner,
      contextId: query.contextId,
      state: query.state,
      since: query.statusTimestampAfter,
      afterTs: after?.statusTimestamp,
      afterId: after?.taskId,
      limit: Math.max(0, Math.trunc(limit)) + 1,
    };
    const { rows, total } = await this.#run(ctx, (s) => s.listTasks(params, taskListShape(query)));
    return taskListPage(rows, total, limit, this.#taskRecord);
  }

  async getContext(contextId: string, ctx?: StoreCallContext): Promise<ContextRecord | undefined> {
    return this.#run(ctx, (s) => {
      const row = s.getContext.get(this.#namespace, contextId);
      return row === undefined ? undefined : fromRow.context(contextId, row);
    });
  }

  /** Stores `state` as JSON: `undefined` (not a JSON value) is stored, and read back, as `null`. */
  async setContext(contextId: string, state: unknown, ctx?: StoreCallContext): Promise<void> {
    await this.#run(ctx, (s) => {
      s.setContext.run(this.#namespace, contextId, JSON.stringify(state) ?? 'null', this.#clock());
    });
  }

  /**
   * Deletes old terminal tasks with their events, message index rows, push configs and delivery
   * state, in one transaction (turn rows stay: they belong to live turns).
   */
  async purgeExpired(cutoff: number, ctx?: StoreCallContext): Promise<PurgeResult> {
    return this.#run(ctx, (s) => {
      const purged = s.purge.immediate(this.#namespace, cutoff);
      // The purged tasks' events are gone: none may be answered from memory.
      this.#recent.clear();
      return purged;
    });
  }

  async heartbeat(workerId: string, leaseUntil: number, ctx?: StoreCallContext): Promise<void> {
    await this.#run(ctx, (s) => {
      s.heartbeat.run(this.#namespace, workerId, leaseUntil, this.#clock());
    });
  }

  /**
   * Takes the next position in one `BEGIN IMMEDIATE` transaction: enqueues from every process
   * serialise on the write lock, so positions follow the order they commit. Positions come from one
   * AUTOINCREMENT counter for all contexts: never reused, with gaps within a context.
   */
  async enqueueTurn(request: EnqueueTurnRequest, ctx?: StoreCallContext): Promise<QueueSlot> {
    const { contextId, taskId, messageId, workerId } = request;
    return this.#run(ctx, (s) =>
      s.enqueue.immediate({
        namespace: this.#namespace,
        request: { contextId, taskId, messageId, workerId },
        now: this.#clock(),
      }),
    );
  }

  /** Ready when no turn of the context has a lower position; otherwise the one directly ahead. */
  async turnReadiness(slot: QueueSlot, ctx?: StoreCallContext): Promise<TurnReadiness> {
    return this.#run(ctx, (s) => {
      const ahead = s.turnAhead.get(this.#namespace, slot.contextId, slot.position);
      return ahead === undefined ? { ready: true } : { ready: false, ahead: fromRow.queueSlot(ahead) };
    });
  }

  /**
   * Deletes the slot, then tells this store's subscribers of its task (with seq 0, which followers
   * ignore) so turns waiting behind it re-check at once. Other processes' waiters hear of it from
   * the poll loop (which notices that a subscribed task has no turn left) or by polling readiness.
   */
  async finishTurn(slot: QueueSlot, ctx?: StoreCallContext): Promise<void> {
    const removed = await this.#run(
      ctx,
      (s) => s.deleteTurn.run(this.#namespace, slot.contextId, slot.position, slot.messageId).changes > 0,
    );
    if (removed) this.#poller.notify(slot.taskId, 0);
  }

  /** One `BEGIN IMMEDIATE` transaction: of several concurrent reapers, one gets each dead worker. */
  async claimExpiredWorkers(now: number, exceptWorkerId?: string, ctx?: StoreCallContext): Promise<ExpiredWorker[]> {
    return this.#run(ctx, (s) => s.claimExpired.immediate(this.#namespace, now, exceptWorkerId ?? null));
  }

  /** One `BEGIN IMMEDIATE` transaction: the previous row is read and replaced under the write lock. */
  async joinWorker(
    workerId: string,
    leaseUntil: number,
    description: WorkerDescription,
    ctx?: StoreCallContext,
  ): Promise<ExpiredWorker | undefined> {
    return this.#run(ctx, (s) =>
      s.joinWorker.immediate({ namespace: this.#namespace, workerId, leaseUntil, description, now: this.#clock() }),
    );
  }

  async listWorkers(ctx?: StoreCallContext): Promise<WorkerRecord[]> {
    return this.#run(ctx, (s) => s.listWorkers.deferred(this.#namespace));
  }

  async removeWorker(workerId: string, ctx?: StoreCallContext): Promise<void> {
    await this.#run(ctx, (s) => {
      s.removeWorker.run(this.#namespace, workerId);
    });
  }

  async listWorkerTurns(workerId: string, ctx?: StoreCallContext): Promise<QueueSlot[]> {
    return this.#run(ctx, (s) => s.workerTurns.all(this.#namespace, workerId).map(fromRow.queueSlot));
  }

  async findMessage(messageId: string, ctx?: StoreCallContext, owner?: string): Promise<MessageIndexEntry | undefined> {
    return this.#run(ctx, (s) => {
      // '' is how the anonymous scope is keyed, not a principal: no commit indexes under owner ''.
      if (owner === ANONYMOUS_SCOPE) return undefined;
      const row = s.findMessage.get(this.#namespace, owner ?? ANONYMOUS_SCOPE, messageId);
      return row === undefined ? undefined : fromRow.messageIndexEntry(row);
    });
  }

  // ---- Push notifications ----

  /** One `BEGIN IMMEDIATE` transaction: the task check, the config and its fresh delivery state. */
  async savePushConfig(request: SavePushConfigRequest, ctx?: StoreCallContext): Promise<PushConfigRecord> {
    return this.#run(ctx, (s) => {
      checkPushConfigRequest(request, 'SqliteStore');
      const { taskId, config, protocolVersion } = request;
      const configJson = JSON.stringify(config);
      const saved = s.savePush.immediate({
        namespace: this.#namespace,
        taskId,
        configId: config.id,
        configJson,
        protocolVersion,
        now: this.#clock(),
      });
      return fromRow.savedPushConfig(request, configJson, saved);
    });
  }

  async getPushConfig(taskId: string, configId: string, ctx?: StoreCallContext): Promise<PushConfigRecord | undefined> {
    return this.#run(ctx, (s) => {
      const row = s.getPushConfig.get(this.#namespace, taskId, configId);
      return row === undefined ? undefined : fromRow.pushConfig(row);
    });
  }

  async listPushConfigs(taskId: string, ctx?: StoreCallContext): Promise<PushConfigRecord[]> {
    return this.#run(ctx, (s) => s.listPushConfigs.all(this.#namespace, taskId).map(fromRow.pushConfig));
  }

  async deletePushConfig(taskId: string, configId: string, ctx?: StoreCallContext): Promise<boolean> {
    return this.#run(ctx, (s) => s.deletePush.immediate({ namespace: this.#namespace, taskId, configId }));
  }

  /**
   * One `BEGIN IMMEDIATE` transaction: claimants in every process serialise on the write lock. The
   * push job asks every `pollIntervalMs` on every worker and nearly always finds nothing due: a read
   * (which in WAL mode neither takes nor waits for the write lock) answers that case, so an idle
   * poll does not queue behind, or hold up, the commits of sends. The transaction reads again under
   * the lock, so what it claims is as if the read had not happened.
   */
  async claimPushDeliveries(request: ClaimPushDeliveriesRequest, ctx?: StoreCallContext): Promise<PushDelivery[]> {
    const { workerId, now, claimUntil } = request;
    const limit = Math.max(0, Math.trunc(request.limit));
    const namespace = this.#namespace;
    return this.#run(ctx, (s) => {
      if (s.duePushDeliveries.all({ namespace, now, limit: Math.min(limit, 1) }).length === 0) return [];
      return s.claimPush.immediate({ namespace, workerId, claimId: randomUUID(), now, claimUntil, limit });
    });
  }

  async renewPushClaims(workerId: string, claimUntil: number, ctx?: StoreCallContext): Promise<number> {
    return this.#run(ctx, (s) => s.renewPushClaims.run(claimUntil, this.#namespace, workerId).changes);
  }

  async completePushDelivery(request: CompletePushDeliveryRequest, ctx?: StoreCallContext): Promise<boolean> {
    const { taskId, configId, claimId, cursor, sentAt } = request;
    return this.#run(
      ctx,
      (s) =>
        s.completePushDelivery.run({
          namespace: this.#namespace,
          taskId,
          configId,
          claimId,
          cursor,
          sentAt,
          next: request.nextAttemptAt ?? null,
          status: request.status ?? null,
        }).changes > 0,
    );
  }

  async failPushAttempt(request: FailPushAttemptRequest, ctx?: StoreCallContext): Promise<boolean> {
    const { taskId, configId, claimId, nextAttemptAt, error } = request;
    return this.#run(
      ctx,
      (s) =>
        s.failPushAttempt.run({
          namespace: this.#namespace,
          taskId,
          configId,
          claimId,
          next: nextAttemptAt,
          error,
          status: request.status ?? null,
        }).changes > 0,
    );
  }

  async releasePushClaim(key: PushClaimKey, ctx?: StoreCallContext): Promise<boolean> {
    const { taskId, configId, claimId } = key;
    return this.#run(
      ctx,
      (s) => s.releasePushClaim.run({ namespace: this.#namespace, taskId, configId, claimId }).changes > 0,
    );
  }

  async listPushDeliveries(filter: PushDeliveryFilter = {}, ctx?: StoreCallContext): Promise<PushDelivery[]> {
    const { taskId, failed, limit } = filter;
    const params = {
      namespace: this.#namespace,
      failed: failed === undefined ? null : failed ? 1 : 0,
      limit: sqlLimit(limit),
    };
    return this.#run(ctx, (s) =>
      (taskId === undefined
        ? s.listPushDeliveries.all(params)
        : s.listTaskPushDeliveries.all({ ...params, taskId })
      ).map(fromRow.pushDelivery),
    );
  }

  /**
   * Listeners run synchronously right after a commit by this store, and from the poll loop for
   * commits by other connections to the file. A listener that throws does not affect the commit or
   * the other listeners; its error goes to the `onListenerError` option, if any.
   */
  subscribeAll(listener: (taskId: string, seq: number) => void): Unsubscribe {
    return this.#poller.subscribeAll((taskId, seq) => {
      this.#recent.sawVersion(taskId, seq);
      listener(taskId, seq);
    });
  }

  subscribe(taskId: string, listener: (seq: number) => void): Unsubscribe {
    // Another process's commit, heard before the listener reads: its events are not in the cache.
    return this.#poller.subscribe(taskId, (seq) => {
      this.#recent.sawVersion(taskId, seq);
      listener(seq);
    });
  }

  /** A commit of this instance was written: remember its events (see RecentEvents). */
  #remember(args: CommitArgs): void {
    this.#recent.record(args.write.taskId, args.expectedVersion + 1, args.eventJsons, args.write.now, args.transferred);
  }

  async #run<T>(ctx: StoreCallContext | undefined, fn: (statements: Statements) => T): Promise<T> {
    ctx?.signal?.throwIfAborted();
    // Every operation sees the commits made before it, also those still waiting for their batch.
    if (this.#groupCommit.waiting) this.#groupCommit.flush();
    const statements = this.#statements;
    if (statements === undefined) throw notOpen(this.#filename, this.#closed);
    try {
      return fn(statements);
    } catch (error) {
      throw storeError(error, this.#filename, this.#busyTimeoutMs);
    }
  }
}

function sqlLimit(limit: number | undefined): number {
  return limit === undefined ? -1 : Math.max(0, Math.trunc(limit));
}
