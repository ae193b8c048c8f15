/**
 * Issue 23 (9): with the defaults, the drain (drainTimeoutMs, 10 s) and Fastify's pluginTimeout
 * (10 s), which also bounds each preClose hook, were equal: a turn that outlived the drain made
 * `app.close()` reject with AVV_ERR_READY_TIMEOUT (the demo exited 1), possibly before the drain's
 * last writes. Close now succeeds whatever the two are, and the drain's final writes are in the
 * store before `close()` resolves. Scaled down here (same ratios, shorter times); the demo test
 * (examples/demo/test/shutdown.test.ts) runs the real defaults.
 */
import type { AgentExecutorLike, Task } from '@fastify-a2a/core';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { a2aPlugin } from '../../src/index.js';
import { listen, postSse, readSse, rpcBody, type SseEvent, testCard, userMessage, waitFor } from '../helpers.js';
import { issueStoreUrls } from './issue-23-stores.js';

const stores = issueStoreUrls('a2a_shutdown');

/** Ignores its abort for `stopMs`, as an agent in a long call does: it outlives any drain. */
function stubbornAgent(stopMs: number): AgentExecutorLike {
  return async (turn) => {
    await turn.working('Working for a long time.');
    await new Promise<void>((resolve) =>
      turn.signal.addEventListener('abort', () => setTimeout(resolve, stopMs), { once: true }),
    );
  };
}

async function serve(store: string, fastifyOptions: { pluginTimeout?: number }, drainTimeoutMs: number | undefined) {
  const app = Fastify({ logger: false, ...fastifyOptions });
  await app.register(a2aPlugin, {
    agentCard: testCard,
    executor: stubbornAgent(150),
    store,
    retention: false,
    ...(drainTimeoutMs === undefined ? {} : { drainTimeoutMs }),
  });
  return { app, base: await listen(app) };
}

async function taskAfterRestart(store: string, taskId: string): Promise<Task | undefined> {
  const app = Fastify({ logger: false });
  await app.register(a2aPlugin, { agentCard: testCard, executor: stubbornAgent(0), store, retention: false });
  try {
    const res = await app.inject({ method: 'POST', url: '/a2a', payload: rpcBody('tasks/get', { id: taskId }) });
    return (res.json() as { result?: Task }).result;
  } finally {
    await app.close();
  }
}

const combinations = [
  // pluginTimeout also bounds the plugin's start (opening the store, migrations): at least 1 s.
  { name: 'drain equal to pluginTimeout (as the defaults)', pluginTimeout: 1000, drainTimeoutMs: 1000 },
  { name: 'drain longer than pluginTimeout', pluginTimeout: 1000, drainTimeoutMs: 1500 },
  { name: 'drain shorter than pluginTimeout', pluginTimeout: 3000, drainTimeoutMs: 100 },
  { name: 'no pluginTimeout (0)', pluginTimeout: 0, drainTimeoutMs: 300 },
] as const;

describe.each(stores)('close with a turn that outlives the drain, on $name', { timeout: 20_000 }, (store) => {
  it.each(combinations)('$name: close() resolves, the blocking send gets the failed task', async (combo) => {
    const url = store.fresh();
    const { app, base } = await serve(url, { pluginTimeout: combo.pluginTimeout }, combo.drainTimeoutMs);
    const sending = fetch(`${base}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(rpcBody('message/send', { message: userMessage('long') })),
    }).then(async (res) => (await res.json()) as { result?: Task });
    await waitFor(() => app.a2a.get().runtime.runningTurns === 1, 5000, 'the turn to run');

    await expect(app.close()).resolves.toBeUndefined();
    const answer = await sending;
    expect(answer.result?.status.state).toBe('failed');
    expect(JSON.stringify(answer.result?.status.message)).toMatch(/shut down before the turn finished/);

    if (store.persistent) {
      // The drain's last write was committed before close() resolved: a new server reads it.
      const task = await taskAfterRestart(url, answer.result?.id as string);
      expect(task?.status.state).toBe('failed');
    }
  });

  it('a stream open at close ends with the failed status, and close() resolves past pluginTimeout', async () => {
    const { app, base } = await serve(store.fresh(), { pluginTimeout: 1000 }, 1500);
    const response = await postSse(`${base}/a2a`, rpcBody('message/stream', { message: userMessage('long') }));
    const events: SseEvent[] = [];
    const reading = (async () => {
      for await (const event of readSse(response)) events.push(event);
    })();
    await waitFor(() => app.a2a.get().runtime.runningTurns === 1, 5000, 'the turn to run');

    await expect(app.close()).resolves.toBeUndefined();
    await reading;
    const last = (events.at(-1)?.data as { result?: Record<string, unknown> } | undefined)?.result;
    expect(last).toMatchObject({ kind: 'status-update', final: true, status: { state: 'failed' } });
  });
});
