/**
 * A2AStore on PostgreSQL (node-postgres), for many workers behind a load balancer acting as one
 * server: every worker opens a PostgresStore on the same database, optimistic versions keep their
 * writes from overwriting each other, LISTEN/NOTIFY tells each worker's subscribers about events
 * committed by the others, and the turns, workers and messages tables coordinate them (one turn at
 * a time per context in arrival order, leases of live workers, user message ids already received).
 */

import { randomUUID } from 'node:crypto';
// Core's types read as `core.TaskRow`, `core.TaskRecord`: beside the contract's types, each query
// here names the row type it reads, some fifty names that would otherwise open the file.
import type * as core from '@fastify-a2a/core';
import {
  A2AError,
  ANONYMOUS_SCOPE,
  checkCommitRequest,
  checkPushConfigRequest,
  DuplicateMessageError,
  fromRow,
  fullStoreCapabilities,
  indexedMessages,
  LIST_FILTER,
  NO_STATUS_TIMESTAMP,
  pushTaskListFilters,
  RecentEvents,
  Subscribers,
  statusTimestampOf,
  systemClock,
  taskListPage,
  taskNotFound,
  VersionConflictError,
} from '@fastify-a2a/core';
import pg from 'pg';
import { describeTarget, messageOf, notOpen, openError, resolveTarget, storeError, type Target } from './errors.js';
import { type CommitRow, GroupCommit, type PreparedCommit } from './group-commit.js';
import { NotificationListener } from './listener.js';
import { appliedVersions, LATEST_VERSION, migrate, pendingMigrations } from './migrations.js';
import {
  CommitNotifier,
  isEventsPayload,
  ownEventsPayloadPrefix,
  parseEventsPayload,
  presenceOrigin,
  presencePayload,
} from './notifier.js';
import {
  checkOptions,
  DEFAULT_CONNECTION_TIMEOUT_MS,
  DEFAULT_PRESENCE_INTERVAL_MS,
  type PostgresStoreOptions,
  PRESENCE_INTERVALS_HELD,
  RECONNECT_MAX_DELAY_MS,
  RECONNECT_MIN_DELAY_MS,
} from './options.js';
import type { ListedRow } from './rows.js';
import { notificationChannel, turnLockKey } from './sql.js';
import { statementName, statements } from './statements.js';

export type { PostgresStoreOptions } from './options.js';

/** A commit as this store prepares it: with its events' JSON texts, for {@link RecentEvents}. */
interface StoreCommit extends PreparedCommit {
  eventJsons: readonly string[];
  /** The events' `createdAt` (the store's clock when committing). */
  createdAt: number;
}

/** What this store advises as the runtime's `streamCommitIntervalMs` (see core's StoreCapabilities). */
const STREAM_COMMIT_INTERVAL_MS = 40;

/** See {@link PostgresStore.#countCreated}. */
const ANALYZE_AFTER_CREATED = 20;

/** The first id that occurs twice, or undefined. */
function firstRepeat(ids: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) return id;
    seen.add(id);
  }
  return undefined;
}

export class PostgresStore implements core.A2AStore, core.PushStore {
  readonly supports: core.StoreCapabilities;
  /** The schema holding the tables. */
  readonly schema: string;
  /** The namespace this store reads and writes. */
  readonly namespace: string;
  /** Whether statements go as named prepared statements (the `preparedStatements` option). */
  readonly preparedStatements: boolean;

