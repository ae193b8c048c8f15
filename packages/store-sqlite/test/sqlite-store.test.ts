import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  A2AError,
  type Task,
  type TaskEvent,
  type TaskStatusUpdateEvent,
  VersionConflictError,
} from '@fastify-a2a/core';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SqliteStore, type SqliteStoreOptions } from '../src/index.js';
import { makeTask, manualClock, tempDir } from './helpers.js';

let dir: string;
let remove: () => void;
const stores: SqliteStore[] = [];

beforeEach(() => {
  ({ dir, remove } = tempDir());
});
afterEach(async () => {
  vi.useRealTimers();
  for (const store of stores.splice(0)) await store.close();
  remove();
});

async function openStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  const store = new SqliteStore(options);
  stores.push(store);
  await store.open();
  return store;
}

const status = (task: Task, state: Task['status']['state']): TaskStatusUpdateEvent => ({
  kind: 'status-update',
  taskId: task.id,
  contextId: task.contextId,
  status: { state },
  final: false,
});

/** Creates `task` (version 1). */
const create = (store: SqliteStore, task: Task) =>
  store.commit({ taskId: task.id, expectedVersion: 0, task, events: [task] });

/** Moves `task` to `state` with one status-update, expecting `version`. */
function move(store: SqliteStore, task: Task, state: Task['status']['state'], version: number) {
  const next: Task = { ...task, status: { state } };
  return store.commit({ taskId: task.id, expectedVersion: version, task: next, events: [status(task, state)] });
}

describe('options', () => {
  it('rejects missing or contradictory options with INVALID_OPTIONS', () => {
    const invalid: unknown[] = [
      undefined,
      {},
      { filename: '' },
      { filename: 'x.db', namespace: '' },
      { filename: 'x.db', busyTimeoutMs: -1 },
      { filename: 'x.db', pollIntervalMs: 0 },
      { filename: 'x.db', clock: 5 },
      { filename: 'x.db', onListenerError: 'log' },
      { filename: 'x.db', database: new Database(':memory:') },
    ];
    for (const options of invalid) {
      expect(() => new SqliteStore(options as SqliteStoreOptions)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTIONS' }),
      );
    }
  });

  it('does not mutate the options object and touches no file before open()', async () => {
    const filename = join(dir, 'sub', 'a2a.db');
    const options = Object.freeze({ filename, namespace: 'agent-a' });
    const store = new SqliteStore(options);
    stores.push(store);
    expect(options).toEqual({ filename, namespace: 'agent-a' });
    expect(existsSync(join(dir, 'sub'))).toBe(false);
    expect(store.namespace).toBe('agent-a');
    await store.open();
    expect(existsSync(filename)).toBe(true);
  });

  it('declares its capabilities: durable and cross-process only for files', () => {
    expect(new SqliteStore({ filename: join(dir, 'a.db') }).supports).toEqual({
      durable: true,
      crossProcess: true,
      ttl: true,
      namespaces: true,
      listTasks: true,
      push: true,
      interruptedTasks: true,
      cluster: true,
      // Advice rather than a capability: the runtime's default streamCommitIntervalMs, on a file only.
      streamCommitIntervalMs: 25,
    });
    expect(new SqliteStore({ filename: ':memory:' }).supports).toEqual({
      durable: false,
      crossProcess: false,
      ttl: true,
      namespaces: true,
      listTasks: true,
      push: true,
      interruptedTasks: true,
      cluster: true,
    });
    const memory = new Database(':memory:');
    expect(new SqliteStore({ database: memory }).supports.durable).toBe(false);
    memory.close();
  });
});

