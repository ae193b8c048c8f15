/**
 * Postgres specifics of task ownership: migration 5 on a schema the previous release wrote (tasks
 * without owners, message ids indexed before scopes existed), workers of that release committing
 * during and after the step, the DBA script, and the query plans of owner-filtered listings at a
 * realistic size. What ownership means is checked by the conformance suite.
 */

import { DuplicateMessageError, type Message, type Task } from '@fastify-a2a/core';
import { createTask, indexEntry, taskFixture, userMessage } from '@fastify-a2a/core/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { migrate, migrationSql, migrations, PostgresStore } from '../src/index.js';

const db = withPostgres('pgstore_owner');
const pool = new pg.Pool({ connectionString: db.url, max: 4 });
const stores: PostgresStore[] = [];
afterAll(async () => {
  for (const store of stores) await store.close();
  await pool.end();
});

async function openStore(schema: string, namespace?: string): Promise<PostgresStore> {
  const store = new PostgresStore({ pool, schema, listen: false, migrate: false, ...(namespace ? { namespace } : {}) });
  stores.push(store);
  await store.open();
  return store;
}

/** A schema as release 4 left it: migrations 1 to 4 applied and recorded. */
async function schemaAtVersion4(): Promise<string> {
  const schema = db.newSchema('pgstore_v4');
  const s = pg.escapeIdentifier(schema);
  await db.query(`CREATE SCHEMA ${s}`);
  await db.query(
    `CREATE TABLE ${s}.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  for (const step of migrations.filter((m) => m.version <= 4)) {
    await db.query(step.sql(s));
    await db.query(`INSERT INTO ${s}.migrations (version, name) VALUES ($1, $2)`, [step.version, step.name]);
  }
  return schema;
}

/**
 * Creates `task` the way release 4's commit statement did: the task row (no owner), its first
 * event and its first user message id in the index (no owner, no digest), in one statement.
 * Rejects with the unique violation on `messages` for an id already indexed.
 */
async function commitAsVersion4(client: Pick<pg.Pool, 'query'>, schema: string, task: Task): Promise<void> {
  const s = pg.escapeIdentifier(schema);
  const first = task.history?.[0];
  await client.query(
    `WITH written AS (
       INSERT INTO ${s}.tasks (namespace, task_id, context_id, state, status_ts, version, task, created_at, updated_at)
       VALUES ('default', $1, $2, $3, $4, 1, $5::json, 1, 1) RETURNING 1),
     events AS (
       INSERT INTO ${s}.events (namespace, task_id, seq, event, created_at)
       SELECT 'default', $1, 1, $5::json, 1 FROM written),
     indexed AS (
       INSERT INTO ${s}.messages (namespace, message_id, task_id, context_id)
       SELECT 'default', m.id, $1, $2 FROM written, unnest($6::text[]) AS m(id))
     SELECT 1 FROM written`,
    [
      task.id,
      task.contextId,
      task.status.state,
      Date.parse(task.status.timestamp ?? ''),
      JSON.stringify(task),
      first?.role === 'user' ? [first.messageId] : [],
    ],
  );
}

const started = (id: string, messageId: string, state: Task['status']['state'] = 'working') =>
  taskFixture({ id, contextId: `ctx-${id}`, state, history: [userMessage(id, { messageId })] });

const listed = async (store: PostgresStore, owner: string | null) =>
  (await store.listTasks({ limit: 20, owner })).records.map((r) => r.task.id);

describe('migration 5 (ownership)', () => {
  it('upgrades a version-4 schema with data: old tasks have no owner, old message ids are in the anonymous scope', async () => {
    const schema = await schemaAtVersion4();
    const old = started('old', 'm-old');
    await commitAsVersion4(pool, schema, old);
    await commitAsVersion4(pool, schema, started('old-done', 'm-done', 'completed'));

    // Step 5 and the steps after it (none of which touch what is checked here).
    expect(await migrate(pool, schema)).toEqual({
      applied: migrations.filter((m) => m.version >= 5).map((m) => m.version),
    });
    const s = pg.escapeIdentifier(schema);
    expect((await db.query(`SELECT owner, digest FROM ${s}.messages ORDER BY message_id`)).rows).toEqual([
      { owner: '', digest: null },
      { owner: '', digest: null },
    ]);

    const store = await openStore(schema);
    const record = await store.getTask('old');
    expect(record).toEqual({ task: old, version: 1, createdAt: 1, updatedAt: 1 });
    expect(Object.hasOwn(record ?? {}, 'owner')).toBe(false);
    expect(await listed(store, null)).toEqual(['old-done', 'old']);
    expect(await listed(store, 'alice')).toEqual([]);

    expect(await store.findMessage('m-old')).toEqual({ taskId: 'old', contextId: 'ctx-old' });
    expect(await store.findMessage('m-old', undefined, 'alice')).toBeUndefined();
    await expect(createTask(store, started('retry', 'm-old'))).rejects.toBeInstanceOf(DuplicateMessageError);

    const ofAlice = started('of-alice', 'm-old');
    await createTask(store, ofAlice, [], 'alice');
    expect(await store.findMessage('m-old', undefined, 'alice')).toEqual(
      indexEntry(ofAlice, ofAlice.history?.[0] as Message),
    );
    expect(await listed(store, 'alice')).toEqual(['of-alice']);

    expect((await store.purgeExpired(2)).tasks).toBe(1);
    expect(await store.findMessage('m-done')).toBeUndefined();
  });

  it('workers of release 4 wait while the step runs, then keep committing: their rows join the anonymous scope', async () => {
    const schema = await schemaAtVersion4();
    await commitAsVersion4(pool, schema, started('before', 'm-before'));
    const step = migrations.find((m) => m.version === 5);
    const migrator = await pool.connect();
    let during: Promise<boolean> | undefined;
    try {
      await migrator.query('BEGIN');
      await migrator.query(step?.sql(pg.escapeIdentifier(schema)) ?? '');
      // The step ran and its transaction is open: it holds `tasks` and `messages`.
      during = commitAsVersion4(pool, schema, started('during', 'm-during')).then(() => true);
      const waited = await Promise.race([during, new Promise((r) => setTimeout(() => r(false), 500))]);
      expect(waited, 'a release 4 commit went through while step 5 was open').toBe(false);
      await migrator.query(`INSERT INTO ${pg.escapeIdentifier(schema)}.migrations (version, name) VALUES (5, $1)`, [
        step?.name,
      ]);
      await migrator.query('COMMIT');
    } catch (error) {
      await migrator.query('ROLLBACK');
      throw error;
    } finally {
      migrator.release();
    }
    expect(await during).toBe(true);
    // The steps after 5, which this release's store needs before it opens (migrate: false).
    await migrate(pool, schema);

    // After the step: a release 4 commit lands in the anonymous scope, and still meets its duplicates.
    await commitAsVersion4(pool, schema, started('after', 'm-after'));
    await expect(commitAsVersion4(pool, schema, started('after-again', 'm-after'))).rejects.toMatchObject({
      code: '23505',
      table: 'messages',
    });
    const store = await openStore(schema);
    for (const id of ['before', 'during', 'after']) {
      expect(await store.findMessage(`m-${id}`), id).toEqual({ taskId: id, contextId: `ctx-${id}` });
      expect(Object.hasOwn((await store.getTask(id)) ?? {}, 'owner'), id).toBe(false);
    }
    // This release refuses their ids in the anonymous scope, and lets a principal use them.
    await expect(createTask(store, started('retry', 'm-after'))).rejects.toBeInstanceOf(DuplicateMessageError);
    await createTask(store, started('of-bob', 'm-after'), [], 'bob');
    expect(await listed(store, null)).toEqual(['during', 'before', 'after']); // one timestamp: by id
    expect(await listed(store, 'bob')).toEqual(['of-bob']);
  });

  it('migrationSql({ after: 4 }) applies step 5 for a DBA', async () => {
    const schema = await schemaAtVersion4();
    await commitAsVersion4(pool, schema, started('kept', 'm-kept'));
    const sql = migrationSql(schema, { after: 4 });
    expect(sql).not.toContain(`CREATE TABLE ${pg.escapeIdentifier(schema)}.push_configs`);
    expect(sql).toContain('tasks_by_owner_status_ts');
    await db.query(sql);
    const store = await openStore(schema);
    expect(await store.findMessage('m-kept')).toEqual({ taskId: 'kept', contextId: 'ctx-kept' });
    expect(await listed(store, null)).toEqual(['kept']);
  });
});

describe('query plans (ownership)', () => {
  it('one owner’s page is one range of the owner index, the cursor an index condition, no sort', async () => {
    const schema = db.newSchema();
    const s = pg.escapeIdentifier(schema);
    await migrate(pool, schema);
    // 20,000 tasks of 40 owners and some without one (as many as an owner has), and their message
    // ids, with statistics.
    await db.query(
      `INSERT INTO ${s}.tasks (namespace, task_id, context_id, owner, state, version, task, created_at, updated_at, status_ts)
       SELECT 'default', 'task-' || i, 'ctx-' || (i / 5), CASE WHEN i % 41 = 0 THEN NULL ELSE 'owner-' || (i % 40) END,
              (ARRAY['working', 'completed', 'failed', 'input-required'])[1 + i % 4],
              1, '{}'::json, i, i, 1700000000000 + i * 1000
       FROM generate_series(1, 20000) AS i`,
    );
    await db.query(
      `INSERT INTO ${s}.messages (namespace, owner, message_id, task_id, context_id, digest)
       SELECT namespace, coalesce(owner, ''), 'msg-' || task_id, task_id, context_id, md5(task_id) FROM ${s}.tasks`,
    );
    await db.query(`ANALYZE ${s}.tasks`);
    await db.query(`ANALYZE ${s}.messages`);
    const explain = async (sql: string): Promise<string> =>
      (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`)).rows.map((row) => row['QUERY PLAN']).join('\n');
    const page = (filters: string) =>
      explain(
        `SELECT task::text, status_ts, task_id FROM ${s}.tasks
         WHERE namespace = 'default' ${filters} AND (status_ts, task_id COLLATE "C") < (1700010000000, 'task-10000')
         ORDER BY status_ts DESC, task_id COLLATE "C" DESC LIMIT 51`,
      );

    // The filters as the store writes them: '' for the tasks without an owner.
    for (const filters of [
      "AND coalesce(owner, '') = 'owner-7'",
      "AND coalesce(owner, '') = ''",
      "AND coalesce(owner, '') = 'owner-7' AND state = 'working'",
      "AND coalesce(owner, '') = 'owner-7' AND status_ts >= 1700000000000",
      "AND coalesce(owner, '') = '' AND state = 'completed'",
    ]) {
      const plan = await page(filters);
      expect(plan, `${filters}\n${plan}`).toContain('Index Scan using tasks_by_owner_status_ts');
      expect(plan, filters).toMatch(/Index Cond: .*COALESCE\(owner.*ROW\(status_ts, \(task_id\)::text\) < ROW/);
      expect(plan, filters).not.toMatch(/Sort|Seq Scan/);
    }
    // With a context too, either index does without a sort.
    expect(await page("AND coalesce(owner, '') = 'owner-7' AND context_id = 'ctx-7'")).not.toMatch(/Sort|Seq Scan/);
    // The owner's total is counted from the owner index, not by reading the whole table.
    const count = await explain(
      `SELECT count(*) FROM ${s}.tasks WHERE namespace = 'default' AND coalesce(owner, '') = 'owner-7'`,
    );
    expect(count).toContain('tasks_by_owner_status_ts');
    expect(count).not.toMatch(/Seq Scan/);
    // findMessage: one key lookup in the owner's scope.
    expect(
      await explain(
        `SELECT task_id, context_id, digest FROM ${s}.messages WHERE namespace = 'default' AND owner = 'owner-7' AND message_id = 'msg-task-7'`,
      ),
    ).toMatch(/Index Scan using messages_pkey/);
  });
});