  readonly #options: Readonly<PostgresStoreOptions>;
  readonly #clock: core.Clock;
  readonly #sql: ReturnType<typeof statements>;
  readonly #channel: string;
  readonly #notifier: CommitNotifier;
  /** Names this instance in its events payloads; its own listener skips payloads that start so. */
  readonly #origin = randomUUID();
  readonly #ownEventsPayload = ownEventsPayloadPrefix(this.#origin);
  readonly #target: Target;
  readonly #subscribers: Subscribers;
  /** What this instance committed lately, so that readEvents of it sends no query (see RecentEvents). */
  readonly #recent = new RecentEvents();
  /** A task row as its record, whose version the cache hears of (see RecentEvents). */
  readonly #taskRecord = (row: core.TaskRow): core.TaskRecord => {
    const record = fromRow.task(row);
    this.#recent.sawVersion(record.task.id, record.version);
    return record;
  };
  /** Set while open (or opening). */
  #pool: pg.Pool | undefined;
  #listener: NotificationListener | undefined;
  #opening: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  #open = false;
  #closed = false;
  /** Undefined when `groupCommit: false`. */
  readonly #groupCommit: GroupCommit | undefined;
  /** Tasks created through this store (see {@link PostgresStore.#countCreated}). */
  #created = 0;
  /** `presenceIntervalMs`; 0 when every commit notifies. */
  readonly #presenceIntervalMs: number;
  /** Until when (performance.now()) another process may listen on the channel: see {@link #othersMayListen}. */
  #othersListenUntil = Number.NEGATIVE_INFINITY;
  /** Says this store's presence every `presenceIntervalMs` while it listens. */
  #presenceTimer: NodeJS.Timeout | undefined;

  constructor(options: PostgresStoreOptions = {}) {
    checkOptions(options);
    this.#options = { ...options };
    this.schema = options.schema ?? 'a2a';
    this.namespace = options.namespace ?? 'default';
    this.#clock = options.clock ?? systemClock;
    this.#sql = statements(this.schema);
    this.#channel = notificationChannel(this.schema, this.namespace);
    try {
      this.#target = resolveTarget(options.pool?.options ?? this.#poolConfig());
    } catch (error) {
      throw new A2AError(
        'INVALID_OPTIONS',
        `PostgresStore: the connection settings are not valid (${messageOf(error)}). Write connectionString as postgres://user:password@host:5432/database.`,
        { cause: error },
      );
    }
    this.preparedStatements = options.preparedStatements ?? true;
    this.#subscribers = new Subscribers(options.onListenerError);
    this.#notifier = new CommitNotifier({
      pool: () => this.#pool,
      statement: this.#sql.notify,
      channel: this.#channel,
      origin: this.#origin,
      onError: (error, payloads) => this.#options.onListenerError?.(storeError(error, this.#target), payloads),
    });
    this.#groupCommit =
      options.groupCommit === false
        ? undefined
        : new GroupCommit({
            pool: () => this.#ready(),
            execute: (commit) => this.#execute(commit),
            // The commits it settles are the ones `commit` pushed: StoreCommits.
            settle: (commit, rows) => this.#settle(commit as StoreCommit, rows, commit.ctx),
            failure: (error) => storeError(error, this.#target),
            preparedStatements: this.preparedStatements,
            applicationName: `fastify-a2a commit ${this.#channel}`,
            plainUpdates: this.#sql.plainUpdates,
          });
    const listen = options.listen ?? true;
    this.#presenceIntervalMs = listen ? (options.presenceIntervalMs ?? DEFAULT_PRESENCE_INTERVAL_MS) : 0;
    // The runtime then commits a task's streamed chunks at most every 40 ms (each commit is a
    // transaction on the server every worker shares; issue 30, bench/TOKENS.md).
    this.supports = { ...fullStoreCapabilities(true, listen), streamCommitIntervalMs: STREAM_COMMIT_INTERVAL_MS };
  }

  #poolConfig(): pg.PoolConfig {
    const { connectionString, poolConfig } = this.#options;
    return {
      connectionTimeoutMillis: DEFAULT_CONNECTION_TIMEOUT_MS,
      // Every statement of this store is an index lookup or an index range. On a small table (a
      // new deployment, or one analysed while small: see #countCreated) the planner prefers
      // reading the whole table, and the plan cached on the connection keeps doing it as the table
      // grows, once per commit (issue 30: 15,074 scans of 52 rows each in a 5-second load). A
      // sequential scan stays possible where no index fits; it is only priced as the last resort.
      options: '-c enable_seqscan=off',
      ...poolConfig,
      ...(connectionString === undefined ? {} : { connectionString }),
    };
  }

  get #ownsPool(): boolean {
    return this.#options.pool === undefined || this.#options.closePool === true;
  }

  /** Connects, migrates (or checks the schema when `migrate: false`) and starts listening. Idempotent. */
  open(): Promise<void> {
    if (this.#open) return Promise.resolve();
    this.#opening ??= this.#doOpen().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  async #doOpen(): Promise<void> {
    await this.#closing;
    const pool = this.#options.pool ?? new pg.Pool(this.#poolConfig());
    // An idle pooled connection dropped by the server emits 'error' on the pool, which would crash
    // the process without a listener. The next query gets a fresh connection or reports the failure.
    if (this.#options.pool === undefined) pool.on('error', () => {});
    let listener: NotificationListener | undefined;
    try {
      if (this.#options.migrate ?? true) {
        await migrate(pool, this.schema);
      } else {
        const pending = pendingMigrations(await appliedVersions(pool, this.schema));
        if (pending.length > 0) throw this.#notMigrated(pending.map((m) => m.version));
      }
      if (this.supports.crossProcess) {
        listener = this.#createListener(pool);
        await listener.start();
      }
    } catch (error) {
      await listener?.close();
      if (this.#options.pool === undefined) await pool.end().catch(() => {});
      throw openError(error, this.#target);
    }
    this.#pool = pool;
    this.#listener = listener;
    this.#open = true;
    this.#closed = false;
    if (listener !== undefined && this.#presenceIntervalMs > 0) {
      // Until it hears from them, the others may be listening (it cannot have heard them yet). They
      // hear of this one before open() resolves, so they notify it of what they commit from then on.
      this.#heardOthers();
      await this.#announce();
      this.#presenceTimer = setInterval(() => void this.#announce(), this.#presenceIntervalMs).unref();
    }
  }

  /**
   * Says on the channel that this store listens, and counts the live workers of its namespace (one
   * more than this process's means another is there, perhaps of a release that says nothing).
   */
  async #announce(): Promise<void> {
    if (this.#pool === undefined) return;
    try {
      const { rows } = await this.#query<{ workers: number }>(
        this.#sql.announce,
        [this.#channel, presencePayload(this.#origin), this.namespace, this.#clock()],
        undefined,
      );
      if ((rows[0]?.workers ?? 0) > 1) this.#heardOthers();
    } catch (error) {
      if (this.#pool === undefined) return; // closed meanwhile
      // Who listens is unknown: notify as if someone did, until the next announcement tells.
      this.#heardOthers();
      this.#options.onListenerError?.(error, 'presence');
    }
  }

  /** Another process listens, or may: commits notify for the next `presenceIntervalMs` × 3. */
  #heardOthers(): void {
    this.#othersListenUntil = performance.now() + this.#presenceIntervalMs * PRESENCE_INTERVALS_HELD;
  }

  /**
   * Whether a commit's NOTIFY can reach anyone: always without presence (`presenceIntervalMs: 0`,
   * or a store that does not listen and so cannot hear who does); otherwise while another
   * listener, or another live worker, was heard of lately.
   */
  #othersMayListen(): boolean {
    return this.#presenceIntervalMs === 0 || performance.now() < this.#othersListenUntil;
  }

  #notMigrated(missing: number[]): A2AError {
    return new A2AError(
      'STORE_UNAVAILABLE',
      `The schema "${this.schema}" at ${describeTarget(this.#target)} is missing migration(s) ${missing.join(', ')} ` +
        `(this release needs 1 to ${LATEST_VERSION}) and the store was created with migrate: false. ` +
        `Have a DBA apply the SQL from migrationSql(${JSON.stringify(this.schema)}) (exported by @fastify-a2a/store-postgres), ` +
        'or set migrate: true to let the store apply it.',
      { data: { schema: this.schema, missing } },
    );
  }

  #createListener(pool: pg.Pool): NotificationListener {
    return new NotificationListener({
      channel: this.#channel,
      // A dedicated client with the pool's settings. TCP keepalive notices a silently dead peer.
      createClient: () =>
        new pg.Client({
          ...pool.options,
          keepAlive: true,
          keepAliveInitialDelayMillis: 10_000,
          application_name: `fastify-a2a listen ${this.#channel}`,
        }),
      onNotification: (payload) => {
        if (isEventsPayload(payload)) {
          this.#heard(payload);
          return;
        }
        const present = presenceOrigin(payload);
        if (present !== undefined) {
          if (present !== this.#origin) this.#heardOthers();
          return;
        }
        const at = payload.lastIndexOf(':');
        const seq = Number(payload.slice(at + 1));
        if (at > 0 && Number.isInteger(seq)) this.#notify(payload.slice(0, at), seq);
      },
      onReconnect: async (client) => {
        // Others may have started while this connection was down, unheard: notify until told
        // otherwise, and say at once that this store listens again (they may have stopped notifying).
        if (this.#presenceIntervalMs > 0) {
          this.#heardOthers();
          void this.#announce();
        }
        // Notifications sent while we were disconnected are gone: tell every subscriber the
        // task's current version, and they read what they missed from the log.
        // subscribeAll's listeners cannot be told what they missed: ('', 0) asks them to read again.
        if (this.#subscribers.allListeners > 0) this.#notify('', 0);
        const taskIds = [...this.#subscribers.taskIds()];
        if (taskIds.length === 0) return;
        const { rows } = await client.query<{ task_id: string; version: number }>(this.#sql.versions, [
          this.namespace,
          taskIds,
        ]);
        for (const row of rows) this.#notify(row.task_id, row.version);
      },
      minDelayMs: RECONNECT_MIN_DELAY_MS,
      maxDelayMs: RECONNECT_MAX_DELAY_MS,
    });
  }

  /** Stops listening and ends the pool if the store created it (or `closePool: true`). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#doClose().finally(() => {
      this.#closing = undefined;
    });
    return this.#closing;
  }

  async #doClose(): Promise<void> {
    await this.#opening?.catch(() => {});
    if (!this.#open) return;
    // Commits already accepted finish first (their batches need the pool and the lane connections).
    await this.#groupCommit?.drained();
    this.#open = false;
    this.#closed = true;
    this.#recent.clear();
    // No await before the pool is gone: a commit made from here on is refused as closed.
    const pool = this.#pool;
    const listener = this.#listener;
    this.#pool = undefined;
    this.#listener = undefined;
    clearInterval(this.#presenceTimer);
    this.#presenceTimer = undefined;
    await this.#groupCommit?.close();
    await listener?.close();
    if (pool !== undefined && this.#ownsPool) await pool.end();
  }

  /** Whether the LISTEN connection for cross-process notifications is up (see core.A2AStore). */
  get notificationsConnected(): boolean {
    return this.#listener?.connected ?? false;
  }

  async ping(): Promise<void> {
    const pool = this.#ready();
    try {
      await pool.query('SELECT 1');
    } catch (error) {
      throw new A2AError(
        'STORE_UNAVAILABLE',
        `The PostgreSQL server at ${describeTarget(this.#target)} does not answer: ${messageOf(error)}.`,
        { cause: error, data: { ...this.#target } },
      );
    }
  }

  #ready(ctx?: core.StoreCallContext): pg.Pool {
    ctx?.signal?.throwIfAborted();
    if (this.#pool === undefined) throw notOpen(this.#closed);
    return this.#pool;
  }

  async #query<R extends pg.QueryResultRow>(
    text: string,
    values: unknown[],
    ctx: core.StoreCallContext | undefined,
  ): Promise<pg.QueryResult<R>> {
    const pool = this.#ready(ctx);
    try {
      if (!this.preparedStatements) return await pool.query<R>(text, values);
      return await pool.query<R>({ name: statementName(text), text, values });
    } catch (error) {
      throw storeError(error, this.#target);
    }
  }

  /**
   * One round trip when it succeeds (see `statements`); a conflict costs one more, to say what the
   * task's version, or the duplicate message's task, is. With `groupCommit` (the default) the
   * statement may go to the database in one transaction with other commits waiting at the same
   * moment: see {@link GroupCommit}.
   */
  async commit(request: core.CommitRequest, ctx?: core.StoreCallContext): Promise<core.CommitResult> {
    checkCommitRequest(request, 'PostgresStore');
    const { taskId, expectedVersion, task, events, enqueueTurn, finishTurn } = request;
    const owner = request.owner ?? null;
    const scope = owner ?? ANONYMOUS_SCOPE;
    const indexed = indexedMessages(events);
    const messageIds = indexed.map((message) => message.messageId);
    const repeated = firstRepeat(messageIds);
    if (repeated !== undefined) {
      // The second occurrence would be a duplicate of the first; tell about an earlier commit of any
      // of the ids first, as that is the message the client sent before.
      throw (await this.#duplicate(scope, messageIds, ctx)) ?? new DuplicateMessageError(repeated);
    }
    const version = expectedVersion + events.length;
    // Serialised here, once: pg would turn a JS array into a Postgres array literal rather than JSON.
    // The events go as one JSON array text, not a json[] of one text per event: pg writes a json[]
    // as an array literal, escaping every quote of every event (two String.replace copies of each),
    // the largest single piece of garbage this store made per commit while thousands of streams
    // open (bench/PROFILE.md, "Held streams"). Each event's own text is kept for RecentEvents;
    // joined, they are exactly JSON.stringify(events).
    const eventJsons = events.map((event) => JSON.stringify(event));
    const now = this.#clock();
    const values: unknown[] = [
      this.namespace,
      taskId,
      task.contextId,
      task.status.state,
      version,
      JSON.stringify(task),
      now,
      expectedVersion,
      `[${eventJsons.join(',')}]`,
      messageIds,
      statusTimestampOf(task),
      owner,
      indexed.map((message) => message.digest),
      request.traceContext ?? null,
    ];
    const keys = [`t:${taskId}`];
    if (enqueueTurn !== undefined) {
      const lockKey = turnLockKey(this.schema, this.namespace, task.contextId);
      values.push(enqueueTurn.messageId, enqueueTurn.workerId, lockKey);
      keys.push(`c:${lockKey}`);
    }
    if (finishTurn !== undefined) values.push(finishTurn.position, finishTurn.messageId);
    const shape = {
      create: expectedVersion === 0,
      enqueue: enqueueTurn !== undefined,
      finish: finishTurn !== undefined,
      index: messageIds.length > 0,
    };
    const text = this.#sql.commit(shape);
    const prepared: StoreCommit = {
      request,
      text,
      values,
      version,
      scope,
      messageIds,
      ctx,
      keys,
      eventJsons,
      createdAt: now,
      plain: !shape.create && !shape.enqueue && !shape.finish && !shape.index,
    };
    const queue = this.#groupCommit;
    if (queue === undefined) return this.#settle(prepared, await this.#execute(prepared), ctx);
    this.#ready(ctx);
    return new Promise<core.CommitResult>((resolve, reject) => queue.push({ ...prepared, resolve, reject }));
  }

  /** Runs one commit statement on the pool; no rows back means a version conflict. */
  async #execute(commit: PreparedCommit): Promise<CommitRow[]> {
    const { text, values, scope, messageIds, ctx } = commit;
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.#query<CommitRow>(text, values, ctx)).rows;
      } catch (error) {
        const { code, table } = error as { code?: string; table?: string };
        if (code === '23505' && table === 'messages') {
          // The row that refused ours was committed (a unique check waits for the other
          // transaction), so we can read it. Should it be purged in between, the id is free again:
          // try once more.
          const duplicate = await this.#duplicate(scope, messageIds, ctx);
          if (duplicate !== undefined) throw duplicate;
          if (attempt < 2) continue;
          throw error;
        }
        // A unique violation on tasks means a concurrent create won (ON CONFLICT normally absorbs it).
        if (code !== '23505' || table !== 'tasks') throw error;
        return [];
      }
    }
  }

  /** What a commit statement's rows mean: a conflict, or the result (after telling subscribers). */
  async #settle(
    commit: StoreCommit,
    rows: CommitRow[],
    ctx: core.StoreCallContext | undefined,
  ): Promise<core.CommitResult> {
    const { request, version } = commit;
    const { taskId, task, enqueueTurn } = request;
    if (rows.length === 0) {
      // The caller learns of a version past what the cache may hold of the task.
      this.#recent.forget(taskId);
      const current = await this.#query<{ version: number }>(this.#sql.version, [this.namespace, taskId], ctx);
      const currentVersion = current.rows[0]?.version;
      if (currentVersion !== undefined) this.#recent.sawVersion(taskId, currentVersion);
      throw new VersionConflictError(taskId, request.expectedVersion, currentVersion);
    }
    if (request.expectedVersion === 0) this.#countCreated();
    // Committed: remember the events before the subscribers, woken below, read them back.
    // Handed over (`transfer`): the committed objects are what shared reads answer, parsed by no one.
    const events = request.transfer === true ? request.events : undefined;
    this.#recent.record(taskId, request.expectedVersion + 1, commit.eventJsons, commit.createdAt, events);
    // Tell this process's subscribers now rather than after the NOTIFY round trip; they get the
    // NOTIFY too (duplicates are allowed). A turn waiting behind `finishTurn` hears it this way.
    this.#subscribers.notify(taskId, version);
    // A task no other process can know of yet (its creating commit, see core.CommitRequest) needs no
    // NOTIFY, nor does any commit while no other process listens (see `presenceIntervalMs`).
    if (request.unknownElsewhere !== true && this.#othersMayListen()) {
      this.#notifier.notify(taskId, version, commit.eventJsons, commit.createdAt);
    }
    if (enqueueTurn === undefined) return { version };
    const position = Number(rows[0]?.position);
    const { messageId, workerId } = enqueueTurn;
    return { version, turn: { contextId: task.contextId, position, taskId, messageId, workerId } };
  }

  /**
   * Counts the tasks this store created, and at the {@link ANALYZE_AFTER_CREATED}th has the database
   * gather statistics on the tasks table if it has none worth the name. Until a table is analysed
   * the planner knows nothing of it, and every index leading with `namespace` looks as good as the
   * primary key for a lookup by task id: Postgres chose `tasks_by_owner_status_ts` and read every
   * task of the namespace on each commit and read (issue 30: 16,112 such scans of ~50 entries in a
   * 5-second load on a new schema). Autovacuum would analyse the table, but only after its next
   * round (a minute), and the plans cached on each connection stay until then. Once per store;
   * a failure (no privilege: Postgres then only warns) changes nothing but the plan.
   */
  #countCreated(): void {
    this.#created += 1;
    if (this.#created !== ANALYZE_AFTER_CREATED) return;
    void (async () => {
      const { rows } = await this.#query<{ reltuples: number }>(this.#sql.tasksRowEstimate, [this.schema], undefined);
      if ((rows[0]?.reltuples ?? 0) < ANALYZE_AFTER_CREATED) await this.#query(this.#sql.analyzeTasks, [], undefined);
    })().catch(() => {});
  }

  /**
   * The error for the first of `messageIds` (in event order) that is indexed in the owner scope
   * `scope`; undefined when none is.
   */
  async #duplicate(
    scope: string,
    messageIds: string[],
    ctx: core.StoreCallContext | undefined,
  ): Promise<DuplicateMessageError | undefined> {
    const { rows } = await this.#query<{ message_id: string; task_id: string; context_id: string }>(
      this.#sql.findMessages,
      [this.namespace, scope, messageIds],
      ctx,
    );
    const found = new Map(rows.map((row) => [row.message_id, row]));
    for (const id of messageIds) {
      const row = found.get(id);
      if (row !== undefined) return new DuplicateMessageError(id, { taskId: row.task_id, contextId: row.context_id });
    }
    return undefined;
  }

  async getTask(taskId: string, ctx?: core.StoreCallContext): Promise<core.TaskRecord | undefined> {
    const { rows } = await this.#query<core.TaskRow>(this.#sql.getTask, [this.namespace, taskId], ctx);
    return rows[0] === undefined ? undefined : this.#taskRecord(rows[0]);
  }

  async getVersions(taskIds: readonly string[], ctx?: core.StoreCallContext): Promise<Map<string, number>> {
    if (taskIds.length === 0) return new Map();
    const { rows } = await this.#query<{ task_id: string; version: number }>(
      this.#sql.versions,
      [this.namespace, taskIds],
      ctx,
    );
    for (const row of rows) this.#recent.sawVersion(row.task_id, row.version);
    return new Map(rows.map((row) => [row.task_id, row.version]));
  }

  /**
   * Answered from the events this instance committed lately when they start right after
   * `afterSeq` (no query), else from the database. See core's RecentEvents for why such an answer
   * may end before events other workers committed after them, and why that is never before a
   * version this instance reported.
   */
  async readEvents(
    taskId: string,
    afterSeq: number,
    limit?: number,
    ctx?: core.StoreCallContext,
    options?: core.ReadEventsOptions,
  ): Promise<core.StoredEvent[]> {
    this.#ready(ctx);
    const recent = this.#recent.read(taskId, afterSeq, limit, options?.shared === true);
    if (recent !== undefined) return recent;
    const { rows } = await this.#query<core.EventRow>(
      this.#sql.readEvents,
      [this.namespace, taskId, afterSeq, limit ?? null],
      ctx,
    );
    return rows.map(fromRow.event);
  }

  async listTasksByContext(
    contextId: string,
    options: core.ListTasksOptions = {},
    ctx?: core.StoreCallContext,
  ): Promise<core.TaskRecord[]> {
    const { rows } = await this.#query<core.TaskRow>(
      this.#sql.byContext,
      [this.namespace, contextId, options.limit ?? null],
      ctx,
    );
    return rows.map(this.#taskRecord);
  }

  async listActiveTasks(ctx?: core.StoreCallContext): Promise<core.TaskRecord[]> {
    const { rows } = await this.#query<core.TaskRow>(this.#sql.active, [this.namespace], ctx);
    return rows.map(this.#taskRecord);
  }

  async listInterruptedTasks(
    query: core.InterruptedTasksQuery,
    ctx?: core.StoreCallContext,
  ): Promise<core.TaskRecord[]> {
    const limit = Math.max(0, Math.trunc(query.limit));
    // The column holds whole milliseconds, which Postgres refuses to compare to a fraction: an
    // integer timestamp is before x exactly when it is before ⌈x⌉.
    const values = [this.namespace, Math.ceil(query.before), NO_STATUS_TIMESTAMP, limit];
    const { rows } = await this.#query<core.TaskRow>(this.#sql.interrupted, values, ctx);
    return rows.map(this.#taskRecord);
  }

  /** One round trip: the page (limit + 1 rows, to know whether more follow) and its total. */
  async listTasks(query: core.TaskListQuery, ctx?: core.StoreCallContext): Promise<core.TaskListPage> {
    const { limit } = query;
    // No task has the owner '' (commits refuse it), but the owner index reads '' as "none".
    if (query.owner === ANONYMOUS_SCOPE) return { records: [], total: 0 };
    const values: unknown[] = [this.namespace, Math.max(0, Math.trunc(limit)) + 1];
    const shape = pushTaskListFilters(query, values);
    if (shape & LIST_FILTER.byOwner) values[2] ??= ANONYMOUS_SCOPE;
    // Without a page row (nothing matches after the cursor) the join still gives the total, with
    // NULL task columns.
    const { rows } = await this.#query<ListedRow>(this.#sql.list(shape), values, ctx);
    const listed = rows.filter(
      (row): row is ListedRow & core.TaskRow & { status_ts: string | number; task_id: string } => row.task !== null,
    );
    return taskListPage(listed, rows[0]?.total ?? 0, limit, this.#taskRecord);
  }

  async getContext(contextId: string, ctx?: core.StoreCallContext): Promise<core.ContextRecord | undefined> {
    const { rows } = await this.#query<core.ContextRow>(this.#sql.getContext, [this.namespace, contextId], ctx);
    return rows[0] === undefined ? undefined : fromRow.context(contextId, rows[0]);
  }

  async setContext(contextId: string, state: unknown, ctx?: core.StoreCallContext): Promise<void> {
    // `undefined` (for which JSON.stringify returns undefined) is stored as JSON null.
    await this.#query(
      this.#sql.setContext,
      [this.namespace, contextId, JSON.stringify(state) ?? 'null', this.#clock()],
      ctx,
    );
  }

  async purgeExpired(cutoff: number, ctx?: core.StoreCallContext): Promise<core.PurgeResult> {
    const tasks = await this.#query<{ tasks: number }>(this.#sql.purgeTasks, [this.namespace, cutoff], ctx);
    // The purged tasks' events are gone: none may be answered from memory.
    this.#recent.clear();
    const contexts = await this.#query(this.#sql.purgeContexts, [this.namespace, cutoff], ctx);
    return { tasks: tasks.rows[0]?.tasks ?? 0, contexts: contexts.rowCount ?? 0 };
  }

  async heartbeat(workerId: string, leaseUntil: number, ctx?: core.StoreCallContext): Promise<void> {
    await this.#query(this.#sql.heartbeat, [this.namespace, workerId, leaseUntil, this.#clock()], ctx);
  }

  /** One round trip; see `enqueue` in `statements` for why positions follow commit order. */
  async enqueueTurn(request: core.EnqueueTurnRequest, ctx?: core.StoreCallContext): Promise<core.QueueSlot> {
    const { contextId, taskId, messageId, workerId } = request;
    const { rows } = await this.#query<{ position: string }>(
      this.#sql.enqueue,
      [
        this.namespace,
        contextId,
        taskId,
        messageId,
        workerId,
        this.#clock(),
        turnLockKey(this.schema, this.namespace, contextId),
      ],
      ctx,
    );
    return { contextId, position: Number(rows[0]?.position), taskId, messageId, workerId };
  }

  async turnReadiness(slot: core.QueueSlot, ctx?: core.StoreCallContext): Promise<core.TurnReadiness> {
    const { rows } = await this.#query<core.QueueSlotRow>(
      this.#sql.ahead,
      [this.namespace, slot.contextId, slot.position],
      ctx,
    );
    return rows[0] === undefined ? { ready: true } : { ready: false, ahead: fromRow.queueSlot(rows[0]) };
  }

  async finishTurn(slot: core.QueueSlot, ctx?: core.StoreCallContext): Promise<void> {
    // Sequence 0: "look again", never new events. Waiters behind this turn subscribe to its task;
    // rowCount is 1 only when the slot was removed and some turn waits behind it.
    const { rowCount } = await this.#query(
      this.#sql.finishTurn,
      [this.namespace, slot.contextId, slot.position, slot.taskId, slot.messageId, this.#channel, `${slot.taskId}:0`],
      ctx,
    );
    if (rowCount !== 0) this.#subscribers.notify(slot.taskId, 0);
  }

  async claimExpiredWorkers(
    now: number,
    exceptWorkerId?: string,
    ctx?: core.StoreCallContext,
  ): Promise<core.ExpiredWorker[]> {
    // One row per turn of a claimed worker, or one row with null turn columns for a worker without turns.
    const { rows } = await this.#query<
      Omit<core.QueueSlotRow, 'context_id'> & { context_id: string | null; last_heartbeat: string | number }
    >(this.#sql.claimExpired, [this.namespace, now, exceptWorkerId ?? null], ctx);
    const claimed = new Map<string, core.ExpiredWorker>();
    for (const row of rows) {
      let worker = claimed.get(row.worker_id);
      if (worker === undefined) {
        worker = { workerId: row.worker_id, lastHeartbeat: Number(row.last_heartbeat), turns: [] };
        claimed.set(row.worker_id, worker);
      }
      if (row.context_id !== null) worker.turns.push(fromRow.queueSlot({ ...row, context_id: row.context_id }));
    }
    return [...claimed.values()];
  }

  async joinWorker(
    workerId: string,
    leaseUntil: number,
    description: core.WorkerDescription,
    ctx?: core.StoreCallContext,
  ): Promise<core.ExpiredWorker | undefined> {
    const { incarnation, host, pid, startedAt } = description;
    const { rows } = await this.#query<
      Omit<core.QueueSlotRow, 'context_id' | 'worker_id'> & {
        context_id: string | null;
        worker_id: string | null;
        last_heartbeat: string | number | null;
      }
    >(
      this.#sql.joinWorker,
      [this.namespace, workerId, leaseUntil, this.#clock(), incarnation, host, pid, startedAt],
      ctx,
    );
    const first = rows[0];
    if (first === undefined) return undefined;
    const turns: core.QueueSlot[] = [];
    for (const row of rows) {
      if (row.context_id !== null)
        turns.push(fromRow.queueSlot({ ...row, context_id: row.context_id, worker_id: workerId }));
    }
    return { workerId, lastHeartbeat: Number(first.last_heartbeat ?? 0), turns };
  }

  async listWorkers(ctx?: core.StoreCallContext): Promise<core.WorkerRecord[]> {
    const { rows } = await this.#query<
      core.WorkerDescriptionRow & Omit<core.QueueSlotRow, 'context_id' | 'worker_id'> & { context_id: string | null }
    >(this.#sql.listWorkers, [this.namespace], ctx);
    const workers = new Map<string, core.WorkerRecord>();
    for (const row of rows) {
      let worker = workers.get(row.worker_id);
      if (worker === undefined) {
        worker = fromRow.worker(row, []);
        workers.set(row.worker_id, worker);
      }
      if (row.context_id !== null) worker.turns.push(fromRow.queueSlot({ ...row, context_id: row.context_id }));
    }
    return [...workers.values()];
  }

  async removeWorker(workerId: string, ctx?: core.StoreCallContext): Promise<void> {
    await this.#query(this.#sql.removeWorker, [this.namespace, workerId], ctx);
  }

  async listWorkerTurns(workerId: string, ctx?: core.StoreCallContext): Promise<core.QueueSlot[]> {
    const { rows } = await this.#query<core.QueueSlotRow>(this.#sql.workerTurns, [this.namespace, workerId], ctx);
    return rows.map(fromRow.queueSlot);
  }

  async findMessage(
    messageId: string,
    ctx?: core.StoreCallContext,
    owner?: string,
  ): Promise<core.MessageIndexEntry | undefined> {
    this.#ready(ctx);
    // '' is how the anonymous scope is keyed, not a principal: no commit indexes under owner ''.
    if (owner === ANONYMOUS_SCOPE) return undefined;
    const { rows } = await this.#query<core.MessageIndexRow>(
      this.#sql.findMessage,
      [this.namespace, owner ?? ANONYMOUS_SCOPE, messageId],
      ctx,
    );
    return rows[0] === undefined ? undefined : fromRow.messageIndexEntry(rows[0]);
  }

  // ---- Push notifications ----

  /** One statement: the task check, the config and its fresh delivery state (see `savePushConfig` in `statements`). */
  async savePushConfig(
    request: core.SavePushConfigRequest,
    ctx?: core.StoreCallContext,
  ): Promise<core.PushConfigRecord> {
    checkPushConfigRequest(request, 'PostgresStore');
    const { taskId, config, protocolVersion } = request;
    const configJson = JSON.stringify(config);
    let rows: { created_at: string | number; updated_at: string | number }[];
    try {
      ({ rows } = await this.#query<{ created_at: string | number; updated_at: string | number }>(
        this.#sql.savePushConfig,
        [this.namespace, taskId, config.id, configJson, protocolVersion, this.#clock()],
        ctx,
      ));
    } catch (error) {
      // The task was purged between the EXISTS check and the foreign key's.
      if ((error as { code?: string }).code === '23503') throw taskNotFound(taskId);
      throw error;
    }
    const saved = rows[0];
    if (saved === undefined) throw taskNotFound(taskId);
    return fromRow.savedPushConfig(request, configJson, saved);
  }

  async getPushConfig(
    taskId: string,
    configId: string,
    ctx?: core.StoreCallContext,
  ): Promise<core.PushConfigRecord | undefined> {
    const { rows } = await this.#query<core.PushConfigRow>(
      this.#sql.getPushConfig,
      [this.namespace, taskId, configId],
      ctx,
    );
    return rows[0] === undefined ? undefined : fromRow.pushConfig(rows[0]);
  }

  async listPushConfigs(taskId: string, ctx?: core.StoreCallContext): Promise<core.PushConfigRecord[]> {
    const { rows } = await this.#query<core.PushConfigRow>(this.#sql.listPushConfigs, [this.namespace, taskId], ctx);
    return rows.map(fromRow.pushConfig);
  }

  async deletePushConfig(taskId: string, configId: string, ctx?: core.StoreCallContext): Promise<boolean> {
    const { rowCount } = await this.#query(this.#sql.deletePushConfig, [this.namespace, taskId, configId], ctx);
    return (rowCount ?? 0) > 0;
  }

  /** One statement (see `claimPushDeliveries` in `statements` for why claimants never share a delivery). */
  async claimPushDeliveries(
    request: core.ClaimPushDeliveriesRequest,
    ctx?: core.StoreCallContext,
  ): Promise<core.PushDelivery[]> {
    const { workerId, now, claimUntil, limit } = request;
    const { rows } = await this.#query<core.PushDeliveryRow>(
      this.#sql.claimPushDeliveries,
      [this.namespace, now, Math.max(0, Math.trunc(limit)), workerId, randomUUID(), claimUntil],
      ctx,
    );
    return rows.map(fromRow.pushDelivery);
  }

  async renewPushClaims(workerId: string, claimUntil: number, ctx?: core.StoreCallContext): Promise<number> {
    const { rowCount } = await this.#query(this.#sql.renewPushClaims, [this.namespace, workerId, claimUntil], ctx);
    return rowCount ?? 0;
  }

  async completePushDelivery(request: core.CompletePushDeliveryRequest, ctx?: core.StoreCallContext): Promise<boolean> {
    const { taskId, configId, claimId, cursor, sentAt, nextAttemptAt = null, status = null } = request;
    const values = [this.namespace, taskId, configId, claimId, cursor, nextAttemptAt, sentAt, status];
    const { rowCount } = await this.#query(this.#sql.completePushDelivery, values, ctx);
    return (rowCount ?? 0) > 0;
  }

  async failPushAttempt(request: core.FailPushAttemptRequest, ctx?: core.StoreCallContext): Promise<boolean> {
    const { taskId, configId, claimId, nextAttemptAt, error } = request;
    const { rowCount } = await this.#query(
      this.#sql.failPushAttempt,
      [this.namespace, taskId, configId, claimId, nextAttemptAt, error, request.status ?? null],
      ctx,
    );
    return (rowCount ?? 0) > 0;
  }

  async releasePushClaim(key: core.PushClaimKey, ctx?: core.StoreCallContext): Promise<boolean> {
    const { rowCount } = await this.#query(
      this.#sql.releasePushClaim,
      [this.namespace, key.taskId, key.configId, key.claimId],
      ctx,
    );
    return (rowCount ?? 0) > 0;
  }

  async listPushDeliveries(
    filter: core.PushDeliveryFilter = {},
    ctx?: core.StoreCallContext,
  ): Promise<core.PushDelivery[]> {
    const { taskId, failed, limit } = filter;
    const values: unknown[] = [this.namespace, failed ?? null, limit === undefined ? null : Math.max(0, limit)];
    const text = taskId === undefined ? this.#sql.listPushDeliveries : this.#sql.listTaskPushDeliveries;
    if (taskId !== undefined) values.push(taskId);
    const { rows } = await this.#query<core.PushDeliveryRow>(text, values, ctx);
    return rows.map(fromRow.pushDelivery);
  }

  subscribe(taskId: string, listener: (seq: number) => void): core.Unsubscribe {
    return this.#subscribers.subscribe(taskId, listener);
  }

  /**
   * Tells this process's subscribers of a version heard from the database (a NOTIFY, or the
   * versions read after reconnecting): first the cache learns that the task may be past what it
   * holds, so that a subscriber's read of the new events goes to the database.
   */
  #notify(taskId: string, seq: number): void {
    this.#recent.sawVersion(taskId, seq);
    this.#subscribers.notify(taskId, seq);
  }

  /**
   * Another process's events payload (see CommitNotifier): the cache holds the events of a task
   * followed here, so that the read its `<task id>:<seq>` notification (next) wakes needs no query.
   * Its own payloads are skipped unparsed, as are tasks nobody here follows.
   */
  #heard(payload: string): void {
    if (payload.startsWith(this.#ownEventsPayload)) return;
    // Another process commits and notifies: it listens too, as a store does by default.
    if (this.#presenceIntervalMs > 0) this.#heardOthers();
    const heard = parseEventsPayload(payload);
    if (heard === undefined || !this.#subscribers.has(heard.taskId)) return;
    this.#recent.recordHeard(heard.taskId, heard.firstSeq, heard.eventJsons, heard.createdAts);
  }

  /** Every NOTIFY on the store's channel reaches them: the same path task subscribers hear from. */
  subscribeAll(listener: (taskId: string, seq: number) => void): core.Unsubscribe {
    return this.#subscribers.subscribeAll(listener);
  }
}
