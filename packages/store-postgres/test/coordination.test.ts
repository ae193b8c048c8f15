/**
 * The coordination methods (turn queue, worker leases, message index) under real concurrency:
 * every instance has a pool (and LISTEN connection) of its own, as separate worker processes would.
 * The conformance suite checks the contract; these tests check how Postgres keeps it (advisory
 * lock, row locks, unique index, NOTIFY) and that each method costs one round trip.
 */

import { A2AError, type Message, type QueueSlot } from '@fastify-a2a/core';
import { createTask, indexEntry, taskFixture, userMessage } from '@fastify-a2a/core/testing';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { PostgresStore, type PostgresStoreOptions } from '../src/index.js';
import { escapeIdentifier, turnLockKey } from '../src/sql.js';

const db = withPostgres('pgstore_coord');

/** Every store and pool a test opens, closed after it. */
const opened: PostgresStore[] = [];
const pools: pg.Pool[] = [];
afterEach(async () => {
  for (const store of opened.splice(0).reverse()) await store.close();
  await Promise.all(pools.splice(0).map((pool) => pool.end()));
});

async function openStore(options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const store = new PostgresStore({ connectionString: db.url, schema: db.schema, ...options });
  opened.push(store);
  await store.open();
  return store;
}

/** `count` instances on one schema and namespace, each with its own pool: separate workers. */
const workers = (count: number, options: PostgresStoreOptions = {}): Promise<PostgresStore[]> =>
  Promise.all(Array.from({ length: count }, () => openStore(options)));

/** A namespace of one test's own, so leftovers of other tests (same schema) never show. */
const freshNamespace = (): string => `ns_${Math.random().toString(36).slice(2)}`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A client of the test's own, e.g. to hold a lock inside an open transaction. */
async function testClient(): Promise<pg.PoolClient> {
  const pool = new pg.Pool({ connectionString: db.url, max: 1 });
  pools.push(pool);
  return pool.connect();
}

/** Whether `promise` is still pending after `ms`. */
async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const marker = Symbol('pending');
  return (await Promise.race([promise.catch(() => undefined), sleep(ms).then(() => marker)])) === marker;
}

/**
 * Waits until the slot may run, the way a worker does: read readiness; if a turn is ahead,
 * subscribe to its task, read again (a finish between the two reads is then not missed), and wait
 * for a notification. `fallbacks` counts waits that ended by the safety timeout instead.
 */
async function waitUntilReady(store: PostgresStore, slot: QueueSlot, stats: { fallbacks: number }): Promise<void> {
  for (;;) {
    const first = await store.turnReadiness(slot);
    if (first.ready) return;
    let wake = (): void => {};
    const woken = new Promise<'notified' | 'timeout'>((resolve) => {
      wake = () => resolve('notified');
      // Long enough that a notification slowed by a loaded machine (the full suite on 2 cores: one
      // was seen to take over 5 s) is not counted as lost; a lost one still shows as a fallback.
      setTimeout(() => resolve('timeout'), 15_000).unref();
    });
    const unsubscribe = store.subscribe(first.ahead.taskId, () => wake());
    try {
      const again = await store.turnReadiness(slot);
      if (again.ready) return;
      if (again.ahead.position !== first.ahead.position) continue;
      if ((await woken) === 'timeout') stats.fallbacks += 1;
    } finally {
      unsubscribe();
    }
  }
}

