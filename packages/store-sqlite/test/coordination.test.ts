/**
 * SQLite specifics of the coordination store (turn queue, worker leases, message index): the
 * schema and its query plans, the upgrade from a version-1 file, wake-ups of turn waiters, and
 * lifecycle errors. The behaviour itself is checked by the conformance suite; child processes are
 * in cross-process.test.ts.
 */

import { join } from 'node:path';
import {
  A2AError,
  DuplicateMessageError,
  type Message,
  messageDigest,
  type QueueSlot,
  type Task,
} from '@fastify-a2a/core';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MIGRATIONS_TABLE, migrate, migrations, SqliteStore, type SqliteStoreOptions } from '../src/index.js';
import { TASKS_UPDATED_SINCE_SQL } from '../src/statements.js';
import { makeTask, manualClock, tempDir } from './helpers.js';

let dir: string;
let remove: () => void;
let filename: string;
const stores: SqliteStore[] = [];

beforeEach(() => {
  ({ dir, remove } = tempDir());
  filename = join(dir, 'a2a.db');
});
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  remove();
});

async function openStore(options: Partial<SqliteStoreOptions> = {}): Promise<SqliteStore> {
  const store = new SqliteStore({ filename, pollIntervalMs: 10, ...options });
  stores.push(store);
  await store.open();
  return store;
}

const userMessage = (messageId: string): Message => ({
  kind: 'message',
  messageId,
  role: 'user',
  parts: [{ kind: 'text', text: messageId }],
});

const taskWith = (id: string, contextId: string, messageId: string, state: Task['status']['state'] = 'submitted') => ({
  ...makeTask(id, contextId, state),
  history: [userMessage(messageId)],
});

const create = (store: SqliteStore, task: Task) =>
  store.commit({ taskId: task.id, expectedVersion: 0, task, events: [task] });

const request = (contextId: string, n: number, workerId = 'worker') => ({
  contextId,
  taskId: `task-${n}`,
  messageId: `turn-${n}`,
  workerId,
});

/** EXPLAIN QUERY PLAN details of `sql`, on a read-only connection. */
function queryPlan(sql: string, ...params: unknown[]): string {
  const db = new Database(filename, { readonly: true });
  try {
    return db
      .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
      .all(...params)
      .map((row) => row.detail)
      .join('; ');
  } finally {
    db.close();
  }
}

describe('subscribeAll poll (migration 7)', () => {
  it('seeks in the (namespace, state, updated_at) index; no index of its own on updated_at', async () => {
    await openStore();
    const db = new Database(filename, { readonly: true });
    const indexes = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'a2a_tasks'")
      .pluck()
      .all();
    db.close();
    expect(indexes).not.toContain('a2a_tasks_by_updated_at');
    const plan = queryPlan(TASKS_UPDATED_SINCE_SQL, 'default', 0);
    expect(plan).toMatch(
      /SEARCH a2a_tasks USING INDEX a2a_tasks_by_state \(namespace=\? AND state=\? AND updated_at>\?\)/,
    );
  });
});

