/**
 * Membership alone, with an injected clock and the reference store: the lease this worker holds
 * (the full TTL, renewed; failed renewals retried), reaping workers whose lease ran out, noticing its own lease ran out,
 * and leaving (the lease kept through the drain, the background jobs stopped at once).
 */
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it, vi } from 'vitest';
import type { Task } from '../../src/model/types.js';
import { Events } from '../../src/runtime/events.js';
import { Membership } from '../../src/runtime/membership.js';
import type { QueueSlot } from '../../src/store/index.js';
import { gate, recordingLogger, textParts } from './helpers.js';

const TTL = 1000;

function setup(store = new MemoryStore()) {
  const clock = { now: 1_000_000 };
  const log = recordingLogger();
  let ids = 0;
  const events = new Events(
    () => clock.now,
    () => `id-${++ids}`,
  );
  const state = { leaseLost: 0 };
  const membership = new Membership({
    store,
    workerId: 'w',
    clock: () => clock.now,
    log,
    events,
    leaseTtlMs: TTL,
    onLeaseLost: () => state.leaseLost++,
  });
  return { store, clock, log, events, state, membership };
}

/** A task with a turn of `workerId` running on it, written as that worker's runtime would. */
async function runningTurn(store: MemoryStore, workerId: string, taskId: string): Promise<QueueSlot> {
  const messageId = `msg-${taskId}`;
  const task: Task = {
    kind: 'task',
    id: taskId,
    contextId: `ctx-${taskId}`,
    status: { state: 'working', timestamp: new Date(0).toISOString() },
    history: [{ kind: 'message', role: 'user', messageId, parts: [{ kind: 'text', text: 'hi' }] }],
  };
  const { turn } = await store.commit({
    taskId,
    expectedVersion: 0,
    task,
    events: [task],
    enqueueTurn: { messageId: messageId, workerId },
  });
  if (turn === undefined) throw new Error('the store returned no slot');
  return turn;
}

