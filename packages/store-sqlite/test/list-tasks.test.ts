/**
 * SQLite specifics of listTasks: migration 3 (the status_ts column, its backfill from a file the
 * previous release wrote, the indexes) and the query plans of its pages and counts. What listTasks
 * returns is checked by the conformance suite.
 */

import { join } from 'node:path';
import { NO_STATUS_TIMESTAMP, type Task } from '@fastify-a2a/core';
import { appendEvents, createTask, statusUpdate, taskFixture } from '@fastify-a2a/core/testing';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS_TABLE, migrate, migrations, SqliteStore } from '../src/index.js';
import { tempDir } from './helpers.js';

let remove: () => void;
let filename: string;
const stores: SqliteStore[] = [];

beforeEach(() => {
  const temp = tempDir();
  remove = temp.remove;
  filename = join(temp.dir, 'a2a.db');
});
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  remove();
});

async function openStore(namespace?: string): Promise<SqliteStore> {
  const store = new SqliteStore({ filename, ...(namespace === undefined ? {} : { namespace }) });
  stores.push(store);
  await store.open();
  return store;
}

const listed = async (store: SqliteStore, query: Parameters<SqliteStore['listTasks']>[0]) =>
  (await store.listTasks(query)).records.map((record) => record.task.id);

/** EXPLAIN QUERY PLAN details of `sql`, on a read-only connection. */
function queryPlan(sql: string): string {
  const db = new Database(filename, { readonly: true });
  try {
    return db
      .prepare<[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
      .all()
      .map((row) => row.detail)
      .join('; ');
  } finally {
    db.close();
  }
}

describe('migration 3 (listTasks)', () => {
  it('upgrades a version-2 file: its tasks are listed by status timestamp, the missing and unreadable last', async () => {
    const db = new Database(filename);
    migrate(db, Date.now, migrations.slice(0, 2));
    // The rows as release 2 wrote them: no status_ts column yet.
    const insert = db.prepare<[string, string, string, string, string]>(
      `INSERT INTO a2a_tasks (namespace, task_id, context_id, state, version, task_json, created_at, updated_at)
       VALUES (?, ?, ?, ?, 1, ?, 1, 1)`,
    );
    const row = (namespace: string, task: Task) =>
      insert.run(namespace, task.id, task.contextId, task.status.state, JSON.stringify(task));
    const task = (id: string, timestamp: string | null, state: Task['status']['state'] = 'working') =>
      taskFixture({ id, contextId: 'ctx', state, timestamp });
    row('default', task('utc', '2026-01-01T10:00:00.000Z'));
    row('default', task('offset', '2026-01-01T12:30:00+02:00')); // 10:30Z: newer than `utc`
    row('default', task('done', '2026-01-01T09:00:00.000Z', 'completed'));
    row('default', task('missing', null));
    row('default', task('unreadable', 'yesterday'));
    row('other', task('elsewhere', '2026-01-02T00:00:00.000Z'));
    db.close();

    const store = await openStore();
    expect(await listed(store, { limit: 10 })).toEqual(['offset', 'utc', 'done', 'unreadable', 'missing']);
    expect(await listed(store, { limit: 10, state: 'working' })).toEqual(['offset', 'utc', 'unreadable', 'missing']);
    const since = await store.listTasks({ limit: 1, statusTimestampAfter: Date.parse('2026-01-01T10:00:00.000Z') });
    expect(since.records.map((r) => r.task.id)).toEqual(['offset']);
    expect(since.total).toBe(2);
    expect(since.next).toEqual({ statusTimestamp: Date.parse('2026-01-01T10:30:00.000Z'), taskId: 'offset' });
    expect(await listed(await openStore('other'), { limit: 10 })).toEqual(['elsewhere']);

    const check = new Database(filename, { readonly: true });
    expect(
      check
        .prepare("SELECT task_id, status_ts FROM a2a_tasks WHERE task_id IN ('missing', 'unreadable') ORDER BY task_id")
        .all(),
    ).toEqual([
      { task_id: 'missing', status_ts: NO_STATUS_TIMESTAMP },
      { task_id: 'unreadable', status_ts: NO_STATUS_TIMESTAMP },
    ]);
    expect(check.prepare(`SELECT max(version) FROM ${MIGRATIONS_TABLE}`).pluck().get()).toBe(
      Math.max(...migrations.map((step) => step.version)),
    );
    check.close();

    // Commits after the upgrade keep the column in step.
    await appendEvents(store, 'missing', [
      statusUpdate({ id: 'missing', contextId: 'ctx' }, 'completed', { timestamp: '2026-01-03T00:00:00.000Z' }),
    ]);
    await createTask(store, task('new', '2026-01-01T09:30:00.000Z'));
    expect(await listed(store, { limit: 10 })).toEqual(['missing', 'offset', 'utc', 'new', 'done', 'unreadable']);
  });

  it('the page of every filter combination is a range of one index, read in order (no sort)', async () => {
    await openStore();
    const columns = 'task_json, version, created_at, updated_at, status_ts, task_id';
    const after = "AND (status_ts, task_id) < (5, 'x')";
    const cases: [string, string, RegExp][] = [
      ['a2a_tasks_by_status_ts', '', /a2a_tasks_by_status_ts \(namespace=\? AND \(status_ts,task_id\)<\(\?,\?\)\)/],
      [
        'a2a_tasks_by_status_ts',
        'AND status_ts >= 3',
        /a2a_tasks_by_status_ts \(namespace=\? AND status_ts>\? AND \(status_ts,task_id\)<\(\?,\?\)\)/,
      ],
      [
        'a2a_tasks_by_context_status_ts',
        "AND context_id = 'c' AND state = 'working'",
        /a2a_tasks_by_context_status_ts \(namespace=\? AND context_id=\? AND \(status_ts,task_id\)<\(\?,\?\)\)/,
      ],
      [
        'a2a_tasks_by_state_status_ts',
        "AND state = 'working' AND status_ts >= 3",
        /a2a_tasks_by_state_status_ts \(namespace=\? AND state=\? AND status_ts>\? AND \(status_ts,task_id\)<\(\?,\?\)\)/,
      ],
    ];
    for (const [index, filters, expected] of cases) {
      const plan = queryPlan(
        `SELECT ${columns} FROM a2a_tasks INDEXED BY ${index} WHERE namespace = 'n' ${filters} ${after}
         ORDER BY status_ts DESC, task_id DESC LIMIT 51`,
      );
      expect(plan, filters).toMatch(expected);
      expect(plan, filters).not.toMatch(/TEMP B-TREE/);
    }
    // Counts read index entries only.
    expect(queryPlan("SELECT count(*) FROM a2a_tasks WHERE namespace = 'n' AND state = 'working'")).toMatch(
      /COVERING INDEX/,
    );
    expect(queryPlan("SELECT count(*) FROM a2a_tasks WHERE namespace = 'n' AND status_ts >= 3")).toMatch(
      /COVERING INDEX a2a_tasks_by_status_ts/,
    );
  });
});
