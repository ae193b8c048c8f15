/**
 * Issue 14 (1): a store outage during a turn must not block its context for good. The write that
 * ends the turn (its last event, which also releases its slot in the context's queue) was tried
 * once: when it failed, the task stayed `working`, the slot stayed taken ("could not release the
 * turn's queue slot"), and every later message of the context waited behind it for ever. It is now
 * retried until it succeeds, or, once the worker's lease ran out, handed to reaping.
 */
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import type { A2AStore } from '../../src/store/index.js';
import {
  asTask,
  gate,
  recordingLogger,
  textParts,
  useRuntimes,
  userMessage,
  waitFor,
  waitForAbort,
} from './helpers.js';

const start = useRuntimes();

/** Every call that reaches the database fails while `down` is set (subscriptions stay: they are local). */
function flaky(store: MemoryStore): { store: MemoryStore; outage: { down: boolean } } {
  const outage = { down: false };
  const methods = [
    'commit',
    'getTask',
    'getVersions',
    'readEvents',
    'getContext',
    'finishTurn',
    'turnReadiness',
    'heartbeat',
    'claimExpiredWorkers',
    'listWorkerTurns',
    'findMessage',
  ] as const;
  const target = store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of methods) {
    const real = target[name]?.bind(store) as (...args: unknown[]) => Promise<unknown>;
    target[name] = (...args) =>
      outage.down ? Promise.reject(new Error(`connection refused (injected outage: ${name})`)) : real(...args);
  }
  return { store, outage };
}

/** The task's record once its turn has ended (its state is past submitted and working). */
function settledRecord(store: MemoryStore, taskId: string) {
  return waitFor(async () => {
    const record = await store.getTask(taskId);
    return record && !['submitted', 'working'].includes(record.task.status.state) ? record : undefined;
  });
}

