/**
 * Issue 23 (12): interrupted tasks (input-required, auth-required) expire after
 * `interruptedExpiry.ttlMs` by the runtime's clock: they end `failed` with a reason, once, whichever
 * worker sweeps, and a task whose follow-up was recorded in time is spared. The HTTP-level tests on
 * every store are in packages/fastify/test/regressions/issue-23-interrupted-expiry.test.ts.
 */
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import type { TurnContext } from '../../src/executor.js';
import { applyEvents } from '../../src/model/task-state.js';
import type { Message } from '../../src/model/types.js';
import { A2ARuntime } from '../../src/runtime.js';
import { createTestClock } from '../../src/testing/fixtures.js';
import { asTask, textParts, useRuntimes, userMessage } from './helpers.js';

const TTL_MS = 60_000;
const runtimeOf = useRuntimes();

/** `ask` pauses in input-required, `login` in auth-required; anything else completes. */
const executor = async (turn: TurnContext): Promise<void> => {
  await turn.setContextState({ asked: turn.text });
  if (turn.text === 'ask') await turn.requireInput('Which one?');
  else if (turn.text === 'login') await turn.requireAuth('Sign in first.');
  else await turn.complete('done');
};

function setUp() {
  const clock = createTestClock();
  const store = new MemoryStore({ clock });
  const options = {
    store,
    clock,
    closeStore: false,
    interruptedExpiry: { ttlMs: TTL_MS, sweepIntervalMs: 3_600_000 },
  } as const;
  return { clock, store, worker: () => runtimeOf(executor, options) };
}

describe('interruptedExpiry', () => {
  it('fails input-required and auth-required tasks that waited longer than ttlMs, with a reason, once', async () => {
    const { clock, worker } = setUp();
    const runtime = worker();
    const asked = asTask(await runtime.sendMessage({ message: userMessage('ask') }));
    const login = asTask(await runtime.sendMessage({ message: userMessage('login') }));
    expect([asked.status.state, login.status.state]).toEqual(['input-required', 'auth-required']);

    clock.advance(TTL_MS); // exactly the TTL: not yet
    expect(await runtime.expireInterruptedTasks()).toBe(0);
    clock.advance(1);
    expect(await runtime.expireInterruptedTasks()).toBe(2);
    for (const [id, state] of [
      [asked.id, 'input-required'],
      [login.id, 'auth-required'],
    ] as const) {
      const task = await runtime.getTask({ id });
      expect(task.status.state).toBe('failed');
      expect(textParts(task.status.message?.parts)).toBe(
        `Expired: the task waited in ${state} for more than ${TTL_MS} ms without an answer (interruptedExpiry).`,
      );
      expect(task.status.timestamp).toBe(new Date(clock.now).toISOString());
    }
    expect(await runtime.expireInterruptedTasks()).toBe(0);
  });

  it('frees the context: retention then purges the expired task and its context state', async () => {
    const { clock, store, worker } = setUp();
    const runtime = worker();
    const asked = asTask(await runtime.sendMessage({ message: userMessage('ask') }));
    expect((await store.getContext(asked.contextId))?.state).toEqual({ asked: 'ask' });
    clock.advance(TTL_MS + 1);
    // Retention purges terminal tasks only: the waiting task keeps its context.
    await runtime.sweep(1);
    expect(await store.getTask(asked.id)).toBeDefined();
    expect(await runtime.expireInterruptedTasks()).toBe(1);
    clock.advance(2);
    await runtime.sweep(1);
    expect(await store.getTask(asked.id)).toBeUndefined();
    expect(await store.getContext(asked.contextId)).toBeUndefined();
  });

  it('two workers sweeping at once expire each task once', async () => {
    const { clock, store, worker } = setUp();
    const [a, b] = [worker(), worker()];
    const tasks = [];
    for (let i = 0; i < 5; i++) tasks.push(asTask(await a.sendMessage({ message: userMessage('ask') })));
    clock.advance(TTL_MS + 1);
    const [byA, byB] = await Promise.all([a.expireInterruptedTasks(), b.expireInterruptedTasks()]);
    expect(byA + byB).toBe(5);
    for (const task of tasks) {
      const events = await store.readEvents(task.id, 0);
      expect(events.filter((e) => e.event.kind === 'status-update' && e.event.status.state === 'failed')).toHaveLength(
        1,
      );
    }
  });

  it('spares a task whose follow-up was recorded before the sweep, and one that paused again recently', async () => {
    const { clock, store, worker } = setUp();
    const runtime = worker();
    const waiting = asTask(await runtime.sendMessage({ message: userMessage('ask') }));
    const repaused = asTask(await runtime.sendMessage({ message: userMessage('ask') }));
    // A follow-up recorded (its turn not started yet, e.g. queued behind another turn of its context).
    const record = await store.getTask(waiting.id);
    const followUp: Message = userMessage('red', { taskId: waiting.id, contextId: waiting.contextId });
    await store.commit({
      taskId: waiting.id,
      expectedVersion: record?.version as number,
      task: applyEvents(record?.task, [followUp]),
      events: [followUp],
      enqueueTurn: { messageId: followUp.messageId, workerId: 'another-worker' },
    });
    clock.advance(TTL_MS - 10);
    // Answered, and paused again: the TTL counts from the new pause.
    asTask(await runtime.sendMessage({ message: userMessage('ask', { taskId: repaused.id }) }));
    clock.advance(20);
    expect(await runtime.expireInterruptedTasks()).toBe(0);
    expect((await runtime.getTask({ id: waiting.id })).status.state).toBe('input-required');
    expect((await runtime.getTask({ id: repaused.id })).status.state).toBe('input-required');
  });

  it('expires a task whose follow-up lost its slot (its turn never runs), rather than keep it for good', async () => {
    const { clock, store, worker } = setUp();
    const runtime = worker();
    const waiting = asTask(await runtime.sendMessage({ message: userMessage('ask') }));
    // The follow-up's slot, taken in its commit, is then released without the turn running
    // (an operator's releaseSlot, say).
    const record = await store.getTask(waiting.id);
    const followUp: Message = userMessage('red', { taskId: waiting.id, contextId: waiting.contextId });
    const { turn } = await store.commit({
      taskId: waiting.id,
      expectedVersion: record?.version as number,
      task: applyEvents(record?.task, [followUp]),
      events: [followUp],
      enqueueTurn: { messageId: followUp.messageId, workerId: 'another-worker' },
    });
    if (turn !== undefined) await store.finishTurn(turn);
    clock.advance(TTL_MS + 1);
    expect(await runtime.expireInterruptedTasks()).toBe(1);
    expect((await runtime.getTask({ id: waiting.id })).status.state).toBe('failed');
  });

  it('refuses a store that cannot list interrupted tasks', () => {
    const store = new MemoryStore();
    const limited = Object.assign(Object.create(store) as MemoryStore, {
      supports: { ...store.supports, interruptedTasks: false },
    });
    expect(
      () => new A2ARuntime({ store: limited, executor: () => undefined, interruptedExpiry: { ttlMs: 1000 } }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/interruptedTasks/) }));
  });
});
