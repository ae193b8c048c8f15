/**
 * What the conformance suite's push module cannot see from outside: migration 4 on a schema of the
 * previous release, the plan of the claim every worker runs every few hundred ms, a save racing
 * the purge of its task, cascades on deletes by code that knows nothing of push, and where the
 * secrets are kept.
 */

import type { Task } from '@fastify-a2a/core';
import { createTask, eventually, rejectionOf, taskFixture } from '@fastify-a2a/core/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { migrate, migrations, PostgresStore } from '../src/index.js';

const db = withPostgres('pgstore_push');
const pool = new pg.Pool({ connectionString: db.url, max: 4 });
const stores: PostgresStore[] = [];
afterAll(async () => {
  for (const store of stores) await store.close();
  await pool.end();
});

async function openStore(schema: string): Promise<PostgresStore> {
  const store = new PostgresStore({ pool, schema, listen: false });
  stores.push(store);
  await store.open();
  return store;
}

const hook = (id: string) => ({ id, url: `https://hooks.example.com/${id}` });

describe('migration 4 (push)', () => {
  it('upgrades a version-3 schema with data: its tasks take push configs', async () => {
    const schema = db.newSchema('pgstore_v3');
    const s = pg.escapeIdentifier(schema);
    await db.query(`CREATE SCHEMA ${s}`);
    await db.query(
      `CREATE TABLE ${s}.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    for (const step of migrations.filter((m) => m.version <= 3)) {
      await db.query(step.sql(s));
      await db.query(`INSERT INTO ${s}.migrations (version, name) VALUES ($1, $2)`, [step.version, step.name]);
    }
    const task: Task = taskFixture({ id: 'old-task', contextId: 'ctx', state: 'working' });
    await db.query(
      `INSERT INTO ${s}.tasks (namespace, task_id, context_id, state, status_ts, version, task, created_at, updated_at)
       VALUES ('default', 'old-task', 'ctx', 'working', 0, 3, $1::json, 1, 1)`,
      [JSON.stringify(task)],
    );

    expect(await migrate(pool, schema)).toEqual({
      applied: migrations.map((m) => m.version).filter((v) => v >= 4),
    });
    const store = await openStore(schema);
    await store.savePushConfig({ taskId: 'old-task', config: hook('cfg'), protocolVersion: '0.3' });
    const [claimed] = await store.claimPushDeliveries({ workerId: 'w', now: 0, claimUntil: 1, limit: 10 });
    expect([claimed?.config.taskId, claimed?.state.cursor, claimed?.taskVersion]).toEqual(['old-task', 0, 3]);
  });
});

describe('push', () => {
  it('the claim walks the pending deliveries through their partial index, in order, and finds each task by key', async () => {
    const schema = db.newSchema();
    const s = pg.escapeIdentifier(schema);
    await migrate(pool, schema);
    // 20,000 tasks, each with a config; most deliveries failed long ago, the rest still in play.
    await db.query(
      `INSERT INTO ${s}.tasks (namespace, task_id, context_id, state, version, task, created_at, updated_at)
       SELECT 'default', 'task-' || i, 'ctx', 'completed', 3, '{}'::json, i, i FROM generate_series(1, 20000) AS i`,
    );
    await db.query(
      `INSERT INTO ${s}.push_configs (namespace, task_id, config_id, config, protocol_version, created_at, updated_at)
       SELECT 'default', 'task-' || i, 'cfg', '{}'::json, '1.0', i, i FROM generate_series(1, 20000) AS i`,
    );
    await db.query(
      `INSERT INTO ${s}.push_deliveries (namespace, task_id, config_id, cursor, attempts, failed, next_attempt_at)
       SELECT 'default', 'task-' || i, 'cfg', i % 4, 0, i % 20 <> 0, NULLIF(i % 3, 0) * 1000
       FROM generate_series(1, 20000) AS i`,
    );
    await db.query(`ANALYZE ${s}.tasks`);
    await db.query(`ANALYZE ${s}.push_deliveries`);
    const { rows } = await db.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN SELECT d.namespace, d.task_id, d.config_id, t.version
       FROM ${s}.push_deliveries d JOIN ${s}.tasks t ON t.namespace = d.namespace AND t.task_id = d.task_id
       WHERE d.namespace = 'default' AND NOT d.failed AND (d.claim_until IS NULL OR d.claim_until < 5000)
         AND t.version > d.cursor
         AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= 5000 OR (d.attempts = 0 AND t.state IN ('completed')))
       ORDER BY d.next_attempt_at NULLS FIRST LIMIT 100
       FOR UPDATE OF d SKIP LOCKED`,
    );
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(plan).toContain('Index Scan using push_deliveries_pending');
    expect(plan).toContain('Index Scan using tasks_pkey');
    expect(plan).not.toMatch(/Sort|Seq Scan/);
  });

  it('a save racing the purge of its task is refused with TASK_NOT_FOUND, and leaves no config', async () => {
    const schema = db.newSchema();
    const store = await openStore(schema);
    await createTask(store, taskFixture({ id: 'doomed', state: 'completed' }));
    const s = pg.escapeIdentifier(schema);
    const purger = new pg.Client({ connectionString: db.url });
    await purger.connect();
    try {
      await purger.query('BEGIN');
      await purger.query(`DELETE FROM ${s}.tasks WHERE task_id = 'doomed'`);
      // The save still sees the task (the delete is not committed); its foreign key check waits
      // for the purge, then finds the task gone.
      const saving = rejectionOf(
        store.savePushConfig({ taskId: 'doomed', config: hook('cfg'), protocolVersion: '1.0' }),
      );
      await eventually('the save to wait for the purge’s lock', async () => {
        const { rows } = await db.query(
          "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1 AND query LIKE '%push_configs%'",
          [`%${schema}%`],
        );
        return rows.length > 0;
      });
      await purger.query('COMMIT');
      const error = await saving;
      expect((error as { code?: string }).code, String(error)).toBe('TASK_NOT_FOUND');
    } finally {
      await purger.end();
    }
    const { rows } = await db.query(`SELECT 1 FROM ${s}.push_configs UNION ALL SELECT 1 FROM ${s}.push_deliveries`);
    expect(rows).toEqual([]);
  });

  it('a task deleted by a statement that knows nothing of push (a previous release purging) takes its configs along', async () => {
    const schema = db.newSchema();
    const store = await openStore(schema);
    for (const id of ['gone', 'kept']) {
      await createTask(store, taskFixture({ id, state: 'completed' }));
      await store.savePushConfig({ taskId: id, config: hook('cfg'), protocolVersion: '1.0' });
    }
    const s = pg.escapeIdentifier(schema);
    await db.query(`DELETE FROM ${s}.tasks WHERE task_id = 'gone'`);
    const taskIds = async (table: string) =>
      (await db.query<{ task_id: string }>(`SELECT task_id FROM ${s}.${table} ORDER BY task_id`)).rows.map(
        (row) => row.task_id,
      );
    expect(await taskIds('push_configs')).toEqual(['kept']);
    expect(await taskIds('push_deliveries')).toEqual(['kept']);
  });

  it('keeps tokens and credentials as given, in push_configs only', async () => {
    const schema = db.newSchema();
    const store = await openStore(schema);
    await createTask(store, taskFixture({ id: 'task' }));
    const config = {
      id: 'cfg',
      url: 'https://hooks.example.com/',
      token: 'the-token',
      authentication: { schemes: ['Bearer'], credentials: 'the-credentials' },
    };
    await store.savePushConfig({ taskId: 'task', config, protocolVersion: '1.0' });
    const s = pg.escapeIdentifier(schema);
    const stored = await db.query<{ config: string }>(`SELECT config::text AS config FROM ${s}.push_configs`);
    expect(JSON.parse(stored.rows[0]?.config ?? 'null')).toEqual(config);
    const deliveries = await db.query(`SELECT * FROM ${s}.push_deliveries`);
    expect(JSON.stringify(deliveries.rows)).not.toMatch(/the-token|the-credentials/);
  });
});
