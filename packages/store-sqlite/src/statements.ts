/**
 * Every statement the SQLite store runs, prepared once per connection (after migrating, so the
 * tables exist), and the transactions that combine them: each write is one synchronous
 * transaction that never spans an `await`.
 */

import {
  type ContextRow,
  DuplicateMessageError,
  type EventRow,
  type ExpiredWorker,
  fromRow,
  LIST_FILTER,
  type MessageIndexRow,
  type PurgeResult,
  type PushConfigRow,
  type PushDelivery,
  type PushDeliveryRow,
  perListShape,
  type QueueSlot,
  type QueueSlotRow,
  SQL_STATE_LISTS,
  type TaskListConditions,
  type TaskRow,
  taskListWhere,
  taskNotFound,
  VersionConflictError,
  type WorkerDescriptionRow,
  type WorkerRecord,
} from '@fastify-a2a/core';
import type Database from 'better-sqlite3';
import { batchTransaction } from './group-commit.js';
import type {
  CommitArgs,
  EnqueueArgs,
  EventWrite,
  JoinArgs,
  ListedRow,
  ListParams,
  PushClaimArgs,
  PushKey,
  PushSave,
  TaskWrite,
  WorkerRow,
} from './rows.js';

/**
 * subscribeAll's poll: the tasks committed to since a time. Every state is named so that the poll
 * seeks in a2a_tasks_by_state (namespace, state, updated_at), once per state: an index of its own
 * on updated_at would cost every commit of every deployment a B-tree update for the monitor alone.
 */
export const TASKS_UPDATED_SINCE_SQL = `SELECT task_id, version, updated_at FROM a2a_tasks
  WHERE namespace = ? AND state IN (${SQL_STATE_LISTS.all}) AND updated_at >= ?`;

/**
 * The listTasks statements for every combination of filters (page: 32, count: 16), prepared once.
 * The page names its index: without statistics (nobody runs ANALYZE) SQLite's planner takes the
 * state index over the context index when both filters are given, and the plain status index over
 * the state index when a timestamp bound is given, both of which read far more than one page.
 * With a context, the context index is the narrow one (a context has few tasks); then with an
 * owner, the owner index (what a caller lists is bounded by its own tasks, whatever the other
 * filters, and a state filter is read along); with a state only, the state index; otherwise the
 * status index.
 */
function listStatements(db: Database.Database, columns: string) {
  const conditions: TaskListConditions = {
    // IS rather than =: a NULL @owner selects the tasks without one, through the same index range.
    owner: 'owner IS @owner',
    context: 'context_id = @contextId',
    state: 'state = @state',
    since: 'status_ts >= @since',
    after: '(status_ts, task_id) < (@afterTs, @afterId)',
  };
  const where = (shape: number): string => taskListWhere(shape, 'namespace = @namespace', conditions);
  const pageIndex = (shape: number): string =>
    shape & LIST_FILTER.byContext
      ? 'a2a_tasks_by_context_status_ts'
      : shape & LIST_FILTER.byOwner
        ? 'a2a_tasks_by_owner_status_ts'
        : shape & LIST_FILTER.byState
          ? 'a2a_tasks_by_state_status_ts'
          : 'a2a_tasks_by_status_ts';
  const pages = perListShape((shape) =>
    db.prepare<[ListParams], ListedRow>(
      `SELECT ${columns}, status_ts, task_id FROM a2a_tasks INDEXED BY ${pageIndex(shape)} WHERE ${where(shape)}
       ORDER BY status_ts DESC, task_id DESC LIMIT @limit`,
    ),
  );
  // Counts read index entries only where they can: the planner's choices are covering indexes,
  // except with a context or an owner, where the index of the page is the one to narrow by.
  const countIndex = (shape: number): string =>
    shape & LIST_FILTER.byContext
      ? ' INDEXED BY a2a_tasks_by_context_status_ts'
      : shape & LIST_FILTER.byOwner
        ? ' INDEXED BY a2a_tasks_by_owner_status_ts'
        : '';
  const counts = perListShape((shape) =>
    shape & LIST_FILTER.after
      ? undefined
      : db
          .prepare<[ListParams], number>(`SELECT count(*) FROM a2a_tasks${countIndex(shape)} WHERE ${where(shape)}`)
          .pluck(),
  );
  // One read transaction: the page and its total see the same commits.
  return db.transaction((params: ListParams, shape: number): { rows: ListedRow[]; total: number } => ({
    rows: (pages[shape] as (typeof pages)[number]).all(params),
    total: (counts[shape & ~LIST_FILTER.after] as NonNullable<(typeof counts)[number]>).get(params) as number,
  }));
}

