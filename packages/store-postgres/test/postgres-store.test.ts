import { A2AError, applyEvents, type Task } from '@fastify-a2a/core';
import {
  appendEvents,
  appendWithRetry,
  artifactUpdate,
  createTask,
  eventually,
  isVersionConflict,
  largeText,
  taskFixture,
} from '@fastify-a2a/core/testing';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { PostgresStore, type PostgresStoreOptions } from '../src/index.js';
import { notificationChannel } from '../src/sql.js';

const db = withPostgres('pgstore');

/** Every store a test opens, closed after it (last first). */
const opened: PostgresStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0).reverse()) await store.close();
});

async function openStore(options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const store = new PostgresStore({ connectionString: db.url, schema: db.schema, ...options });
  opened.push(store);
  await store.open();
  return store;
}

/** The application_name of a store's LISTEN connection (internal, so tests can find and kill it). */
const listenerAppOf = (store: PostgresStore): string =>
  `fastify-a2a listen ${notificationChannel(store.schema, store.namespace)}`;

/** A namespace of one test's own, so its LISTEN connection is the only one on its channel. */
const freshNamespace = (): string => `ns_${Math.random().toString(36).slice(2)}`;

const rejection = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );

const backends = async (applicationName: string): Promise<number> =>
  (
    await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [
      applicationName,
    ])
  ).rows[0]?.n ?? 0;