describe('a store outage during a turn', () => {
  it('the turn ends once the store is back, and the next message of its context runs', async () => {
    const { store, outage } = flaky(new MemoryStore());
    const reached = gate();
    const resume = gate();
    const log = recordingLogger();
    const runtime = start(
      async (turn) => {
        if (turn.text === 'slow') {
          await turn.working('thinking');
          reached.open();
          await resume.promise;
        }
        await turn.complete(`done: ${turn.text}`);
      },
      { store: store as A2AStore, logger: log },
    );
    const first = asTask(
      await runtime.sendMessage({
        message: userMessage('slow', { contextId: 'c' }),
        configuration: { blocking: false },
      }),
    );
    await reached.promise;
    outage.down = true;
    resume.open(); // the agent's `complete` fails, and so does the turn's last write, at first
    await waitFor(() => log.lines.some((line) => line.msg === "a2a: could not write the turn's last event; retrying"));
    await new Promise((resolve) => setTimeout(resolve, 300));
    outage.down = false;

    const ended = await settledRecord(store, first.id);
    expect(ended.task.status.state).toBe('failed');
    expect(textParts(ended.task.status.message?.parts)).toMatch(/injected outage/);
    expect(await store.listWorkerTurns(runtime.workerId)).toEqual([]);

    // The context is free: the next message in it runs and completes.
    const next = asTask(
      await Promise.race([
        runtime.sendMessage({ message: userMessage('next', { contextId: 'c' }) }),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the context stayed blocked')), 3000)),
      ]),
    );
    expect(next.status.state).toBe('completed');
    expect(log.lines.filter((line) => line.msg?.includes('could not release'))).toEqual([]);
  });

  it('a turn queued behind a running one survives an outage that starts between its two looks at the queue', async () => {
    // Issue 28 (10): a turn waiting for its slot reads the queue, subscribes to the turn ahead, then
    // reads it again. Only the first read was retried through an outage: one starting between the
    // two (1 run in 22 of store-outage.postgres.test.ts, the store stopped while the slow turn's
    // writes kept waking the queued one) failed the queued turn, "the task store could not be
    // reached while the agent worked", though its agent never ran and the store came back.
    const { store, outage } = flaky(new MemoryStore());
    const readiness = store.turnReadiness.bind(store);
    let notReady = 0;
    store.turnReadiness = async (slot, ctx) => {
      const answer = await readiness(slot, ctx);
      // The store goes down right after the queued turn's first look: its look again fails.
      if (!answer.ready && ++notReady === 1) outage.down = true;
      return answer;
    };
    const reached = gate();
    const resume = gate();
    const log = recordingLogger();
    const runtime = start(
      async (turn) => {
        if (turn.text === 'slow') {
          await turn.working('thinking');
          reached.open();
          await resume.promise;
        }
        await turn.complete(`done: ${turn.text}`);
      },
      { store: store as A2AStore, logger: log, turnPollIntervalMs: 50 },
    );
    const send = (text: string) =>
      runtime.sendMessage({ message: userMessage(text, { contextId: 'cq' }), configuration: { blocking: false } });
    const slow = asTask(await send('slow'));
    await reached.promise;
    const queued = asTask(await send('queued'));
    await waitFor(() => outage.down);
    await new Promise((resolve) => setTimeout(resolve, 200));
    outage.down = false;
    resume.open();

    expect((await settledRecord(store, slow.id)).task.status.state).toBe('completed');
    const ended = await settledRecord(store, queued.id);
    expect(ended.task.status.state).toBe('completed');
    expect(textParts(ended.task.status.message?.parts)).toBe('done: queued');
    expect(log.lines.map((line) => line.msg)).not.toContain('a2a: turn failed unexpectedly');
  });

  it('a cancel still works afterwards, and the context goes on', async () => {
    const { store, outage } = flaky(new MemoryStore());
    const runtime = start(
      async (turn) => {
        if (turn.text === 'wait') await waitForAbort(turn.signal);
        else await turn.complete('ok');
      },
      { store: store as A2AStore },
    );
    const first = asTask(
      await runtime.sendMessage({
        message: userMessage('wait', { contextId: 'c2' }),
        configuration: { blocking: false },
      }),
    );
    await waitFor(async () => (await store.getTask(first.id))?.task.status.state === 'working');
    outage.down = true;
    await expect(runtime.cancelTask({ id: first.id })).rejects.toThrow(/injected outage/);
    outage.down = false;
    const canceled = await runtime.cancelTask({ id: first.id });
    expect(canceled.status.state).toBe('canceled');
    const next = asTask(await runtime.sendMessage({ message: userMessage('after', { contextId: 'c2' }) }));
    expect(next.status.state).toBe('completed');
  });

  it('an outage longer than the lease: the turn is handed to reaping, which frees the context once the store is back', async () => {
    const { store, outage } = flaky(new MemoryStore());
    const reached = gate();
    const runtime = start(
      async (turn) => {
        if (turn.text === 'slow') {
          await turn.working('thinking');
          reached.open();
          await waitForAbort(turn.signal); // aborted when the lease is lost
          await turn.complete('too late');
        } else await turn.complete('ok');
      },
      { store: store as A2AStore, leaseTtlMs: 400 },
    );
    const first = asTask(
      await runtime.sendMessage({
        message: userMessage('slow', { contextId: 'c3' }),
        configuration: { blocking: false },
      }),
    );
    await reached.promise;
    outage.down = true;
    await new Promise((resolve) => setTimeout(resolve, 1000)); // > the lease TTL
    outage.down = false;
    const failed = await waitFor(async () => {
      const record = await store.getTask(first.id);
      return record?.task.status.state === 'failed' ? record : undefined;
    }, 5000);
    expect(textParts(failed.task.status.message?.parts)).toMatch(/^Worker lost: worker ".+"/);
    const next = asTask(await runtime.sendMessage({ message: userMessage('after', { contextId: 'c3' }) }));
    expect(next.status.state).toBe('completed');
  });
});

describe('an agent that does not await its chunks while the store fails', () => {
  // Review finding (issue 22's promise trimming): past the backlog of queued updates a chunk's
  // promise waits for its write, and `artifact()` handed the agent a second promise made from it
  // with no handler, so a failed write became an unhandled rejection, which ends a Node process.
  it('gets no unhandled rejection: the turn fails with the store error, and the context goes on', async () => {
    const { store, outage } = flaky(new MemoryStore());
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const runtime = start(
        (turn) => {
          if (turn.text !== 'flood') return turn.complete('ok');
          outage.down = true;
          // More chunks than the backlog allows, none awaited: the later ones wait for their write.
          for (let i = 0; i < 400; i++) void turn.artifact({ artifactId: 'a', append: i > 0, text: `c${i}` });
          void turn.complete('flooded');
        },
        { store: store as A2AStore },
      );
      const first = asTask(
        await runtime.sendMessage({
          message: userMessage('flood', { contextId: 'c3' }),
          configuration: { blocking: false },
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      outage.down = false;
      const ended = await settledRecord(store, first.id);
      expect(ended.task.status.state).toBe('failed');
      expect(textParts(ended.task.status.message?.parts)).toMatch(/injected outage/);
      // Rejections are reported after a macrotask: give them one before counting.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
      const next = asTask(await runtime.sendMessage({ message: userMessage('after', { contextId: 'c3' }) }));
      expect(next.status.state).toBe('completed');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
