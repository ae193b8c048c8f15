/**
 * Group commit's one statement for a batch's plain updates (an agent's updates to tasks already
 * written: see `plainUpdates` in statements.ts), and what the store does so that the planner
 * looks tasks up by their primary key (issue 30).
 */
import { A2AError, applyEvents, type Task, type TaskEvent } from '@fastify-a2a/core';
import { artifactUpdate, createTasks } from '@fastify-a2a/core/testing';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { laneClientConfig } from '../src/group-commit.js';
import { PostgresStore } from '../src/index.js';
import { statements } from '../src/statements.js';

const db = withPostgres('pgplain');

const opened: PostgresStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0).reverse()) await store.close();
});

async function openStore(namespace: string): Promise<PostgresStore> {
  const store = new PostgresStore({ connectionString: db.url, schema: db.schema, namespace });
  opened.push(store);
  await store.open();
  return store;
}

const freshNamespace = (): string => `ns_${Math.random().toString(36).slice(2)}`;

/** Counts the statements sent on any pg.Client that contain `marker`, while `run` runs. */
async function countingStatements(marker: string, run: () => Promise<void>): Promise<number> {
  const query = pg.Client.prototype.query;
  let count = 0;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string };
    const text = typeof config === 'string' ? config : (config?.text ?? '');
    if (text.includes(marker)) count += 1;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    await run();
  } finally {
    pg.Client.prototype.query = query;
  }
  return count;
}

/** Text an agent may stream: quotes, backslashes, a NUL-free control character, non-BMP text, JSON lookalikes. */
const awkwardText = (i: number): string => `"${i}" \\ \\" \n\t\u0001 😀 {"task_id":"x"} ]},{`;

describe('plain updates in one statement per batch', () => {
  it('writes a burst of updates to many tasks, each at its version, with its events in order and byte for byte', async () => {
    const store = await openStore(freshNamespace());
    const tasks = await createTasks(store, 30, { state: 'working' });
    const updates = tasks.map((task, i) => {
      const events: TaskEvent[] = [artifactUpdate(task, awkwardText(i)), artifactUpdate(task, `second ${i}`)];
      return { task, events, snapshot: applyEvents(task, events) };
    });
    const statements = await countingStatements('json_to_recordset', async () => {
      const results = await Promise.allSettled(
        updates.map(({ task, events, snapshot }) =>
          store.commit({ taskId: task.id, expectedVersion: 1, task: snapshot, events }),
        ),
      );
      expect(results.map((r) => (r.status === 'fulfilled' ? r.value.version : String(r.reason)))).toEqual(
        updates.map(() => 3),
      );
    });
    // The burst went in batches (the first commits find a lane free and go alone).
    expect(statements).toBeGreaterThanOrEqual(1);
    for (const { task, events, snapshot } of updates) {
      const row = await store.getTask(task.id);
      expect(row?.version).toBe(3);
      expect(row?.task).toEqual(snapshot);
      const read = await store.readEvents(task.id, 1);
      expect(read.map((e) => e.seq)).toEqual([2, 3]);
      expect(read.map((e) => e.event)).toEqual(events);
    }
  });

  it('a stale update in the batch conflicts alone and writes nothing; the others are written', async () => {
    const store = await openStore(freshNamespace());
    const tasks = await createTasks(store, 12, { state: 'working' });
    const stale = tasks[7] as Task;
    const results = await Promise.allSettled(
      tasks.map((task) => {
        const events = [artifactUpdate(task, `for ${task.id}`)];
        // The stale one claims version 5; the task is at 1.
        const expectedVersion = task === stale ? 5 : 1;
        return store.commit({ taskId: task.id, expectedVersion, task: applyEvents(task, events), events });
      }),
    );
    for (const [i, result] of results.entries()) {
      if (tasks[i] === stale) {
        expect(result.status).toBe('rejected');
        const reason = (result as PromiseRejectedResult).reason;
        expect(A2AError.is(reason) && reason.code).toBe('VERSION_CONFLICT');
      } else {
        expect(result.status === 'fulfilled' && result.value.version).toBe(2);
      }
    }
    expect((await store.getTask(stale.id))?.version).toBe(1);
    expect(await store.readEvents(stale.id, 1)).toEqual([]);
  });

  it('two commits of one task in one batch are both written, the second after the first', async () => {
    const store = await openStore(freshNamespace());
    const tasks = await createTasks(store, 10, { state: 'working' });
    const [twice, ...others] = tasks as [Task, ...Task[]];
    const first = [artifactUpdate(twice, 'one')];
    const afterFirst = applyEvents(twice, first);
    const second = [artifactUpdate(twice, 'two')];
    // All made in one turn of the event loop, behind the lanes' first two commits: one batch.
    const results = await Promise.all([
      ...others.map((task) => {
        const events = [artifactUpdate(task, 'x')];
        return store.commit({ taskId: task.id, expectedVersion: 1, task: applyEvents(task, events), events });
      }),
      store.commit({ taskId: twice.id, expectedVersion: 1, task: afterFirst, events: first }),
      store.commit({ taskId: twice.id, expectedVersion: 2, task: applyEvents(afterFirst, second), events: second }),
    ]);
    expect(results.slice(-2).map((r) => r.version)).toEqual([2, 3]);
    expect((await store.readEvents(twice.id, 1)).map((e) => e.event)).toEqual([...first, ...second]);
  });
});