describe('turn queue across instances', () => {
  it('3 instances × 10 concurrent enqueues on one context: 30 distinct positions, exactly one ready, each waits for the one directly ahead', async () => {
    const namespace = freshNamespace();
    const stores = await workers(3, { namespace });
    const slots = (
      await Promise.all(
        stores.map((store, w) =>
          Promise.all(
            Array.from({ length: 10 }, (_, i) =>
              store.enqueueTurn({
                contextId: 'ctx-busy',
                taskId: `task-${w}-${i}`,
                messageId: `turn-${w}-${i}`,
                workerId: `worker-${w}`,
              }),
            ),
          ),
        ),
      )
    ).flat();
    expect(new Set(slots.map((t) => t.position)).size).toBe(30);

    const queue = [...slots].sort((a, b) => a.position - b.position);
    for (let head = 0; head < queue.length; head++) {
      const reader = stores[head % 3] as PostgresStore;
      const waiting = queue.slice(head);
      const readiness = await Promise.all(waiting.map((slot) => reader.turnReadiness(slot)));
      expect(readiness).toEqual(
        waiting.map((_, i) => (i === 0 ? { ready: true } : { ready: false, ahead: waiting[i - 1] })),
      );
      await (stores[(head + 1) % 3] as PostgresStore).finishTurn(queue[head] as QueueSlot);
    }
  });

  it('30 workers on 3 instances run their turns of one context one at a time, in position order, woken by NOTIFY', async () => {
    const namespace = freshNamespace();
    const stores = await workers(3, { namespace });
    const stats = { fallbacks: 0 };
    let running = 0;
    let mostRunning = 0;
    const ran: number[] = [];
    const turn = async (store: PostgresStore, name: string) => {
      const slot = await store.enqueueTurn({
        contextId: 'ctx',
        taskId: `task-${name}`,
        messageId: `turn-${name}`,
        workerId: `worker-${name}`,
      });
      await waitUntilReady(store, slot, stats);
      running += 1;
      mostRunning = Math.max(mostRunning, running);
      ran.push(slot.position);
      await sleep(Math.random() * 5);
      running -= 1;
      await store.finishTurn(slot);
      return slot;
    };
    const slots = await Promise.all(
      Array.from({ length: 30 }, (_, i) => turn(stores[i % 3] as PostgresStore, String(i))),
    );

    expect(mostRunning).toBe(1);
    expect(ran).toEqual(slots.map((t) => t.position).sort((a, b) => a - b));
    expect(stats.fallbacks).toBe(0); // every wait ended by a notification, none by the safety timeout
    for (const store of stores) expect(await store.listWorkerTurns('worker-0')).toEqual([]);
  }, 60_000);

  it('the position is drawn only once the context’s lock is held, so it follows commit order', async () => {
    const namespace = freshNamespace();
    const [a, b] = (await workers(2, { namespace })) as [PostgresStore, PostgresStore];
    const holder = await testClient();
    try {
      // Someone (another worker's enqueue, in effect) holds the lock of ctx-locked, uncommitted.
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1::bigint)', [turnLockKey(a.schema, namespace, 'ctx-locked')]);
      const blocked = a.enqueueTurn({ contextId: 'ctx-locked', taskId: 't1', messageId: 'm1', workerId: 'w1' });
      expect(await pendingAfter(blocked, 300)).toBe(true);

      // Other contexts are not held up, and draw positions meanwhile.
      const other = await b.enqueueTurn({ contextId: 'ctx-other', taskId: 't2', messageId: 'm2', workerId: 'w2' });
      await holder.query('COMMIT');
      const late = await blocked;
      expect(late.position).toBeGreaterThan(other.position);
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
    }
  });

  it('finishTurn NOTIFYs "<taskId>:0" to subscribers on other instances when a turn waits behind, and tells its own at once', async () => {
    const namespace = freshNamespace();
    const finisher = await openStore({ namespace, listen: false });
    const waiter = await openStore({ namespace });
    const slot = await finisher.enqueueTurn({
      contextId: 'ctx',
      taskId: 'task-ahead',
      messageId: 'm',
      workerId: 'w',
    });
    await waiter.enqueueTurn({ contextId: 'ctx', taskId: 'task-behind', messageId: 'm2', workerId: 'w2' });
    const heardThere: number[] = [];
    const heardHere: number[] = [];
    waiter.subscribe('task-ahead', (seq) => heardThere.push(seq));
    finisher.subscribe('task-ahead', (seq) => heardHere.push(seq));

    await finisher.finishTurn(slot);
    expect(heardHere).toEqual([0]); // synchronously, before the NOTIFY comes back
    await expect.poll(() => heardThere, { timeout: 5_000 }).toEqual([0]);

    // A slot no longer queued: nothing to tell.
    await finisher.finishTurn(slot);
    await sleep(200);
    expect(heardHere).toEqual([0]);
    expect(heardThere).toEqual([0]);
  });

  it('finishTurn with nobody waiting behind sends no NOTIFY (a NOTIFY serialises commits server-wide)', async () => {
    const namespace = freshNamespace();
    const finisher = await openStore({ namespace, listen: false });
    const listener = await openStore({ namespace });
    const slot = await finisher.enqueueTurn({
      contextId: 'alone',
      taskId: 'task-alone',
      messageId: 'm',
      workerId: 'w',
    });
    const heard: number[] = [];
    listener.subscribe('task-alone', (seq) => heard.push(seq));
    await finisher.finishTurn(slot);
    await sleep(300);
    expect(heard).toEqual([]);
    expect((await finisher.turnReadiness(slot)).ready).toBe(true);
  });
});