describe('open and connection settings', () => {
  it('creates missing parent directories', async () => {
    const filename = join(dir, 'a', 'b', 'c', 'a2a.db');
    await openStore({ filename });
    expect(existsSync(filename)).toBe(true);
  });

  it('turns WAL on for a file, with synchronous=NORMAL and the busy timeout', async () => {
    const filename = join(dir, 'a2a.db');
    const database = new Database(filename);
    await openStore({ database, busyTimeoutMs: 1234 });
    expect(database.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(database.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(database.pragma('busy_timeout', { simple: true })).toBe(1234);
    database.close();
    // WAL is a property of the file: a fresh connection sees it too.
    await openStore({ filename });
    const other = new Database(filename, { readonly: true });
    expect(other.pragma('journal_mode', { simple: true })).toBe('wal');
    other.close();
  });

  it('waits (up to busyTimeoutMs) for another connection holding the write lock while switching a new file to WAL', async () => {
    // SQLite does not call the busy handler when the switch upgrades its read lock to a write
    // lock, so without retries open() failed at once: two processes opening a new file together.
    const filename = join(dir, 'a2a.db');
    const holder = new Database(filename);
    holder.exec('CREATE TABLE unrelated (x INTEGER)');
    holder.exec('BEGIN IMMEDIATE');
    const release = setTimeout(() => holder.exec('COMMIT'), 300);
    const started = Date.now();
    try {
      await openStore({ filename, busyTimeoutMs: 5000 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      const fresh = new Database(filename, { readonly: true });
      expect(fresh.pragma('journal_mode', { simple: true })).toBe('wal');
      fresh.close();
    } finally {
      clearTimeout(release);
      holder.close();
    }
  });

  it('gives up switching to WAL after busyTimeoutMs with STORE_UNAVAILABLE saying the file is locked', async () => {
    const filename = join(dir, 'a2a.db');
    const holder = new Database(filename);
    holder.exec('CREATE TABLE unrelated (x INTEGER)');
    holder.exec('BEGIN IMMEDIATE');
    const started = Date.now();
    try {
      await expect(new SqliteStore({ filename, busyTimeoutMs: 200 }).open()).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
        message: expect.stringMatching(/is locked/),
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    } finally {
      holder.close();
    }
  });

  it('never turns WAL on for :memory:', async () => {
    const database = new Database(':memory:');
    await openStore({ database });
    expect(database.pragma('journal_mode', { simple: true })).toBe('memory');
    database.close();
    // And a store that opens ':memory:' itself works.
    const store = await openStore({ filename: ':memory:' });
    const task = makeTask('t1', 'c1');
    await create(store, task);
    expect((await store.getTask('t1'))?.version).toBe(1);
  });

  it('fails at open() with STORE_UNAVAILABLE naming the path when the parent is a file', async () => {
    writeFileSync(join(dir, 'not-a-dir'), 'x');
    const filename = join(dir, 'not-a-dir', 'a2a.db');
    const store = new SqliteStore({ filename });
    const error = await store.open().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(A2AError.is(error)).toBe(true);
    expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE', data: { filename } });
    expect((error as Error).message).toContain(filename);
    await expect(store.ping()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });

  it('fails at open() naming the path when the filename is a directory', async () => {
    const filename = join(dir, 'a-directory');
    mkdirSync(filename);
    const store = new SqliteStore({ filename });
    await expect(store.open()).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringContaining(filename),
    });
  });

  // Regression: Node 20's recursive mkdirSync never returns under /proc; open() used to hang here.
  it('fails at open() naming the path when its directory cannot be written', async () => {
    // Not a chmod 0555 directory: root writes there anyway. Nobody, root included, creates
    // directories or files in /proc.
    const filename = join('/proc', `a2a-test-${process.pid}`, 'a2a.db');
    await expect(new SqliteStore({ filename }).open()).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringContaining(filename),
    });
  });

  it('refuses to work before open() and after close(), by rejecting (never throwing)', async () => {
    const store = new SqliteStore({ filename: join(dir, 'a2a.db') });
    const before = store.getTask('t1');
    await expect(before).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringMatching(/open\(\)/),
    });
    await expect(store.ping()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await store.open();
    await store.ping();
    await store.close();
    await store.close();
    await expect(store.ping()).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringMatching(/closed/),
    });
    await expect(create(store, makeTask('t1', 'c1'))).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });

  it('can be opened again after close(), keeping the data', async () => {
    const store = await openStore({ filename: join(dir, 'a2a.db') });
    await create(store, makeTask('t1', 'c1'));
    await store.close();
    await store.open();
    expect((await store.getTask('t1'))?.version).toBe(1);
  });

  it('leaves a database handle it was given open', async () => {
    const database = new Database(join(dir, 'a2a.db'));
    const store = await openStore({ database });
    await store.close();
    expect(database.open).toBe(true);
    expect(database.prepare('SELECT count(*) FROM a2a_tasks').pluck().get()).toBe(0);
    database.close();
  });

  it('ping rejects with STORE_UNAVAILABLE when a given handle was closed by its owner', async () => {
    const database = new Database(join(dir, 'a2a.db'));
    const store = await openStore({ database });
    database.close();
    await expect(store.ping()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });

  it('maps a lock held past busyTimeoutMs to STORE_UNAVAILABLE saying the database is locked', async () => {
    const filename = join(dir, 'a2a.db');
    const store = await openStore({ filename, busyTimeoutMs: 50 });
    const other = new Database(filename);
    other.exec('BEGIN IMMEDIATE');
    try {
      const error = await create(store, makeTask('t1', 'c1')).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE', data: { filename, sqliteCode: 'SQLITE_BUSY' } });
      expect((error as Error).message).toMatch(/locked.*busyTimeoutMs \(50 ms\)/);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    // Nothing was half-written, and the store works again once the lock is gone.
    expect(await store.getTask('t1')).toBeUndefined();
    await create(store, makeTask('t1', 'c1'));
  });

  it('rejects with the abort reason when the call context is already aborted', async () => {
    const store = await openStore({ filename: join(dir, 'a2a.db') });
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await expect(store.getTask('t1', { signal: controller.signal })).rejects.toThrow('gone');
  });
});

