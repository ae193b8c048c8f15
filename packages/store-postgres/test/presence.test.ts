/**
 * A commit's NOTIFY goes out only while another process may hear it (`presenceIntervalMs`): a
 * listening store says so on the channel every interval, and a store that has heard no other
 * listener, and seen no other live worker lease, for three intervals stops notifying. A plain
 * client LISTENing on the channel (it never says it listens) watches what the store sends.
 */

import { appendEvents, artifactUpdate, createTask, taskFixture } from '@fastify-a2a/core/testing';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { PostgresStore, type PostgresStoreOptions } from '../src/index.js';
import { notificationChannel } from '../src/sql.js';

const db = withPostgres('pgpresence');

const INTERVAL_MS = 100;
/** Past three intervals since anything was heard: a lone store has gone quiet by then. */
const QUIET_MS = INTERVAL_MS * 3 + 150;

const cleanups: (() => Promise<void>)[] = [];
/** Each test's own namespace (and so channel): a worker lease one test writes is not another's. */
let namespace = '';
beforeEach((context) => {
  namespace = context.task.name;
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openStore(options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const store = new PostgresStore({ connectionString: db.url, schema: db.schema, namespace, ...options });
  cleanups.push(() => store.close());
  await store.open();
  return store;
}

/** A client LISTENing on the store's channel, as a process of ours would, but saying nothing. */
async function watchChannel(): Promise<{ payloads: string[]; seqsOf(taskId: string): number[] }> {
  const client = new pg.Client({ connectionString: db.url });
  const payloads: string[] = [];
  client.on('notification', (message) => payloads.push(message.payload ?? ''));
  await client.connect();
  cleanups.push(() => client.end());
  await client.query(`LISTEN "${notificationChannel(db.schema, namespace)}"`);
  return {
    payloads,
    seqsOf: (taskId) =>
      payloads.filter((payload) => payload.startsWith(`${taskId}:`)).map((payload) => Number(payload.split(':')[1])),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Watcher = Awaited<ReturnType<typeof watchChannel>>;

/** Commits one chunk to `task` and waits long enough for its NOTIFY, if any, to arrive. */
async function commitAndWait(store: PostgresStore, task: ReturnType<typeof taskFixture>): Promise<void> {
  await appendEvents(store, task.id, [artifactUpdate(task, 'chunk')]);
  await sleep(150);
}

/**
 * Commits one chunk after another until the watcher hears one (what it waits for arrives on the
 * store's next announcement, whose timer a loaded machine may delay): the version heard, or 0.
 */
async function notifiesEventually(store: PostgresStore, task: ReturnType<typeof taskFixture>, watcher: Watcher) {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const { version } = await appendEvents(store, task.id, [artifactUpdate(task, 'chunk')]);
    await sleep(100);
    if (watcher.seqsOf(task.id).includes(version)) return version;
  }
  return 0;
}

describe('PostgresStore: NOTIFY only while another process listens', () => {
  it('a lone store goes quiet after three intervals and notifies again once another store says it listens', async () => {
    const watcher = await watchChannel();
    const lone = await openStore({ presenceIntervalMs: INTERVAL_MS });
    const task = taskFixture({ state: 'working' });
    await createTask(lone, task);
    // Just opened: it cannot have heard the others yet, so it notifies.
    await commitAndWait(lone, task);
    expect(watcher.seqsOf(task.id)).toContain(2);

    await sleep(QUIET_MS);
    await commitAndWait(lone, task);
    expect(watcher.seqsOf(task.id)).not.toContain(3);
    // Meanwhile it said, every interval, that it listens.
    expect(watcher.payloads.filter((payload) => payload.startsWith('\u0002')).length).toBeGreaterThanOrEqual(3);

    // Another store's open() resolves once it has said that it listens.
    const other = await openStore({ presenceIntervalMs: INTERVAL_MS });
    const heardByOther: number[] = [];
    const unsubscribe = other.subscribe(task.id, (seq) => heardByOther.push(seq));
    cleanups.push(async () => unsubscribe());
    const version = await notifiesEventually(lone, task, watcher);
    expect(version).toBeGreaterThanOrEqual(4);
    await expect.poll(() => heardByOther).toContain(version);
    // And it keeps notifying while the other keeps saying so, well past three intervals.
    await sleep(QUIET_MS);
    await commitAndWait(lone, task);
    await expect.poll(() => heardByOther).toContain(version + 1);
  });

  it("another live worker's lease keeps it notifying (a worker of an earlier release says nothing)", async () => {
    const watcher = await watchChannel();
    const store = await openStore({ presenceIntervalMs: INTERVAL_MS });
    const task = taskFixture({ state: 'working' });
    await createTask(store, task);
    // This process's worker alone is not another.
    await store.heartbeat('this-worker', Date.now() + 60_000);
    await sleep(QUIET_MS);
    await commitAndWait(store, task);
    expect(watcher.seqsOf(task.id)).not.toContain(2);

    await store.heartbeat('older-release-worker', Date.now() + 60_000);
    expect(await notifiesEventually(store, task, watcher)).toBeGreaterThan(2);
  });

  it('notifies again at once when its LISTEN connection comes back (others may have started meanwhile)', async () => {
    const watcher = await watchChannel();
    const store = await openStore({ presenceIntervalMs: INTERVAL_MS });
    const task = taskFixture({ state: 'working' });
    await createTask(store, task);
    await sleep(QUIET_MS);
    await commitAndWait(store, task);
    expect(watcher.seqsOf(task.id)).not.toContain(2);

    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ killed: boolean }>(
        'SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE application_name = $1',
        [`fastify-a2a listen ${notificationChannel(db.schema, namespace)}`],
      );
      expect(rows.map((row) => row.killed)).toEqual([true]);
    } finally {
      await admin.end();
    }
    await expect.poll(() => store.notificationsConnected).toBe(false);
    await expect.poll(() => store.notificationsConnected, { timeout: 5000 }).toBe(true);
    await appendEvents(store, task.id, [artifactUpdate(task, 'chunk')]);
    await expect.poll(() => watcher.seqsOf(task.id)).toContain(3);
  });

  it('presenceIntervalMs 0, or listen false, notifies after every commit however long it is alone', async () => {
    const watcher = await watchChannel();
    const always = await openStore({ presenceIntervalMs: 0 });
    const deaf = await openStore({ listen: false, presenceIntervalMs: INTERVAL_MS });
    const first = taskFixture({ state: 'working' });
    const second = taskFixture({ state: 'working' });
    await createTask(always, first);
    await createTask(deaf, second);
    await sleep(QUIET_MS);
    await appendEvents(always, first.id, [artifactUpdate(first, 'chunk')]);
    await appendEvents(deaf, second.id, [artifactUpdate(second, 'chunk')]);
    await expect.poll(() => watcher.seqsOf(first.id)).toContain(2);
    await expect.poll(() => watcher.seqsOf(second.id)).toContain(2);
    // Neither says it listens: `always` has presence off, `deaf` does not listen.
    expect(watcher.payloads.filter((payload) => payload.startsWith('\u0002'))).toEqual([]);
  });

  it('refuses a presenceIntervalMs that is not a whole number of milliseconds from 0 to an hour', () => {
    for (const presenceIntervalMs of [-1, 1.5, Number.NaN, 3_600_001, '5000' as unknown as number]) {
      expect(() => new PostgresStore({ connectionString: db.url, presenceIntervalMs })).toThrow(
        /presenceIntervalMs` must be a whole number of milliseconds from 0/,
      );
    }
  });
});
