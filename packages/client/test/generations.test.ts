/**
 * The client library and the CLI with the A2A 1.1 draft's task generations (§3.2.7): used only
 * where the card declares the extension, over A2A 1.0 — GetTask long-polls (`waitForTask`,
 * `task get --wait`), `ifGenerationMatch` (`send --if-generation`) and its refusal.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2AClientError, connect } from '../src/index.js';
import { a2a, ensureBuilt } from './cli-process.js';
import { type Served, serve } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON output, read member by member in assertions.
type Json = Record<string, any>;

let withGenerations: Served;
let without: Served;
/** A fetch that counts the GetTask requests it makes (either binding), to tell a long-poll from polling. */
function countingFetch(): { fetch: typeof fetch; getTasks: () => number } {
  let count = 0;
  const counting: typeof fetch = (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    const body = typeof init?.body === 'string' ? init.body : '';
    if (/"method":"GetTask"/.test(body) || ((init?.method ?? 'GET') === 'GET' && /\/tasks\/[^/:?]+(\?|$)/.test(url))) {
      count += 1;
    }
    return fetch(input, init);
  };
  return { fetch: counting, getTasks: () => count };
}

beforeAll(async () => {
  ensureBuilt();
  withGenerations = await serve('memory:', { draft11: { generations: true, longPollMaxWaitMs: 5000 } });
  without = await serve('memory:');
}, 120_000);

afterAll(async () => {
  await withGenerations?.close();
  await without?.close();
});

describe('client library', () => {
  it('sees the extension on the card, and the generation on tasks', async () => {
    const agent = await connect(withGenerations.url);
    expect(agent.taskGenerations).toBe(true);
    const { result } = await agent.send({ text: 'ask:which?' });
    expect(result.kind === 'task' && result.generation).toBeGreaterThan(1);
    expect((await connect(without.url)).taskGenerations).toBe(false);
  });

  it('long-polls getTask with waitForGenerationAfter until another client changes the task', async () => {
    const agent = await connect(withGenerations.url);
    const { result } = await agent.send({ text: 'ask:which?' });
    if (result.kind !== 'task') throw new Error('no task');
    let answered = false;
    const held = agent.getTask(result.id, { waitForGenerationAfter: result.generation }).then((task) => {
      answered = true;
      return task;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(answered).toBe(false);
    const other = await connect(withGenerations.url);
    await other.send({ text: 'this one', taskId: result.id });
    const task = await held;
    expect(task.generation).toBeGreaterThan(result.generation as number);
  });

  it('refuses a stale ifGenerationMatch with TASK_GENERATION_MISMATCH, and sends a current one', async () => {
    const agent = await connect(withGenerations.url);
    const { result } = await agent.send({ text: 'ask:which?' });
    if (result.kind !== 'task') throw new Error('no task');
    const generation = result.generation as number;
    const stale = await agent
      .send({ text: 'late', taskId: result.id, ifGenerationMatch: generation - 1 })
      .catch((error: unknown) => error);
    expect(A2AClientError.is(stale) && stale.a2aCode).toBe('TASK_GENERATION_MISMATCH');
    expect(A2AClientError.is(stale) && stale.a2aName).toBe('TaskGenerationMismatchError');
    const sent = await agent.send({ text: 'now', taskId: result.id, ifGenerationMatch: generation });
    expect(sent.result.kind === 'task' && sent.result.status.state).toBe('completed');
  });

  it('never sends ifGenerationMatch to an agent that does not declare generations', async () => {
    const agent = await connect(without.url);
    const { result } = await agent.send({ text: 'ask:which?' });
    if (result.kind !== 'task') throw new Error('no task');
    const refused = await agent
      .send({ text: 'now', taskId: result.id, ifGenerationMatch: 1 })
      .catch((error: unknown) => error);
    expect(A2AClientError.is(refused) && refused.kind).toBe('usage');
    // Nothing reached the agent: the task still waits.
    expect((await agent.getTask(result.id)).status.state).toBe('input-required');
  });

  it('waits for a task with long-polls where generations are declared, with polls elsewhere', async () => {
    const counts = new Map<Served, number>();
    for (const served of [withGenerations, without]) {
      const counter = countingFetch();
      const agent = await connect(served.url, { fetch: counter.fetch });
      const { result } = await agent.send({ text: 'sleep:1200' }, { blocking: false });
      const task = await agent.waitForTask(result.kind === 'task' ? result.id : '', { pollIntervalMs: 50 });
      expect(task.status.state).toBe('completed');
      counts.set(served, counter.getTasks());
    }
    // The long-poll asks again only when the task changed (working, completed: a handful of
    // changes); polling every 50 ms (backing off) over 1.2 s asks many more times.
    expect(counts.get(withGenerations)).toBeGreaterThan(0);
    expect(counts.get(withGenerations)).toBeLessThanOrEqual(4);
    expect(counts.get(without)).toBeGreaterThan(6);
  });
});

describe('a2a CLI', () => {
  it('send --if-generation: refused with TaskGenerationMismatchError when stale, sent when current', async () => {
    const asked = await a2a(['send', '-a', withGenerations.url, 'ask:which?', '-o', 'json']);
    expect(asked.code).toBe(0);
    const task = (asked.json() as Json).task as Json;
    expect(task.generation).toBeGreaterThan(1);
    const stale = await a2a([
      'send',
      '-a',
      withGenerations.url,
      '--task-id',
      task.id,
      '--if-generation',
      String(task.generation - 1),
      'late',
      '-o',
      'json',
    ]);
    expect(stale.code).toBe(1);
    expect((stale.json() as Json).error.code).toBe('TaskGenerationMismatchError');
    const current = await a2a([
      'send',
      '-a',
      withGenerations.url,
      '--task-id',
      task.id,
      '--if-generation',
      String(task.generation),
      'now',
      '-o',
      'json',
    ]);
    expect(current.code).toBe(0);
    expect(((current.json() as Json).task as Json).status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('task get --wait follows a task to its end by long-polls, and shows its generation', async () => {
    const agent = await connect(withGenerations.url);
    const { result } = await agent.send({ text: 'sleep:600' }, { blocking: false });
    const id = result.kind === 'task' ? result.id : '';
    const run = await a2a(['task', 'get', '-a', withGenerations.url, id, '--wait', '-o', 'text']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('State: TASK_STATE_COMPLETED');
    expect(run.stdout).toMatch(/Generation: \d+/);
  });
});
