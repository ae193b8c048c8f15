/**
 * Worker leases in one process with injected clocks (the multi-worker tests do the same with real
 * processes and SIGKILL): a worker whose lease ran out is reaped by another, and a worker that
 * finds its own lease ran out stops its turns.
 */
import { A2ARuntime, type Task } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { afterEach, describe, expect, it } from 'vitest';
import { textParts, userMessage, waitFor } from './helpers.js';

const runtimes: A2ARuntime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

function waitForAbort(signal: AbortSignal): Promise<void> {
  return signal.aborted
    ? Promise.resolve()
    : new Promise((resolve) => signal.addEventListener('abort', () => resolve()));
}

describe('worker leases', () => {
  it('a worker whose lease expired is reaped by another: its running task fails with "worker lost" and its context is freed', async () => {
    const store = new MemoryStore();
    let now = 1_000_000;
    const frozen = 1_000_000;
    const dead = new A2ARuntime({
      store,
      workerId: 'dead',
      clock: () => frozen, // its renewals never move its lease forward: as if it had stopped
      leaseTtlMs: 1000,
      closeStore: false,
      drainTimeoutMs: 0,
      executor: async (turn) => waitForAbort(turn.signal),
    });
    const alive = new A2ARuntime({
      store,
      workerId: 'alive',
      clock: () => now,
      leaseTtlMs: 1000,
      closeStore: false,
      executor: async (turn) => turn.complete(`ran on alive: ${turn.text}`),
    });
    runtimes.push(alive, dead);
    const stuck = (await dead.sendMessage({
      message: userMessage('x', { contextId: 'c' }),
      configuration: { blocking: false },
    })) as Task;
    await waitFor(async () => (await store.getTask(stuck.id))?.task.status.state === 'working');
    const next = alive.sendMessage({ message: userMessage('next', { contextId: 'c' }) });

    await alive.renewLeaseAndReap(); // lease of "dead" still valid
    expect((await store.getTask(stuck.id))?.task.status.state).toBe('working');

    now += 1000; // past dead's lease (70% of the TTL after its last renewal)
    await alive.renewLeaseAndReap();
    const failed = await store.getTask(stuck.id);
    expect(failed?.task.status.state).toBe('failed');
    expect(textParts(failed?.task.status.message?.parts)).toMatch(
      /^Worker lost: worker "dead" stopped renewing its lease/,
    );
    const done = (await next) as Task;
    expect(done.status.state).toBe('completed');
    expect(textParts(done.status.message?.parts)).toBe('ran on alive: next');
  });

  it('a worker that finds its own lease ran out aborts its turns and fails their tasks', async () => {
    const store = new MemoryStore();
    let now = 5_000_000;
    let aborted = false;
    const runtime = new A2ARuntime({
      store,
      clock: () => now,
      leaseTtlMs: 1000,
      closeStore: false,
      executor: async (turn) => {
        await waitForAbort(turn.signal);
        aborted = true;
      },
    });
    runtimes.push(runtime);
    const task = (await runtime.sendMessage({ message: userMessage('x'), configuration: { blocking: false } })) as Task;
    await waitFor(async () => (await store.getTask(task.id))?.task.status.state === 'working');
    await runtime.renewLeaseAndReap();
    expect(aborted).toBe(false);
    now += 5000; // a stall far longer than the lease
    await runtime.renewLeaseAndReap();
    await waitFor(() => aborted);
    const failed = await waitFor(async () => {
      const record = await store.getTask(task.id);
      return record?.task.status.state === 'failed' ? record : undefined;
    });
    expect(textParts(failed.task.status.message?.parts)).toMatch(/could not renew its lease in time/);
  });

  it('close() drains: running turns finish within drainTimeoutMs, the rest fail with a message naming the worker', async () => {
    const store = new MemoryStore();
    const runtime = new A2ARuntime({
      store,
      workerId: 'w-drain',
      closeStore: false,
      drainTimeoutMs: 300,
      executor: async (turn) => {
        if (turn.text === 'quick') {
          await new Promise((r) => setTimeout(r, 100));
          await turn.complete();
          return;
        }
        await waitForAbort(turn.signal);
      },
    });
    const quick = (await runtime.sendMessage({
      message: userMessage('quick'),
      configuration: { blocking: false },
    })) as Task;
    const slow = (await runtime.sendMessage({
      message: userMessage('slow'),
      configuration: { blocking: false },
    })) as Task;
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
});
