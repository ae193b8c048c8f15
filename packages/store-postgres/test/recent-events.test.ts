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
import { notificationChannel } from '../src/sql.js';

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

/** Resolves once `store`'s subscriber of `taskId` has heard of `version` (or later). */
function heard(store: PostgresStore, taskId: string, version: number): Promise<void> {
  return new Promise((resolve) => {
    const unsubscribe = store.subscribe(taskId, (seq) => {
      if (seq < version) return;
      unsubscribe();
      resolve();
    });
  });
}

describe.each([true, false])('events heard from another instance (groupCommit: %s)', (groupCommit) => {
  it("a follower on another instance reads that instance's small commits from its notification, with no query", async () => {
    const committer = await openStore({ groupCommit });
    const { store: follower, eventReads } = await countedStore(groupCommit);
    const task = taskFixture({ state: 'working' });
    await createTask(committer, task);
    const unsubscribe = follower.subscribe(task.id, () => {});
    const own: TaskEvent[] = awkward.map((text) => artifactUpdate(task, text));
    const reached = heard(follower, task.id, 1 + own.length);
    await appendEvents(committer, task.id, own.slice(0, 1));
    await appendEvents(committer, task.id, own.slice(1));
    await reached;

    const fromDatabase = await (await openStore()).readEvents(task.id, 1);
    const before = eventReads();
    expect(await follower.readEvents(task.id, 1)).toEqual(fromDatabase);
    expect(await follower.readEvents(task.id, 2, 2)).toEqual(fromDatabase.slice(1, 3));
    expect(eventReads()).toBe(before);
    // Past the end: only the database knows that nothing follows.
    expect(await follower.readEvents(task.id, 1 + own.length)).toEqual([]);
    expect(eventReads()).toBe(before + 1);
    unsubscribe();
  });

  it('a task nobody follows here is not held, and a commit too large for a payload is read from the database', async () => {
    const committer = await openStore({ groupCommit });
    const { store: follower, eventReads } = await countedStore(groupCommit);
    const unfollowed = taskFixture({ state: 'working' });
    const followed = taskFixture({ state: 'working' });
    await createTask(committer, unfollowed);
    await createTask(committer, followed);
    const unsubscribe = follower.subscribe(followed.id, () => {});
    const appended = [artifactUpdate(followed, 'small'), artifactUpdate(followed, 'x'.repeat(10_000))];
    const reached = heard(follower, followed.id, 3);
    await appendEvents(committer, unfollowed.id, [artifactUpdate(unfollowed, 'small')]);
    await appendEvents(committer, followed.id, appended);
    await reached;

    let before = eventReads();
    expect((await follower.readEvents(unfollowed.id, 1)).map((e) => e.seq)).toEqual([2]);
    expect(eventReads()).toBe(before + 1);
    before = eventReads();
    const events = await follower.readEvents(followed.id, 1);
    expect(events.map((e) => e.event)).toEqual(appended);
    expect(eventReads()).toBe(before + 1);
    unsubscribe();
  });

  it('a late or malformed events payload is never an answer', async () => {
    const { store: follower, eventReads } = await countedStore(groupCommit);
    const committer = await openStore({ groupCommit });
    const task = taskFixture({ state: 'working' });
    // Created while nobody here follows the task (a subscribeAll listener is not a follower), so
    // the creating commit's payload is not held.
    const created = new Promise<void>((resolve) => {
      const stop = follower.subscribeAll((taskId, seq) => {
        if (taskId !== task.id || seq < 3) return;
        stop();
        resolve();
      });
    });
    await createTask(committer, task, [artifactUpdate(task, 'a'), artifactUpdate(task, 'b')]);
    await created;
    const unsubscribe = follower.subscribe(task.id, () => {});
    // The follower learns the task is at version 3 (a task record) ...
    expect((await follower.getTask(task.id))?.version).toBe(3);
    // ... and then hears, late, a payload of events 2..2 only; and some that are not payloads of ours.
    const channel = notificationChannel(db.schema, 'default');
    const late = `\u0001${JSON.stringify(['someone-else', task.id, 2, [1]])}\n${JSON.stringify(artifactUpdate(task, 'a'))}`;
    const malformed = [
      '\u0001',
      '\u0001not json\n{}',
      `\u0001${JSON.stringify(['x', task.id, 1, [1, 2]])}\n{}`,
      `\u0001${JSON.stringify(['x', task.id, 1, [1]])}\n[1]`,
      `\u0001${JSON.stringify(['x', task.id, -1, [1]])}\n{}`,
    ];
    const raw = new pg.Client({ connectionString: db.url });
    await raw.connect();
    try {
      // The version first, then the late payload, so that only the late payload's own check keeps
      // it out; a notification of another task tells when all of them were heard.
      const done = new Promise<void>((resolve) => {
        const stop = follower.subscribeAll((taskId) => {
          if (taskId !== 'all-heard') return;
          stop();
          resolve();
        });
      });
      await raw.query('SELECT pg_notify($1, $2)', [channel, `${task.id}:3`]);
      for (const payload of [late, ...malformed]) await raw.query('SELECT pg_notify($1, $2)', [channel, payload]);
      await raw.query('SELECT pg_notify($1, $2)', [channel, 'all-heard:1']);
      await done;
    } finally {
      await raw.end();
    }
    const before = eventReads();
    expect((await follower.readEvents(task.id, 1)).map((e) => e.seq)).toEqual([2, 3]);
    expect(eventReads()).toBe(before + 1);
    unsubscribe();
  });

  it('a task id with a lone surrogate does not fail the NOTIFY of the tasks committed with it', async () => {
    const committer = await openStore({ groupCommit });
    const follower = await openStore({ groupCommit });
    const odd = taskFixture({ id: `lone \ud800 surrogate ${Math.random()}`, state: 'working' });
    const plain = taskFixture({ state: 'working' });
    await createTask(committer, odd);
    await createTask(committer, plain);
    const reached = heard(follower, plain.id, 2);
    // One batch, so one NOTIFY statement carries both tasks.
    await Promise.all([
      appendEvents(committer, odd.id, [artifactUpdate(odd, 'a')]),
      appendEvents(committer, plain.id, [artifactUpdate(plain, 'a')]),
    ]);
    const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('not heard'), 3000).unref());
    expect(await Promise.race([reached.then(() => 'heard'), timeout])).toBe('heard');
  });

  it("an older release's parser (the seq after the last ':') finds no seq in an events payload", async () => {
    const committer = await openStore({ groupCommit });
    const listener = new pg.Client({ connectionString: db.url });
    const payloads: string[] = [];
    listener.on('notification', (message) => payloads.push(message.payload ?? ''));
    await listener.connect();
    try {
      await listener.query(`LISTEN "${notificationChannel(db.schema, 'default')}"`);
      const task = taskFixture({ state: 'working' });
      await createTask(committer, task);
      await appendEvents(committer, task.id, [artifactUpdate(task, 'ends with a colon and a digit :1')]);
      await appendEvents(committer, task.id, [artifactUpdate(task, '42')]);
      await expect.poll(() => payloads.filter((p) => !p.startsWith('\u0001')).at(-1)).toBe(`${task.id}:3`);
      const olderRelease = (payload: string) => {
        const at = payload.lastIndexOf(':');
        const seq = Number(payload.slice(at + 1));
        return at > 0 && Number.isInteger(seq) ? `${payload.slice(0, at)}:${seq}` : undefined;
      };
      const events = payloads.filter((p) => p.startsWith('\u0001'));
      expect(events.length).toBeGreaterThan(0);
      expect(events.map(olderRelease)).toEqual(events.map(() => undefined));
      // Each events payload comes before the `<task>:<seq>` it goes with.
      for (const payload of events)
        expect(payloads.indexOf(payload)).toBeLessThan(payloads.lastIndexOf(`${task.id}:3`));
    } finally {
      await listener.end();
    }
  });
});