describe('membership', () => {
  it('join takes a lease of the TTL; each renewal moves it on', async () => {
    const { store, clock, membership } = setup();
    await membership.join();
    const joinedAt = clock.now;
    // claimExpiredWorkers(now) claims leases that ended before `now`
    expect(await store.claimExpiredWorkers(joinedAt + TTL, 'other')).toEqual([]);
    clock.now += 250;
    await membership.renewAndReap();
    expect(await store.claimExpiredWorkers(joinedAt + TTL + 1, 'other')).toEqual([]);
    const claimed = await store.claimExpiredWorkers(clock.now + TTL + 1, 'other');
    expect(claimed.map((worker) => worker.workerId)).toEqual(['w']);
    await membership.leave(async () => {});
  });

  it('reaps a worker whose lease ran out: fails the task its turn left running and releases the slot', async () => {
    const { store, clock, log, membership } = setup();
    await store.heartbeat('dead', clock.now + 100);
    const slot = await runningTurn(store, 'dead', 'abandoned');
    await membership.join(); // the lease of "dead" still runs
    expect((await store.getTask('abandoned'))?.task.status.state).toBe('working');

    clock.now += 200;
    await membership.renewAndReap();
    const failed = await store.getTask('abandoned');
    expect(failed?.task.status.state).toBe('failed');
    expect(textParts(failed?.task.status.message?.parts)).toMatch(
      /^Worker lost: worker "dead" stopped renewing its lease \(last heartbeat .+\) before the turn finished\.$/,
    );
    expect(await store.listWorkerTurns('dead')).toEqual([]);
    expect(await store.turnReadiness({ ...slot, position: slot.position + 1 })).toEqual({ ready: true });
    expect(log.lines.filter((line) => line.level === 'warn').map((line) => line.msg)).toEqual([
      'a2a: reaped a dead worker',
    ]);
    await membership.leave(async () => {});
  });

  it('a reaped turn that had already ended (its turn-end is the last event) leaves its task as it is', async () => {
    const { store, clock, events, membership } = setup();
    await store.heartbeat('dead', clock.now + 100);
    const slot = await runningTurn(store, 'dead', 'ended');
    const record = await store.getTask('ended');
    if (record === undefined) throw new Error('no task');
    const end = events.turnEnd(record.task, slot.messageId);
    await store.commit({ taskId: 'ended', expectedVersion: record.version, task: record.task, events: [end] });
    await membership.join();
    clock.now += 200;
    await membership.renewAndReap();
    expect((await store.getTask('ended'))?.task.status.state).toBe('working');
    expect(await store.listWorkerTurns('dead')).toEqual([]);
    await membership.leave(async () => {});
  });

  it('notices its own lease ran out (a stall longer than the lease): onLeaseLost, not while it renews on time', async () => {
    const { clock, log, state, membership } = setup();
    await membership.join();
    for (let i = 0; i < 4; i++) {
      clock.now += TTL / 4;
      await membership.renewAndReap();
    }
    expect(state.leaseLost).toBe(0);
    clock.now += 5 * TTL;
    await membership.renewAndReap();
    expect(state.leaseLost).toBe(1);
    expect(log.lines.filter((line) => line.level === 'error').map((line) => line.msg)).toEqual([
      'a2a: this worker lost its lease; aborting its running turns',
    ]);
    // The renewal that noticed it took a new lease: the next one on time is fine.
    clock.now += TTL / 4;
    await membership.renewAndReap();
    expect(state.leaseLost).toBe(1);
    await membership.leave(async () => {});
  });

  it('rides out a store outage shorter than the TTL: failed renewals do not lose the lease (issue 14)', async () => {
    const { store, clock, log, state, membership } = setup();
    await membership.join();
    const heartbeat = store.heartbeat.bind(store);
    store.heartbeat = () => Promise.reject(new Error('store unreachable (injected)'));
    // Renewals fail for 90 % of the TTL: every quarter tick, and the retries in between.
    for (let i = 0; i < 9; i++) {
      clock.now += TTL / 10;
      await membership.renewAndReap();
    }
    expect(state.leaseLost).toBe(0);
    store.heartbeat = heartbeat;
    await membership.renewAndReap();
    expect(state.leaseLost).toBe(0);
    expect(membership.leaseLost).toBe(false);
    expect(log.lines.filter((line) => line.msg?.includes('lost its lease'))).toEqual([]);
    await membership.leave(async () => {});
  });

  it('declares the lease lost once the TTL has passed since the last successful renewal, while the store is still down', async () => {
    const { store, clock, state, membership } = setup();
    await membership.join();
    const heartbeat = store.heartbeat.bind(store);
    store.heartbeat = () => Promise.reject(new Error('store unreachable (injected)'));
    clock.now += TTL;
    await membership.renewAndReap();
    expect(state.leaseLost).toBe(0);
    clock.now += 1;
    await membership.renewAndReap();
    expect(state.leaseLost).toBe(1);
    expect(membership.leaseLost).toBe(true);
    clock.now += TTL;
    await membership.renewAndReap();
    expect(state.leaseLost).toBe(1); // once per loss
    store.heartbeat = heartbeat;
    await membership.renewAndReap();
    expect(membership.leaseLost).toBe(false);
    await membership.leave(async () => {});
  });

  it('retries a failed renewal within a second, not a quarter of the TTL later', async () => {
    const store = new MemoryStore();
    const membership = new Membership({
      store,
      workerId: 'w',
      clock: Date.now,
      log: recordingLogger(),
      events: new Events(Date.now, () => 'id'),
      leaseTtlMs: 60_000,
      onLeaseLost: () => {},
    });
    await membership.join();
    const heartbeat = store.heartbeat.bind(store);
    let attempts = 0;
    store.heartbeat = (workerId, leaseUntil, ctx) => {
      attempts++;
      return attempts === 1
        ? Promise.reject(new Error('store unreachable (injected)'))
        : heartbeat(workerId, leaseUntil, ctx);
    };
    const failedAt = Date.now();
    await membership.renewAndReap();
    await vi.waitFor(() => expect(attempts).toBe(2), { timeout: 3000, interval: 20 });
    expect(Date.now() - failedAt).toBeLessThan(2000);
    await membership.leave(async () => {});
  });

  it('reaps its own abandoned turn once its lease is renewed, if no other worker did', async () => {
    const { store, clock, membership } = setup();
    await membership.join();
    const slot = await runningTurn(store, 'w', 'mine');
    membership.abandon(slot);
    clock.now += TTL / 4;
    await membership.renewAndReap();
    const failed = await store.getTask('mine');
    expect(failed?.task.status.state).toBe('failed');
    expect(textParts(failed?.task.status.message?.parts)).toMatch(/^Worker lost: worker "w" could not reach the store/);
    expect(await store.listWorkerTurns('w')).toEqual([]);
    await membership.leave(async () => {});
  });

  it("a failure failing a restarted predecessor's turn does not fail join; the turn is failed at a later renewal", async () => {
    const store = new MemoryStore();
    await store.joinWorker('w', 1_000_000 + TTL, { incarnation: 'before', host: 'h', pid: 1, startedAt: 0 });
    await runningTurn(store, 'w', 'left');
    const getTask = store.getTask.bind(store);
    let failures = 1;
    store.getTask = (taskId, ...rest) =>
      taskId === 'left' && failures-- > 0
        ? Promise.reject(new Error('store unreachable (injected)'))
        : getTask(taskId, ...rest);
    const { clock, membership } = setup(store);
    await membership.join();
    clock.now += TTL / 4;
    await membership.renewAndReap();
    const failed = await store.getTask('left');
    expect(failed?.task.status.state).toBe('failed');
    expect(textParts(failed?.task.status.message?.parts)).toMatch(/^Worker lost: worker "w" restarted/);
    expect(await store.listWorkerTurns('w')).toEqual([]);
    await membership.leave(async () => {});
  });

  it('refuses to join under a worker id whose lease a live process renews meanwhile, naming its host and pid (issue 28)', async () => {
    // Another process runs under "w" and keeps renewing: a second live process, not a restart.
    const store = new MemoryStore();
    await store.joinWorker('w', 1_000_000 + TTL, { incarnation: 'other', host: 'other-host', pid: 4242, startedAt: 0 });
    await runningTurn(store, 'w', 'theirs');
    const { clock, membership } = setup(store);
    const joined = membership.join().then(
      () => undefined,
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 50)); // it has read the lease and waits
    await store.heartbeat('w', clock.now + 50 + TTL); // the other process renews, as it does every TTL / 4
    const error = await joined;
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', data: { workerId: 'w', host: 'other-host', pid: 4242 } });
    expect((error as Error).message).toMatch(
      /^Worker id "w" is in use: the process on host "other-host" with pid 4242 /,
    );
    // Nothing of the other process was touched: its turn runs on, and leaving keeps its lease.
    expect((await store.getTask('theirs'))?.task.status.state).toBe('working');
    await membership.leave(async () => {});
    const [row] = await store.listWorkers();
    expect(row).toMatchObject({ workerId: 'w', description: { incarnation: 'other', pid: 4242 } });
    expect(row?.turns).toHaveLength(1);
  });

  it('joins under a worker id whose live lease is not renewed within one renewal interval: a restart after a crash', async () => {
    const store = new MemoryStore();
    await store.joinWorker('w', 1_000_000 + TTL, { incarnation: 'crashed', host: 'h', pid: 1, startedAt: 0 });
    await runningTurn(store, 'w', 'left');
    const { membership, log } = setup(store);
    const started = Date.now();
    await membership.join();
    // It waited one renewal interval (TTL / 4, and half of that more) for a renewal that never came.
    expect(Date.now() - started).toBeGreaterThanOrEqual(TTL / 4);
    expect(log.lines.map((line) => line.msg)).toContain(
      'a2a: another start of this worker id holds a live lease; waiting one renewal interval to tell a restart from a live process',
    );
    const failed = await store.getTask('left');
    expect(textParts(failed?.task.status.message?.parts)).toMatch(/^Worker lost: worker "w" restarted/);
    const [row] = await store.listWorkers();
    expect(row?.description?.incarnation).toBe(membership.description.incarnation);
    await membership.leave(async () => {});
  });

  it('renews one at a time: a call while a renewal is in progress returns at once', async () => {
    const { store, membership } = setup();
    await membership.join();
    const held = gate();
    let heartbeats = 0;
    const heartbeat = store.heartbeat.bind(store);
    store.heartbeat = async (workerId, leaseUntil, ctx) => {
      heartbeats++;
      await held.promise;
      return heartbeat(workerId, leaseUntil, ctx);
    };
    const first = membership.renewAndReap();
    await membership.renewAndReap();
    expect(heartbeats).toBe(1);
    held.open();
    await first;
    await membership.leave(async () => {});
  });

  it('logs a failed renewal instead of throwing it; the next renewal runs', async () => {
    const { store, log, membership } = setup();
    await membership.join();
    const heartbeat = store.heartbeat.bind(store);
    const failure = new Error('store unreachable (injected)');
    store.heartbeat = () => Promise.reject(failure);
    await expect(membership.renewAndReap()).resolves.toBeUndefined();
    expect(log.lines.find((line) => line.level === 'error')).toEqual({
      level: 'error',
      obj: { err: failure, job: 'lease renewal or reaping' },
      msg: 'a2a: lease renewal or reaping failed',
    });
    let renewed = false;
    store.heartbeat = (workerId, leaseUntil, ctx) => {
      renewed = true;
      return heartbeat(workerId, leaseUntil, ctx);
    };
    await membership.renewAndReap();
    expect(renewed).toBe(true);
    await membership.leave(async () => {});
  });

  it('leave(): stops the jobs at once, keeps renewing but reaps no one while draining, then gives the lease up', async () => {
    const { store, clock, membership } = setup();
    let sweeps = 0;
    const sweep = membership.jobs.add({ name: 'sweep', intervalMs: 60_000, run: async () => void sweeps++ });
    await store.heartbeat('dead', clock.now + 100);
    await runningTurn(store, 'dead', 'left-running');
    await membership.join();

    const heartbeats: number[] = [];
    const heartbeat = store.heartbeat.bind(store);
    store.heartbeat = (workerId, leaseUntil, ctx) => {
      if (workerId === 'w') heartbeats.push(leaseUntil);
      return heartbeat(workerId, leaseUntil, ctx);
    };
    await membership.leave(async () => {
      await sweep.run(); // stopped: does nothing
      clock.now += 200; // "dead" is past its lease, but a leaving worker reaps no one
      await membership.renewAndReap();
      clock.now += 2 * TTL; // a drain longer than the lease: still renewed
      await membership.renewAndReap();
    });
    expect(sweeps).toBe(0);
    expect(heartbeats).toHaveLength(2);
    expect((await store.getTask('left-running'))?.task.status.state).toBe('working');
    expect((await store.listWorkerTurns('dead')).length).toBe(1);

    // Left: no more renewals, and the lease row is gone (nothing for another worker to reap).
    await membership.renewAndReap();
    expect(heartbeats).toHaveLength(2);
    const claimed = await store.claimExpiredWorkers(clock.now + 10 * TTL, 'other');
    expect(claimed.map((worker) => worker.workerId)).toEqual(['dead']);
  });
});
