/**
 * When the turn's update pump commits (runtime/turn.ts, `#pump`): a turn's first commit waits for
 * the end of the event-loop turn, so the first commits of requests read in one I/O phase reach
 * the store together and share its transaction (the durable stores' group commit: blocking
 * message/send on SQLite and Postgres lost a third of its rate when each went alone, issue 30);
 * a later commit (an agent streaming) goes a tick after the agent's pending continuations, not a
 * whole loop turn later.
 */
import type { CommitRequest, TurnContext } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import { asTask, useRuntimes, userMessage } from './helpers.js';

const start = useRuntimes();

/** A memory store that notes each commit in `order`, with its events' kinds. */
function notingStore(order: string[]): MemoryStore {
  const store = new MemoryStore();
  const commit = store.commit.bind(store);
  store.commit = (request: CommitRequest, ctx) => {
    order.push(`commit ${request.events.map((e) => e.kind).join('+')}`);
    return commit(request, ctx);
  };
  return store;
}

describe("the update pump's timing", () => {
  it('the first commits of turns started in one phase of the event loop are made together, after it', async () => {
    const order: string[] = [];
    const runtime = start(async (turn: TurnContext) => turn.complete('done'), { store: notingStore(order) });
    const sends = await new Promise<ReturnType<typeof runtime.sendMessage>[]>((resolve) => {
      const started: ReturnType<typeof runtime.sendMessage>[] = [];
      // Two callbacks of one timers phase, as two requests read in one I/O phase are.
      for (const name of ['a', 'b']) {
        setTimeout(() => {
          order.push(`start ${name}`);
          started.push(runtime.sendMessage({ message: userMessage(name) }));
          if (started.length === 2) resolve(started);
        }, 0);
      }
    });
    const tasks = (await Promise.all(sends)).map(asTask);
    expect(tasks.map((task) => task.status.state)).toEqual(['completed', 'completed']);
    expect(order).toEqual([
      'start a',
      'start b',
      'commit task+status-update+status-update',
      'commit task+status-update+status-update',
    ]);
  });

  it("a later commit is made a tick after the agent's update, before the loop turns", async () => {
    const order: string[] = [];
    const runtime = start(
      async (turn: TurnContext) => {
        await turn.artifact({ artifactId: 'answer', text: 'first' });
        await new Promise((resolve) => setTimeout(resolve, 5));
        setImmediate(() => order.push('loop turned'));
        void turn.artifact({ artifactId: 'answer', text: ' second', append: true });
        await new Promise((resolve) => setTimeout(resolve, 5));
        await turn.complete();
      },
      { store: notingStore(order) },
    );
    asTask(await runtime.sendMessage({ message: userMessage('stream') }));
    const second = order.indexOf('commit artifact-update');
    expect(second).toBeGreaterThan(0);
    expect(second).toBeLessThan(order.indexOf('loop turned'));
  });
});