describe('notifications across instances', () => {
  it('a creating commit marked unknownElsewhere sends no NOTIFY; the next commit of the task does, and tells its own at once both times', async () => {
    const namespace = freshNamespace();
    const writer = await openStore({ namespace, listen: false });
    const listener = await openStore({ namespace });
    const task = taskFixture({ state: 'working' });
    const heardThere: number[] = [];
    const heardHere: number[] = [];
    listener.subscribe(task.id, (seq) => heardThere.push(seq));
    writer.subscribe(task.id, (seq) => heardHere.push(seq));

    await writer.commit({ taskId: task.id, expectedVersion: 0, task, events: [task], unknownElsewhere: true });
    expect(heardHere).toEqual([1]);
    // The same commit without the flag: its NOTIFY reaches the other instance (see the next test),
    // well within this wait.
    await sleep(300);
    expect(heardThere).toEqual([]);

    const record = await writer.getTask(task.id);
    const update = { ...task, metadata: { step: 2 } };
    await writer.commit({
      taskId: task.id,
      expectedVersion: record?.version ?? 1,
      task: update,
      events: [
        { kind: 'status-update', taskId: task.id, contextId: task.contextId, status: task.status, final: false },
      ],
    });
    expect(heardHere).toEqual([1, 2]);
    await expect.poll(() => heardThere, { timeout: 5_000 }).toEqual([2]);
  });

  it('the same creating commit without unknownElsewhere is heard on the other instance', async () => {
    const namespace = freshNamespace();
    const writer = await openStore({ namespace, listen: false });
    const listener = await openStore({ namespace });
    const task = taskFixture();
    const heardThere: number[] = [];
    listener.subscribe(task.id, (seq) => heardThere.push(seq));
    await createTask(writer, task);
    await expect.poll(() => heardThere, { timeout: 5_000 }).toEqual([1]);
  });
});

