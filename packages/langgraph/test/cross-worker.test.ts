/**
 * An interrupt raised on one worker process is answered through another: two real workers serve the
 * same graph on one store (Postgres, then a SQLite file), each with LangGraph's official
 * checkpointer on the store's database, behind no sticky sessions.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Task } from '@fastify-a2a/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { checkpointerFor } from './checkpointers.js';
import { assistantGraph, DEFAULT_ANSWER } from './graphs.js';
import { artifactText, message, rpc, send, textOf, waitFor } from './helpers.js';

const workerEntry = fileURLToPath(new URL('./worker.ts', import.meta.url));
const postgres = withPostgres('langgraph_workers');
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'a2a-langgraph-workers-'));
});
afterEach(async () => {
  await Promise.all(
    children.splice(0).map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
        }),
    ),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts a worker on `storeUrl`; resolves with its base URL once it listens. */
async function startWorker(storeUrl: string, id: string): Promise<string> {
  const child = spawn(process.execPath, ['--conditions=@fastify-a2a/source', '--import', 'tsx', workerEntry], {
    // The fake model streams its 55 characters 20 ms apart: about a second, time enough to cancel.
    env: { ...process.env, STORE_URL: storeUrl, WORKER_ID: id, SLEEP_MS: '20' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (d) => {
    output += d;
  });
  child.stderr?.on('data', (d) => {
    output += d;
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker ${id} did not start in 30 s:\n${output}`)), 30_000);
    child.stdout?.on('data', () => {
      const match = /READY (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker ${id} exited with ${code} before it was ready:\n${output}`));
    });
  });
  return `http://127.0.0.1:${port}`;
}

const stores = [
  {
    name: 'postgres',
    url: () => {
      const url = new URL(postgres.url);
      url.searchParams.set('schema', postgres.newSchema());
      return url.href;
    },
  },
  { name: 'sqlite file', url: () => `sqlite:${join(dir, `${crypto.randomUUID()}.db`)}` },
] as const;

describe.each(stores)('two workers on $name', (store) => {
  it('a LangGraph interrupt raised on worker 1 is resumed on worker 2, and a cancel sent to worker 2 aborts a run started through worker 1', async () => {
    const storeUrl = store.url();
    // The checkpointer's tables once, before the workers start (as a deploy step would).
    await (await checkpointerFor(storeUrl)).close();
    const [w1, w2] = await Promise.all([startWorker(storeUrl, 'w1'), startWorker(storeUrl, 'w2')]);

    const asked = await send(w1 as string, message('approve: the release'));
    expect(asked.status.state).toBe('input-required');
    expect(textOf(asked.status.message?.parts)).toBe('Approve the release? (asked on w1)');
    expect(artifactText(asked.artifacts?.[0])).toBe(DEFAULT_ANSWER);

    const done = await send(w2 as string, message('ship it', { taskId: asked.id, contextId: asked.contextId }));
    expect(done.status.state).toBe('completed');
    // The approval node ran again on w2, from w1's checkpoint, with the answer as its resume value.
    expect(artifactText(done.artifacts?.at(-1))).toBe('Approved the release on w2: "ship it"');

    // The conversation goes on through w1 with both turns in the thread.
    const next = await send(w1 as string, message('thanks', { contextId: asked.contextId }));
    expect(next.status.state).toBe('completed');
    expect(artifactText(next.artifacts?.[0])).toBe(DEFAULT_ANSWER);

    // A cancel sent to w2 aborts the run started through w1: long after the model would have finished, the
    // agent node has not (the shared checkpoint holds no answer), and the task stays canceled.
    const running = await rpc<Task>(w1 as string, 'message/send', {
      message: message('hello'),
      configuration: { blocking: false },
    });
    await waitFor(
      async () => {
        const task = await rpc<Task>(w2 as string, 'tasks/get', { id: running.id });
        return (task.artifacts?.length ?? 0) > 0;
      },
      10_000,
      'a first chunk',
    );
    const canceled = await rpc<Task>(w2 as string, 'tasks/cancel', { id: running.id });
    expect(canceled.status.state).toBe('canceled');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const reader = await checkpointerFor(storeUrl);
    try {
      const state = await assistantGraph({ checkpointer: reader.checkpointer }).getState({
        configurable: { thread_id: running.contextId },
      });
      expect(state.values.messages?.map((m: { type: string }) => m.type)).toEqual(['human']);
    } finally {
      await reader.close();
    }
    const after = await rpc<Task>(w1 as string, 'tasks/get', { id: running.id });
    expect(after.status.state).toBe('canceled');
    expect(artifactText(after.artifacts?.[0]).length).toBeLessThan(DEFAULT_ANSWER.length);
  });
});