describe('prepared statements', () => {
  /** Names of the statements prepared on the one connection of a one-connection pool. */
  const preparedOn = async (pool: pg.Pool): Promise<string[]> =>
    (await pool.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name')).rows.map(
      (r) => r.name,
    );

  for (const preparedStatements of [true, false]) {
    it(`preparedStatements: ${preparedStatements} ${preparedStatements ? 'prepares each statement once per connection' : 'sends plain statements'}, with the same results`, async () => {
      const pool = new pg.Pool({ connectionString: db.url, max: 1 });
      try {
        const store = new PostgresStore({ pool, schema: db.schema, preparedStatements, listen: false });
        opened.push(store);
        await store.open();
        const task = taskFixture({ state: 'working' });
        await createTask(store, task);
        for (let i = 0; i < 3; i++) await appendEvents(store, task.id, [artifactUpdate(task, `chunk ${i}`)]);
        expect((await store.getTask(task.id))?.version).toBe(4);
        expect((await store.readEvents(task.id, 0)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
        // Past the events this instance remembers: a query (readEvents of them sends none).
        expect(await store.readEvents(task.id, 4)).toEqual([]);
        const names = (await preparedOn(pool)).filter((name) => name.startsWith('a2a_'));
        if (preparedStatements) {
          // create, update, getTask and readEvents: each prepared once however often it ran.
          expect(names.length).toBeGreaterThanOrEqual(4);
          expect(new Set(names).size).toBe(names.length);
        } else {
          expect(names).toEqual([]);
        }
      } finally {
        await pool.end();
      }
    });
  }
});

describe('options', () => {
  it('rejects pool together with connectionString, pg_ schemas and schemas over 63 bytes', () => {
    const pool = new pg.Pool();
    const invalid = (options: PostgresStoreOptions) => {
      try {
        new PostgresStore(options);
      } catch (error) {
        return A2AError.is(error) ? error.code : error;
      }
      return 'accepted';
    };
    expect(invalid({ pool, connectionString: db.url })).toBe('INVALID_OPTIONS');
    expect(invalid({ pool, poolConfig: {} })).toBe('INVALID_OPTIONS');
    expect(invalid({ schema: 'pg_mine' })).toBe('INVALID_OPTIONS');
    expect(invalid({ schema: 'x'.repeat(64) })).toBe('INVALID_OPTIONS');
    expect(invalid({ namespace: '' })).toBe('INVALID_OPTIONS');
    expect(invalid({ connectionString: 'postgres://host:notaport/db' })).toBe('INVALID_OPTIONS');
    expect(invalid({ groupCommit: 'yes' as unknown as boolean })).toBe('INVALID_OPTIONS');
    expect(invalid({ schema: 'x'.repeat(63), namespace: 'n' })).toBe('accepted');
    void pool.end();
  });

  it('does not mutate the options it is given', async () => {
    const options: PostgresStoreOptions = Object.freeze({
      connectionString: db.url,
      schema: db.schema,
      poolConfig: Object.freeze({ max: 2 }),
    });
    const store = await openStore(options);
    await createTask(store, taskFixture());
    expect(options).toEqual({ connectionString: db.url, schema: db.schema, poolConfig: { max: 2 } });
  });

  it('supports declares what the instance does; listen: false is not cross-process', () => {
    expect(new PostgresStore({ connectionString: db.url }).supports).toEqual({
      durable: true,
      crossProcess: true,
      ttl: true,
      namespaces: true,
      listTasks: true,
      push: true,
      interruptedTasks: true,
      cluster: true,
      // Advice rather than a capability: the runtime's default streamCommitIntervalMs.
      streamCommitIntervalMs: 40,
    });
    expect(new PostgresStore({ connectionString: db.url, listen: false }).supports.crossProcess).toBe(false);
  });
});

describe('pool ownership and lifecycle', () => {
  it('close() leaves a given pool open; closePool: true ends it', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 3 });
    try {
      const store = new PostgresStore({ pool, schema: db.schema });
      await store.open();
      await store.close();
      await store.close(); // idempotent
      expect(pool.ended).toBe(false);
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);

      const closing = new PostgresStore({ pool, schema: db.schema, closePool: true });
      await closing.open();
      await closing.close();
      expect(pool.ended).toBe(true);
    } finally {
      if (!pool.ended) await pool.end();
    }
  });

  it('close() ends the pool and the LISTEN connection the store created', async () => {
    const applicationName = `pgstore-own-${Math.random().toString(36).slice(2)}`;
    const store = new PostgresStore({
      connectionString: db.url,
      schema: db.schema,
      namespace: freshNamespace(),
      poolConfig: { application_name: applicationName },
    });
    await store.open();
    await createTask(store, taskFixture());
    expect(await backends(applicationName)).toBeGreaterThan(0);
    await store.close();
    await eventually('the pool connections to go', async () => (await backends(applicationName)) === 0);
    await eventually('the LISTEN connection to go', async () => (await backends(listenerAppOf(store))) === 0);
  });

  it('open() is idempotent and may run concurrently; calls before open() or after close() say what to do', async () => {
    const store = new PostgresStore({ connectionString: db.url, schema: db.schema });
    const early = await rejection(store.getTask('x'));
    expect(A2AError.is(early) && early.code).toBe('STORE_UNAVAILABLE');
    expect((early as Error).message).toMatch(/not open yet.*open\(\)/);

    await Promise.all([store.open(), store.open()]);
    await store.open();
    expect(await store.getTask('x')).toBeUndefined();
    await store.close();
    const late = await rejection(store.getTask('x'));
    expect((late as Error).message).toMatch(/closed/);

    await store.open(); // a closed store opens again, with a new pool
    expect(await store.getTask('x')).toBeUndefined();
    await store.close();
  });

  it('an aborted signal rejects before touching the database', async () => {
    const store = await openStore();
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(store.getTask('x', { signal: controller.signal })).rejects.toThrow('stop');
  });
});