describe('schema (migration 2)', () => {
  it('creates the turn, worker and message tables; the hot queries use their indexes', async () => {
    await openStore();
    const db = new Database(filename, { readonly: true });
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'a2a_%' ORDER BY name")
      .pluck()
      .all();
    db.close();
    expect(tables).toEqual([
      'a2a_contexts',
      'a2a_events',
      'a2a_messages',
      MIGRATIONS_TABLE,
      'a2a_push_configs',
      'a2a_push_deliveries',
      'a2a_tasks',
      'a2a_turns',
      'a2a_workers',
    ]);

    // turnReadiness: a seek within one context, no sort.
    expect(
      queryPlan(
        'SELECT * FROM a2a_turns WHERE namespace = ? AND context_id = ? AND position < ? ORDER BY position DESC LIMIT 1',
        'n',
        'c',
        5,
      ),
    ).toMatch(
      /^SEARCH a2a_turns USING COVERING INDEX a2a_turns_by_context|^SEARCH a2a_turns USING INDEX a2a_turns_by_context/,
    );
    // listWorkerTurns / claimExpiredWorkers: one worker's turns in position order, no sort.
    const workerPlan = queryPlan(
      'SELECT * FROM a2a_turns WHERE namespace = ? AND worker_id = ? ORDER BY position',
      'n',
      'w',
    );
    expect(workerPlan).toMatch(/INDEX a2a_turns_by_worker/);
    expect(workerPlan).not.toMatch(/TEMP B-TREE/);
    expect(queryPlan('SELECT * FROM a2a_workers WHERE namespace = ? AND lease_until < ?', 'n', 1)).toMatch(
      /INDEX a2a_workers_by_lease/,
    );
    expect(queryPlan('DELETE FROM a2a_messages WHERE namespace = ? AND task_id = ?', 'n', 't')).toMatch(
      /INDEX a2a_messages_by_task/,
    );
  });

  it('upgrades a version-1 file on open, keeping its tasks and indexing the user messages already logged', async () => {
    const db = new Database(filename);
    migrate(db, Date.now, migrations.slice(0, 1));
    const insertTask = db.prepare<[string, string, string, number, string]>(
      `INSERT INTO a2a_tasks (namespace, task_id, context_id, state, version, task_json, created_at, updated_at)
       VALUES (?, ?, ?, 'submitted', ?, ?, 1, 1)`,
    );
    const insertEvent = db.prepare<[string, string, number, string]>(
      'INSERT INTO a2a_events (namespace, task_id, seq, event_json, created_at) VALUES (?, ?, ?, ?, 1)',
    );
    const log = (namespace: string, task: Task, ...more: unknown[]) => {
      insertTask.run(namespace, task.id, task.contextId, 1 + more.length, JSON.stringify(task));
      for (const [i, event] of [task, ...more].entries()) {
        insertEvent.run(namespace, task.id, i + 1, JSON.stringify(event));
      }
    };
    const old = taskWith('old', 'ctx', 'first-message');
    log('default', old, userMessage('follow-up'), {
      kind: 'status-update',
      taskId: 'old',
      contextId: 'ctx',
      status: { state: 'working', message: { ...userMessage('in-a-status'), role: 'agent' } },
      final: false,
    });
    // Logged later with a message id already used (the index did not exist yet): the first one wins.
    log('default', taskWith('later', 'ctx-2', 'follow-up'));
    log('default', { ...makeTask('agent-first', 'ctx-3'), history: [{ ...userMessage('agent-said'), role: 'agent' }] });
    log('other', taskWith('elsewhere', 'ctx-4', 'first-message'));
    db.close();

    const store = await openStore();
    expect((await store.getTask('old'))?.task).toEqual(old);
    expect(await store.findMessage('first-message')).toEqual({ taskId: 'old', contextId: 'ctx' });
    expect(await store.findMessage('follow-up')).toEqual({ taskId: 'old', contextId: 'ctx' });
    expect(await store.findMessage('in-a-status')).toBeUndefined();
    expect(await store.findMessage('agent-said')).toBeUndefined();
    const other = await openStore({ namespace: 'other' });
    expect(await other.findMessage('first-message')).toEqual({ taskId: 'elsewhere', contextId: 'ctx-4' });
    // A retry of a message sent before the upgrade is recognised.
    await expect(create(store, taskWith('retry', 'ctx', 'first-message'))).rejects.toBeInstanceOf(
      DuplicateMessageError,
    );
  });

  it('positions come from one counter: they grow across contexts and survive deleting every turn', async () => {
    const store = await openStore();
    const a = await store.enqueueTurn(request('ctx-a', 1));
    const b = await store.enqueueTurn(request('ctx-b', 2));
    await store.finishTurn(a);
    await store.finishTurn(b);
    const db = new Database(filename, { readonly: true });
    expect(db.prepare('SELECT count(*) FROM a2a_turns').pluck().get()).toBe(0);
    db.close();
    const c = await store.enqueueTurn(request('ctx-a', 3));
    expect([a.position, b.position, c.position]).toEqual([1, 2, 3]);
  });
});

