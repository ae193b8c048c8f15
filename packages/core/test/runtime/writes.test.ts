/** How the agent's updates reach the store: batched into few commits, and a refused commit fails the task. */
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import { asTask, textParts, useRuntimes, userMessage } from './helpers.js';

const start = useRuntimes();

describe('writes', () => {
  it('fails the task when the store refuses the commit of the final status, rather than leaving it working', async () => {
    const store = new MemoryStore();
    const commit = store.commit.bind(store);
    let refused = 0;
    store.commit = (request, ctx) => {
      const final = request.events.some((e) => e.kind === 'status-update' && e.status.state === 'completed');
      if (final && refused === 0) {
        refused++;
        return Promise.reject(new Error('disk full (injected)'));
      }
      return commit(request, ctx);
    };
    const runtime = start(
      async (turn) => {
        await turn.artifact({ text: 'partial' });
        await turn.complete('done');
      },
      { store, workerId: 'refusing-store' },
    );
    const task = asTask(await runtime.sendMessage({ message: userMessage('x') }));
    expect(refused).toBe(1);
    expect(task.status.state).toBe('failed');
    expect(textParts(task.status.message?.parts)).toMatch(/disk full \(injected\)/);
    expect(await store.listWorkerTurns('refusing-store')).toEqual([]);
  });

  it('writes a burst of agent updates in few commits, every event once and in order', async () => {
    const store = new MemoryStore();
    let commits = 0;
    const commit = store.commit.bind(store);
    store.commit = (request, ctx) => {
      commits++;
      return commit(request, ctx);
    };
    const runtime = start(
      async (turn) => {
        for (let i = 0; i < 40; i++) await turn.artifact({ artifactId: 'a', text: String(i), append: i > 0 });
        await turn.complete();
      },
      { store },
    );
    const task = asTask(await runtime.sendMessage({ message: userMessage('burst') }));
    expect(task.status.state).toBe('completed');
    expect(textParts(task.artifacts?.[0]?.parts)).toBe(Array.from({ length: 40 }, (_, i) => String(i)).join(''));
    const events = await store.readEvents(task.id, 0);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    // task + working + 40 chunks + completed = 43 events, in far fewer commits than events
    expect(events).toHaveLength(43);
    expect(commits).toBeLessThan(10);
  });
});
