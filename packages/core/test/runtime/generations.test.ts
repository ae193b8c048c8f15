/**
 * The A2A 1.1 draft's task generations (§3.2.7) in the runtime: ifGenerationMatch checked in the
 * follow-up's version-checked commit (two runtimes on one store, their reads held until both have
 * read, so their commits race for certain), a retried follow-up, the option off, and a long-poll
 * whose caller goes away.
 */

import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import { A2AError } from '../../src/errors.js';
import type { TurnContext } from '../../src/executor.js';
import type { Task } from '../../src/model/types.js';
import { callContext } from '../../src/protocol/context.js';
import type { TaskRecord } from '../../src/store/index.js';
import { asTask, gate, useRuntimes, userMessage } from './helpers.js';

/** Asks for input on a new task; completes it on the follow-up, unless that says `again`. */
async function agent(turn: TurnContext): Promise<void> {
  if (turn.previousState === 'input-required' && turn.text !== 'again') {
    await turn.complete('thanks');
    return;
  }
  await turn.requireInput('which one?');
}

const on = { draft11: { generations: true } } as const;

describe('ifGenerationMatch (A2A 1.1 draft §3.2.7)', () => {
  const runtime = useRuntimes();

  it('lets exactly one of two follow-ups through when both read the task before either commits', async () => {
    const store = new MemoryStore();
    const a = runtime(agent, { store, ...on, closeStore: false });
    const b = runtime(agent, { store, ...on, closeStore: false });
    const created = asTask(await a.sendMessage({ message: userMessage('start') }));
    const generation = created.generation as number;
    expect(created.status.state).toBe('input-required');

    // Both follow-ups' reads of the task are held until both have read it: each then commits
    // against the version it read, and one of the commits must lose.
    const bothRead = gate();
    let reads = 0;
    const realGetTask = store.getTask.bind(store);
    store.getTask = async (...args: Parameters<MemoryStore['getTask']>): Promise<TaskRecord | undefined> => {
      const record = await realGetTask(...args);
      if (reads < 2) {
        reads += 1;
        if (reads === 2) bothRead.open();
        await bothRead.promise;
      }
      return record;
    };
    const followUp = (on: typeof a, text: string) =>
      on.sendMessage({
        message: userMessage(text, { taskId: created.id }),
        configuration: { ifGenerationMatch: generation },
      });
    const outcomes = await Promise.allSettled([followUp(a, 'first'), followUp(b, 'second')]);
    expect(reads).toBe(2);
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    const error = lost[0]?.reason as A2AError;
    expect(A2AError.is(error) && error.code).toBe('TASK_GENERATION_MISMATCH');
    expect(error.data).toMatchObject({ taskId: created.id, expectedGeneration: generation });
    const final = (await store.getTask(created.id))?.task as Task;
    // The loser's message was never recorded.
    expect(final.history?.filter((m) => m.role === 'user')).toHaveLength(2);
    expect((error.data as { currentGeneration: number }).currentGeneration).toBeGreaterThan(generation);
  });

  it('answers a retried follow-up (same message, same ifGenerationMatch) with its task, not a mismatch', async () => {
    const rt = runtime(agent, on);
    const created = asTask(await rt.sendMessage({ message: userMessage('start') }));
    // The follow-up leaves the task waiting again (not terminal, where any retry is recognised).
    const params = {
      message: userMessage('again', { taskId: created.id }),
      configuration: { ifGenerationMatch: created.generation as number },
    };
    const first = asTask(await rt.sendMessage(params));
    expect(first.status.state).toBe('input-required');
    const retried = asTask(await rt.sendMessage(params));
    expect(retried.id).toBe(first.id);
    expect(retried.generation).toBe(first.generation);
    expect(retried.history?.filter((m) => m.role === 'user')).toHaveLength(2);
  });

  it('is refused with INVALID_PARAMS, never ignored, while the option is off', async () => {
    const rt = runtime(agent);
    const created = asTask(await rt.sendMessage({ message: userMessage('start') }));
    await expect(
      rt.sendMessage({
        message: userMessage('answer', { taskId: created.id }),
        configuration: { ifGenerationMatch: created.generation as number },
      }),
    ).rejects.toMatchObject({ code: 'INVALID_PARAMS', message: expect.stringMatching(/draft11\.generations/) });
    // Refused before anything was written.
    expect((await rt.getTask({ id: created.id })).status.state).toBe('input-required');
  });
});

describe('GetTask currentGeneration (A2A 1.1 draft §3.2.7)', () => {
  const runtime = useRuntimes();

  it('stops waiting when the caller goes away, answering the task as it is', async () => {
    const rt = runtime(agent, { draft11: { generations: true, longPollMaxWaitMs: 60_000 } });
    const created = asTask(await rt.sendMessage({ message: userMessage('start') }));
    const caller = new AbortController();
    const ctx = { ...callContext(), holdSignal: caller.signal };
    const started = Date.now();
    const held = rt.getTask({ id: created.id, currentGeneration: created.generation as number }, ctx);
    setTimeout(() => caller.abort(), 100);
    const task = await held;
    expect(task.generation).toBe(created.generation);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('answers a held long-poll when the worker starts to shut down, rather than hold its close up', async () => {
    const rt = runtime(agent, { draft11: { generations: true, longPollMaxWaitMs: 60_000 } });
    const created = asTask(await rt.sendMessage({ message: userMessage('start') }));
    const started = Date.now();
    const held = rt.getTask({ id: created.id, currentGeneration: created.generation as number });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await rt.drain();
    const task = await held;
    expect(task.generation).toBe(created.generation);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('answers at once for a terminal task, whose generation can grow no more', async () => {
    const rt = runtime(agent, { draft11: { generations: true, longPollMaxWaitMs: 60_000 } });
    const created = asTask(await rt.sendMessage({ message: userMessage('start') }));
    const done = asTask(await rt.sendMessage({ message: userMessage('answer', { taskId: created.id }) }));
    expect(done.status.state).toBe('completed');
    const task = await rt.getTask({ id: created.id, currentGeneration: done.generation as number });
    expect(task.generation).toBe(done.generation);
  });

  it('wakes on the change that moves the generation past it (a cancel), answering the changed task', async () => {
    const rt = runtime(agent, { draft11: { generations: true, longPollMaxWaitMs: 60_000 } });
    const created = asTask(await rt.sendMessage({ message: userMessage('start') }));
    const generation = created.generation as number;
    const held = rt.getTask({ id: created.id, currentGeneration: generation });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await rt.cancelTask({ id: created.id });
    const task = await held;
    expect(task.status.state).toBe('canceled');
    expect(task.generation).toBe(generation + 1);
  });

  it('answers at once while the option is off', async () => {
    const rt = runtime(agent, { draft11: { generations: false, longPollMaxWaitMs: 60_000 } });
    const created = asTask(await rt.sendMessage({ message: userMessage('start') }));
    const task = await rt.getTask({ id: created.id, currentGeneration: created.generation as number });
    expect(task.id).toBe(created.id);
  });
});
