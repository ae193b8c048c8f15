/**
 * Worker leases in one process with injected clocks (the multi-worker tests of the Fastify package
 * do the same with real processes and SIGKILL): a worker whose lease ran out is reaped by another,
 * a worker that finds its own lease ran out stops its turns, and close() drains.
 */
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import { asTask, textParts, useRuntimes, userMessage, waitFor, waitForAbort } from './helpers.js';

const start = useRuntimes();

describe('worker leases', () => {
  it('a worker whose lease expired is reaped by another: its running task fails with "worker lost" and its context is freed', async () => {
    const store = new MemoryStore();
    let now = 1_000_000;
    const frozen = 1_000_000;
    const dead = start(async (turn) => waitForAbort(turn.signal), {
      store,
      workerId: 'dead',
      clock: () => frozen, // its renewals never move its lease forward: as if it had stopped
      leaseTtlMs: 1000,
      closeStore: false,
      drainTimeoutMs: 0,
    });
    const alive = start(async (turn) => turn.complete(`ran on alive: ${turn.text}`), {
      store,
      workerId: 'alive',
      clock: () => now,
      // Longer than the clock's jump below: only dead's lease runs out (a lease of 1000 lost alive's
      // own too, aborting `next` whenever it was accepted before the jump).
      leaseTtlMs: 10_000,
      closeStore: false,
    });
    // Joined before the test renews its lease by hand: a renewal asked for while the join's own runs
    // returns at once, and the join now first reads the lease table (issue 28).
    await alive.start();
    const stuck = asTask(
      await dead.sendMessage({ message: userMessage('x', { contextId: 'c' }), configuration: { blocking: false } }),
    );
    await waitFor(async () => (await store.getTask(stuck.id))?.task.status.state === 'working');
    const next = alive.sendMessage({ message: userMessage('next', { contextId: 'c' }) });

    await alive.renewLeaseAndReap(); // lease of "dead" still valid
    expect((await store.getTask(stuck.id))?.task.status.state).toBe('working');

    now += 1001; // past dead's lease (the TTL after its last renewal)
    await alive.renewLeaseAndReap();
    const failed = await store.getTask(stuck.id);
    expect(failed?.task.status.state).toBe('failed');
    expect(textParts(failed?.task.status.message?.parts)).toMatch(
      /^Worker lost: worker "dead" stopped renewing its lease/,
    );
    const done = asTask(await next);
    expect(done.status.state).toBe('completed');
    expect(textParts(done.status.message?.parts)).toBe('ran on alive: next');
  });

  it('a worker that finds its own lease ran out aborts its turns and fails their tasks', async () => {
    let now = 5_000_000;
    let aborted = false;
    const runtime = start(
      async (turn) => {
        await waitForAbort(turn.signal);
        aborted = true;
      },
      { clock: () => now, leaseTtlMs: 1000 },
    );
    const task = asTask(await runtime.sendMessage({ message: userMessage('x'), configuration: { blocking: false } }));
    await waitFor(async () => (await runtime.store.getTask(task.id))?.task.status.state === 'working');
    await runtime.renewLeaseAndReap();
    expect(aborted).toBe(false);
    now += 5000; // a stall far longer than the lease
    await runtime.renewLeaseAndReap();
    await waitFor(() => aborted);
    const failed = await waitFor(async () => {
      const record = await runtime.store.getTask(task.id);
      return record?.task.status.state === 'failed' ? record : undefined;
    });
    expect(textParts(failed.task.status.message?.parts)).toMatch(/could not renew its lease in time/);
  });

  it('close() drains: running turns finish within drainTimeoutMs, the rest fail with a message naming the worker', async () => {
    const store = new MemoryStore();
    const runtime = start(
      async (turn) => {
        if (turn.text === 'quick') {
          await new Promise((r) => setTimeout(r, 100));
          await turn.complete();
          return;
        }
        await waitForAbort(turn.signal);
      },
      { store, workerId: 'w-drain', closeStore: false, drainTimeoutMs: 300 },
    );
    const quick = asTask(
      await runtime.sendMessage({ message: userMessage('quick'), configuration: { blocking: false } }),
    );
    const slow = asTask(
      await runtime.sendMessage({ message: userMessage('slow'), configuration: { blocking: false } }),
    );
    await runtime.close();
    expect((await store.getTask(quick.id))?.task.status.state).toBe('completed');
    const failed = await store.getTask(slow.id);
    expect(failed?.task.status.state).toBe('failed');
    expect(textParts(failed?.task.status.message?.parts)).toMatch(
      /worker "w-drain" shut down before the turn finished \(drain timeout 300 ms\)/,
    );
    // the worker gave its lease and queue slots back
    expect(await store.listWorkerTurns('w-drain')).toEqual([]);
    await expect(runtime.sendMessage({ message: userMessage('late') })).rejects.toThrow(/shutting down/);
  });

  // Regression: close() stopped renewing the lease before draining, so a drain longer than the
  // lease let another worker reap the draining one and fail its still-running turns as "worker
  // lost" (seen as a flaky multi-worker SIGTERM test).
  it('a draining worker keeps its lease: a drain longer than the lease TTL is not reaped by another worker', async () => {
    const store = new MemoryStore();
    const draining = start(
      async (turn) => {
        await new Promise((r) => setTimeout(r, 1200));
        await turn.complete('finished while draining');
      },
      { store, workerId: 'w-draining', closeStore: false, leaseTtlMs: 600, drainTimeoutMs: 3000 },
    );
    const reaper = start(async (turn) => turn.complete(), {
      store,
      workerId: 'w-reaper',
      closeStore: false,
      leaseTtlMs: 600,
    });
    await reaper.start();
    const task = asTask(
      await draining.sendMessage({ message: userMessage('long'), configuration: { blocking: false } }),
    );
    await waitFor(async () => (await store.getTask(task.id))?.task.status.state === 'working');
    await draining.close();
    const done = await store.getTask(task.id);
    expect(textParts(done?.task.status.message?.parts)).toBe('finished while draining');
    expect(done?.task.status.state).toBe('completed');
  });
});
