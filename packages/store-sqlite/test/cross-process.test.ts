/**
 * Real child processes on one file: what "many worker processes act as one server" needs from
 * SQLite. Each child is test/fixtures/child.ts run by Node with tsx.
 */

import { join } from 'node:path';
import { type CommitRequest, type Message, messageDigest, type QueueSlot, type Task } from '@fastify-a2a/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { makeTask, runChild, tempDir } from './helpers.js';

let dir: string;
let remove: () => void;
let store: SqliteStore;
let filename: string;

beforeEach(async () => {
  ({ dir, remove } = tempDir());
  filename = join(dir, 'a2a.db');
  store = new SqliteStore({ filename, pollIntervalMs: 10 });
  await store.open();
});
afterEach(async () => {
  await store.close();
  remove();
});

const working = (task: Task, expectedVersion: number): CommitRequest => ({
  taskId: task.id,
  expectedVersion,
  task: { ...task, status: { state: 'working' } },
  events: [
    { kind: 'status-update', taskId: task.id, contextId: task.contextId, status: { state: 'working' }, final: false },
  ],
});

describe('across processes', () => {
  it("a child process's commit reaches this process's subscriber", async () => {
    const task = makeTask('t1', 'c1');
    await store.commit({ taskId: 't1', expectedVersion: 0, task, events: [task] });
    const seen: number[] = [];
    store.subscribe('t1', (seq) => seen.push(seq));

    const child = await runChild(['commit', filename, JSON.stringify(working(task, 1))]);
    expect(child.stderr).toBe('');
    expect(child.output).toEqual({ ok: true, version: 2 });
    await vi.waitFor(() => expect(seen).toEqual([2]), { timeout: 5000, interval: 10 });
    expect((await store.getTask('t1'))?.task.status.state).toBe('working');
  });

  it('a child in another namespace neither sees nor notifies this one', async () => {
    const task = makeTask('t1', 'c1');
    await store.commit({ taskId: 't1', expectedVersion: 0, task, events: [task] });
    const seen: number[] = [];
    store.subscribe('t1', (seq) => seen.push(seq));
    // Version 0 succeeds there: the task does not exist in namespace "other".
    const child = await runChild(['commit', filename, JSON.stringify({ ...working(task, 0), events: [task] })], {
      NAMESPACE: 'other',
    });
    expect(child.output).toEqual({ ok: true, version: 1 });
    // A local commit after the child's, so a (wrong) cross-namespace notification would have had its chance.
    await store.commit(working(task, 1));
    expect(seen).toEqual([2]);
  });

  it('children committing the same version at the same instant: exactly one wins, the rest conflict', async () => {
    const task = makeTask('t1', 'c1');
    await store.commit({ taskId: 't1', expectedVersion: 0, task, events: [task] });
    const env = { START_AT: String(Date.now() + 2000) };
    const request = JSON.stringify(working(task, 1));
    const results = await Promise.all([1, 2, 3, 4].map(() => runChild(['commit', filename, request], env)));
    for (const result of results) expect(result.stderr).toBe('');
    const outputs = results.map((result) => result.output);
    expect(outputs.filter((output) => output?.ok)).toEqual([{ ok: true, version: 2 }]);
    expect(outputs.filter((output) => !output?.ok)).toEqual([
      { ok: false, code: 'VERSION_CONFLICT' },
      { ok: false, code: 'VERSION_CONFLICT' },
      { ok: false, code: 'VERSION_CONFLICT' },
    ]);
    // Read after learning the version: this store committed event 1 itself, and may answer
    // readEvents from it alone until it hears of a later version (see RecentEvents in core).
    expect((await store.getTask('t1'))?.version).toBe(2);
    expect((await store.readEvents('t1', 0)).map((event) => event.seq)).toEqual([1, 2]);
  });

  it('read-modify-write loops in three processes lose no update', async () => {
    const task = makeTask('t1', 'c1');
    await store.commit({ taskId: 't1', expectedVersion: 0, task, events: [task] });
    const times = 100;
    const env = { START_AT: String(Date.now() + 2000) };
    const results = await Promise.all(
      [1, 2, 3].map(() => runChild(['increment', filename, JSON.stringify({ taskId: 't1', times })], env)),
    );
    for (const result of results) {
      expect(result.stderr).toBe('');
      expect(result.output).toMatchObject({ ok: true });
    }
    const total = 1 + 3 * times;
    const record = await store.getTask('t1');
    expect(record?.version).toBe(total);
    // The snapshot is the one written by the last commit, which had read version total - 1.
    expect(record?.task.metadata).toEqual({ count: total - 1 });
    const seqs = (await store.readEvents('t1', 0)).map((event) => event.seq);
    expect(seqs).toEqual(Array.from({ length: total }, (_, index) => index + 1));
  });
});

