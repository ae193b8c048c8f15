/**
 * Every statement the Postgres store runs, as SQL text built once per schema. Values are always
 * `$n` parameters; the schema goes through {@link escapeIdentifier}.
 */

import { createHash } from 'node:crypto';
import { LIST_FILTER, perListShape, SQL_STATE_LISTS, type TaskListConditions, taskListWhere } from '@fastify-a2a/core';
import { escapeIdentifier } from './sql.js';

const statementNames = new Map<string, string>();

/** A stable name per statement text: the same text gets the same prepared statement on a connection. */
export function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `a2a_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    statementNames.set(text, name);
  }
  return name;
}

/** Which commit statement: creating or updating the task, and whether it enqueues or finishes a turn. */
export interface CommitShape {
  create: boolean;
  enqueue: boolean;
  finish: boolean;
  /** The commit indexes user message ids (most commits, an agent's updates, index none). */
  index: boolean;
}

/**
 * The commit statements, one per {@link CommitShape}, each one statement = one implicit
 * transaction and one round trip: write the snapshot only at the expected version; only if it was
 * written, append the events, index the user message ids, and enqueue or remove a turn. Zero rows
 * back means a version conflict; a unique violation on messages means a duplicate message id (the
 * whole statement, task and events included, is then rolled back). The NOTIFY is not part of it:
 * see `notify` in {@link statements}.
 *
 * $1 namespace, $2 task id, $3 context id, $4 state, $5 new version, $6 task, $7 now,
 * $8 expected version, $9 events (one JSON array: see `commit` in store.ts), $10 message ids (text[]), $11 status timestamp (what
 * listTasks sorts by), $12 the commit's owner (NULL for none: the task's owner when it creates
 * the task, and the scope of the message ids, '' for none), $13 the messages' digests (text[],
 * one per id), $14 the commit's trace context (NULL for none); then, when enqueueing, the turn id, the worker id and the context's lock key; then,
 * when finishing, the slot's position and turn id.
 */
export function commitStatements(s: string): (shape: CommitShape) => string {
  const build = ({ create, enqueue, finish, index }: CommitShape): string => {
    let next = 15;
    // The owner is written by the creating commit only: an update never touches the column.
    const written = create
      ? `INSERT INTO ${s}.tasks (namespace, task_id, context_id, owner, state, status_ts, version, task, created_at, updated_at, trace_context)
         VALUES ($1, $2, $3, $12::text, $4, $11, $5, $6::json, $7, $7, $14::text)
         ON CONFLICT DO NOTHING
         RETURNING 1`
      : `UPDATE ${s}.tasks SET context_id = $3, state = $4, status_ts = $11, version = $5, task = $6::json,
         updated_at = $7, trace_context = $14::text
         WHERE namespace = $1 AND task_id = $2 AND version = $8
         RETURNING 1`;
    const ctes = [
      `written AS (${written})`,
      `events AS (
        INSERT INTO ${s}.events (namespace, task_id, seq, event, created_at)
        SELECT $1::text, $2::text, ($8::integer + e.ord)::integer, e.event, $7::bigint
        FROM written, json_array_elements($9::json) WITH ORDINALITY AS e(event, ord))`,
    ];
    // Left out when there is nothing to index: an INSERT opens its table and indexes on every
    // execution, rows or not (part of the database's cost per streamed chunk, issue 30). $10, $12 and
    // $13 are then unused, but still typed, so that every shape takes the same parameters.
    ctes.push(
      index
        ? `indexed AS (
        INSERT INTO ${s}.messages (namespace, owner, message_id, task_id, context_id, digest)
        SELECT $1::text, coalesce($12::text, ''), m.id, $2::text, $3::text, m.digest
        FROM written, unnest($10::text[], $13::text[]) AS m(id, digest))`
        : `unindexed AS (SELECT $10::text[], $12::text, $13::text[])`,
    );
    let result = 'NULL::bigint';
    if (enqueue) {
      const [messageId, workerId, lockKey] = [next++, next++, next++];
      // As in the standalone `enqueue`: the position is drawn once the context's advisory lock is
      // ours (held until commit), so positions follow commit order.
      ctes.push(
        `locked AS (SELECT pg_advisory_xact_lock($${lockKey}::bigint) FROM written)`,
        `enqueued AS (
          INSERT INTO ${s}.turns (namespace, context_id, task_id, turn_id, worker_id, enqueued_at)
          SELECT $1::text, $3::text, $2::text, $${messageId}::text, $${workerId}::text, $7::bigint FROM locked
          RETURNING position)`,
      );
      result = '(SELECT position FROM enqueued)';
    }
    if (finish) {
      const [position, messageId] = [next++, next++];
      ctes.push(
        `finished AS (
          DELETE FROM ${s}.turns
          WHERE namespace = $1 AND context_id = $3 AND position = $${position}::bigint AND task_id = $2
            AND turn_id = $${messageId}::text AND EXISTS (SELECT 1 FROM written))`,
      );
    }
    return `WITH ${ctes.join(',\n')}\nSELECT ${result} AS position FROM written`;
  };
  // All sixteen built once, indexed by the shape's bits: no key to build on each commit.
  const texts = Array.from({ length: 16 }, (_, bits) =>
    build({
      create: (bits & 1) !== 0,
      enqueue: (bits & 2) !== 0,
      finish: (bits & 4) !== 0,
      index: (bits & 8) !== 0,
    }),
  );
  return ({ create, enqueue, finish, index }) =>
    texts[(create ? 1 : 0) | (enqueue ? 2 : 0) | (finish ? 4 : 0) | (index ? 8 : 0)] as string;
}

/**
 * The {@link PLAIN_UPDATE} commits of one group-commit batch (an agent's updates to tasks already
 * written: no creation, no message ids, no turn enqueued or finished), as one statement: each
 * task's snapshot written only at its expected version, and only then its events appended, as
 * the per-commit statement does, for all of them at once. One statement's executor start, one
 * index lookup per task and one INSERT for every event of the batch instead of one each: most of
 * the database's cost per streamed chunk (issue 30, bench/TOKENS.md). Rows back: the task ids
 * written; a commit whose task is missing from them conflicts. Each task appears at most once
 * (a statement cannot see its own writes), so only the first commit of a task in a batch goes here.
 *
 * $1 namespace; $2 the commits, one JSON array of objects (see `plainUpdateValues` in
 * group-commit.ts): one parameter rather than an array per column, because pg writes a JS array
 * as an array literal, escaping every quote of every task and event on the way (the
 * largest single cost of a batch in the worker's profile). $3 their snapshots, one JSON array in
 * the same order, zipped with the commits by position (`ROWS FROM`): inside $2 each snapshot,
 * the largest part of a commit, would be parsed twice, once with the recordset and again as the
 * `json` value stored; from an array of its own, each element is parsed once and stored as it is.
 */
function plainUpdatesStatement(s: string): string {
  return `
    WITH input AS (
      SELECT * FROM ROWS FROM (
        json_to_recordset($2::json)
          AS (task_id text, context_id text, state text, version integer, expected integer,
              status_ts bigint, now bigint, events json, trace_context text),
        json_array_elements($3::json)
      ) AS i(task_id, context_id, state, version, expected, status_ts, now, events, trace_context, task)
    ),
    written AS (
      UPDATE ${s}.tasks t SET context_id = i.context_id, state = i.state, status_ts = i.status_ts,
        version = i.version, task = i.task, updated_at = i.now, trace_context = i.trace_context
      FROM input i
      WHERE t.namespace = $1 AND t.task_id = i.task_id AND t.version = i.expected
      RETURNING t.task_id, i.expected, i.events, i.now
    ),
    events AS (
      INSERT INTO ${s}.events (namespace, task_id, seq, event, created_at)
      SELECT $1::text, w.task_id, (w.expected + e.ord)::integer, e.event, w.now
      FROM written w, json_array_elements(w.events) WITH ORDINALITY AS e(event, ord)
    )
    SELECT task_id FROM written`;
}

/**
 * The listTasks statements, one per combination of filters, each one round trip: the page and its
 * total from one snapshot. The page is one range of one of the (namespace[, context_id | state |
 * owner], status_ts DESC, task_id "C" DESC) indexes, the cursor a row comparison the index evaluates;
 * the outer ORDER BY only restores the order of at most limit + 1 rows the join may shuffle. The
 * total is a count over the same filters (an index-only scan once the table is vacuumed).
 * $1 namespace, $2 limit (+ 1, to learn whether more follow), then the filters in the order below.
 */
function listStatements(s: string): (shape: number) => string {
  const build = (shape: number): string => {
    let next = 3;
    const conditions: TaskListConditions = {
      // The expression of the owner index (migration 5): the store passes '' for "no owner".
      owner: shape & LIST_FILTER.byOwner ? `coalesce(owner, '') = $${next++}` : '',
      context: shape & LIST_FILTER.byContext ? `context_id = $${next++}` : '',
      state: shape & LIST_FILTER.byState ? `state = $${next++}` : '',
      since: shape & LIST_FILTER.since ? `status_ts >= $${next++}::bigint` : '',
      after: '',
    };
    const matching = taskListWhere(shape & ~LIST_FILTER.after, 'namespace = $1', conditions);
    const after =
      shape & LIST_FILTER.after ? ` AND (status_ts, task_id COLLATE "C") < ($${next++}::bigint, $${next++}::text)` : '';
    return `
      WITH page AS (
        SELECT task::text AS task, version, created_at, updated_at, owner, trace_context, status_ts, task_id
        FROM ${s}.tasks WHERE ${matching}${after}
        ORDER BY status_ts DESC, task_id COLLATE "C" DESC LIMIT $2
      ),
      matching AS (SELECT count(*)::int AS total FROM ${s}.tasks WHERE ${matching})
      SELECT matching.total, page.* FROM matching LEFT JOIN page ON true
      ORDER BY page.status_ts DESC, page.task_id COLLATE "C" DESC`;
  };
  const texts = perListShape((shape) => build(shape));
  return (shape) => texts[shape] as string;
}

/**
 * Builds every statement's text once, for one schema. The store sends each as a named prepared
 * statement (see {@link statementName}), or as a plain one with `preparedStatements: false`.
 */
export function statements(schema: string) {
  const s = escapeIdentifier(schema);
  const taskColumns = 'task::text AS task, version, created_at, updated_at, owner, trace_context';
  const turnColumns = 'context_id, position, task_id, turn_id, worker_id';
  const pushConfigColumns =
    'c.task_id, c.config_id, c.config::text AS config, c.protocol_version, c.created_at, c.updated_at';
  const pushStateColumns = (d: string) =>
    `${d}.cursor, ${d}.attempts, ${d}.next_attempt_at, ${d}.last_sent_at, ${d}.failed, ${d}.last_error,
     ${d}.last_status, ${d}.claimed_by, ${d}.claim_id, ${d}.claim_until`;
  const pushDeliveryJoin = `FROM ${s}.push_configs c
    JOIN ${s}.push_deliveries d ON d.namespace = c.namespace AND d.task_id = c.task_id AND d.config_id = c.config_id
    JOIN ${s}.tasks t ON t.namespace = c.namespace AND t.task_id = c.task_id`;
  return {
    commit: commitStatements(s),
    plainUpdates: plainUpdatesStatement(s),
    list: listStatements(s),
    version: `SELECT version FROM ${s}.tasks WHERE namespace = $1 AND task_id = $2`,
    // The planner's row estimate for the tasks table: negative until it was first analysed.
    tasksRowEstimate: `
      SELECT c.reltuples::float8 AS reltuples FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = 'tasks'`,
    analyzeTasks: `ANALYZE ${s}.tasks`,
    getTask: `SELECT ${taskColumns} FROM ${s}.tasks WHERE namespace = $1 AND task_id = $2`,
    readEvents: `
      SELECT seq, event::text AS event, created_at FROM ${s}.events
      WHERE namespace = $1 AND task_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
    byContext: `
      SELECT ${taskColumns} FROM ${s}.tasks
      WHERE namespace = $1 AND context_id = $2 ORDER BY created_at, row_id LIMIT $3`,
    // Through tasks_by_state_status_ts, the index ListTasks filters by state with.
    interrupted: `
      SELECT ${taskColumns} FROM ${s}.tasks
      WHERE namespace = $1 AND state IN (${SQL_STATE_LISTS.interrupted}) AND status_ts < $2 AND status_ts > $3
      ORDER BY status_ts, task_id COLLATE "C" LIMIT $4`,
    // The state list matches the partial index `tasks_active` (see migrations.ts).
    active: `
      SELECT ${taskColumns} FROM ${s}.tasks
      WHERE namespace = $1 AND state IN (${SQL_STATE_LISTS.active}) ORDER BY created_at, row_id`,
    versions: `SELECT task_id, version FROM ${s}.tasks WHERE namespace = $1 AND task_id = ANY($2::text[])`,
    getContext: `SELECT state::text AS state, updated_at FROM ${s}.contexts WHERE namespace = $1 AND context_id = $2`,
    setContext: `
      INSERT INTO ${s}.contexts (namespace, context_id, state, updated_at) VALUES ($1, $2, $3::json, $4)
      ON CONFLICT (namespace, context_id) DO UPDATE SET state = EXCLUDED.state, updated_at = EXCLUDED.updated_at`,
    // `terminal_at` is set exactly for terminal tasks (migration 8), read through its partial index.
    // Push configs and push deliveries go with their task (ON DELETE CASCADE); its events (no
    // foreign key since migration 9) and the message ids indexed for it go in the same statement.
    purgeTasks: `
      WITH purged AS (
        DELETE FROM ${s}.tasks
        WHERE namespace = $1 AND terminal_at < $2
        RETURNING task_id
      ),
      unlogged AS (
        DELETE FROM ${s}.events WHERE namespace = $1 AND task_id IN (SELECT task_id FROM purged)
      ),
      unindexed AS (
        DELETE FROM ${s}.messages WHERE namespace = $1 AND task_id IN (SELECT task_id FROM purged)
      )
      SELECT count(*)::int AS tasks FROM purged`,
    // A separate statement, run after purgeTasks: inside one statement it would still see the tasks
    // just deleted.
    purgeContexts: `
      DELETE FROM ${s}.contexts c WHERE c.namespace = $1 AND c.updated_at < $2
      AND NOT EXISTS (SELECT 1 FROM ${s}.tasks t WHERE t.namespace = $1 AND t.context_id = c.context_id)`,
    // ---- Push notifications (see migration 4) ----
    // The config and a fresh delivery row in one statement, only if the task exists. The foreign
    // key to tasks is what makes it safe against a concurrent purge: its check (at the end of the
    // statement) locks the task row, waits for a purge deleting it, and fails with 23503 if it did;
    // a purge that comes after deletes the config by cascade. $1 namespace, $2 task id, $3 config
    // id, $4 config, $5 protocol version, $6 now.
    savePushConfig: `
      WITH saved AS (
        INSERT INTO ${s}.push_configs (namespace, task_id, config_id, config, protocol_version, created_at, updated_at)
        SELECT $1, $2, $3, $4::json, $5, $6, $6
        WHERE EXISTS (SELECT 1 FROM ${s}.tasks WHERE namespace = $1 AND task_id = $2)
        ON CONFLICT (namespace, task_id, config_id) DO UPDATE SET config = EXCLUDED.config,
          protocol_version = EXCLUDED.protocol_version, updated_at = EXCLUDED.updated_at
        RETURNING created_at, updated_at
      ),
      reset AS (
        INSERT INTO ${s}.push_deliveries (namespace, task_id, config_id, cursor, attempts, failed)
        SELECT $1, $2, $3, 0, 0, false FROM saved
        ON CONFLICT (namespace, task_id, config_id) DO UPDATE SET cursor = 0, attempts = 0, next_attempt_at = NULL,
          last_sent_at = NULL, failed = false, last_error = NULL, last_status = NULL, claimed_by = NULL,
          claim_id = NULL, claim_until = NULL
      )
      SELECT created_at, updated_at FROM saved`,
    getPushConfig: `
      SELECT ${pushConfigColumns} FROM ${s}.push_configs c WHERE namespace = $1 AND task_id = $2 AND config_id = $3`,
    // row_id: save order, kept by a replace (an upsert updates the row).
    listPushConfigs: `
      SELECT ${pushConfigColumns} FROM ${s}.push_configs c WHERE namespace = $1 AND task_id = $2
      ORDER BY created_at, row_id`,
    // The delivery row goes by cascade.
    deletePushConfig: `DELETE FROM ${s}.push_configs WHERE namespace = $1 AND task_id = $2 AND config_id = $3`,
    // The rules of claimPushDeliveries (core's PushStore) in one statement. FOR UPDATE SKIP LOCKED:
    // a row another claimant has locked is skipped; one it claimed and committed meanwhile is
    // re-checked against the new row version (claim_until is then in the future) and left out. So
    // of concurrent claimants exactly one gets each delivery, and none waits for another.
    // $1 namespace, $2 now, $3 limit, $4 worker id, $5 claim id, $6 claim until.
    claimPushDeliveries: `
      WITH due AS (
        SELECT d.namespace, d.task_id, d.config_id, t.version
        FROM ${s}.push_deliveries d
        JOIN ${s}.tasks t ON t.namespace = d.namespace AND t.task_id = d.task_id
        WHERE d.namespace = $1 AND NOT d.failed
          AND (d.claim_until IS NULL OR d.claim_until < $2)
          AND t.version > d.cursor
          AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= $2
               OR (d.attempts = 0 AND t.state IN (${SQL_STATE_LISTS.final})))
        ORDER BY d.next_attempt_at NULLS FIRST
        LIMIT $3
        FOR UPDATE OF d SKIP LOCKED
      ),
      claimed AS (
        UPDATE ${s}.push_deliveries d SET claimed_by = $4, claim_id = $5, claim_until = $6
        FROM due
        WHERE d.namespace = due.namespace AND d.task_id = due.task_id AND d.config_id = due.config_id
        RETURNING d.*, due.version AS task_version
      )
      SELECT ${pushConfigColumns}, ${pushStateColumns('d')}, d.task_version
      FROM claimed d
      JOIN ${s}.push_configs c ON c.namespace = d.namespace AND c.task_id = d.task_id AND c.config_id = d.config_id`,
    renewPushClaims: `UPDATE ${s}.push_deliveries SET claim_until = $3 WHERE namespace = $1 AND claimed_by = $2`,
    // Every write of a claim holder names its claim: a claim taken over, released, or gone with a
    // replaced or deleted config matches no row, and nothing is written. $4 claim id.
    completePushDelivery: `
      UPDATE ${s}.push_deliveries SET cursor = GREATEST(cursor, $5::integer), attempts = 0, next_attempt_at = $6,
        last_sent_at = $7, last_error = NULL, last_status = $8, claimed_by = NULL, claim_id = NULL, claim_until = NULL
      WHERE namespace = $1 AND task_id = $2 AND config_id = $3 AND claim_id = $4`,
    failPushAttempt: `
      UPDATE ${s}.push_deliveries SET attempts = attempts + 1, next_attempt_at = $5::bigint,
        failed = ($5::bigint IS NULL), last_error = $6, last_status = $7, claimed_by = NULL, claim_id = NULL,
        claim_until = NULL
      WHERE namespace = $1 AND task_id = $2 AND config_id = $3 AND claim_id = $4`,
    releasePushClaim: `
      UPDATE ${s}.push_deliveries SET claimed_by = NULL, claim_id = NULL, claim_until = NULL
      WHERE namespace = $1 AND task_id = $2 AND config_id = $3 AND claim_id = $4`,
    // $2 failed filter (NULL: both), $3 limit (NULL: all); the second one for one task ($4).
    listPushDeliveries: `
      SELECT ${pushConfigColumns}, ${pushStateColumns('d')}, t.version AS task_version ${pushDeliveryJoin}
      WHERE c.namespace = $1 AND ($2::boolean IS NULL OR d.failed = $2)
      ORDER BY c.created_at, c.row_id LIMIT $3`,
    listTaskPushDeliveries: `
      SELECT ${pushConfigColumns}, ${pushStateColumns('d')}, t.version AS task_version ${pushDeliveryJoin}
      WHERE c.namespace = $1 AND c.task_id = $4 AND ($2::boolean IS NULL OR d.failed = $2)
      ORDER BY c.created_at, c.row_id LIMIT $3`,
    // $1 namespace, $2 owner scope ('' for none), $3 message ids: which of them are indexed there
    // (after a duplicate).
    findMessages: `
      SELECT message_id, task_id, context_id FROM ${s}.messages
      WHERE namespace = $1 AND owner = $2 AND message_id = ANY($3::text[])`,
    findMessage: `
      SELECT task_id, context_id, digest FROM ${s}.messages WHERE namespace = $1 AND owner = $2 AND message_id = $3`,
    heartbeat: `
      INSERT INTO ${s}.workers (namespace, worker_id, lease_until, last_heartbeat) VALUES ($1, $2, $3, $4)
      ON CONFLICT (namespace, worker_id)
      DO UPDATE SET lease_until = EXCLUDED.lease_until, last_heartbeat = EXCLUDED.last_heartbeat`,
    removeWorker: `DELETE FROM ${s}.workers WHERE namespace = $1 AND worker_id = $2`,
    // joinWorker in one statement: "previous" reads the row as it was before the upsert
    // (every part of a statement sees the same snapshot), so a predecessor is returned exactly by
    // the start that replaced it. Its turns: all of the worker id's (the new start has none yet),
    // also when the row is gone (a reaper claimed it): then there is a predecessor only if it left turns.
    // $1 namespace, $2 worker id, $3 lease until, $4 now, $5 incarnation, $6 host, $7 pid, $8 started.
    joinWorker: `
      WITH previous AS (
        SELECT last_heartbeat, incarnation FROM ${s}.workers WHERE namespace = $1 AND worker_id = $2
      ), upsert AS (
        INSERT INTO ${s}.workers (namespace, worker_id, lease_until, last_heartbeat, incarnation, host, pid, started_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
        ON CONFLICT (namespace, worker_id) DO UPDATE SET lease_until = EXCLUDED.lease_until,
          last_heartbeat = EXCLUDED.last_heartbeat, incarnation = EXCLUDED.incarnation, host = EXCLUDED.host,
          pid = EXCLUDED.pid, started_at = EXCLUDED.started_at
        RETURNING 1
      )
      SELECT p.last_heartbeat, t.context_id, t.position, t.task_id, t.turn_id, t.worker_id
      FROM (SELECT 1) one LEFT JOIN previous p ON true
        LEFT JOIN ${s}.turns t ON t.namespace = $1 AND t.worker_id = $2
      WHERE p.incarnation IS DISTINCT FROM $5 AND (SELECT count(*) FROM upsert) = 1
        AND (p.last_heartbeat IS NOT NULL OR t.context_id IS NOT NULL)
      ORDER BY t.position`,
    // listWorkers: every lease with its turns, one row per turn (or one with null turn columns),
    // and, with no lease (0, no description), each worker id owning turns but no row any more (a
    // reaper claimed it and failed to reap them): operators must still see and release them.
    listWorkers: `
      SELECT w.worker_id, w.lease_until, w.last_heartbeat, w.incarnation, w.host, w.pid, w.started_at,
        t.context_id, t.position, t.task_id, t.turn_id
      FROM (
        SELECT worker_id, lease_until, last_heartbeat, incarnation, host, pid, started_at
        FROM ${s}.workers WHERE namespace = $1
        UNION ALL
        SELECT DISTINCT o.worker_id, 0::bigint, 0::bigint, NULL::text, NULL::text, NULL::integer, NULL::bigint
        FROM ${s}.turns o
        WHERE o.namespace = $1
          AND NOT EXISTS (SELECT 1 FROM ${s}.workers x WHERE x.namespace = $1 AND x.worker_id = o.worker_id)
      ) w LEFT JOIN ${s}.turns t ON t.namespace = $1 AND t.worker_id = w.worker_id
      ORDER BY w.worker_id COLLATE "C", t.position`,
    // enqueueTurn in one statement. The position is the identity's nextval, computed for the row
    // the CTE produces, so after the context's advisory lock is ours; the lock is held until
    // commit. Two enqueues on one context therefore draw their positions in commit order: the
    // later one draws only once the earlier one has committed (a bare sequence would let a turn
    // that commits later hold a smaller position, and be found ready while an earlier-numbered one
    // had not committed yet). The CTE runs exactly once: it calls a volatile function, so it is
    // never inlined. $1 namespace, $2 context id, $3 task id, $4 turn id, $5 worker id, $6 now,
    // $7 lock key.
    enqueue: `
      WITH locked AS (SELECT pg_advisory_xact_lock($7::bigint))
      INSERT INTO ${s}.turns (namespace, context_id, task_id, turn_id, worker_id, enqueued_at)
      SELECT $1, $2, $3, $4, $5, $6 FROM locked
      RETURNING position`,
    // The slot directly ahead of position $3; none means the slot is the head (or gone).
    ahead: `
      SELECT ${turnColumns} FROM ${s}.turns
      WHERE namespace = $1 AND context_id = $2 AND position < $3 ORDER BY position DESC LIMIT 1`,
    // Positions are never reused, so (context, position) names one turn; task and turn ids are
    // matched too, so that a forged or corrupted slot cannot remove another turn. $6 channel,
    // $7 payload.
    finishTurn: `
      WITH finished AS (
        DELETE FROM ${s}.turns
        WHERE namespace = $1 AND context_id = $2 AND position = $3 AND task_id = $4 AND turn_id = $5
        RETURNING 1
      )
      SELECT pg_notify($6, $7) FROM finished
      -- Only when a turn waits behind this one: a transaction that ran NOTIFY takes a
      -- server-wide lock at commit, so notifying on every finish would serialise all workers.
      WHERE EXISTS (SELECT 1 FROM ${s}.turns WHERE namespace = $1 AND context_id = $2 AND position > $3)`,
    workerTurns: `SELECT ${turnColumns} FROM ${s}.turns WHERE namespace = $1 AND worker_id = $2 ORDER BY position`,
    // $1 channel, $2 payloads (a JSON array of strings: pg would write a text[] parameter as an
    // array literal, escaping every quote of the events payloads in JavaScript). In the array's
    // order, which is the order listeners hear them in. Nothing here needs to survive a crash, so
    // the commit does not wait for its WAL flush, and releases the notification lock at once.
    notify: `
      WITH fast AS (SELECT set_config('synchronous_commit', 'off', true))
      SELECT pg_notify($1, p) FROM fast, json_array_elements_text($2::json) AS p`,
    // A listening store's presence (see `presenceIntervalMs`): $1 channel, $2 its presence payload;
    // and how many workers of $3 hold a lease at $4 (epoch ms), to hear of those of earlier releases.
    announce: `
      WITH fast AS (SELECT set_config('synchronous_commit', 'off', true)),
      said AS (SELECT pg_notify($1, $2) FROM fast)
      SELECT (SELECT count(*) FROM said)::int AS said,
        (SELECT count(*) FROM ${s}.workers WHERE namespace = $3 AND lease_until > $4)::int AS workers`,
    // One statement: the DELETE locks each expired row, so a concurrent claimer waits, then finds
    // the row gone (or renewed by a heartbeat meanwhile: the lease is checked again) and skips it.
    // Each dead worker goes to exactly one claimer, with its turns. $2 now, $3 except (or null).
    claimExpired: `
      WITH claimed AS (
        DELETE FROM ${s}.workers
        WHERE namespace = $1 AND lease_until < $2 AND worker_id IS DISTINCT FROM $3::text
        RETURNING worker_id, last_heartbeat
      )
      SELECT c.worker_id, c.last_heartbeat, t.context_id, t.position, t.task_id, t.turn_id
      FROM claimed c LEFT JOIN ${s}.turns t ON t.namespace = $1 AND t.worker_id = c.worker_id
      ORDER BY c.last_heartbeat, c.worker_id, t.position`,
  };
}