describe('worker leases across instances', () => {
  it('10 concurrent claimers on 5 instances: each of 12 dead workers is claimed exactly once, with its turns', async () => {
    const namespace = freshNamespace();
    const stores = await workers(5, { namespace });
    const [first] = stores as [PostgresStore];
    const dead = Array.from({ length: 12 }, (_, i) => `dead-${String(i).padStart(2, '0')}`);
    const turns = new Map<string, QueueSlot[]>();
    for (const [i, workerId] of dead.entries()) {
      await first.heartbeat(workerId, 1_000 + i);
      turns.set(workerId, [
        await first.enqueueTurn({ contextId: `ctx-${i % 3}`, taskId: `a-${workerId}`, messageId: 'x', workerId }),
        await first.enqueueTurn({ contextId: `ctx-${i % 3}`, taskId: `b-${workerId}`, messageId: 'y', workerId }),
      ]);
    }
    await first.heartbeat('alive', 100_000);

    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (stores[i % 5] as PostgresStore).claimExpiredWorkers(50_000)),
    );
    const claimed = results.flat().sort((x, y) => (x.workerId < y.workerId ? -1 : 1));
    expect(claimed.map((w) => w.workerId)).toEqual(dead);
    for (const worker of claimed) expect(worker.turns).toEqual(turns.get(worker.workerId));
    expect(results.filter((r) => r.length > 0).length).toBeGreaterThanOrEqual(1);
    expect(await first.claimExpiredWorkers(50_000)).toEqual([]);
  });

  it('a claimer waiting on a heartbeat in progress re-checks the renewed lease and leaves the worker alone', async () => {
    const namespace = freshNamespace();
    const [a] = (await workers(1, { namespace })) as [PostgresStore];
    await a.heartbeat('slow', 1_000);
    await a.heartbeat('gone', 1_000);
    const renewer = await testClient();
    try {
      // A renewal holding the row lock, not committed yet (as a heartbeat of the worker would).
      await renewer.query('BEGIN');
      await renewer.query(
        `UPDATE ${escapeIdentifier(a.schema)}.workers SET lease_until = 100000 WHERE namespace = $1 AND worker_id = 'slow'`,
        [namespace],
      );
      const claiming = a.claimExpiredWorkers(5_000);
      expect(await pendingAfter(claiming, 300)).toBe(true);
      await renewer.query('COMMIT');
      expect((await claiming).map((w) => w.workerId)).toEqual(['gone']);
    } finally {
      await renewer.query('ROLLBACK').catch(() => {});
      renewer.release();
    }
    expect((await a.claimExpiredWorkers(100_001)).map((w) => w.workerId)).toEqual(['slow']);
  });
});

describe('message index across instances', () => {
  it('two instances creating tasks with the same 20 message ids: one wins each id, the other gets the winner’s task', async () => {
    const namespace = freshNamespace();
    const [a, b] = (await workers(2, { namespace })) as [PostgresStore, PostgresStore];
    const ids = Array.from({ length: 20 }, (_, i) => `msg-${i}`);
    const attempt = (store: PostgresStore, who: string, messageId: string) => {
      const [id, contextId] = [`${who}-${messageId}`, `ctx-${who}-${messageId}`];
      const task = taskFixture({ id, contextId, history: [userMessage('hi', { messageId, taskId: id, contextId })] });
      return createTask(store, task).then(
        () => ({ won: task }),
        (error: unknown) => ({ lost: task, error }),
      );
    };
    const outcomes = await Promise.all(ids.flatMap((id) => [attempt(a, 'a', id), attempt(b, 'b', id)]));

    for (const id of ids) {
      const mine = outcomes.filter((o) => ('won' in o ? o.won : o.lost).history?.[0]?.messageId === id);
      const winners = mine.flatMap((o) => ('won' in o ? [o.won] : []));
      expect(winners, id).toHaveLength(1);
      const winner = winners[0] as (typeof winners)[number];
      const loser = mine.find((o) => 'lost' in o) as { lost: typeof winner; error: unknown };
      expect(A2AError.is(loser.error) && loser.error.code).toBe('DUPLICATE_MESSAGE');
      expect((loser.error as A2AError).data).toEqual({
        messageId: id,
        taskId: winner.id,
        contextId: winner.contextId,
      });
      for (const store of [a, b]) {
        expect(await store.findMessage(id)).toEqual(indexEntry(winner, winner.history?.[0] as Message));
        expect(await store.getTask(loser.lost.id)).toBeUndefined();
      }
    }
  });
});