describe('coordination across processes', () => {
  it('three processes enqueueing 10 turns each on one context at once get 30 distinct positions in a consistent order', async () => {
    const env = { START_AT: String(Date.now() + 2000) };
    const workers = ['w0', 'w1', 'w2'];
    const results = await Promise.all(
      workers.map((workerId) =>
        runChild(['enqueue', filename, JSON.stringify({ contextId: 'ctx', workerId, count: 10 })], env),
      ),
    );
    for (const result of results) {
      expect(result.stderr).toBe('');
      expect(result.output).toMatchObject({ ok: true });
    }
    const byWorker = results.map((result) => result.output?.positions ?? []);
    // Each process's turns are in its own enqueue order: every process enqueued one after another.
    for (const positions of byWorker) {
      expect(positions).toHaveLength(10);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
    }
    const all = byWorker.flat().sort((a, b) => a - b);
    expect(new Set(all).size).toBe(30);

    // The queue, as this process sees it: the slots listed per worker are the ones the children got.
    const slots = (await Promise.all(workers.map((workerId) => store.listWorkerTurns(workerId)))).flat();
    expect(slots.map((slot) => slot.position).sort((a, b) => a - b)).toEqual(all);
    // Exactly one head; every other slot waits for the one directly before it in position order.
    const queue = [...slots].sort((a, b) => a.position - b.position);
    const readiness = await Promise.all(queue.map((slot) => store.turnReadiness(slot)));
    expect(readiness).toEqual(queue.map((_, i) => (i === 0 ? { ready: true } : { ready: false, ahead: queue[i - 1] })));

    const elapsed = results.map((result) => Math.round(result.output?.elapsedMs ?? 0));
    const interleaved = queue.some((slot, i) => i > 0 && slot.workerId !== queue[i - 1]?.workerId);
    console.info(`3×10 concurrent enqueues: ${elapsed.join(' / ')} ms per process; interleaved: ${interleaved}`);
  });

  it('three processes claiming expired workers at once: each dead worker (with its turns) goes to exactly one', async () => {
    const now = Date.now();
    const dead = Array.from({ length: 30 }, (_, i) => `dead-${i}`);
    const turns = new Map<string, QueueSlot[]>();
    for (const [i, workerId] of dead.entries()) {
      await store.heartbeat(workerId, now - 1000 - i);
      turns.set(workerId, [
        await store.enqueueTurn({ contextId: `ctx-${i % 4}`, taskId: `t-${i}`, messageId: `turn-${i}-a`, workerId }),
        await store.enqueueTurn({ contextId: `ctx-${i % 4}`, taskId: `t-${i}`, messageId: `turn-${i}-b`, workerId }),
      ]);
    }
    await store.heartbeat('alive', now + 60_000);

    const env = { START_AT: String(Date.now() + 2000) };
    const results = await Promise.all([1, 2, 3].map(() => runChild(['claim', filename, JSON.stringify({ now })], env)));
    for (const result of results) expect(result.stderr).toBe('');
    const claimed = results.flatMap((result) => result.output?.claimed ?? []);
    expect(claimed.map((worker) => worker.workerId).sort()).toEqual([...dead].sort());
    for (const worker of claimed) expect(worker.turns).toEqual(turns.get(worker.workerId));
    // Turns stay queued for the reaper to fail and finish; the leases are gone.
    expect(await store.listWorkerTurns('dead-0')).toEqual(turns.get('dead-0'));
    expect(await store.claimExpiredWorkers(now)).toEqual([]);
    console.info(
      `3 concurrent reapers got ${results.map((result) => result.output?.claimed?.length).join(' / ')} workers`,
    );
  });

  it('four processes creating tasks with the same first message id at once: exactly one commit wins', async () => {
    const message: Message = {
      kind: 'message',
      messageId: 'retried',
      role: 'user',
      parts: [{ kind: 'text', text: 'hi' }],
    };
    const env = { START_AT: String(Date.now() + 2000) };
    const results = await Promise.all(
      [1, 2, 3, 4].map((i) => {
        const task: Task = { ...makeTask(`task-${i}`, `ctx-${i}`), history: [message] };
        return runChild(
          ['commit', filename, JSON.stringify({ taskId: task.id, expectedVersion: 0, task, events: [task] })],
          env,
        );
      }),
    );
    for (const result of results) expect(result.stderr).toBe('');
    const outputs = results.map((result) => result.output);
    expect(outputs.filter((output) => output?.ok)).toEqual([{ ok: true, version: 1 }]);
    expect(outputs.filter((output) => !output?.ok)).toEqual(Array(3).fill({ ok: false, code: 'DUPLICATE_MESSAGE' }));
    const winner = outputs.findIndex((output) => output?.ok) + 1;
    expect(await store.findMessage('retried')).toEqual({
      taskId: `task-${winner}`,
      contextId: `ctx-${winner}`,
      digest: messageDigest(message),
    });
    for (const i of [1, 2, 3, 4].filter((i) => i !== winner)) expect(await store.getTask(`task-${i}`)).toBeUndefined();
  });

  it("a child process finishing the turn ahead wakes this process's waiter through the poll loop", async () => {
    const first = await store.enqueueTurn({ contextId: 'ctx', taskId: 't1', messageId: 'turn-1', workerId: 'child' });
    const second = await store.enqueueTurn({ contextId: 'ctx', taskId: 't2', messageId: 'turn-2', workerId: 'parent' });
    expect(await store.turnReadiness(second)).toEqual({ ready: false, ahead: first });
    const seen: number[] = [];
    let wokenAt = 0;
    store.subscribe('t1', (seq) => {
      seen.push(seq);
      wokenAt = Date.now();
    });

    const child = await runChild(['finish', filename, JSON.stringify(first)]);
    const exitedAt = Date.now();
    expect(child.output).toEqual({ ok: true });
    await vi.waitFor(() => expect(seen).toEqual([0]), { timeout: 2000, interval: 5 });
    expect(await store.turnReadiness(second)).toEqual({ ready: true });
    console.info(`waiter woken ${wokenAt - exitedAt} ms after the finishing child exited`);
  });
});