describe('unreachable or misconfigured database', () => {
  it('open() fails with STORE_UNAVAILABLE naming host:port, database and the pg error', async () => {
    const store = new PostgresStore({ connectionString: 'postgres://postgres@127.0.0.1:1/somedb' });
    const started = Date.now();
    const error = await rejection(store.open());
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(A2AError.is(error) && error.code).toBe('STORE_UNAVAILABLE');
    const message = (error as Error).message;
    expect(message).toContain('127.0.0.1:1');
    expect(message).toContain('database "somedb"');
    expect(message).toContain('ECONNREFUSED');
    expect(message).toMatch(/server is running/);
    expect(message).not.toMatch(/\n\s+at /); // no stack trace in the message
    await store.close(); // nothing to close, and no error
  });

  it('a database that does not exist is named in the message', async () => {
    const url = new URL(db.url);
    url.pathname = '/a2a_no_such_database';
    const store = new PostgresStore({ connectionString: url.href, listen: false });
    const error = await rejection(store.open());
    expect(A2AError.is(error) && error.code).toBe('STORE_UNAVAILABLE');
    expect((error as Error).message).toContain('database "a2a_no_such_database" does not exist');
  });

  it('ping() resolves while the server answers and rejects with STORE_UNAVAILABLE once it cannot', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    const store = new PostgresStore({ pool, schema: db.schema, listen: false });
    await store.open();
    await store.ping();
    await pool.end(); // the owner pulls the pool from under the store
    const error = await rejection(store.ping());
    expect(A2AError.is(error) && error.code).toBe('STORE_UNAVAILABLE');
    expect((error as Error).message).toContain('does not answer');
    expect((error as Error).message).toContain(new URL(db.url).port || '5432');
    await store.close();
  });
});

describe('data fidelity', () => {
  it('round-trips what jsonb could not: \\u0000, lone surrogates, key order, duplicate-free exact text', async () => {
    const store = await openStore();
    const task: Task = {
      ...taskFixture({ state: 'working' }),
      metadata: { z: 1, a: 'nul:\u0000:end', lone: '\ud800', emoji: '😀', nested: { b: [1, { y: 2, x: 3 }] } },
    };
    await createTask(store, task);
    const record = await store.getTask(task.id);
    expect(record?.task).toEqual(applyEvents(undefined, [task]));
    expect(Object.keys(record?.task.metadata ?? {})).toEqual(['z', 'a', 'lone', 'emoji', 'nested']);
    expect((await store.readEvents(task.id, 0))[0]?.event).toEqual(task);
  });

  it('a 1 MB artifact round-trips through the snapshot and the log', async () => {
    const store = await openStore();
    const task = taskFixture({ state: 'working' });
    await createTask(store, task);
    const big = largeText(1024 * 1024);
    const event = artifactUpdate(task, big);
    await appendEvents(store, task.id, [event]);
    const record = await store.getTask(task.id);
    const part = record?.task.artifacts?.[0]?.parts[0];
    expect(part?.kind === 'text' && part.text.length).toBe(big.length);
    expect(part?.kind === 'text' && part.text === big).toBe(true);
    const [stored] = await store.readEvents(task.id, 1);
    expect(stored?.event).toEqual(event);
  });

  it('context state: any JSON value, including arrays, strings and null; undefined is stored as null', async () => {
    const store = await openStore();
    const values: unknown[] = [[1, 'two', { three: 3 }], 'text', 0, false, null, { a: '\u0000' }];
    for (const [i, value] of values.entries()) {
      await store.setContext(`ctx-${i}`, value);
      expect((await store.getContext(`ctx-${i}`))?.state).toEqual(value);
    }
    expect(await store.getContext('ctx-undefined-never-set')).toBeUndefined();
    await store.setContext('ctx-undefined', undefined);
    expect(await store.getContext('ctx-undefined')).toHaveProperty('state', null);
  });
});