describe('round trips', () => {
  /**
   * An instance on a pool whose query() calls are counted (the store sends every statement through
   * it); `onError` runs when a statement fails, before the store sees the error.
   */
  async function counted(
    onError: (error: unknown, store: PostgresStore) => Promise<void> = async () => {},
    options: { groupCommit?: boolean } = {},
  ): Promise<{ store: PostgresStore; calls: () => number; notifies: () => number }> {
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    pools.push(pool);
    let calls = 0;
    let notifies = 0;
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    const store = new PostgresStore({
      pool,
      schema: db.schema,
      namespace: freshNamespace(),
      listen: false,
      ...options,
    });
    (pool as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = async (...args: unknown[]) => {
      // The coalesced NOTIFY after commits runs on its own, after the call that caused it.
      const text = String((args[0] as { text?: string })?.text ?? args[0]);
      if (text.includes("set_config('synchronous_commit'")) notifies += 1;
      // The one-off look at the planner's statistics after the 20th task created (see
      // PostgresStore's #countCreated) is not a commit's round trip.
      else if (!text.includes('pg_class') && !text.startsWith('ANALYZE')) calls += 1;
      try {
        return await query(...args);
      } catch (error) {
        await onError(error, store);
        throw error;
      }
    };
    opened.push(store);
    await store.open();
    return { store, calls: () => calls, notifies: () => notifies };
  }

  it('commits tell other processes in one NOTIFY per event-loop turn, outside the commit', async () => {
    // Every commit on the pool, to count them (with group commit most go on the batch connections).
    const { store, calls, notifies } = await counted(undefined, { groupCommit: false });
    const before = calls();
    await Promise.all(Array.from({ length: 20 }, (_, i) => createTask(store, taskFixture({ id: `burst-${i}` }))));
    expect(calls() - before).toBe(20);
    await expect.poll(() => notifies(), { timeout: 5_000 }).toBeGreaterThanOrEqual(1);
    expect(notifies()).toBeLessThanOrEqual(3);
  });

  it('with group commit, a burst of commits takes few statements on the pool and still one NOTIFY per turn', async () => {
    const { store, calls, notifies } = await counted();
    const before = calls();
    await Promise.all(Array.from({ length: 20 }, (_, i) => createTask(store, taskFixture({ id: `burst-${i}` }))));
    // The first commits find a way free and go alone on the pool; the others wait and go in batches.
    expect(calls() - before).toBeLessThan(20);
    for (let i = 0; i < 20; i++) expect((await store.getTask(`burst-${i}`))?.version).toBe(1);
    await expect.poll(() => notifies(), { timeout: 5_000 }).toBeGreaterThanOrEqual(1);
    expect(notifies()).toBeLessThanOrEqual(3);
  });

  it('commit (with its message index), enqueueTurn, turnReadiness, finishTurn and claimExpiredWorkers are one statement each', async () => {
    const { store, calls } = await counted();
    const task = taskFixture({ state: 'working' });
    const cost = async (work: () => Promise<unknown>) => {
      const before = calls();
      await work();
      return calls() - before;
    };
    expect(await cost(() => createTask(store, { ...task, history: [userMessage('hello', { taskId: task.id })] }))).toBe(
      1,
    );
    const slot = await store.enqueueTurn({ contextId: 'c', taskId: task.id, messageId: 't', workerId: 'w' });
    expect(await cost(() => store.enqueueTurn({ contextId: 'c', taskId: 'x', messageId: 'y', workerId: 'w' }))).toBe(1);
    expect(await cost(() => store.turnReadiness(slot))).toBe(1);
    expect(await cost(() => store.finishTurn(slot))).toBe(1);
    expect(await cost(() => store.heartbeat('w', 0))).toBe(1);
    expect(await cost(() => store.claimExpiredWorkers(1))).toBe(1);
  });

  it('a duplicate whose index row is gone by the time the store reads it (purged): the commit is tried once more and succeeds', async () => {
    let purged = false;
    const { store, calls } = await counted(async (error, self) => {
      if ((error as { code?: string }).code !== '23505' || purged) return;
      purged = true;
      await db.query(
        `DELETE FROM ${escapeIdentifier(self.schema)}.messages WHERE namespace = $1 AND message_id = 'm-contested'`,
        [self.namespace],
      );
    });
    await createTask(store, taskFixture({ id: 'first', history: [userMessage('x', { messageId: 'm-contested' })] }));
    const before = calls();
    const contested = userMessage('x', { messageId: 'm-contested' });
    const second = taskFixture({ id: 'second', history: [contested] });
    await createTask(store, second);
    expect(calls() - before).toBe(3); // refused, the lookup finds nothing, written
    expect(purged).toBe(true);
    expect(await store.findMessage('m-contested')).toEqual(indexEntry(second, contested));
  });
});
