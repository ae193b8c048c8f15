/**
 * The demo as a real process on each store: it starts, prints its card URL, echoes a message, and
 * (on SQLite and Postgres, not in memory) keeps its tasks across a restart.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Task } from '@fastify-a2a/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { artifactText, type RunningDemo, rpc, startDemo, userMessage } from './demo-process.js';

const pg = withPostgres('demo');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'a2a-demo-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Each test gets a store of its own: a fresh SQLite file, a fresh Postgres schema. */
const stores = [
  { name: 'memory', persistent: false, url: () => 'memory:' },
  { name: 'sqlite', persistent: true, url: () => `sqlite:${join(dir, `${crypto.randomUUID()}.db`)}` },
  {
    name: 'postgres',
    persistent: true,
    url: () => {
      const url = new URL(pg.url);
      url.searchParams.set('schema', pg.newSchema());
      return url.href;
    },
  },
] as const;

async function send(demo: RunningDemo, text: string, extra: Record<string, unknown> = {}): Promise<Task> {
  const body = await rpc<Task>(demo.baseUrl, 'message/send', { message: userMessage(text, extra) });
  expect(body.error).toBeUndefined();
  expect(body.result?.kind).toBe('task');
  return body.result as Task;
}

describe.each(stores)('the demo on $name', (store) => {
  it('prints a card URL that serves the card, and echoes a message/send to completed', async () => {
    const demo = await startDemo(store.url());
    expect(demo.cardUrl).toBe(`http://127.0.0.1:${demo.port}/.well-known/agent-card.json`);
    // The password, if any, never appears; the store kind does.
    expect(demo.readyLine).toContain(`(store ${store.name === 'memory' ? 'memory:' : store.name}`);

    const response = await fetch(demo.cardUrl);
    expect(response.status).toBe(200);
    const card = (await response.json()) as { name: string; url: string; protocolVersion: string };
    expect(card.name).toBe('fastify-a2a echo agent');
    expect(card.url).toBe(`http://127.0.0.1:${demo.port}/a2a`);
    expect(card.protocolVersion).toBe('0.3.0');

    const task = await send(demo, 'hello from the demo test');
    expect(task.status.state).toBe('completed');
    expect(task.artifacts).toHaveLength(1);
    expect(artifactText(task.artifacts?.[0])).toBe('hello from the demo test');

    const health = await fetch(`${demo.baseUrl}/a2a/health`);
    expect(health.status).toBe(200);

    const exit = await demo.stop();
    expect(exit).toEqual({ code: 0, signal: null });
  });

  if (store.persistent) {
    it('returns a task created before a restart (SIGTERM, start again on the same store) with the same state and artifacts', async () => {
      const url = store.url();
      const first = await startDemo(url);
      const task = await send(first, 'remember me please');
      expect(task.status.state).toBe('completed');
      expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });

      const second = await startDemo(url);
      const body = await rpc<Task>(second.baseUrl, 'tasks/get', { id: task.id });
      expect(body.error).toBeUndefined();
      const got = body.result as Task;
      expect(got.id).toBe(task.id);
      expect(got.contextId).toBe(task.contextId);
      expect(got.status.state).toBe('completed');
      expect(got.status).toEqual(task.status);
      expect(got.artifacts).toEqual(task.artifacts);
      expect(artifactText(got.artifacts?.[0])).toBe('remember me please');
    });

    it('after a crash (SIGKILL mid-turn) and a restart, the interrupted task is failed within the lease TTL', async () => {
      const url = store.url();
      const env = { A2A_LEASE_TTL_MS: '2000' };
      const first = await startDemo(url, env);
      const sent = await rpc<Task>(first.baseUrl, 'message/send', {
        message: userMessage('sleep:60000'),
        configuration: { blocking: false },
      });
      const task = sent.result as Task;
      await new Promise((r) => setTimeout(r, 300));
      expect(await first.stop('SIGKILL')).toMatchObject({ signal: 'SIGKILL' });

      const second = await startDemo(url, env);
      const restartedAt = Date.now();
      let got: Task | undefined;
      while (Date.now() - restartedAt < 6000) {
        got = (await rpc<Task>(second.baseUrl, 'tasks/get', { id: task.id })).result;
        if (got?.status.state === 'failed') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(got?.status.state).toBe('failed');
      expect(got?.status.message?.parts[0]).toMatchObject({
        kind: 'text',
        text: expect.stringMatching(/^Worker lost/),
      });
      // and the restarted demo serves new work
      expect((await send(second, 'alive again')).status.state).toBe('completed');
    });

    it('keeps a task waiting for input across a restart, and the answer after it completes the task', async () => {
      const url = store.url();
      const first = await startDemo(url);
      const task = await send(first, 'ask:What is your name?');
      expect(task.status.state).toBe('input-required');
      await first.stop('SIGTERM');

      const second = await startDemo(url);
      const got = await rpc<Task>(second.baseUrl, 'tasks/get', { id: task.id });
      expect(got.result?.status.state).toBe('input-required');
      const answered = await send(second, 'Ada', { taskId: task.id, contextId: task.contextId });
      expect(answered.id).toBe(task.id);
      expect(answered.status.state).toBe('completed');
      expect(artifactText(answered.artifacts?.at(-1))).toBe('You answered: Ada');
    });
  } else {
    it('forgets its tasks on restart: tasks/get after it is -32001 (task not found)', async () => {
      const first = await startDemo(store.url());
      const task = await send(first, 'forget me');
      expect(task.status.state).toBe('completed');
      expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });

      const second = await startDemo(store.url());
      const body = await rpc<Task>(second.baseUrl, 'tasks/get', { id: task.id });
      expect(body.result).toBeUndefined();
      expect(body.error?.code).toBe(-32001);
    });
  }
});

describe('A2A_BASE_URL', () => {
  it('puts the public URL in the card (as docker-compose.yml does for the load balancer)', async () => {
    const demo = await startDemo('memory:', { A2A_BASE_URL: 'http://localhost:8080' });
    const card = (await (await fetch(demo.cardUrl)).json()) as { url: string };
    expect(card.url).toBe('http://localhost:8080/a2a');
  });
});