describe('concurrent writers (two instances, separate pools)', () => {
  it('never lose updates: 2 × 40 read-apply-commit loops give 81 gapless events', async () => {
    const a = await openStore();
    const b = await openStore();
    const task = taskFixture({ state: 'working' });
    await createTask(a, task);
    const write = (store: PostgresStore, who: string) =>
      Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          appendWithRetry(store, task.id, [artifactUpdate(task, `${who}-${i}`)], 1000),
        ),
      );
    await Promise.all([write(a, 'a'), write(b, 'b')]);

    const record = await a.getTask(task.id);
    expect(record?.version).toBe(81);
    const events = await b.readEvents(task.id, 0);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 81 }, (_, i) => i + 1));
    const texts = events.slice(1).map((e) => {
      const part = e.event.kind === 'artifact-update' ? e.event.artifact.parts[0] : undefined;
      return part?.kind === 'text' ? part.text : '';
    });
    expect(new Set(texts).size).toBe(80);
    // The snapshot is the fold of the log: nothing written was overwritten.
    expect(record?.task).toEqual(
      applyEvents(
        undefined,
        events.map((e) => e.event),
      ),
    );
  });

  it('concurrent creates of one task id: exactly one wins, the others get a version conflict', async () => {
    const a = await openStore();
    const b = await openStore();
    const id = `race-${Math.random()}`;
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => createTask(i % 2 ? a : b, taskFixture({ id, metadata: { i } }))),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const conflicts = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason);
    expect(conflicts.every(isVersionConflict)).toBe(true);
    expect(conflicts[0]).toMatchObject({ data: { taskId: id, expected: 0, actual: 1 } });
    expect((await a.readEvents(id, 0)).map((e) => e.seq)).toEqual([1]);
  });

  it('a stale writer is refused with the actual version, and nothing of its commit is stored', async () => {
    const a = await openStore();
    const task = taskFixture({ state: 'working' });
    await createTask(a, task);
    await appendEvents(a, task.id, [artifactUpdate(task, 'first')]);
    const stale = await rejection(
      a.commit({ taskId: task.id, expectedVersion: 1, task, events: [artifactUpdate(task, 'stale')] }),
    );
    expect(stale).toMatchObject({ code: 'VERSION_CONFLICT', data: { expected: 1, actual: 2 } });
    expect((await a.readEvents(task.id, 0)).map((e) => e.seq)).toEqual([1, 2]);
    const missing = await rejection(
      a.commit({
        taskId: 'nope',
        expectedVersion: 3,
        task: { ...task, id: 'nope' },
        events: [artifactUpdate(task, 'x')],
      }),
    );
    expect(missing).toMatchObject({ code: 'VERSION_CONFLICT', data: { expected: 3, actual: undefined } });
  });
});