/** @internal (see PollerStatements in poller.ts for why) */
export type Statements = ReturnType<typeof prepare>;

/**
 * Every statement the store runs, prepared once per connection (after migrating, so tables exist).
 * @internal
 */
export function prepare(db: Database.Database) {
  const columns = 'task_json AS task, version, created_at, updated_at, owner, trace_context';
  const turnColumns = 'context_id, position, task_id, turn_id, worker_id';
  const pushConfigColumns =
    'c.task_id, c.config_id, c.config_json AS config, c.protocol_version, c.created_at, c.updated_at';
  const pushDeliveryColumns = `${pushConfigColumns}, d.cursor, d.attempts, d.next_attempt_at, d.last_sent_at, d.failed,
    d.last_error, d.last_status, d.claimed_by, d.claim_id, d.claim_until, t.version AS task_version`;
  const pushDeliveryJoin = `a2a_push_configs c
    JOIN a2a_push_deliveries d ON d.namespace = c.namespace AND d.task_id = c.task_id AND d.config_id = c.config_id
    JOIN a2a_tasks t ON t.namespace = c.namespace AND t.task_id = c.task_id`;
  const statements = {
    ping: db.prepare<[], number>('SELECT 1').pluck(),
    // Changes whenever another connection commits to the file (not on our own commits).
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    taskVersion: db
      .prepare<[string, string], number>('SELECT version FROM a2a_tasks WHERE namespace = ? AND task_id = ?')
      .pluck(),
    // What a new subscription starts from: the task's version and whether a turn of it is queued
    // (another process's finishTurn is noticed by the poll), in one statement (issue 30: every
    // turn subscribes to its task, so every blocking send runs it).
    subscriptionHead: db.prepare<[{ namespace: string; taskId: string }], { version: number | null; queued: number }>(
      `SELECT (SELECT version FROM a2a_tasks WHERE namespace = @namespace AND task_id = @taskId) AS version,
              EXISTS (SELECT 1 FROM a2a_turns WHERE namespace = @namespace AND task_id = @taskId) AS queued`,
    ),
    // One statement for any number of subscribed tasks: the ids come as one JSON array parameter.
    taskVersions: db.prepare<[string, string], { task_id: string; version: number }>(
      'SELECT task_id, version FROM a2a_tasks WHERE namespace = ? AND task_id IN (SELECT value FROM json_each(?))',
    ),
    // What a commit checks and compares before writing: see `writeCommit`.
    taskHead: db.prepare<[string, string], { version: number; state: string; status_ts: number; context_id: string }>(
      'SELECT version, state, status_ts, context_id FROM a2a_tasks WHERE namespace = ? AND task_id = ?',
    ),
    insertTask: db.prepare<[TaskWrite]>(
      `INSERT INTO a2a_tasks (namespace, task_id, context_id, owner, state, status_ts, version, task_json, created_at, updated_at, trace_context)
       VALUES (@namespace, @taskId, @contextId, @owner, @state, @statusTs, @version, @taskJson, @now, @now, @traceContext)`,
    ),
    updateTask: db.prepare<[TaskWrite]>(
      `UPDATE a2a_tasks SET context_id = @contextId, state = @state, status_ts = @statusTs, version = @version,
       task_json = @taskJson, updated_at = @now, trace_context = @traceContext
       WHERE namespace = @namespace AND task_id = @taskId`,
    ),
    // An update that leaves every indexed column but updated_at as it was (see `writeCommit`).
    updateTaskBody: db.prepare<[TaskWrite]>(
      `UPDATE a2a_tasks SET version = @version, task_json = @taskJson, updated_at = @now, trace_context = @traceContext
       WHERE namespace = @namespace AND task_id = @taskId`,
    ),
    insertEvent: db.prepare<[EventWrite]>(
      `INSERT INTO a2a_events (namespace, task_id, seq, event_json, created_at)
       VALUES (@namespace, @taskId, @seq, @eventJson, @now)`,
    ),
    getTask: db.prepare<[string, string], TaskRow>(
      `SELECT ${columns} FROM a2a_tasks WHERE namespace = ? AND task_id = ?`,
    ),
    // LIMIT -1 means no limit in SQLite.
    readEvents: db.prepare<[string, string, number, number], EventRow>(
      `SELECT seq, event_json AS event, created_at FROM a2a_events
       WHERE namespace = ? AND task_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
    ),
    // rowid breaks ties between tasks created in the same millisecond: insertion order.
    tasksByContext: db.prepare<[string, string, number], TaskRow>(
      `SELECT ${columns} FROM a2a_tasks WHERE namespace = ? AND context_id = ? ORDER BY created_at, rowid LIMIT ?`,
    ),
    // Through the index ListTasks filters by state with (one range per interrupted state).
    interruptedTasks: db.prepare<[string, number, number, number], TaskRow>(
      `SELECT ${columns} FROM a2a_tasks INDEXED BY a2a_tasks_by_state_status_ts
       WHERE namespace = ? AND state IN (${SQL_STATE_LISTS.interrupted}) AND status_ts < ? AND status_ts > ?
       ORDER BY status_ts, task_id LIMIT ?`,
    ),
    activeTasks: db.prepare<[string], TaskRow>(
      `SELECT ${columns} FROM a2a_tasks WHERE namespace = ? AND state IN (${SQL_STATE_LISTS.active})
       ORDER BY created_at, rowid`,
    ),
    getContext: db.prepare<[string, string], ContextRow>(
      'SELECT state_json AS state, updated_at FROM a2a_contexts WHERE namespace = ? AND context_id = ?',
    ),
    setContext: db.prepare<[string, string, string, number]>(
      `INSERT INTO a2a_contexts (namespace, context_id, state_json, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (namespace, context_id) DO UPDATE SET state_json = excluded.state_json, updated_at = excluded.updated_at`,
    ),
    // Cross-process finishTurn: which subscribed tasks still have turns queued.
    queuedTasks: db
      .prepare<[string, string], string>(
        'SELECT DISTINCT task_id FROM a2a_turns WHERE namespace = ? AND task_id IN (SELECT value FROM json_each(?))',
      )
      .pluck(),
    heartbeat: db.prepare<[string, string, number, number]>(
      `INSERT INTO a2a_workers (namespace, worker_id, lease_until, last_heartbeat) VALUES (?, ?, ?, ?)
       ON CONFLICT (namespace, worker_id) DO UPDATE SET lease_until = excluded.lease_until,
       last_heartbeat = excluded.last_heartbeat`,
    ),
    removeWorker: db.prepare<[string, string]>('DELETE FROM a2a_workers WHERE namespace = ? AND worker_id = ?'),
    // ---- The cluster view (see migration 8) ----
    worker: db.prepare<[string, string], WorkerDescriptionRow>(
      `SELECT worker_id, lease_until, last_heartbeat, incarnation, host, pid, started_at FROM a2a_workers
       WHERE namespace = ? AND worker_id = ?`,
    ),
    workers: db.prepare<[string], WorkerDescriptionRow>(
      `SELECT worker_id, lease_until, last_heartbeat, incarnation, host, pid, started_at FROM a2a_workers
       WHERE namespace = ? ORDER BY worker_id`,
    ),
    joinWorker: db.prepare<[string, string, number, number, string, string, number, number]>(
      `INSERT INTO a2a_workers (namespace, worker_id, lease_until, last_heartbeat, incarnation, host, pid, started_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (namespace, worker_id) DO UPDATE SET lease_until = excluded.lease_until,
       last_heartbeat = excluded.last_heartbeat, incarnation = excluded.incarnation, host = excluded.host,
       pid = excluded.pid, started_at = excluded.started_at`,
    ),
    queuedTurns: db.prepare<[string], QueueSlotRow>(
      `SELECT ${turnColumns} FROM a2a_turns WHERE namespace = ? ORDER BY position`,
    ),
    // subscribeAll's poll: tasks updated at or after a time.
    tasksUpdatedSince: db.prepare<[string, number], { task_id: string; version: number; updated_at: number }>(
      TASKS_UPDATED_SINCE_SQL,
    ),
    // position is AUTOINCREMENT: the next value of the one counter, never reused (see migration 2).
    insertTurn: db
      .prepare<[string, string, string, string, string, number], number>(
        `INSERT INTO a2a_turns (namespace, context_id, task_id, turn_id, worker_id, enqueued_at)
         VALUES (?, ?, ?, ?, ?, ?) RETURNING position`,
      )
      .pluck(),
    // The turn directly ahead of a position: nothing ahead means the turn may run.
    turnAhead: db.prepare<[string, string, number], QueueSlotRow>(
      `SELECT ${turnColumns} FROM a2a_turns WHERE namespace = ? AND context_id = ? AND position < ?
       ORDER BY position DESC LIMIT 1`,
    ),
    // Positions are never reused, so (context, position) is the slot; the turn id is a safeguard.
    deleteTurn: db.prepare<[string, string, number, string]>(
      'DELETE FROM a2a_turns WHERE namespace = ? AND context_id = ? AND position = ? AND turn_id = ?',
    ),
    // Position order is commit order across every context.
    workerTurns: db.prepare<[string, string], QueueSlotRow>(
      `SELECT ${turnColumns} FROM a2a_turns WHERE namespace = ? AND worker_id = ? ORDER BY position`,
    ),
    // \`IS NOT ?\` with NULL (no exception) matches every worker.
    expiredWorkers: db.prepare<[string, number, string | null], WorkerRow>(
      `SELECT worker_id, last_heartbeat FROM a2a_workers WHERE namespace = ? AND lease_until < ? AND worker_id IS NOT ?
       ORDER BY lease_until, worker_id`,
    ),
    // ---- Push notifications (see migration 4) ----
    savePushConfig: db.prepare<[PushSave], { created_at: number; updated_at: number }>(
      `INSERT INTO a2a_push_configs (namespace, task_id, config_id, config_json, protocol_version, created_at, updated_at)
       VALUES (@namespace, @taskId, @configId, @configJson, @protocolVersion, @now, @now)
       ON CONFLICT (namespace, task_id, config_id) DO UPDATE SET config_json = excluded.config_json,
       protocol_version = excluded.protocol_version, updated_at = excluded.updated_at
       RETURNING created_at, updated_at`,
    ),
    // A new or replaced config starts afresh: see savePushConfig in core's PushStore.
    resetPushDelivery: db.prepare<[PushKey]>(
      `INSERT INTO a2a_push_deliveries (namespace, task_id, config_id, cursor, attempts, failed)
       VALUES (@namespace, @taskId, @configId, 0, 0, 0)
       ON CONFLICT (namespace, task_id, config_id) DO UPDATE SET cursor = 0, attempts = 0, next_attempt_at = NULL,
       last_sent_at = NULL, failed = 0, last_error = NULL, last_status = NULL, claimed_by = NULL, claim_id = NULL,
       claim_until = NULL`,
    ),
    getPushConfig: db.prepare<[string, string, string], PushConfigRow>(
      `SELECT ${pushConfigColumns} FROM a2a_push_configs c WHERE namespace = ? AND task_id = ? AND config_id = ?`,
    ),
    // rowid: save order, kept by a replace (an UPSERT updates the row in place).
    listPushConfigs: db.prepare<[string, string], PushConfigRow>(
      `SELECT ${pushConfigColumns} FROM a2a_push_configs c WHERE namespace = ? AND task_id = ? ORDER BY created_at, rowid`,
    ),
    deletePushDelivery: db.prepare<[PushKey]>(
      'DELETE FROM a2a_push_deliveries WHERE namespace = @namespace AND task_id = @taskId AND config_id = @configId',
    ),
    deletePushConfig: db.prepare<[PushKey]>(
      'DELETE FROM a2a_push_configs WHERE namespace = @namespace AND task_id = @taskId AND config_id = @configId',
    ),
    // The rules of claimPushDeliveries (core's PushStore), over the pending index (the literal
    // `failed = 0` is what lets SQLite use that partial index; INDEXED BY makes sure it does) with
    // one task lookup by primary key per delivery. Soonest first: NULL (at once) sorts first.
    duePushDeliveries: db.prepare<[Omit<PushClaimArgs, 'workerId' | 'claimId' | 'claimUntil'>], PushKey>(
      `SELECT d.task_id AS taskId, d.config_id AS configId, d.namespace AS namespace
       FROM a2a_push_deliveries d INDEXED BY a2a_push_deliveries_pending
       JOIN a2a_tasks t ON t.namespace = d.namespace AND t.task_id = d.task_id
       WHERE d.namespace = @namespace AND d.failed = 0
         AND (d.claim_until IS NULL OR d.claim_until < @now)
         AND t.version > d.cursor
         AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= @now
              OR (d.attempts = 0 AND t.state IN (${SQL_STATE_LISTS.final})))
       ORDER BY d.next_attempt_at LIMIT @limit`,
    ),
    claimPushDelivery: db.prepare<[PushKey & Pick<PushClaimArgs, 'workerId' | 'claimId' | 'claimUntil'>]>(
      `UPDATE a2a_push_deliveries SET claimed_by = @workerId, claim_id = @claimId, claim_until = @claimUntil
       WHERE namespace = @namespace AND task_id = @taskId AND config_id = @configId`,
    ),
    pushDelivery: db.prepare<[PushKey], PushDeliveryRow>(
      `SELECT ${pushDeliveryColumns} FROM ${pushDeliveryJoin}
       WHERE c.namespace = @namespace AND c.task_id = @taskId AND c.config_id = @configId`,
    ),
    renewPushClaims: db.prepare<[number, string, string]>(
      'UPDATE a2a_push_deliveries SET claim_until = ? WHERE namespace = ? AND claimed_by = ?',
    ),
    // Every write of a claim holder names its claim: a claim taken over, released, or gone with a
    // replaced or deleted config matches no row, and nothing is written.
    completePushDelivery: db.prepare<
      [PushKey & { claimId: string; cursor: number; sentAt: number; next: number | null; status: number | null }]
    >(
      `UPDATE a2a_push_deliveries SET cursor = max(cursor, @cursor), attempts = 0, next_attempt_at = @next,
       last_sent_at = @sentAt, last_error = NULL, last_status = @status, claimed_by = NULL, claim_id = NULL,
       claim_until = NULL
       WHERE namespace = @namespace AND task_id = @taskId AND config_id = @configId AND claim_id = @claimId`,
    ),
    failPushAttempt: db.prepare<
      [PushKey & { claimId: string; next: number | null; error: string; status: number | null }]
    >(
      `UPDATE a2a_push_deliveries SET attempts = attempts + 1, next_attempt_at = @next, failed = (@next IS NULL),
       last_error = @error, last_status = @status, claimed_by = NULL, claim_id = NULL, claim_until = NULL
       WHERE namespace = @namespace AND task_id = @taskId AND config_id = @configId AND claim_id = @claimId`,
    ),
    releasePushClaim: db.prepare<[PushKey & { claimId: string }]>(
      `UPDATE a2a_push_deliveries SET claimed_by = NULL, claim_id = NULL, claim_until = NULL
       WHERE namespace = @namespace AND task_id = @taskId AND config_id = @configId AND claim_id = @claimId`,
    ),
    // LIMIT -1 means no limit; a NULL failed filter lists both.
    listPushDeliveries: db.prepare<[{ namespace: string; failed: number | null; limit: number }], PushDeliveryRow>(
      `SELECT ${pushDeliveryColumns} FROM ${pushDeliveryJoin}
       WHERE c.namespace = @namespace AND (@failed IS NULL OR d.failed = @failed)
       ORDER BY c.created_at, c.rowid LIMIT @limit`,
    ),
    listTaskPushDeliveries: db.prepare<
      [{ namespace: string; taskId: string; failed: number | null; limit: number }],
      PushDeliveryRow
    >(
      `SELECT ${pushDeliveryColumns} FROM ${pushDeliveryJoin}
       WHERE c.namespace = @namespace AND c.task_id = @taskId AND (@failed IS NULL OR d.failed = @failed)
       ORDER BY c.created_at, c.rowid LIMIT @limit`,
    ),
    // The owner is '' for the anonymous scope (see migration 5).
    indexMessage: db.prepare<[string, string, string, string, string, string]>(
      `INSERT INTO a2a_messages (namespace, owner, message_id, task_id, context_id, digest) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (namespace, owner, message_id) DO NOTHING`,
    ),
    findMessage: db.prepare<[string, string, string], MessageIndexRow>(
      'SELECT task_id, context_id, digest FROM a2a_messages WHERE namespace = ? AND owner = ? AND message_id = ?',
    ),
    purgeMessages: db.prepare<[{ namespace: string; cutoff: number }]>(
      `DELETE FROM a2a_messages WHERE namespace = @namespace AND task_id IN (
         SELECT task_id FROM a2a_tasks WHERE namespace = @namespace
         AND state IN (${SQL_STATE_LISTS.terminal}) AND updated_at < @cutoff)`,
    ),
    purgeEvents: db.prepare<[{ namespace: string; cutoff: number }]>(
      `DELETE FROM a2a_events WHERE namespace = @namespace AND task_id IN (
         SELECT task_id FROM a2a_tasks WHERE namespace = @namespace
         AND state IN (${SQL_STATE_LISTS.terminal}) AND updated_at < @cutoff)`,
    ),
    purgeTasks: db.prepare<[{ namespace: string; cutoff: number }]>(
      `DELETE FROM a2a_tasks WHERE namespace = @namespace
       AND state IN (${SQL_STATE_LISTS.terminal}) AND updated_at < @cutoff`,
    ),
    purgeContexts: db.prepare<[{ namespace: string; cutoff: number }]>(
      `DELETE FROM a2a_contexts WHERE namespace = @namespace AND updated_at < @cutoff
       AND NOT EXISTS (SELECT 1 FROM a2a_tasks t
                       WHERE t.namespace = a2a_contexts.namespace AND t.context_id = a2a_contexts.context_id)`,
    ),
  };

  const writeCommit = (args: CommitArgs): QueueSlot | undefined => {
    const { write, expectedVersion, eventJsons, messages, scope } = args;
    const head = statements.taskHead.get(write.namespace, write.taskId);
    const actual = head?.version;
    if ((actual ?? 0) !== expectedVersion) throw new VersionConflictError(write.taskId, expectedVersion, actual);
    // A repeat inside this commit meets its own row, inserted a moment before: also a duplicate.
    for (const { messageId, digest } of messages) {
      const inserted = statements.indexMessage.run(
        write.namespace,
        scope,
        messageId,
        write.taskId,
        write.contextId,
        digest,
      ).changes;
      if (inserted === 0) {
        const existing = statements.findMessage.get(write.namespace, scope, messageId);
        throw new DuplicateMessageError(
          messageId,
          existing && { taskId: existing.task_id, contextId: existing.context_id },
        );
      }
    }
    if (head === undefined) statements.insertTask.run(write);
    else if (head.state === write.state && head.status_ts === write.statusTs && head.context_id === write.contextId) {
      // A streamed chunk's commit changes no status: SQLite rewrites the entries of every index
      // that has a column the UPDATE sets, changed or not, so setting state, status_ts and
      // context_id again cost five index rewrites per chunk (their pages in the WAL) where only
      // a2a_tasks_by_state's updated_at changes (issue 30).
      statements.updateTaskBody.run(write);
    } else statements.updateTask.run(write);
    eventJsons.forEach((eventJson, index) => {
      statements.insertEvent.run({
        namespace: write.namespace,
        taskId: write.taskId,
        seq: expectedVersion + index + 1,
        eventJson,
        now: write.now,
      });
    });
    if (args.finishTurn !== undefined) {
      const { contextId, position, messageId } = args.finishTurn;
      statements.deleteTurn.run(write.namespace, contextId, position, messageId);
    }
    if (args.enqueueTurn === undefined) return undefined;
    const { messageId, workerId } = args.enqueueTurn;
    const { namespace, contextId, taskId, now } = write;
    const position = statements.insertTurn.get(namespace, contextId, taskId, messageId, workerId, now) as number;
    return { contextId, position, taskId, messageId, workerId };
  };
  const commit = db.transaction(writeCommit);

  const commitBatch = batchTransaction(db, writeCommit);

  const enqueue = db.transaction(({ namespace, request, now }: EnqueueArgs): QueueSlot => {
    const { contextId, taskId, messageId, workerId } = request;
    const position = statements.insertTurn.get(namespace, contextId, taskId, messageId, workerId, now) as number;
    return { contextId, position, taskId, messageId, workerId };
  });

  const claimExpired = db.transaction(
    (namespace: string, now: number, exceptWorkerId: string | null): ExpiredWorker[] =>
      statements.expiredWorkers.all(namespace, now, exceptWorkerId).map((worker) => {
        statements.removeWorker.run(namespace, worker.worker_id);
        return {
          workerId: worker.worker_id,
          lastHeartbeat: worker.last_heartbeat,
          turns: statements.workerTurns.all(namespace, worker.worker_id).map(fromRow.queueSlot),
        };
      }),
  );

  const joinWorker = db.transaction(
    ({ namespace, workerId, leaseUntil, description, now }: JoinArgs): ExpiredWorker | undefined => {
      const previous = statements.worker.get(namespace, workerId);
      const { incarnation, host, pid, startedAt } = description;
      statements.joinWorker.run(namespace, workerId, leaseUntil, now, incarnation, host, pid, startedAt);
      if (previous !== undefined && previous.incarnation === incarnation) return undefined;
      // Without a row (a reaper claimed it), turns of this id are still a previous start's: a new
      // incarnation owns none yet.
      const turns = statements.workerTurns.all(namespace, workerId).map(fromRow.queueSlot);
      if (previous === undefined && turns.length === 0) return undefined;
      return { workerId, lastHeartbeat: Number(previous?.last_heartbeat ?? 0), turns };
    },
  );

  // One read transaction, so the workers and their turns are seen at one point in time.
  const listWorkers = db.transaction((namespace: string): WorkerRecord[] => {
    const turns = new Map<string, QueueSlot[]>();
    for (const row of statements.queuedTurns.all(namespace)) {
      const list = turns.get(row.worker_id);
      if (list === undefined) turns.set(row.worker_id, [fromRow.queueSlot(row)]);
      else list.push(fromRow.queueSlot(row));
    }
    const workers = statements.workers.all(namespace).map((row) => fromRow.worker(row, turns.get(row.worker_id) ?? []));
    // Turns whose worker has no lease row any more (claimed, its reaping failed) are listed under
    // that id with no lease, so operators can still see and release them.
    const leased = new Set(workers.map((worker) => worker.workerId));
    for (const [workerId, list] of turns) {
      if (!leased.has(workerId)) {
        workers.push({ workerId, leaseUntil: 0, lastHeartbeat: 0, description: null, turns: list });
      }
    }
    return workers.sort((a, b) => (a.workerId < b.workerId ? -1 : a.workerId > b.workerId ? 1 : 0));
  });

  const purge = db.transaction((namespace: string, cutoff: number): PurgeResult => {
    statements.purgeMessages.run({ namespace, cutoff });
    // Push configs and deliveries: the trigger of migration 4 deletes them with each task.
    statements.purgeEvents.run({ namespace, cutoff });
    const tasks = statements.purgeTasks.run({ namespace, cutoff }).changes;
    const contexts = statements.purgeContexts.run({ namespace, cutoff }).changes;
    return { tasks, contexts };
  });

  // The task check and the write under one write lock: a config never outlives its task, whose
  // purge deletes its configs in its own transaction.
  const savePush = db.transaction((args: PushSave): { created_at: number; updated_at: number } => {
    if (statements.taskVersion.get(args.namespace, args.taskId) === undefined) throw taskNotFound(args.taskId);
    const saved = statements.savePushConfig.get(args) as { created_at: number; updated_at: number };
    statements.resetPushDelivery.run({ namespace: args.namespace, taskId: args.taskId, configId: args.configId });
    return saved;
  });

  const deletePush = db.transaction((key: PushKey): boolean => {
    statements.deletePushDelivery.run(key);
    return statements.deletePushConfig.run(key).changes > 0;
  });

  // Read and write under the write lock (BEGIN IMMEDIATE): a claimant in another process waits,
  // then finds the claims taken.
  const claimPush = db.transaction((args: PushClaimArgs): PushDelivery[] => {
    const { namespace, now, limit, workerId, claimId, claimUntil } = args;
    return statements.duePushDeliveries.all({ namespace, now, limit }).map((key) => {
      statements.claimPushDelivery.run({ ...key, workerId, claimId, claimUntil });
      return fromRow.pushDelivery(statements.pushDelivery.get(key) as PushDeliveryRow);
    });
  });

  return {
    ...statements,
    commit,
    commitBatch,
    enqueue,
    claimExpired,
    joinWorker,
    listWorkers,
    purge,
    savePush,
    deletePush,
    claimPush,
    listTasks: listStatements(db, columns),
  };
}
