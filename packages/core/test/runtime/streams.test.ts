/**
 * How streams follow their task's log, below any binding: notifications wake them, and a slow
 * safety poll (one getVersions call per interval for every waiting stream) covers lost ones.
 */
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import type { StreamResult } from '../../src/model/types.js';
import type { Unsubscribe } from '../../src/store.js';
import { asTask, delay, useRuntimes, userMessage } from './helpers.js';

const start = useRuntimes();

/** A store whose notifications never arrive, as if every NOTIFY after a commit were lost. */
class DeafStore extends MemoryStore {
  getVersionsCalls = 0;
  override subscribe(): Unsubscribe {
    return () => {};
  }
  override getVersions(taskIds: readonly string[]): Promise<Map<string, number>> {
    this.getVersionsCalls++;
    return super.getVersions(taskIds);
  }
}

describe('lost notifications', () => {
  it('streams still reach their final event through the safety poll, one getVersions call per interval for all of them', async () => {
    const store = new DeafStore();
    const runtime = start(
      async (turn) => {
        await turn.working();
        await delay(300);
        await turn.complete();
      },
      { store, followPollIntervalMs: 100 },
    );
    const tasks = await Promise.all(
      [0, 1, 2].map(async () =>
        asTask(await runtime.sendMessage({ message: userMessage('x'), configuration: { blocking: false } })),
      ),
    );
    const started = Date.now();
    const streams = tasks.map(async (task) => {
      const items: StreamResult[] = [];
      for await (const frame of await runtime.resubscribe({ id: task.id })) items.push(frame.result);
      return items;
    });
    for (const items of await Promise.all(streams)) {
      expect(items[0]?.kind).toBe('task');
      expect(items.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
    }
    const elapsedMs = Date.now() - started;
    // Three streams waited together: about one call per 100 ms interval, not one per stream.
    expect(store.getVersionsCalls).toBeGreaterThan(0);
    expect(store.getVersionsCalls).toBeLessThanOrEqual(Math.ceil(elapsedMs / 100) + 1);
  });
});
