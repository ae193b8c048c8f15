/**
 * The demo with `A2A_DRAFT_11=1` as a real process (issue 31 item 12): the card declares the A2A 1.1
 * draft's task generations, a 1.0 GetTask carries `generation` and long-polls with
 * `currentGeneration`; without it, no `generation` anywhere; a value other than 1 or 0 stops the start.
 */
import { describe, expect, it } from 'vitest';
import { spawnDemo, startDemo } from './demo-process.js';

const EXTENSION = 'https://fastify-a2a.dev/extensions/a2a-1.1-draft/task-generation';

async function rpc(baseUrl: string, method: string, params: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${baseUrl}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: Record<string, unknown>; error?: unknown };
  if (!body.result) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

const send = (baseUrl: string, text: string) =>
  rpc(baseUrl, 'SendMessage', {
    message: { messageId: `m-${Math.random().toString(36).slice(2)}`, role: 'ROLE_USER', parts: [{ text }] },
  });

describe('the demo with A2A_DRAFT_11', () => {
  it('=1: the card declares task generations; tasks carry them; GetTask long-polls past a generation', async () => {
    const demo = await startDemo('memory:', { A2A_DRAFT_11: '1' });
    try {
      expect(demo.readyLine).toContain('A2A 1.1 draft: task generations');
      const card = (await (await fetch(`${demo.baseUrl}/.well-known/agent-card.json`)).json()) as {
        capabilities?: { extensions?: { uri: string }[] };
      };
      expect(card.capabilities?.extensions?.map((e) => e.uri)).toContain(EXTENSION);
      const { task } = (await send(demo.baseUrl, 'hello draft')) as { task: { id: string; generation: number } };
      expect(task.generation).toBeGreaterThan(1);
      // Already past: answered at once with the current task.
      const started = Date.now();
      const got = await rpc(demo.baseUrl, 'GetTask', { id: task.id, currentGeneration: task.generation - 1 });
      expect(got.generation).toBe(task.generation);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await demo.stop();
    }
  });

  it('unset: no generation on a 1.0 task', async () => {
    const demo = await startDemo('memory:', {});
    try {
      const { task } = (await send(demo.baseUrl, 'hello')) as { task: Record<string, unknown> };
      expect(task).not.toHaveProperty('generation');
    } finally {
      await demo.stop();
    }
  });

  it('a value other than 1 or 0 stops the start, naming it', async () => {
    const demo = await spawnDemo({ A2A_STORE: 'memory:', A2A_DRAFT_11: 'yes' });
    const exit = await demo.exited;
    expect(exit.code).toBe(1);
    expect(demo.stderr().trim()).toBe('Could not start the demo: A2A_DRAFT_11 must be 1 or 0; got "yes".');
  });
});
