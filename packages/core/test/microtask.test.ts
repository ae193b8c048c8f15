import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { runInMicrotask } from '../src/microtask.js';

describe('runInMicrotask', () => {
  it('runs after the current code, in call order, before the next tick and any timer (as queueMicrotask)', async () => {
    const order: string[] = [];
    setTimeout(() => order.push('timer'), 0);
    process.nextTick(() => order.push('tick'));
    runInMicrotask(() => order.push('first'));
    runInMicrotask(() => order.push('second'));
    order.push('sync');
    await new Promise((resolve) => setTimeout(resolve, 5));
    // Inside a test (an async function), microtasks run ahead of process.nextTick's queue.
    expect(order.slice(0, 3)).toEqual(['sync', 'first', 'second']);
    expect(order).toContain('tick');
    expect(order.indexOf('timer')).toBeGreaterThan(order.indexOf('second'));
  });

  it("runs in its caller's async context", async () => {
    const storage = new AsyncLocalStorage<string>();
    const seen = await new Promise<string | undefined>((resolve) => {
      storage.run('the caller', () => runInMicrotask(() => resolve(storage.getStore())));
    });
    expect(seen).toBe('the caller');
  });
});
