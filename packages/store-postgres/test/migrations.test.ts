import { A2AError, applyEvents, type Task, type TaskEvent } from '@fastify-a2a/core';
import { agentMessage, createTask, statusUpdate, taskFixture, userMessage } from '@fastify-a2a/core/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { appliedVersions, LATEST_VERSION, migrate, migrationSql, migrations, PostgresStore } from '../src/index.js';

const db = withPostgres('pgstore_migrations');
const pool = new pg.Pool({ connectionString: db.url, max: 25 });
afterAll(() => pool.end());

const recorded = async (schema: string) =>
  (
    await db.query<{ version: number; count: number }>(
      `SELECT version, count(*)::int AS count FROM ${pg.escapeIdentifier(schema)}.migrations GROUP BY version ORDER BY version`,
    )
  ).rows;

/** A schema name that needs quoting (capitals, a quote, a semicolon), dropped after the file. */
const oddSchema = (): string => db.track(`${db.newSchema('pgstore_odd')}_Odd"Name; DROP`);

const allVersions = migrations.map((m) => ({ version: m.version, count: 1 }));

/** A schema as release 1 left it: migration 1 applied and recorded, nothing after it. */
async function schemaAtVersion1(): Promise<string> {
  const schema = db.newSchema('pgstore_v1');
  const s = pg.escapeIdentifier(schema);
  const [first] = migrations;
  if (first?.version !== 1) throw new Error('migration 1 is missing');
  await db.query(`CREATE SCHEMA ${s}`);
  await db.query(
    `CREATE TABLE ${s}.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  await db.query(first.sql(s));
  await db.query(`INSERT INTO ${s}.migrations (version, name) VALUES (1, $1)`, [first.name]);
  return schema;
}

/** Writes a task and its log the way release 1's commit did (rows only; no message index then). */
async function commitAsVersion1(schema: string, namespace: string, events: TaskEvent[], at = 1_000): Promise<Task> {
  const s = pg.escapeIdentifier(schema);
  const task = applyEvents(undefined, events);
  await db.query(
    `INSERT INTO ${s}.tasks (namespace, task_id, context_id, state, version, task, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6::json, $7, $7)`,
    [namespace, task.id, task.contextId, task.status.state, events.length, JSON.stringify(task), at],
  );
  for (const [i, event] of events.entries()) {
    await db.query(
      `INSERT INTO ${s}.events (namespace, task_id, seq, event, created_at) VALUES ($1, $2, $3, $4::json, $5)`,
      [namespace, task.id, i + 1, JSON.stringify(event), at],
    );
  }
  return task;
}

describe('migrations', () => {
  it('migrating twice does no harm: the second run applies nothing and keeps the data', async () => {
    const schema = db.newSchema();
    expect(await migrate(pool, schema)).toEqual({ applied: migrations.map((m) => m.version) });

    const store = new PostgresStore({ pool, schema });
    await store.open();
    await createTask(store, taskFixture({ id: 'kept' }));
    await store.close();

    expect(await migrate(pool, schema)).toEqual({ applied: [] });
    const again = new PostgresStore({ pool, schema }); // open() migrates once more
    await again.open();
    expect((await again.getTask('kept'))?.version).toBe(1);
    await again.close();
    expect(await recorded(schema)).toEqual(allVersions);
  });

  it('20 concurrent migrators on a fresh schema all succeed and record each version once', async () => {
    const schema = db.newSchema();
    // Separate pools, as 20 workers starting at once would have.
    const pools = Array.from({ length: 20 }, () => new pg.Pool({ connectionString: db.url, max: 2 }));
    try {
      const results = await Promise.allSettled(pools.map((p) => migrate(p, schema)));
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      const applied = results.flatMap((r) => (r.status === 'fulfilled' ? r.value.applied : []));
      expect(applied.sort()).toEqual(migrations.map((m) => m.version)); // each step applied by exactly one
      expect(await recorded(schema)).toEqual(allVersions);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it('20 stores opening concurrently on a fresh schema all open', async () => {
    const schema = db.newSchema();
    const stores = Array.from({ length: 20 }, () => new PostgresStore({ connectionString: db.url, schema }));
    try {
      await Promise.all(stores.map((s) => s.open()));
      expect(await recorded(schema)).toEqual(allVersions);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('migrate: false on an unmigrated schema fails at open() and names the SQL to apply', async () => {
    const schema = db.newSchema();
    const store = new PostgresStore({ pool, schema, migrate: false });
    const error = await store.open().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(A2AError.is(error) && error.code).toBe('STORE_UNAVAILABLE');
    expect((error as Error).message).toContain(`migrationSql("${schema}")`);
    expect((error as Error).message).toContain('migrate: false');
    expect((error as Error).message).toContain('missing migration(s) 1');
    // Nothing was created behind the DBA's back.
    expect(await appliedVersions(pool, schema)).toEqual([]);
    const { rowCount } = await db.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    expect(rowCount).toBe(0);
    await store.close();
  });

  it('migrationSql() applied by a DBA gives a schema that migrate: false accepts', async () => {
    const schema = oddSchema();
    const sql = migrationSql(schema);
    expect(sql).toContain(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(schema)}`);
    await db.query(sql); // one multi-statement script, as psql -f would run it

    expect(await appliedVersions(pool, schema)).toEqual(migrations.map((m) => m.version));
    const store = new PostgresStore({ pool, schema, migrate: false });
    await store.open();
    await createTask(store, taskFixture({ id: 'dba' }));
    expect((await store.getTask('dba'))?.version).toBe(1);
    await store.close();
    // The runtime migrator agrees that nothing is pending.
    expect(await migrate(pool, schema)).toEqual({ applied: [] });
  });

  it('migrationSql({ after }) leaves out the steps already applied', () => {
    expect(migrationSql('a2a', { after: LATEST_VERSION })).not.toContain('CREATE TABLE "a2a".tasks');
    expect(migrationSql('a2a')).toContain('CREATE TABLE "a2a".tasks');
  });

  it('from version 1 with data: migration 2 keeps the data, indexes the user messages already logged, and the store works', async () => {
    const schema = await schemaAtVersion1();
    const s = pg.escapeIdentifier(schema);
    // What release 1 wrote: a finished task with a follow-up message, a task the agent opened, a
    // later task that reused the first message id (release 1 did not check), one in another
    // namespace, and contexts (release 1 stored `undefined` state as SQL NULL).
    const a0 = taskFixture({
      id: 'a',
      contextId: 'ctx-a',
      state: 'working',
      history: [userMessage('hi', { messageId: 'm-a1' })],
    });
    const a = await commitAsVersion1(schema, 'default', [
      a0,
      userMessage('more', { messageId: 'm-a2', taskId: 'a', contextId: 'ctx-a' }),
      statusUpdate(a0, 'completed'),
    ]);
    await commitAsVersion1(schema, 'default', [
      taskFixture({
        id: 'b',
        history: [agentMessage('hello', { messageId: 'm-b0' }), userMessage('hey', { messageId: 'm-b1' })],
      }),
    ]);
    await commitAsVersion1(schema, 'default', [
      taskFixture({ id: 'c', contextId: 'ctx-c', history: [userMessage('hi again', { messageId: 'm-a1' })] }),
    ]);
    await commitAsVersion1(schema, 'other', [
      taskFixture({ id: 'a', contextId: 'ctx-other', history: [userMessage('hi', { messageId: 'm-a1' })] }),
    ]);
    await db.query(
      `INSERT INTO ${s}.contexts (namespace, context_id, state, updated_at) VALUES ('default', 'ctx-null', NULL, 1000), ('default', 'ctx-a', '{"x":1}', 1000)`,
    );

    // A store that may not migrate says what is missing.
    const early = new PostgresStore({ pool, schema, migrate: false });
    const error = await early.open().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as Error).message).toContain('missing migration(s) 2');

    expect(await migrate(pool, schema)).toEqual({ applied: migrations.map((m) => m.version).filter((v) => v >= 2) });
    expect(await recorded(schema)).toEqual(allVersions);

    const store = new PostgresStore({ pool, schema, migrate: false, listen: false });
    await store.open();
    try {
      expect((await store.getTask('a'))?.task).toEqual(a);
      expect((await store.readEvents('a', 0)).map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(await store.getContext('ctx-a')).toEqual({ contextId: 'ctx-a', state: { x: 1 }, updatedAt: 1000 });
      expect(await store.getContext('ctx-null')).toEqual({ contextId: 'ctx-null', state: null, updatedAt: 1000 });

      // The backfilled index: first user messages and message events; the first commit of an id wins.
      expect(await store.findMessage('m-a1')).toEqual({ taskId: 'a', contextId: 'ctx-a' });
      expect(await store.findMessage('m-a2')).toEqual({ taskId: 'a', contextId: 'ctx-a' });
      expect(await store.findMessage('m-b0')).toBeUndefined(); // the agent's
      expect(await store.findMessage('m-b1')).toBeUndefined(); // not the first
      const other = new PostgresStore({ pool, schema, namespace: 'other', migrate: false, listen: false });
      await other.open();
      expect(await other.findMessage('m-a1')).toEqual({ taskId: 'a', contextId: 'ctx-other' });
      await other.close();

      // A retry of a message sent before the upgrade is recognised.
      const retry = taskFixture({ history: [userMessage('hi', { messageId: 'm-a2' })] });
      await expect(createTask(store, retry)).rejects.toMatchObject({
        code: 'DUPLICATE_MESSAGE',
        data: { messageId: 'm-a2', taskId: 'a', contextId: 'ctx-a' },
      });

      // The new tables work, and purging the old finished task takes its index rows along.
      await store.heartbeat('w', 5_000);
      const slot = await store.enqueueTurn({ contextId: 'ctx-b', taskId: 'b', messageId: 'm-b1', workerId: 'w' });
      expect(await store.turnReadiness(slot)).toEqual({ ready: true });
      expect(await store.claimExpiredWorkers(6_000)).toEqual([
        { workerId: 'w', lastHeartbeat: expect.any(Number), turns: [slot] },
      ]);
      // Task a, and both contexts of 1000 that no longer have a task (ctx-a's went with a).
      expect(await store.purgeExpired(2_000)).toEqual({ tasks: 1, contexts: 2 });
      expect(await store.findMessage('m-a1')).toBeUndefined();
      expect(await store.findMessage('m-a2')).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('while migration 2 runs, workers of release 1 keep committing (it locks nothing they write)', async () => {
    const schema = await schemaAtVersion1();
    await commitAsVersion1(schema, 'default', [taskFixture({ id: 'old', history: [userMessage('x')] })]);
    const step = migrations.find((m) => m.version === 2);
    const migrator = await pool.connect();
    try {
      await migrator.query('BEGIN');
      await migrator.query(step?.sql(pg.escapeIdentifier(schema)) ?? '');
      // The step has run, backfill included, and its transaction is still open.
      const write = commitAsVersion1(schema, 'default', [taskFixture({ id: 'during', history: [userMessage('y')] })]);
      const done = await Promise.race([write.then(() => true), new Promise((r) => setTimeout(() => r(false), 2_000))]);
      expect(done, 'a release 1 commit waited for the migration').toBe(true);
    } finally {
      await migrator.query('ROLLBACK');
      migrator.release();
    }
  });

  it('10 stores opening together on a version 1 schema apply migration 2 once', async () => {
    const schema = await schemaAtVersion1();
    await commitAsVersion1(schema, 'default', [
      taskFixture({ id: 'kept', history: [userMessage('x', { messageId: 'm' })] }),
    ]);
    const stores = Array.from(
      { length: 10 },
      () => new PostgresStore({ connectionString: db.url, schema, listen: false }),
    );
    try {
      await Promise.all(stores.map((store) => store.open()));
      expect(await recorded(schema)).toEqual(allVersions);
      expect(await stores[3]?.findMessage('m')).toEqual({ taskId: 'kept', contextId: expect.any(String) });
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('migrationSql({ after: 1 }) upgrades a version 1 schema for a DBA', async () => {
    const schema = await schemaAtVersion1();
    await commitAsVersion1(schema, 'default', [
      taskFixture({ id: 'kept', history: [userMessage('x', { messageId: 'm' })] }),
    ]);
    const sql = migrationSql(schema, { after: 1 });
    expect(sql).not.toContain(`CREATE TABLE ${pg.escapeIdentifier(schema)}.tasks`);
    expect(sql).toContain(`CREATE TABLE ${pg.escapeIdentifier(schema)}.turns`);
    await db.query(sql);
    expect(await recorded(schema)).toEqual(allVersions);
    const store = new PostgresStore({ pool, schema, migrate: false, listen: false });
    await store.open();
    expect(await store.findMessage('m')).toEqual({ taskId: 'kept', contextId: expect.any(String) });
    await store.close();
  });

  it('a schema name with quotes and capitals stays one identifier', async () => {
    const schema = oddSchema();
    const store = new PostgresStore({ pool, schema });
    await store.open();
    await createTask(store, taskFixture({ id: 'odd' }));
    expect((await store.getTask('odd'))?.version).toBe(1);
    await store.close();
    expect(await recorded(schema)).toEqual(allVersions);
  });
});

describe('step 9: events without a foreign key to tasks', () => {
  it('drops the key, and purgeExpired still deletes a purged task’s events (a reused id starts a fresh log)', async () => {
    const schema = db.newSchema('pgstore_v9');
    let now = 1_000;
    const store = new PostgresStore({ connectionString: db.url, schema, clock: () => now, listen: false });
    await store.open();
    try {
      const keys = await db.query<{ conname: string }>(
        `SELECT conname FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'f'`,
        [`${pg.escapeIdentifier(schema)}.events`],
      );
      expect(keys.rows).toEqual([]);
      const task = taskFixture({ id: 'reused', state: 'working' });
      await createTask(store, task, [statusUpdate(task, 'completed')]);
      now += 10_000;
      expect(await store.purgeExpired(5_000)).toMatchObject({ tasks: 1 });
      const left = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${pg.escapeIdentifier(schema)}.events WHERE task_id = 'reused'`,
      );
      expect(left.rows[0]?.n).toBe(0);
      // The id written again: its log starts at 1 with no row of the purged task in the way.
      const again = taskFixture({ id: 'reused', state: 'working' });
      await expect(createTask(store, again)).resolves.toMatchObject({ version: 1 });
    } finally {
      await store.close();
    }
  });
});