describe('cross-process notifications (LISTEN/NOTIFY)', () => {
  it('a commit in one instance reaches a subscriber of another (separate pools, same schema)', async () => {
    const writer = await openStore({ listen: false });
    const reader = await openStore();
    const task = taskFixture({ state: 'working' });
    const heard: number[] = [];
    const unsubscribe = reader.subscribe(task.id, (seq) => heard.push(seq));
    await createTask(writer, task);
    await eventually('the other instance to hear seq 1', () => heard.includes(1));
    await appendEvents(writer, task.id, [artifactUpdate(task, 'a'), artifactUpdate(task, 'b')]);
    await eventually('the other instance to hear seq 3', () => heard.includes(3));
    unsubscribe();
  });

  it('namespaces have their own channels: another namespace hears nothing', async () => {
    const writer = await openStore({ namespace: 'ns_writer' });
    const sameNs = await openStore({ namespace: 'ns_writer' });
    const otherNs = await openStore({ namespace: 'ns_other' });
    const task = taskFixture({ state: 'working' });
    const heardSame: number[] = [];
    const heardOther: number[] = [];
    sameNs.subscribe(task.id, (seq) => heardSame.push(seq));
    otherNs.subscribe(task.id, (seq) => heardOther.push(seq));
    await createTask(writer, task);
    await eventually('the same namespace to hear it', () => heardSame.includes(1));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(heardOther).toEqual([]);
  });

  it('a throwing subscriber goes to onListenerError; the others are still called', async () => {
    const reported: Array<[unknown, string]> = [];
    const store = await openStore({
      listen: false,
      onListenerError: (error, taskId) => reported.push([error, taskId]),
    });
    const task = taskFixture({ state: 'working' });
    const heard: number[] = [];
    const failure = new Error('subscriber bug');
    store.subscribe(task.id, () => {
      throw failure;
    });
    store.subscribe(task.id, (seq) => heard.push(seq));
    await createTask(store, task);
    expect(heard).toEqual([1]);
    expect(reported).toEqual([[failure, task.id]]);
  });

  it('a listen: false instance only hears its own commits', async () => {
    const writer = await openStore();
    const deaf = await openStore({ listen: false });
    const task = taskFixture({ state: 'working' });
    const heard: number[] = [];
    const barrier: number[] = [];
    deaf.subscribe(task.id, (seq) => heard.push(seq));
    writer.subscribe(task.id, (seq) => barrier.push(seq));
    await createTask(writer, task);
    await eventually('the writer', () => barrier.includes(1));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(heard).toEqual([]);
    await appendEvents(deaf, task.id, [artifactUpdate(task, 'own')]);
    expect(heard).toEqual([2]); // told synchronously after its own commit
  });

  it('after its LISTEN connection is killed, the listener reconnects and the subscriber still hears commits', async () => {
    const namespace = freshNamespace();
    const writer = await openStore({ namespace, listen: false });
    const reader = await openStore({ namespace });
    const listenerApp = listenerAppOf(reader);
    const task = taskFixture({ state: 'working' });
    const heard: number[] = [];
    reader.subscribe(task.id, (seq) => heard.push(seq));
    await createTask(writer, task);
    await eventually('seq 1 before the kill', () => heard.includes(1));

    // In the target list, not the WHERE clause: the planner may evaluate WHERE conditions in any
    // order, and pg_terminate_backend must only ever see the listener's pid.
    const killed = await db.query<{ pid: number; terminated: boolean }>(
      'SELECT pid, pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE application_name = $1',
      [listenerApp],
    );
    expect(killed.rows).toEqual([{ pid: expect.any(Number), terminated: true }]);
    // Commit right away: the NOTIFY may go nowhere (no listener); the catch-up after reconnecting
    // must still tell the subscriber.
    await appendEvents(writer, task.id, [artifactUpdate(task, 'while disconnected')]);
    await eventually('seq 2 after the reconnect', () => heard.includes(2), { timeout: 10_000 });

    // And LISTEN itself works again: a new listener backend, and a later commit arrives by NOTIFY.
    await eventually(
      'a new listener backend',
      async () =>
        (
          await db.query('SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND pid <> $2', [
            listenerApp,
            killed.rows[0]?.pid,
          ])
        ).rowCount === 1,
      { timeout: 10_000 },
    );
    await appendEvents(writer, task.id, [artifactUpdate(task, 'after the reconnect')]);
    await eventually('seq 3 by NOTIFY', () => heard.includes(3));
  });

  it('subscribeAll hears every task by NOTIFY, and is told to read again after its LISTEN connection is killed', async () => {
    const namespace = freshNamespace();
    const writer = await openStore({ namespace, listen: false });
    const reader = await openStore({ namespace });
    const heard: Array<[string, number]> = [];
    const unsubscribe = reader.subscribeAll((taskId, seq) => heard.push([taskId, seq]));
    const one = taskFixture({ state: 'working' });
    const two = taskFixture({ state: 'working' });
    await createTask(writer, one);
    await createTask(writer, two);
    await appendEvents(writer, two.id, [artifactUpdate(two, 'a')]);
    await eventually(
      'both tasks by NOTIFY',
      () =>
        heard.some(([id, seq]) => id === one.id && seq === 1) && heard.some(([id, seq]) => id === two.id && seq === 2),
    );

    await db.query('SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE application_name = $1', [
      listenerAppOf(reader),
    ]);
    await eventually('the resync after the reconnect', () => heard.some(([id, seq]) => id === '' && seq === 0), {
      timeout: 10_000,
    });
    unsubscribe();
    const count = heard.length;
    await appendEvents(writer, one.id, [artifactUpdate(one, 'after')]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(heard.length).toBe(count);
  });

  it('close() stops the LISTEN connection and its reconnects', async () => {
    const reader = await openStore({ namespace: freshNamespace() });
    const listenerApp = listenerAppOf(reader);
    expect(await backends(listenerApp)).toBe(1);
    await db.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [listenerApp]);
    await reader.close(); // while a reconnect may be pending
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await backends(listenerApp)).toBe(0);
  });
});

