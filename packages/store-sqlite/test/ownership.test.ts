/**
 * SQLite specifics of task ownership: migration 5 on a file the previous release wrote (tasks
 * without owners, message ids indexed before scopes existed), the query plans of owner-filtered
 * listings and of the scoped message index, and what processes of the previous release meet after
 * the step. What ownership means is checked by the conformance suite.
 */

import { join } from 'node:path';
import { DuplicateMessageError, type Message, type Task } from '@fastify-a2a/core';
import { createTask, indexEntry, taskFixture, userMessage } from '@fastify-a2a/core/testing';
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

/** A file as release 4 left it, with `write` run on it (tables of steps 1 to 4, no owners). */
function fileAtVersion4(write: (db: Database.Database) => void): void {
  const db = new Database(filename);
  try {
    migrate(db, Date.now, migrations.slice(0, 4));
    write(db);
  } finally {
    db.close();
  }
}

/** A task with its first message, its log and its index row, as release 4's commit wrote them. */
function commitAsVersion4(db: Database.Database, namespace: string, task: Task): void {
  db.prepare(
    `INSERT INTO a2a_tasks (namespace, task_id, context_id, state, status_ts, version, task_json, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 1, ?, 1, 1)`,
  ).run(
    namespace,
    task.id,
    task.contextId,
    task.status.state,
    Date.parse(task.status.timestamp ?? ''),
    JSON.stringify(task),
  );
  db.prepare('INSERT INTO a2a_events (namespace, task_id, seq, event_json, created_at) VALUES (?, ?, 1, ?, 1)').run(
    namespace,
    task.id,
    JSON.stringify(task),
  );
  const first = task.history?.[0];
  if (first?.role === 'user') {
    db.prepare('INSERT INTO a2a_messages (namespace, message_id, task_id, context_id) VALUES (?, ?, ?, ?)').run(
      namespace,
      first.messageId,
      task.id,
      task.contextId,
    );
  }
}

const started = (id: string, messageId: string, state: Task['status']['state'] = 'working') =>
  taskFixture({ id, contextId: `ctx-${id}`, state, history: [userMessage(id, { messageId })] });

describe('migration 5 (ownership)', () => {
  it('upgrades a version-4 file: old tasks read back without an owner, old message ids are in the anonymous scope', async () => {
    const old = started('old', 'm-old');
    const done = started('old-done', 'm-done', 'completed');
    const elsewhere = started('elsewhere', 'm-old');
    fileAtVersion4((db) => {
      commitAsVersion4(db, 'default', old);
      commitAsVersion4(db, 'default', done);
      commitAsVersion4(db, 'other', elsewhere);
    });

    const store = await openStore();
    const check = new Database(filename, { readonly: true });
    expect(check.prepare(`SELECT max(version) FROM ${MIGRATIONS_TABLE}`).pluck().get()).toBe(
      Math.max(...migrations.map((step) => step.version)),
    );
    expect(check.prepare("SELECT owner, digest FROM a2a_messages WHERE message_id = 'm-old'").all()).toEqual([
      { owner: '', digest: null },
      { owner: '', digest: null },
    ]);
    check.close();

    // Records as before: no owner property, not null.
    const record = await store.getTask('old');
    expect(record).toEqual({ task: old, version: 1, createdAt: 1, updatedAt: 1 });
    expect(Object.hasOwn(record ?? {}, 'owner')).toBe(false);
    expect((await store.listTasks({ limit: 10, owner: null })).records.map((r) => r.task.id)).toEqual([
      'old-done',
      'old',
    ]);
    expect(await store.listTasks({ limit: 10, owner: 'alice' })).toEqual({ records: [], total: 0 });

    // The old entries are found in the anonymous scope, without a digest, and still refuse a retry there.
    expect(await store.findMessage('m-old')).toEqual({ taskId: 'old', contextId: 'ctx-old' });
    expect(await store.findMessage('m-old', undefined, 'alice')).toBeUndefined();
    await expect(createTask(store, started('retry', 'm-old'))).rejects.toBeInstanceOf(DuplicateMessageError);
    const other = await openStore('other');
    expect(await other.findMessage('m-old')).toEqual({ taskId: 'elsewhere', contextId: 'ctx-elsewhere' });

    // A principal may use the id now, and a new commit records its digest.
    const ofAlice = started('of-alice', 'm-old');
    await createTask(store, ofAlice, [], 'alice');
    expect(await store.findMessage('m-old', undefined, 'alice')).toEqual(
      indexEntry(ofAlice, ofAlice.history?.[0] as Message),
    );
    expect((await store.getTask('of-alice'))?.owner).toBe('alice');
    expect((await store.listTasks({ limit: 10, owner: 'alice' })).records.map((r) => r.task.id)).toEqual(['of-alice']);

    // Purging an old task takes its old index row along.
    expect((await store.purgeExpired(2)).tasks).toBe(1);
    expect(await store.findMessage('m-done')).toBeUndefined();
    await createTask(store, started('again', 'm-done'));
  });

  it('a process of the previous release fails its commits of user messages after the step (restart it)', async () => {
    fileAtVersion4(() => {});
    // A connection of release 4, with its statement prepared before the upgrade.
    const previous = new Database(filename);
    try {
      const indexMessage = previous.prepare(
        `INSERT INTO a2a_messages (namespace, message_id, task_id, context_id) VALUES (?, ?, ?, ?)
         ON CONFLICT (namespace, message_id) DO NOTHING`,
      );
      await openStore();
      expect(() => indexMessage.run('default', 'm', 't', 'c')).toThrow(/ON CONFLICT clause does not match/);
      // Its reads and its other writes still work.
      expect(previous.prepare("SELECT count(*) FROM a2a_messages WHERE namespace = 'default'").pluck().get()).toBe(0);
    } finally {
      previous.close();
    }
  });
});