describe('commits', () => {
  it('stores the snapshot, state column and events in one transaction', async () => {
    const filename = join(dir, 'a2a.db');
    const clock = manualClock();
    const store = await openStore({ filename, clock: clock.now });
    const task = makeTask('t1', 'c1');
    expect(await create(store, task)).toEqual({ version: 1 });
    expect(await store.readEvents(task.id, 0)).toEqual([{ seq: 1, event: task, createdAt: clock.now() }]);
    clock.advance(10);
    await move(store, task, 'working', 1);

    const db = new Database(filename, { readonly: true });
    expect(
      db.prepare('SELECT namespace, task_id, context_id, state, version, created_at, updated_at FROM a2a_tasks').all(),
    ).toEqual([
      {
        namespace: 'default',
        task_id: 't1',
        context_id: 'c1',
        state: 'working',
        version: 2,
        created_at: clock.now() - 10,
        updated_at: clock.now(),
      },
    ]);
    expect(db.prepare('SELECT seq FROM a2a_events ORDER BY seq').pluck().all()).toEqual([1, 2]);
    db.close();
  });

  it('rejects an empty event list without writing', async () => {
    const store = await openStore({ filename: join(dir, 'a2a.db') });
    const task = makeTask('t1', 'c1');
    await expect(store.commit({ taskId: 't1', expectedVersion: 0, task, events: [] })).rejects.toBeInstanceOf(A2AError);
    expect(await store.getTask('t1')).toBeUndefined();
  });

  it('rejects a snapshot of another task with INTERNAL, without writing', async () => {
    const store = await openStore({ filename: join(dir, 'a2a.db') });
    const other = makeTask('t2', 'c1');
    await expect(
      store.commit({ taskId: 't1', expectedVersion: 0, task: other, events: [other] }),
    ).rejects.toMatchObject({ code: 'INTERNAL', message: expect.stringMatching(/"t1".*"t2"/) });
    expect(await store.getTask('t1')).toBeUndefined();
    expect(await store.getTask('t2')).toBeUndefined();
  });

  it('a conflict between two store instances on one file (like two processes) loses nothing', async () => {
    const filename = join(dir, 'a2a.db');
    const a = await openStore({ filename });
    const b = await openStore({ filename });
    const task = makeTask('t1', 'c1');
    await create(a, task);
    expect((await b.getTask('t1'))?.version).toBe(1);
    await move(b, task, 'working', 1);

    const error = await move(a, task, 'canceled', 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VersionConflictError);
    expect(error).toMatchObject({ code: 'VERSION_CONFLICT', data: { taskId: 't1', expected: 1, actual: 2 } });
    // Creating an existing task is a conflict too, as is updating a missing one.
    await expect(create(b, task)).rejects.toBeInstanceOf(VersionConflictError);
    await expect(move(a, makeTask('t2', 'c1'), 'working', 1)).rejects.toMatchObject({
      data: { taskId: 't2', expected: 1, actual: undefined },
    });

    for (const store of [a, b]) {
      expect(await store.getTask('t1')).toMatchObject({ version: 2, task: { status: { state: 'working' } } });
      expect((await store.readEvents('t1', 0)).map((e) => e.event.kind)).toEqual(['task', 'status-update']);
    }
    // A writer that reloads succeeds.
    await move(a, task, 'canceled', 2);
    expect((await b.getTask('t1'))?.task.status.state).toBe('canceled');
  });

  it('racing writers on two instances: exactly one wins each version', async () => {
    const filename = join(dir, 'a2a.db');
    const a = await openStore({ filename });
    const b = await openStore({ filename });
    const task = makeTask('t1', 'c1');
    await create(a, task);
    const results = await Promise.allSettled([move(a, task, 'working', 1), move(b, task, 'failed', 1)]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((await a.readEvents('t1', 0)).map((e) => e.seq)).toEqual([1, 2]);
  });
});

describe('reads', () => {
  it('readEvents pages with afterSeq and limit', async () => {
    const store = await openStore({ filename: join(dir, 'a2a.db') });
    const task = makeTask('t1', 'c1');
    const events: TaskEvent[] = [task, status(task, 'working'), status(task, 'working'), status(task, 'completed')];
    await store.commit({ taskId: 't1', expectedVersion: 0, task, events });
    expect((await store.readEvents('t1', 0)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect((await store.readEvents('t1', 1, 2)).map((e) => e.seq)).toEqual([2, 3]);
    expect(await store.readEvents('t1', 4)).toEqual([]);
    expect(await store.readEvents('t1', 0, 0)).toEqual([]);
    expect(await store.readEvents('nope', 0)).toEqual([]);
  });

  it('lists tasks of a context oldest first (insertion order within one millisecond), with a limit', async () => {
    const clock = manualClock();
    const store = await openStore({ filename: join(dir, 'a2a.db'), clock: clock.now });
    for (const id of ['z', 'a', 'm']) await create(store, makeTask(id, 'c1'));
    clock.advance(-5); // an earlier createdAt sorts first even when inserted last
    await create(store, makeTask('early', 'c1'));
    await create(store, makeTask('other', 'c2'));
    expect((await store.listTasksByContext('c1')).map((r) => r.task.id)).toEqual(['early', 'z', 'a', 'm']);
    expect((await store.listTasksByContext('c1', { limit: 2 })).map((r) => r.task.id)).toEqual(['early', 'z']);
    expect(await store.listTasksByContext('none')).toEqual([]);
  });

  it('lists active tasks: submitted, working and unknown only', async () => {
    const store = await openStore({ filename: join(dir, 'a2a.db') });
    const states = ['submitted', 'working', 'unknown', 'input-required', 'auth-required', 'completed', 'canceled'];
    for (const state of states) await create(store, makeTask(state, 'c1', state as Task['status']['state']));
    expect((await store.listActiveTasks()).map((r) => r.task.id).sort()).toEqual(['submitted', 'unknown', 'working']);
  });

  it('contexts: set, replace, read back; undefined state reads back as null', async () => {
    const clock = manualClock();
    const store = await openStore({ filename: join(dir, 'a2a.db'), clock: clock.now });
    expect(await store.getContext('c1')).toBeUndefined();
    const state = { upstream: 'conv-1', nested: [1, { x: null }] };
    await store.setContext('c1', state);
    state.upstream = 'mutated';
    expect(await store.getContext('c1')).toEqual({
      contextId: 'c1',
      state: { upstream: 'conv-1', nested: [1, { x: null }] },
      updatedAt: clock.now(),
    });
    clock.advance(5);
    await store.setContext('c1', 'replaced');
    expect(await store.getContext('c1')).toEqual({ contextId: 'c1', state: 'replaced', updatedAt: clock.now() });
    await store.setContext('c1', undefined);
    expect((await store.getContext('c1'))?.state).toBeNull();
  });
});

describe('namespaces', () => {
  it('isolate agents sharing one file', async () => {
    const filename = join(dir, 'a2a.db');
    const clock = manualClock();
    const a = await openStore({ filename, namespace: 'a', clock: clock.now });
    const b = await openStore({ filename, namespace: 'b', clock: clock.now });
    const task = makeTask('t1', 'c1', 'completed');
    await create(a, task);
    await a.setContext('c1', 'from a');
    expect(await b.getTask('t1')).toBeUndefined();
    expect(await b.getContext('c1')).toBeUndefined();
    expect(await b.listTasksByContext('c1')).toEqual([]);
    // The same ids are independent in each namespace.
    await create(b, { ...task, status: { state: 'working' } });
    expect(await b.listActiveTasks()).toHaveLength(1);
    expect(await a.listActiveTasks()).toHaveLength(0);

    const notified: number[] = [];
    b.subscribe('t1', (seq) => notified.push(seq));
    await move(a, task, 'completed', 1);
    expect(notified).toEqual([]);

    clock.advance(1000);
    expect(await b.purgeExpired(clock.now())).toEqual({ tasks: 0, contexts: 0 });
    expect(await a.purgeExpired(clock.now())).toEqual({ tasks: 1, contexts: 1 });
    expect(await b.getTask('t1')).toBeDefined();
  });
});

describe('purgeExpired', () => {
  it('deletes old terminal tasks with their events, and old contexts left without tasks', async () => {
    const filename = join(dir, 'a2a.db');
    const clock = manualClock();
    const store = await openStore({ filename, clock: clock.now });
    for (const state of ['completed', 'canceled', 'failed', 'rejected'] as const) {
      await create(store, makeTask(`old-${state}`, 'old-ctx', state));
    }
    await create(store, makeTask('old-working', 'busy-ctx', 'working'));
    await create(store, makeTask('old-input', 'busy-ctx', 'input-required'));
    await store.setContext('old-ctx', 1);
    await store.setContext('busy-ctx', 2);
    await store.setContext('lonely-ctx', 3);
    clock.advance(100);
    const cutoff = clock.now();
    await create(store, makeTask('new-completed', 'new-ctx', 'completed'));
    await store.setContext('new-ctx', 4);
    clock.advance(100);

    expect(await store.purgeExpired(cutoff)).toEqual({ tasks: 4, contexts: 2 });
    expect(await store.getTask('old-completed')).toBeUndefined();
    expect(await store.readEvents('old-completed', 0)).toEqual([]);
    expect(await store.getTask('old-working')).toBeDefined();
    expect(await store.getTask('old-input')).toBeDefined();
    expect(await store.getTask('new-completed')).toBeDefined();
    expect(await store.getContext('old-ctx')).toBeUndefined();
    expect(await store.getContext('lonely-ctx')).toBeUndefined();
    expect(await store.getContext('busy-ctx')).toBeDefined();
    expect(await store.getContext('new-ctx')).toBeDefined();

    const db = new Database(filename, { readonly: true });
    expect(db.prepare("SELECT count(*) FROM a2a_events WHERE task_id LIKE 'old-%'").pluck().get()).toBe(2);
    db.close();
    expect(await store.purgeExpired(cutoff)).toEqual({ tasks: 0, contexts: 0 });
  });
});

describe('subscribe', () => {
  it('notifies local subscribers right after a commit, until they unsubscribe', async () => {
    const store = await openStore({ filename: join(dir, 'a2a.db') });
    const task = makeTask('t1', 'c1');
    const first: number[] = [];
    const second: number[] = [];
    const stopFirst = store.subscribe('t1', (seq) => first.push(seq));
    store.subscribe('t1', (seq) => second.push(seq));
    store.subscribe('t2', () => {
      throw new Error('must not be called');
    });
    await create(store, task);
    expect(first).toEqual([1]);
    stopFirst();
    stopFirst();
    await store.commit({
      taskId: 't1',
      expectedVersion: 1,
      task,
      events: [status(task, 'working'), status(task, 'working')],
    });
    expect(first).toEqual([1]);
    expect(second).toEqual([1, 3]);
  });

  it('a throwing listener neither fails the commit nor starves other listeners; onListenerError hears it', async () => {
    const reported: [unknown, string][] = [];
    const store = await openStore({
      filename: join(dir, 'a2a.db'),
      onListenerError: (error, taskId) => reported.push([error, taskId]),
    });
    const seen: number[] = [];
    const bug = new Error('listener bug');
    store.subscribe('t1', () => {
      throw bug;
    });
    store.subscribe('t1', (seq) => seen.push(seq));
    await expect(create(store, makeTask('t1', 'c1'))).resolves.toEqual({ version: 1 });
    expect(seen).toEqual([1]);
    expect(reported).toEqual([[bug, 't1']]);
  });

  it('notices commits made through another connection to the file', async () => {
    const filename = join(dir, 'a2a.db');
    const writer = await openStore({ filename });
    const reader = await openStore({ filename, pollIntervalMs: 10 });
    const task = makeTask('t1', 'c1');
    const seen: number[] = [];
    reader.subscribe('t1', (seq) => seen.push(seq));
    await create(writer, task);
    await vi.waitFor(() => expect(seen.at(-1)).toBe(1), { timeout: 5000, interval: 10 });
    await writer.commit({
      taskId: 't1',
      expectedVersion: 1,
      task,
      events: [status(task, 'working'), status(task, 'working')],
    });
    await vi.waitFor(() => expect(seen.at(-1)).toBe(3), { timeout: 5000, interval: 10 });
    // Each version is reported once, in increasing order.
    expect(seen).toEqual([...new Set(seen)].sort((x, y) => x - y));
  });

  it('a subscriber joining late is told only about commits after it subscribed', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const filename = join(dir, 'a2a.db');
    const writer = await openStore({ filename });
    const reader = await openStore({ filename });
    const task = makeTask('t1', 'c1');
    await create(writer, task);
    const seen: number[] = [];
    reader.subscribe('t1', (seq) => seen.push(seq));
    vi.advanceTimersByTime(200);
    expect(seen).toEqual([]);
    await move(writer, task, 'working', 1);
    vi.advanceTimersByTime(50);
    expect(seen).toEqual([2]);
    vi.advanceTimersByTime(200);
    expect(seen).toEqual([2]);
  });

  it('reports a purged task id created again by another connection', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const filename = join(dir, 'a2a.db');
    const clock = manualClock();
    const writer = await openStore({ filename, clock: clock.now });
    const reader = await openStore({ filename });
    const done = makeTask('t1', 'c1', 'completed');
    await writer.commit({ taskId: 't1', expectedVersion: 0, task: done, events: [done, status(done, 'completed')] });
    const seen: number[] = [];
    reader.subscribe('t1', (seq) => seen.push(seq));
    clock.advance(1000);
    expect(await writer.purgeExpired(clock.now())).toEqual({ tasks: 1, contexts: 0 });
    await create(writer, makeTask('t1', 'c1'));
    vi.advanceTimersByTime(50);
    expect(seen).toEqual([1]);
  });

  it('runs one poll timer only while a file store has subscribers', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const store = await openStore({ filename: join(dir, 'a2a.db') });
    expect(vi.getTimerCount()).toBe(0);
    const stopA = store.subscribe('t1', () => {});
    const stopB = store.subscribe('t2', () => {});
    const stopC = store.subscribe('t2', () => {});
    expect(vi.getTimerCount()).toBe(1);
    stopA();
    stopB();
    expect(vi.getTimerCount()).toBe(1);
    stopC();
    expect(vi.getTimerCount()).toBe(0);
    store.subscribe('t1', () => {});
    expect(vi.getTimerCount()).toBe(1);
    await store.close();
    expect(vi.getTimerCount()).toBe(0);

    const memory = await openStore({ filename: ':memory:' });
    memory.subscribe('t1', () => {});
    expect(vi.getTimerCount()).toBe(0);
  });
});
