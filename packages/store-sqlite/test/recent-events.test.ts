/**
 * readEvents of the events this instance has just committed reads no row (they come from its
 * RecentEvents cache), and answers exactly what the file holds. Statements are counted with
 * better-sqlite3's `verbose` hook, which sees every statement the connection runs.
 */

import { join } from 'node:path';
import type { TaskEvent } from '@fastify-a2a/core';
import { appendEvents, artifactUpdate, createTask, taskFixture } from '@fastify-a2a/core/testing';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { tempDir } from './helpers.js';

let dir: string;
let remove: () => void;
const cleanup: (() => Promise<void> | void)[] = [];

beforeEach(() => {
  ({ dir, remove } = tempDir());
});
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
  remove();
});

/** A store on the test's file through a connection whose event-log reads are counted. */
async function countedStore(groupCommit: boolean): Promise<{ store: SqliteStore; eventReads: () => number }> {
  let reads = 0;
  const database = new Database(join(dir, 'a2a.db'), {
    verbose: (sql) => {
      // The text has the values in it (long ones cut short): match the statement by its start.
      if (/^SELECT seq, event_json AS event, created_at FROM a2a_events\s+WHERE /.test(String(sql))) reads++;
    },
  });
  const store = new SqliteStore({ database, groupCommit });
  cleanup.push(() => {
    database.close();
  });
  cleanup.push(() => store.close());
  await store.open();
  return { store, eventReads: () => reads };
}

async function plainStore(): Promise<SqliteStore> {
  const store = new SqliteStore({ filename: join(dir, 'a2a.db') });
  cleanup.push(() => store.close());
  await store.open();
  return store;
}

const awkward = ['quotes " and \\" and \'', 'a real\nnewline, unicode é ✓ 𝄞', '', '{"not": "an object"}'];

describe.each([true, false])('readEvents of recent commits (groupCommit: %s)', (groupCommit) => {
  it('reads no row for events this instance just committed, and rows for anything else', async () => {
    const { store, eventReads } = await countedStore(groupCommit);
    const other = await plainStore();
    // Events 1..3 by another instance, 4..7 by this one.
    const task = taskFixture({ state: 'working' });
    await createTask(other, task, [artifactUpdate(task, 'by other 2'), artifactUpdate(task, 'by other 3')]);
    const own: TaskEvent[] = awkward.map((text) => artifactUpdate(task, text));
    await appendEvents(store, task.id, own.slice(0, 2));
    await appendEvents(store, task.id, own.slice(2));

    // The database's answers, from an instance that committed none of them.
    const fresh = await plainStore();
    const fromFile = await fresh.readEvents(task.id, 0);
    expect(fromFile.map((e) => e.event)).toEqual([
      expect.objectContaining({ kind: 'task' }),
      expect.anything(),
      expect.anything(),
      ...own,
    ]);

    const before = eventReads();
    expect(await store.readEvents(task.id, 3)).toEqual(fromFile.slice(3));
    expect(await store.readEvents(task.id, 4)).toEqual(fromFile.slice(4));
    expect(await store.readEvents(task.id, 3, 2)).toEqual(fromFile.slice(3, 5));
    expect(await store.readEvents(task.id, 6, 256)).toEqual(fromFile.slice(6));
    expect(eventReads()).toBe(before);

    // Before what it committed, and past its end (only the file knows nothing follows): rows.
    expect(await store.readEvents(task.id, 2)).toEqual(fromFile.slice(2));
    expect(eventReads()).toBe(before + 1);
    expect(await store.readEvents(task.id, 7)).toEqual([]);
    expect(eventReads()).toBe(before + 2);
  });

  it('reads rows again once another instance committed after it and it heard so', async () => {
    const { store, eventReads } = await countedStore(groupCommit);
    const other = await plainStore();
    const task = taskFixture({ state: 'working' });
    await createTask(store, task, [artifactUpdate(task, 'own 2')]);
    await appendEvents(other, task.id, [artifactUpdate(task, 'other 3')]);
    expect((await store.getTask(task.id))?.version).toBe(3);

    const before = eventReads();
    expect((await store.readEvents(task.id, 1)).map((e) => e.seq)).toEqual([2, 3]);
    expect(eventReads()).toBe(before + 1);
  });

  it('reads rows again once a listing showed a later version', async () => {
    const { store, eventReads } = await countedStore(groupCommit);
    const other = await plainStore();
    const task = taskFixture({ state: 'working' });
    await createTask(store, task, [artifactUpdate(task, 'own 2')]);
    await appendEvents(other, task.id, [artifactUpdate(task, 'other 3')]);
    const listed = await store.listActiveTasks();
    expect(listed.map((record) => record.version)).toEqual([3]);

    const before = eventReads();
    expect((await store.readEvents(task.id, 1)).map((e) => e.seq)).toEqual([2, 3]);
    expect(eventReads()).toBe(before + 1);
  });

  it('reads rows after close and reopen, and after a purge', async () => {
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

    await appendEvents(store, task.id, [artifactUpdate(task, 'b')]);
    await store.close();
    await store.open();
    before = eventReads();
    expect((await store.readEvents(task.id, 2)).map((e) => e.seq)).toEqual([3]);
    expect(eventReads()).toBe(before + 1);
  });
});
