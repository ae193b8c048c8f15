/**
 * Issue 23 (9): the demo with every default (drainTimeoutMs 10 s, Fastify's pluginTimeout 10 s)
 * exited 1 on SIGTERM when a turn outlived the drain (AVV_ERR_READY_TIMEOUT), possibly before the
 * drain's last writes. It now exits 0, and the interrupted task is failed in the store.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Task } from '@fastify-a2a/core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rpc, startDemo, userMessage } from './demo-process.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'a2a-demo-shutdown-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('SIGTERM during a turn longer than the default drain: exit 0, the task failed and stored', async () => {
  const store = `sqlite:${join(dir, 'a2a.db')}`;
  const demo = await startDemo(store);
  const sent = await rpc<Task>(demo.baseUrl, 'message/send', {
    message: userMessage('sleep:60000'),
    configuration: { blocking: false },
  });
  const taskId = sent.result?.id as string;
  for (let state = sent.result?.status.state; state !== 'working'; ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    state = (await rpc<Task>(demo.baseUrl, 'tasks/get', { id: taskId })).result?.status.state;
  }
  const since = Date.now();
  expect(await demo.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  // It waited for the drain (10 s by default), no more than that and the last writes.
  expect(Date.now() - since).toBeGreaterThanOrEqual(9_500);
  expect(demo.stderr()).not.toMatch(/AVV_ERR_READY_TIMEOUT|FST_ERR_HOOK_TIMEOUT/);

  const again = await startDemo(store);
  const task = (await rpc<Task>(again.baseUrl, 'tasks/get', { id: taskId })).result;
  expect(task?.status.state).toBe('failed');
  expect(JSON.stringify(task?.status.message)).toMatch(/shut down before the turn finished/);
  expect(await again.stop()).toEqual({ code: 0, signal: null });
}, 60_000);