describe('group commit', () => {
  /** The application_name of a store's batch connections (internal, so tests can find and kill them). */
  const commitAppOf = (store: PostgresStore): string =>
    `fastify-a2a commit ${notificationChannel(store.schema, store.namespace)}`;
  const burst = (store: PostgresStore, n: number) =>
    Promise.allSettled(Array.from({ length: n }, () => createTask(store, taskFixture())));

  it('sends a burst on its own connections, every commit written; close() ends them', async () => {
    const store = await openStore({ namespace: freshNamespace() });
    const results = await burst(store, 40);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(40);
    expect(await backends(commitAppOf(store))).toBeGreaterThanOrEqual(1);
    await store.close();
    await eventually('no batch connection left', async () => (await backends(commitAppOf(store))) === 0);
  });

  it('groupCommit: false sends every commit on the pool', async () => {
    const store = await openStore({ namespace: freshNamespace(), groupCommit: false });
    const results = await burst(store, 40);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(40);
    expect(await backends(commitAppOf(store))).toBe(0);
  });

  it('after its batch connections are killed, commits fail at most with STORE_UNAVAILABLE, and the next ones are written on new connections', async () => {
    const store = await openStore({ namespace: freshNamespace() });
    await burst(store, 40);
    const app = commitAppOf(store);
    // Killed while a burst is on its way: each commit is written, or fails as unavailable (whether
    // its batch was written is unknown), never anything else.
    const during = burst(store, 60);
    await db.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [app]);
    for (const result of await during) {
      if (result.status === 'rejected') {
        expect(A2AError.is(result.reason) && result.reason.code, String(result.reason)).toBe('STORE_UNAVAILABLE');
      }
    }
    await eventually('a burst written whole on new connections', async () =>
      (await burst(store, 40)).every((r) => r.status === 'fulfilled'),
    );
    expect(await backends(app)).toBeGreaterThanOrEqual(1);
  });
});

describe('commits of a running task (issue 30)', () => {
  it('are heap-only updates: a streamed chunk writes no index entry for its task, and purge still finds finished tasks', async () => {
    const schema = db.newSchema();
    const store = await openStore({ schema });
    const task = taskFixture({ state: 'working' });
    await createTask(store, task);
    const chunks = 30;
    for (let i = 0; i < chunks; i++) {
      await appendEvents(store, task.id, [
        artifactUpdate(task, { artifactId: 'answer', parts: [{ kind: 'text', text: `t${i} ` }] }, { append: i > 0 }),
      ]);
    }
    // A backend reports its table statistics within about a second of going idle.
    const hot = { hot: 0, updates: 0 };
    await eventually(
      "the store's backends to report their table statistics",
      async () => {
        const { rows } = await db.query<{ hot: string; updates: string }>(
          `SELECT n_tup_hot_upd::text AS hot, n_tup_upd::text AS updates FROM pg_stat_user_tables
           WHERE schemaname = $1 AND relname = 'tasks'`,
          [schema],
        );
        hot.hot = Number(rows[0]?.hot ?? 0);
        hot.updates = Number(rows[0]?.updates ?? 0);
        return hot.updates >= chunks;
      },
      { timeout: 15_000, interval: 100 },
    );
    // Every commit of a chunk changes the snapshot, its version and updated_at, none of them indexed.
    expect(hot.hot).toBe(hot.updates);
    // The generated terminal_at: NULL while running, the last commit's time once terminal, found by purge.
    const record = await store.getTask(task.id);
    const done = applyEvents(record?.task, [
      {
        kind: 'status-update',
        taskId: task.id,
        contextId: task.contextId,
        status: { state: 'completed' },
        final: true,
      },
    ]);
    await appendEvents(store, task.id, [
      { kind: 'status-update', taskId: task.id, contextId: task.contextId, status: done.status, final: true },
    ]);
    const { rows } = await db.query<{ terminal_at: string | null; updated_at: string }>(
      `SELECT terminal_at::text, updated_at::text FROM "${schema}".tasks WHERE task_id = $1`,
      [task.id],
    );
    expect(rows[0]?.terminal_at).toBe(rows[0]?.updated_at);
    const purged = await store.purgeExpired(Number(rows[0]?.updated_at) + 1);
    expect(purged.tasks).toBe(1);
    expect(await store.getTask(task.id)).toBeUndefined();
  });
});