describe('message index', () => {
  it('refuses a duplicate with DuplicateMessageError naming the task that has it', async () => {
    const store = await openStore();
    await create(store, taskWith('first', 'ctx-1', 'm1'));
    const error = await create(store, taskWith('second', 'ctx-2', 'm1')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateMessageError);
    expect(error).toMatchObject({
      code: 'DUPLICATE_MESSAGE',
      messageId: 'm1',
      data: { messageId: 'm1', taskId: 'first', contextId: 'ctx-1' },
    });
    expect(await store.getTask('second')).toBeUndefined();
  });

  it('purgeExpired drops the index rows of purged tasks, but never turn rows', async () => {
    const clock = manualClock();
    const store = await openStore({ clock: clock.now });
    await create(store, taskWith('done', 'ctx', 'm-done', 'completed'));
    await create(store, taskWith('live', 'ctx', 'm-live', 'working'));
    const slot = await store.enqueueTurn({ contextId: 'ctx', taskId: 'done', messageId: 'm-done', workerId: 'w' });
    clock.advance(10);
    expect(await store.purgeExpired(clock.now())).toEqual({ tasks: 1, contexts: 0 });
    expect(await store.findMessage('m-done')).toBeUndefined();
    expect(await store.findMessage('m-live')).toEqual({
      taskId: 'live',
      contextId: 'ctx',
      digest: messageDigest(userMessage('m-live')),
    });
    expect(await store.listWorkerTurns('w')).toEqual([slot]);
  });
});

describe('turn waiters', () => {
  it('finishTurn tells this store’s subscribers of the task (seq 0) once it removed the slot', async () => {
    const onListenerError = vi.fn();
    const store = await openStore({ onListenerError });
    const task = makeTask('t1', 'ctx');
    await create(store, task);
    const slot = await store.enqueueTurn({ contextId: 'ctx', taskId: 't1', messageId: 'turn', workerId: 'w' });
    const seen: number[] = [];
    store.subscribe('t1', () => {
      throw new Error('listener failed');
    });
    store.subscribe('t1', (seq) => seen.push(seq));

    await store.finishTurn(slot);
    expect(seen).toEqual([0]);
    expect(onListenerError).toHaveBeenCalledOnce();
    // Already gone: nothing to announce.
    await store.finishTurn(slot);
    expect(seen).toEqual([0]);
    // seq 0 is not taken for the task's version: the next commit is reported as usual.
    await store.commit({
      taskId: 't1',
      expectedVersion: 1,
      task: { ...task, status: { state: 'working' } },
      events: [{ kind: 'status-update', taskId: 't1', contextId: 'ctx', status: { state: 'working' }, final: false }],
    });
    expect(seen).toEqual([0, 2]);
  });

  it('a turn finished through another connection wakes this store’s subscribers through the poll loop', async () => {
    const waiter = await openStore();
    const finisher = await openStore();
    const first = await finisher.enqueueTurn(request('ctx', 1));
    const second = await waiter.enqueueTurn(request('ctx', 2));
    expect(await waiter.turnReadiness(second)).toEqual({ ready: false, ahead: first });

    const seen: number[] = [];
    waiter.subscribe(first.taskId, (seq) => seen.push(seq));
    // Some unrelated write by the other connection moves data_version but must not wake anyone.
    await finisher.heartbeat('w', Date.now() + 1000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual([]);

    await finisher.finishTurn(first);
    await vi.waitFor(() => expect(seen).toEqual([0]), { timeout: 2000, interval: 5 });
    expect(await waiter.turnReadiness(second)).toEqual({ ready: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual([0]);
  });
});

describe('lifecycle', () => {
  it('every coordination method rejects with STORE_UNAVAILABLE before open() and after close()', async () => {
    const slot: QueueSlot = { ...request('ctx', 1), position: 1 };
    const calls = (store: SqliteStore) => [
      store.heartbeat('w', 1),
      store.enqueueTurn(request('ctx', 1)),
      store.turnReadiness(slot),
      store.finishTurn(slot),
      store.claimExpiredWorkers(1),
      store.removeWorker('w'),
      store.listWorkerTurns('w'),
      store.findMessage('m'),
    ];
    const store = new SqliteStore({ filename });
    for (const call of calls(store)) await expect(call).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await store.open();
    await store.close();
    for (const call of calls(store)) {
      const error = await call.catch((e: unknown) => e);
      expect(A2AError.is(error) && error.code).toBe('STORE_UNAVAILABLE');
    }
  });
});
