/**
 * fromAiSdk on two worker processes sharing one store (SQLite, Postgres): a conversation whose
 * turns land on different workers carries on, and a question asked on one worker is answered on
 * the other. The worker's mock model answers from what it is sent (see worker.ts).
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StreamResult, TaskStatusUpdateEvent } from '@fastify-a2a/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { send, shapeOf, stream, textOf, userMessage } from './helpers.js';

const workerEntry = fileURLToPath(new URL('./worker.ts', import.meta.url));

interface Worker {
  url: string;
  child: ChildProcess;
}

async function startWorker(id: string, storeUrl: string): Promise<Worker> {
  const child = spawn(process.execPath, ['--conditions=@fastify-a2a/source', '--import', 'tsx', workerEntry], {
    env: { ...process.env, STORE_URL: storeUrl, WORKER_ID: id },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (data) => {
    output += data;
  });
  child.stderr?.on('data', (data) => {
    output += data;
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
      reject(new Error(`worker ${id} exited with ${code}:\n${output}`));
    });
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

const dir = mkdtempSync(join(tmpdir(), 'ai-sdk-workers-'));
const pg = withPostgres('ai_sdk_workers');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each([
  { name: 'SQLite', storeUrl: () => `sqlite:${join(dir, 'a2a.db')}` },
  { name: 'Postgres', storeUrl: () => `${pg.url}${pg.url.includes('?') ? '&' : '?'}schema=${pg.schema}` },
])('fromAiSdk on two workers over $name', ({ storeUrl }) => {
  let w1: Worker;
  let w2: Worker;
  beforeAll(async () => {
    const url = storeUrl();
    // One first, so the store's migrations run once.
    w1 = await startWorker('w1', url);
    w2 = await startWorker('w2', url);
  });
  afterAll(() => {
    for (const worker of [w1, w2]) worker?.child.kill('SIGKILL');
  });

  it('the next turn of a conversation, on the other worker, sends the model the earlier turns', async () => {
    const first = await send(w1.url, userMessage('I live in Oslo'));
    expect(textOf(first.artifacts?.[0]?.parts)).toBe('Turn 1 on w1: I live in Oslo');
    const events = await stream(w2.url, userMessage('Where do I live?', { contextId: first.contextId }));
    expect(shapeOf(events.at(-1) as StreamResult)).toBe('status completed final');
    const text = events
      .filter((event) => event.kind === 'artifact-update')
      .map((event) => (event.kind === 'artifact-update' ? textOf(event.artifact.parts) : ''))
      .join('');
    expect(text).toBe('Turn 2 on w2: I live in Oslo / Where do I live?');
  });

  it('a question asked on one worker is answered on the other, and the loop resumes there', async () => {
    const asked = await stream(w1.url, userMessage('book a train'));
    const question = asked.at(-1) as TaskStatusUpdateEvent;
    expect(shapeOf(question)).toBe('status input-required final');
    expect(textOf(question.status.message?.parts)).toBe('Which city?');
    const answered = await send(
      w2.url,
      userMessage('Lyon', { taskId: question.taskId, contextId: question.contextId }),
    );
    expect(answered.status.state).toBe('completed');
    expect(answered.id).toBe(question.taskId);
    // The task's artifacts: none from the first turn (it only asked), the answer from the second.
    expect(answered.artifacts?.map((artifact) => textOf(artifact.parts))).toEqual(['Booked for Lyon on w2.']);
  });
});
