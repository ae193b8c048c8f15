/**
 * readEvents of the events this instance has just committed sends no query (they come from its
 * RecentEvents cache), and answers exactly what the database holds. Queries are counted on the
 * store's own pool: every connection it opens has its `query` wrapped. (Group commit's lanes have
 * connections of their own, but they only commit.)
 */

import type { TaskEvent } from '@fastify-a2a/core';
import { appendEvents, artifactUpdate, createTask, taskFixture } from '@fastify-a2a/core/testing';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { PostgresStore, type PostgresStoreOptions } from '../src/index.js';

const db = withPostgres('pgrecent');

const opened: PostgresStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0).reverse()) await store.close();
});

async function openStore(options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const store = new PostgresStore({
    schema: db.schema,
    ...(options.pool === undefined ? { connectionString: db.url } : {}),
    ...options,
  });
  opened.push(store);
  await store.open();
  return store;
}

/** A store whose event-log reads are counted. */
async function countedStore(
  groupCommit: boolean,
  options: PostgresStoreOptions = {},
): Promise<{ store: PostgresStore; eventReads: () => number }> {
  let reads = 0;
  const pool = new pg.Pool({ connectionString: db.url });
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
      const text = typeof config === 'string' ? config : (config as { text?: string }).text;
      if (/SELECT seq, event::text AS event, created_at FROM \S+\.events\s+WHERE /.test(text ?? '')) reads++;
      return query(config, ...rest);
    };
  });
  const store = await openStore({ pool, closePool: true, groupCommit, ...options });
  return { store, eventReads: () => reads };
}

const awkward = ['quotes " and \\" and \'', 'a real\nnewline, unicode é ✓ 𝄞', '', '{"not": "an object"}'];

describe.each([true, false])('readEvents of recent commits (groupCommit: %s)', (groupCommit) => {
  it('sends no query for events this instance just committed, and one for anything else', async () => {
    const { store, eventReads } = await countedStore(groupCommit);
    const other = await openStore();
    // Events 1..3 by another instance, 4..7 by this one.
    const task = taskFixture({ state: 'working' });
    await createTask(other, task, [artifactUpdate(task, 'by other 2'), artifactUpdate(task, 'by other 3')]);
    const own: TaskEvent[] = awkward.map((text) => artifactUpdate(task, text));
    await appendEvents(store, task.id, own.slice(0, 2));
    await appendEvents(store, task.id, own.slice(2));

    // The database's answers, from an instance that committed none of them.
    const fresh = await openStore();
    const fromDatabase = await fresh.readEvents(task.id, 0);
    expect(fromDatabase.map((e) => e.event)).toEqual([
      expect.objectContaining({ kind: 'task' }),
      expect.anything(),
      expect.anything(),
      ...own,
    ]);

    const before = eventReads();
    expect(await store.readEvents(task.id, 3)).toEqual(fromDatabase.slice(3));
    expect(await store.readEvents(task.id, 4)).toEqual(fromDatabase.slice(4));
    expect(await store.readEvents(task.id, 3, 2)).toEqual(fromDatabase.slice(3, 5));
    expect(await store.readEvents(task.id, 6, 256)).toEqual(fromDatabase.slice(6));
    expect(eventReads()).toBe(before);

    // Before what it committed, and past its end (only the database knows nothing follows): a query.
    expect(await store.readEvents(task.id, 2)).toEqual(fromDatabase.slice(2));
    expect(eventReads()).toBe(before + 1);
    expect(await store.readEvents(task.id, 7)).toEqual([]);
    expect(eventReads()).toBe(before + 2);
  });

  it('queries again once another instance committed after it and it heard so', async () => {
    const { store, eventReads } = await countedStore(groupCommit);
    const other = await openStore();
    const task = taskFixture({ state: 'working' });
    await createTask(store, task, [artifactUpdate(task, 'own 2')]);
    await appendEvents(other, task.id, [artifactUpdate(task, 'other 3')]);
    expect((await store.getTask(task.id))?.version).toBe(3);

    const before = eventReads();
    expect((await store.readEvents(task.id, 1)).map((e) => e.seq)).toEqual([2, 3]);
    expect(eventReads()).toBe(before + 1);
  });

  it('queries again after a version conflict (with no NOTIFY to tell it: listen false)', async () => {
    const store = await openStore({ groupCommit, listen: false });
    const other = await openStore();
    const task = taskFixture({ state: 'working' });
    await createTask(store, task, [artifactUpdate(task, 'own 2')]);
    await appendEvents(other, task.id, [artifactUpdate(task, 'other 3')]);
    const stale = store.commit({ taskId: task.id, expectedVersion: 2, task, events: [artifactUpdate(task, 'late')] });
    await expect(stale).rejects.toMatchObject({ code: 'VERSION_CONFLICT' });
    expect((await store.readEvents(task.id, 1)).map((e) => e.seq)).toEqual([2, 3]);
  });

  it('queries again once a listing showed a later version (with no NOTIFY to tell it: listen false)', async () => {
    const { store, eventReads } = await countedStore(groupCommit, { listen: false });
    const other = await openStore();
    const task = taskFixture({ state: 'working' });
    await createTask(store, task, [artifactUpdate(task, 'own 2')]);
    await appendEvents(other, task.id, [artifactUpdate(task, 'other 3')]);
    const listed = await store.listTasksByContext(task.contextId);
    expect(listed.map((record) => record.version)).toEqual([3]);

    const before = eventReads();
    expect((await store.readEvents(task.id, 1)).map((e) => e.seq)).toEqual([2, 3]);
    expect(eventReads()).toBe(before + 1);
  });

  it('queries after a purge', async () => {
    const { store, eventReads } = await countedStore(groupCommit);
    const task = taskFixture({ state: 'working' });
    await createTask(store, task, [artifactUpdate(task, 'a')]);
    let before = eventReads();
    await store.readEvents(task.id, 0);
    expect(eventReads()).toBe(before);

    await store.purgeExpired(0); // purges nothing, forgets everything held
    before = eventReads();
    expect((await store.readEvents(task.id, 0)).map((e) => e.seq)).toEqual([1, 2]);
    expect(eventReads()).toBe(before + 1);
  });
});
