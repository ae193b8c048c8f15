/**
 * Issues 22 and 18: what a blocking message/send costs in promises through the runtime alone. On
 * Node 20 every promise runs the promise hooks once OpenTelemetry's AsyncLocalStorage context is in
 * use (half of tracing's CPU per send), and each one is CPU and garbage without tracing too. The
 * bound below is the count after the hot path was trimmed, with a little room: a change that adds
 * promises per update or per turn shows here (bench/RUNTIME.md has the table by source line).
 */
import { createHook } from 'node:async_hooks';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import { echoAgent } from '../../../../test-support/agents.js';
import { A2AError } from '../../src/errors.js';
import { callContext } from '../../src/protocol/context.js';
import { RuntimeService } from '../../src/runtime-service.js';
import { asTask, textParts, useRuntimes, userMessage, waitFor } from './helpers.js';

/** Promises created by one blocking send of the echo agent (7 updates, one commit), the test's await included. */
const MAX_PROMISES_PER_SEND = 36;

/** The promises created while `run` runs (async_hooks sees every one, as the promise hooks do). */
async function promisesDuring(run: () => Promise<unknown>): Promise<number> {
  let created = 0;
  const hook = createHook({
    init(_asyncId, type) {
      if (type === 'PROMISE') created++;
    },
  });
  hook.enable();
  try {
    await run();
  } finally {
    hook.disable();
  }
  return created;
}

describe('promises per blocking send (issues 22, 18)', () => {
  const runtimes = useRuntimes();

  it('stays within its bound for the echo agent on the memory store', async () => {
    const runtime = runtimes(echoAgent);
    const service = new RuntimeService({ runtime });
    const ctx = callContext();
    const send = () => service.sendMessage({ message: userMessage('hello benchmark world') }, ctx);
    for (let i = 0; i < 20; i++) await send(); // warm-up: the runtime started, code paths compiled
    const counts: number[] = [];
    for (let i = 0; i < 5; i++) {
      let answer: Awaited<ReturnType<typeof send>> | undefined;
      counts.push(
        await promisesDuring(async () => {
          answer = await send();
        }),
      );
      if (answer === undefined) throw new Error('no answer');
      const task = asTask(answer);
      expect(task.status.state).toBe('completed');
      expect(textParts(task.artifacts?.[0]?.parts)).toBe('hello benchmark world');
    }
    // The fewest of a few: whatever else the test worker does meanwhile can only add to a count.
    expect(Math.min(...counts)).toBeLessThanOrEqual(MAX_PROMISES_PER_SEND);
  });
});

/** A memory store whose next `failures` commits reject, as a store that could not be reached. */
function storeFailingCommits(failures: number): MemoryStore {
  const store = new MemoryStore();
  const commit = store.commit.bind(store);
  let left = failures;
  store.commit = (request, ctx) => {
    if (left-- > 0) return Promise.reject(new Error('disk full'));
    return commit(request, ctx);
  };
  return store;
}

describe('updates answered without a promise of their write', () => {
  const runtimes = useRuntimes();

  it('answers artifact() with the artifact id, whether or not the chunk is written', async () => {
    const ids: string[] = [];
    const runtime = runtimes(async (turn) => {
      ids.push(await turn.artifact({ artifactId: 'a-1', text: 'one' }));
      ids.push(await turn.artifact({ append: true, text: ' two' }));
      await turn.complete();
      // After the turn ended: dropped (§6.3), and still answered with its id.
      ids.push(await turn.artifact({ artifactId: 'late', text: 'dropped' }));
    });
    const task = asTask(await runtime.sendMessage({ message: userMessage('hi') }));
    // The send is answered once `completed` is written; the agent goes on after that.
    await waitFor(() => ids.length === 3);
    expect(ids).toEqual(['a-1', 'a-1', 'late']);
    expect(task.artifacts?.map((a) => [a.artifactId, textParts(a.parts)])).toEqual([['a-1', 'one two']]);
  });

  it('rejects a final status whose write failed, to an agent that awaits it', async () => {
    let seen: unknown;
    const runtime = runtimes(
      async (turn) => {
        await turn.working();
        await turn.complete().catch((error: unknown) => {
          seen = error;
        });
      },
      { store: storeFailingCommits(1) },
    );
    const task = asTask(await runtime.sendMessage({ message: userMessage('hi') }));
    expect((seen as Error).message).toBe('disk full');
    expect(task.status.state).toBe('failed');
  });

  it('fails the turn, with no unhandled rejection, when a final status nobody awaits is not written', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      const runtime = runtimes(
        (turn) => {
          void turn.working();
          void turn.complete();
        },
        { store: storeFailingCommits(1) },
      );
      const task = asTask(await runtime.sendMessage({ message: userMessage('hi') }));
      expect(task.status.state).toBe('failed');
      expect(textParts(task.status.message?.parts)).toBe('The agent sent an invalid update: disk full');
      // Unhandled rejections are reported after the microtask queue drains.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('rejects an invalid transition to the agent, which may go on', async () => {
    const errors: unknown[] = [];
    const refusing = runtimes(async (turn) => {
      await turn.status('submitted').catch((error: unknown) => errors.push(error));
      await turn.complete();
    });
    const task = asTask(await refusing.sendMessage({ message: userMessage('hi') }));
    expect(task.status.state).toBe('completed');
    expect(errors).toHaveLength(1);
    expect(A2AError.is(errors[0])).toBe(true);
    await waitFor(() => refusing.runningTurns === 0);
  });
});