describe('the planner looks tasks up by their primary key', () => {
  it('after the 20th task this store created, the tasks table has statistics; lookups by id use tasks_pkey', async () => {
    // A schema of its own: the statistics are the tasks table's.
    const schema = `plan_${Math.random().toString(36).slice(2)}`;
    const store = new PostgresStore({ connectionString: db.url, schema });
    opened.push(store);
    await store.open();
    await createTasks(store, 25, { state: 'working' });
    const estimate = async () =>
      (
        await db.query<{ reltuples: number }>(
          `SELECT c.reltuples::float8 AS reltuples FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = $1 AND c.relname = 'tasks'`,
          [schema],
        )
      ).rows[0]?.reltuples ?? -1;
    await expect.poll(estimate, { timeout: 10_000 }).toBeGreaterThanOrEqual(20);
    // The store's own connections price a full scan last; a generic plan, as a prepared statement gets.
    const client = new pg.Client({ connectionString: db.url, options: '-c enable_seqscan=off' });
    await client.connect();
    try {
      await client.query('SET plan_cache_mode = force_generic_plan');
      await client.query(
        `PREPARE version_of(text, text) AS SELECT version FROM "${schema}".tasks WHERE namespace = $1 AND task_id = $2`,
      );
      const plan = (await client.query(`EXPLAIN EXECUTE version_of('default', 'x')`)).rows
        .map((row) => row['QUERY PLAN'])
        .join('\n');
      expect(plan).toMatch(/tasks_pkey/);
    } finally {
      await client.end();
      await db.query(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });

  it("a commit lane's batch of plain updates looks tasks up by primary key, never scans the namespace's tasks", async () => {
    const schema = `lane_${Math.random().toString(36).slice(2)}`;
    const store = new PostgresStore({ connectionString: db.url, schema });
    opened.push(store);
    await store.open();
    const tasks = await createTasks(store, 300, { state: 'working' });
    const target = tasks[0] as Task;
    const poolOptions = { connectionString: db.url, options: '-c enable_seqscan=off' };
    const client = new pg.Client(laneClientConfig(poolOptions, 'lane plan test'));
    await client.connect();
    try {
      await client.query('BEGIN');
      const input = JSON.stringify([
        {
          task_id: target.id,
          context_id: target.contextId,
          state: 'working',
          version: 2,
          expected: 1,
          status_ts: 1,
          now: 1,
          events: [],
          trace_context: null,
        },
      ]);
      const snapshots = JSON.stringify([target]);
      const plan = (
        await client.query(`EXPLAIN ${statements(schema).plainUpdates}`, ['default', input, snapshots])
      ).rows
        .map((row) => row['QUERY PLAN'])
        .join('\n');
      expect(plan).toMatch(/Index Scan using tasks_pkey on tasks t/);
      expect(plan).not.toMatch(/Hash Join|Merge Join|tasks_by_owner_status_ts|tasks_by_state_status_ts/);
    } finally {
      await client.query('ROLLBACK').catch(() => {});
      await client.end();
      await db.query(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });
});
