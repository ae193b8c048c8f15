/**
 * Postgres specifics of listTasks: migration 3 (the status_ts column, its backfill from a schema
 * the previous release wrote, the indexes, the DBA script) and the query plans of its pages and
 * counts. What listTasks returns is checked by the conformance suite.
 */

import { NO_STATUS_TIMESTAMP, type Task } from '@fastify-a2a/core';
import { appendEvents, createTask, statusUpdate, taskFixture } from '@fastify-a2a/core/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { migrate, migrationSql, migrations, PostgresStore } from '../src/index.js';

const db = withPostgres('pgstore_list');
const pool = new pg.Pool({ connectionString: db.url, max: 4 });
afterAll(() => pool.end());

/** A schema as release 2 left it: migrations 1 and 2 applied and recorded. */
async function schemaAtVersion2(): Promise<string> {
  const schema = db.newSchema('pgstore_v2');
  const s = pg.escapeIdentifier(schema);
  await db.query(`CREATE SCHEMA ${s}`);
  await db.query(
    `CREATE TABLE ${s}.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  for (const step of migrations.filter((m) => m.version <= 2)) {
    await db.query(step.sql(s));
    await db.query(`INSERT INTO ${s}.migrations (version, name) VALUES ($1, $2)`, [step.version, step.name]);
  }
  return schema;
}

/** A task row the way release 2's commit wrote it (no status_ts). */
async function insertAsVersion2(schema: string, namespace: string, task: Task): Promise<void> {
  await db.query(
    `INSERT INTO ${pg.escapeIdentifier(schema)}.tasks (namespace, task_id, context_id, state, version, task, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 1, $5::json, 1, 1)`,
    [namespace, task.id, task.contextId, task.status.state, JSON.stringify(task)],
  );
}

const task = (id: string, timestamp: string | null, state: Task['status']['state'] = 'working'): Task =>
  taskFixture({ id, contextId: 'ctx', state, timestamp });

/** The versions of this release from `first` on: what migrating a schema at `first - 1` applies. */
const versionsFrom = (first: number): number[] => migrations.map((m) => m.version).filter((v) => v >= first);

const ids = async (store: PostgresStore, query: Parameters<PostgresStore['listTasks']>[0]) =>
  (await store.listTasks(query)).records.map((record) => record.task.id);

describe('migration 3 (listTasks)', () => {
  it('upgrades a version-2 schema with data: tasks are listed by status timestamp, parsed as Date.parse does', async () => {
    const schema = await schemaAtVersion2();
    await insertAsVersion2(schema, 'default', task('utc', '2026-01-01T10:00:00.000Z'));
    await insertAsVersion2(schema, 'default', task('offset', '2026-01-01T12:30:00.5+02:00')); // 10:30:00.500Z
    await insertAsVersion2(schema, 'default', task('micro', '2026-01-01T10:00:00.123999Z')); // .123, as Date.parse
    await insertAsVersion2(schema, 'default', task('before-1970', '1960-06-01T00:00:00.001Z'));
    await insertAsVersion2(schema, 'default', task('done', '2026-01-01T09:00:00.000Z', 'completed'));
    await insertAsVersion2(schema, 'default', task('missing', null));
    await insertAsVersion2(schema, 'default', task('a-word', 'yesterday')); // a timestamp to Postgres, not to Date.parse
    await insertAsVersion2(schema, 'default', task('infinite', 'infinity'));
    await insertAsVersion2(schema, 'default', task('bad-month', '2026-13-01T00:00:00Z')); // the cast fails
    await insertAsVersion2(schema, 'other', task('elsewhere', '2026-01-02T00:00:00.000Z'));

    expect(await migrate(pool, schema)).toEqual({ applied: versionsFrom(3) });
    const { rows } = await db.query<{ task_id: string; status_ts: string }>(
      `SELECT task_id, status_ts FROM ${pg.escapeIdentifier(schema)}.tasks WHERE namespace = 'default' ORDER BY task_id`,
    );
    const expected = (timestamp: string) => String(Date.parse(timestamp));
    expect(Object.fromEntries(rows.map((row) => [row.task_id, row.status_ts]))).toEqual({
      'a-word': String(NO_STATUS_TIMESTAMP),
      'bad-month': String(NO_STATUS_TIMESTAMP),
      'before-1970': expected('1960-06-01T00:00:00.001Z'),
      done: expected('2026-01-01T09:00:00.000Z'),
      infinite: String(NO_STATUS_TIMESTAMP),
      micro: expected('2026-01-01T10:00:00.123999Z'),
      missing: String(NO_STATUS_TIMESTAMP),
      offset: expected('2026-01-01T12:30:00.5+02:00'),
      utc: expected('2026-01-01T10:00:00.000Z'),
    });

    const store = new PostgresStore({ pool, schema, migrate: false, listen: false });
    await store.open();
    try {
      expect(await ids(store, { limit: 20 })).toEqual([
        'offset',
        'micro',
        'utc',
        'done',
        'before-1970',
        'missing',
        'infinite',
        'bad-month',
        'a-word',
      ]);
      const since = await store.listTasks({ limit: 1, statusTimestampAfter: Date.parse('2026-01-01T10:00:00.000Z') });
      expect(since.records.map((r) => r.task.id)).toEqual(['offset']);
      expect(since.total).toBe(3);
      expect(since.next).toEqual({ statusTimestamp: Date.parse('2026-01-01T10:30:00.500Z'), taskId: 'offset' });

      // Commits after the upgrade keep the column in step.
      await appendEvents(store, 'missing', [
        statusUpdate({ id: 'missing', contextId: 'ctx' }, 'completed', { timestamp: '2026-01-03T00:00:00.000Z' }),
      ]);
      await createTask(store, task('new', '2026-01-01T09:30:00.000Z'));
      expect(await ids(store, { limit: 4 })).toEqual(['missing', 'offset', 'micro', 'utc']);
      expect(await ids(store, { limit: 3, state: 'completed' })).toEqual(['missing', 'done']);
    } finally {
      await store.close();
    }
    const other = new PostgresStore({ pool, schema, namespace: 'other', migrate: false, listen: false });
    await other.open();
    expect(await ids(other, { limit: 20 })).toEqual(['elsewhere']);
    await other.close();
  });

  it('migrationSql({ after: 2 }) applies step 3 for a DBA, backfill included', async () => {
    const schema = await schemaAtVersion2();
    await insertAsVersion2(schema, 'default', task('kept', '2026-01-01T10:00:00.000Z'));
    const sql = migrationSql(schema, { after: 2 });
    expect(sql).not.toContain(`CREATE TABLE ${pg.escapeIdentifier(schema)}.turns`);
    await db.query(sql);
    const store = new PostgresStore({ pool, schema, migrate: false, listen: false });
    await store.open();
    const page = await store.listTasks({ limit: 10 });
    expect(page.records.map((r) => r.task.id)).toEqual(['kept']);
    expect(page.total).toBe(1);
    await store.close();
  });
});

describe('query plans', () => {
  it('every filter combination pages through one index range, the cursor an index condition, no sort', async () => {
    const schema = db.newSchema();
    const s = pg.escapeIdentifier(schema);
    await migrate(pool, schema);
    // Enough rows, and statistics, for the planner to prefer an index over a scan and sort.
    await db.query(
      `INSERT INTO ${s}.tasks (namespace, task_id, context_id, state, version, task, created_at, updated_at, status_ts)
       SELECT 'default', 'task-' || i, 'ctx-' || (i / 5), (ARRAY['working', 'completed', 'failed', 'input-required'])[1 + i % 4],
              1, '{}'::json, i, i, 1700000000000 + i * 1000
       FROM generate_series(1, 20000) AS i`,
    );
    await db.query(`ANALYZE ${s}.tasks`);
    const plan = async (filters: string): Promise<string> => {
      const { rows } = await db.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT task::text, status_ts, task_id FROM ${s}.tasks
         WHERE namespace = 'default' ${filters} AND (status_ts, task_id COLLATE "C") < (1700010000000, 'task-10000')
         ORDER BY status_ts DESC, task_id COLLATE "C" DESC LIMIT 51`,
      );
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    };
    const cases: [string, string][] = [
      ['', 'tasks_by_status_ts'],
      ['AND status_ts >= 1700000000000', 'tasks_by_status_ts'],
      ["AND context_id = 'ctx-7'", 'tasks_by_context_status_ts'],
      ["AND context_id = 'ctx-7' AND state = 'working'", 'tasks_by_context_status_ts'],
      ["AND state = 'working'", 'tasks_by_state_status_ts'],
      ["AND state = 'working' AND status_ts >= 1700000000000", 'tasks_by_state_status_ts'],
    ];
    for (const [filters, index] of cases) {
      const text = await plan(filters);
      expect(text, filters).toContain(`Index Scan using ${index}`);
      expect(text, filters).toMatch(/Index Cond: .*ROW\(status_ts, \(task_id\)::text\) < ROW/);
      expect(text, filters).not.toMatch(/Sort|Seq Scan/);
    }
  });
});