describe('query plans (ownership)', () => {
  it('one owner’s page is a range of the owner index, read in order, whatever the other filters but a context', async () => {
    await openStore();
    const columns = 'task_json, version, created_at, updated_at, owner, status_ts, task_id';
    const after = "AND (status_ts, task_id) < (5, 'x')";
    const cases: [string, string, RegExp][] = [
      [
        'a2a_tasks_by_owner_status_ts',
        "AND owner IS 'alice'",
        /a2a_tasks_by_owner_status_ts \(namespace=\? AND owner=\? AND \(status_ts,task_id\)<\(\?,\?\)\)/,
      ],
      [
        'a2a_tasks_by_owner_status_ts',
        'AND owner IS NULL',
        /a2a_tasks_by_owner_status_ts \(namespace=\? AND owner=\? AND \(status_ts,task_id\)<\(\?,\?\)\)/,
      ],
      [
        'a2a_tasks_by_owner_status_ts',
        "AND owner IS 'alice' AND state = 'working' AND status_ts >= 3",
        /a2a_tasks_by_owner_status_ts \(namespace=\? AND owner=\? AND status_ts>\? AND \(status_ts,task_id\)<\(\?,\?\)\)/,
      ],
      [
        'a2a_tasks_by_context_status_ts',
        "AND owner IS 'alice' AND context_id = 'c'",
        /a2a_tasks_by_context_status_ts \(namespace=\? AND context_id=\? AND \(status_ts,task_id\)<\(\?,\?\)\)/,
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
    // The owner's total reads the owner index only.
    expect(
      queryPlan(
        "SELECT count(*) FROM a2a_tasks INDEXED BY a2a_tasks_by_owner_status_ts WHERE namespace = 'n' AND owner IS 'alice'",
      ),
    ).toMatch(/COVERING INDEX a2a_tasks_by_owner_status_ts \(namespace=\? AND owner=\?\)/);
  });

  it('the message index is looked up by its key in the owner’s scope; a purge finds a task’s rows by index', async () => {
    await openStore();
    expect(
      queryPlan(
        "SELECT task_id, context_id, digest FROM a2a_messages WHERE namespace = 'n' AND owner = '' AND message_id = 'm'",
      ),
    ).toMatch(
      /SEARCH a2a_messages USING INDEX sqlite_autoindex_a2a_messages_1 \(namespace=\? AND message_id=\? AND owner=\?\)/,
    );
    expect(queryPlan("DELETE FROM a2a_messages WHERE namespace = 'n' AND task_id = 't'")).toMatch(
      /INDEX a2a_messages_by_task/,
    );
  });
});
