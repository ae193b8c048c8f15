/**
 * What the conformance suite's push module cannot see from outside: migration 4 on a file of the
 * previous release, the plans of the statements every worker runs every few hundred ms, where the
 * secrets are kept, and claims raced by real processes (one process's claims are serialised by its
 * event loop, so only several processes put SQLite's write lock to work).
 */

import { join } from 'node:path';
import type { Task } from '@fastify-a2a/core';
import { createTask, taskFixture } from '@fastify-a2a/core/testing';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS_TABLE, migrate, migrations, SqliteStore } from '../src/index.js';
import { runChild, tempDir } from './helpers.js';

let dir: string;
let remove: () => void;
let filename: string;
const opened: SqliteStore[] = [];

beforeEach(() => {
  ({ dir, remove } = tempDir());
  filename = join(dir, 'a2a.db');
});
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  remove();
});

async function openStore(namespace?: string): Promise<SqliteStore> {
  const store = new SqliteStore({ filename, namespace });
  opened.push(store);
  await store.open();
  return store;
}

function queryPlan(sql: string, params: Record<string, unknown>): string {
  const db = new Database(filename, { readonly: true });
  try {
    return db
      .prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .all(params)
      .map((row) => (row as { detail: string }).detail)
      .join('; ');
  } finally {
    db.close();
  }
}

describe('migration 4 (push)', () => {
  it('upgrades a version-3 file: the tasks it holds take push configs', async () => {
    const db = new Database(filename);
    migrate(db, Date.now, migrations.slice(0, 3));
    const task: Task = taskFixture({ id: 'old-task', contextId: 'ctx', state: 'working' });
    db.prepare(
      `INSERT INTO a2a_tasks (namespace, task_id, context_id, state, status_ts, version, task_json, created_at, updated_at)
       VALUES ('default', 'old-task', 'ctx', 'working', 0, 3, ?, 1, 1)`,
    ).run(JSON.stringify(task));
    db.close();

    const store = await openStore();
    const check = new Database(filename, { readonly: true });
    expect(check.prepare(`SELECT max(version) FROM ${MIGRATIONS_TABLE}`).pluck().get()).toBe(
      Math.max(...migrations.map((step) => step.version)),
    );
    check.close();
    await store.savePushConfig({
      taskId: 'old-task',
      config: { id: 'cfg', url: 'https://hooks.example.com/' },
      protocolVersion: '0.3',
    });
    const [claimed] = await store.claimPushDeliveries({ workerId: 'w', now: 0, claimUntil: 1, limit: 10 });
    expect([claimed?.config.taskId, claimed?.state.cursor, claimed?.taskVersion]).toEqual(['old-task', 0, 3]);
  });

  it('the hot statements use their indexes: claims walk the pending deliveries and look tasks up by key', async () => {
    await openStore();
    const claim = queryPlan(
      `SELECT d.task_id FROM a2a_push_deliveries d INDEXED BY a2a_push_deliveries_pending
       JOIN a2a_tasks t ON t.namespace = d.namespace AND t.task_id = d.task_id
       WHERE d.namespace = @namespace AND d.failed = 0 AND (d.claim_until IS NULL OR d.claim_until < @now)
         AND t.version > d.cursor
         AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= @now OR (d.attempts = 0 AND t.state IN ('completed')))
       ORDER BY d.next_attempt_at LIMIT @limit`,
      { namespace: 'n', now: 1, limit: 10 },
    );
    expect(claim).toMatch(/^SEARCH d USING INDEX a2a_push_deliveries_pending \(namespace=\?\); SEARCH t USING/);
    expect(claim).toMatch(/sqlite_autoindex_a2a_tasks_1 \(namespace=\? AND task_id=\?\)/);
    expect(claim).not.toMatch(/TEMP B-TREE/);
    expect(
      queryPlan('UPDATE a2a_push_deliveries SET claim_until = @until WHERE namespace = @n AND claimed_by = @w', {
        until: 1,
        n: 'n',
        w: 'w',
      }),
    ).toMatch(/INDEX a2a_push_deliveries_by_worker/);
    // One task's configs: its key range, not the whole namespace.
    expect(
      queryPlan('SELECT * FROM a2a_push_configs WHERE namespace = @n AND task_id = @t ORDER BY created_at, rowid', {
        n: 'n',
        t: 't',
      }),
    ).toMatch(/\(namespace=\? AND task_id=\?\)/);
  });

  it('a task deleted by a statement that knows nothing of push (a previous release purging) takes its configs along', async () => {
    const store = await openStore();
    for (const id of ['gone', 'kept']) {
      await createTask(store, taskFixture({ id, state: 'completed' }));
      await store.savePushConfig({
        taskId: id,
        config: { id: 'cfg', url: 'https://h.example.com/' },
        protocolVersion: '1.0',
      });
    }
    const db = new Database(filename);
    db.prepare("DELETE FROM a2a_tasks WHERE task_id = 'gone'").run();
    const rows = (table: string) => db.prepare(`SELECT task_id FROM ${table} ORDER BY task_id`).pluck().all();
    expect(rows('a2a_push_configs')).toEqual(['kept']);
    expect(rows('a2a_push_deliveries')).toEqual(['kept']);
    db.close();
  });

  it('keeps tokens and credentials as given, in a2a_push_configs only', async () => {
    const store = await openStore();
    await createTask(store, taskFixture({ id: 'task' }));
    const config = {
      id: 'cfg',
      url: 'https://hooks.example.com/',
      token: 'the-token',
      authentication: { schemes: ['Bearer'], credentials: 'the-credentials' },
    };
    await store.savePushConfig({ taskId: 'task', config, protocolVersion: '1.0' });
    const db = new Database(filename, { readonly: true });
    const stored = db.prepare('SELECT config_json FROM a2a_push_configs').pluck().get() as string;
    const deliveries = JSON.stringify(db.prepare('SELECT * FROM a2a_push_deliveries').all());
    db.close();
    expect(JSON.parse(stored)).toEqual(config);
    expect(deliveries).not.toMatch(/the-token|the-credentials/);
  });
});

describe('push claims across processes', () => {
  it('three processes claiming push deliveries at once: each delivery goes to exactly one', async () => {
    const store = await openStore();
    const all: string[] = [];
    for (let i = 0; i < 20; i++) {
      await createTask(store, taskFixture({ id: `task-${i}`, state: 'working' }));
      for (const id of ['a', 'b']) {
        await store.savePushConfig({
          taskId: `task-${i}`,
          config: { id, url: `https://hooks.example.com/${i}/${id}` },
          protocolVersion: '1.0',
        });
        all.push(`task-${i}/${id}`);
      }
    }
    const now = Date.now();
    const env = { START_AT: String(Date.now() + 2000) };
    const results = await Promise.all(
      [1, 2, 3].map((i) =>
        runChild(['claim-push', filename, JSON.stringify({ workerId: `w${i}`, now, limit: 3 })], env),
      ),
    );
    for (const result of results) expect(result.stderr).toBe('');
    const claimed = results.flatMap((result) => result.output?.pushClaims ?? []);
    expect(claimed.sort()).toEqual(all.sort());
    const byWorker = new Map((await store.listPushDeliveries()).map((d) => [d.config.config.url, d.state.claimedBy]));
    expect(new Set(byWorker.values())).not.toContain(null);
    console.info(`3 concurrent claimants got ${results.map((r) => r.output?.pushClaims?.length).join(' / ')}`);
  });
});
