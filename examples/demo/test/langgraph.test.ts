/**
 * DEMO_AGENT=langgraph as real processes: the official A2A JS SDK's client (a plain A2A client)
 * follows the answer as it streams, on every store; and on the shared stores, an approval asked
 * by one worker is answered through another (LangGraph's official checkpointer on the store's
 * database carries the interrupt across).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message as SdkMessage } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import type { Task } from '@fastify-a2a/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { mockAnswer } from '../src/langgraph-agent.js';
import { artifactText, rpc, startDemo, userMessage } from './demo-process.js';

const pg = withPostgres('demo_langgraph');
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'a2a-demo-langgraph-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const stores = [
  { name: 'memory', shared: false, url: () => 'memory:' },
  { name: 'sqlite', shared: true, url: () => `sqlite:${join(dir, `${crypto.randomUUID()}.db`)}` },
  {
    name: 'postgres',
    shared: true,
    url: () => {
      const url = new URL(pg.url);
      url.searchParams.set('schema', pg.newSchema());
      return url.href;
    },
  },
] as const;

interface Followed {
  chunks: string[];
  states: string[];
  taskId: string | undefined;
}

/** message/stream through the official SDK client, to the end of the turn. */
async function follow(baseUrl: string, message: SdkMessage): Promise<Followed> {
  const client = await new ClientFactory().createFromUrl(baseUrl);
  const followed: Followed = { chunks: [], states: [], taskId: undefined };
  for await (const event of client.sendMessageStream({ message })) {
    if (event.kind === 'artifact-update') {
      followed.chunks.push(event.artifact.parts.map((p) => (p.kind === 'text' ? p.text : '')).join(''));
    } else if (event.kind === 'status-update') {
      followed.states.push(event.status.state);
      followed.taskId = event.taskId;
    } else if (event.kind === 'task') {
      followed.taskId = event.id;
    }
  }
  return followed;
}

const sdkMessage = (text: string, extra: Record<string, unknown> = {}) =>
  userMessage(text, extra) as unknown as SdkMessage;

describe.each(stores)('DEMO_AGENT=langgraph on $name', (store) => {
  it('streams its answer to a plain A2A client in ten chunks or more at the default 50 tokens a second', async () => {
    const demo = await startDemo(store.url(), { DEMO_AGENT: 'langgraph' });
    expect(demo.readyLine).toContain('A2A langgraph agent ready');
    expect(demo.readyLine).toContain('mock model at 50 tokens/s');

    const followed = await follow(demo.baseUrl, sdkMessage('hello langgraph'));
    const answer = mockAnswer('hello langgraph');
    expect(answer.length / 4).toBeGreaterThanOrEqual(100);
    expect(followed.chunks.length).toBeGreaterThanOrEqual(10);
    expect(followed.chunks.join('')).toBe(answer);
    expect(followed.states.at(-1)).toBe('completed');

    const task = await rpc<Task>(demo.baseUrl, 'tasks/get', { id: followed.taskId });
    expect(artifactText(task.result?.artifacts?.[0])).toBe(answer);
  });
});

describe.each(stores.filter((s) => s.shared))('DEMO_AGENT=langgraph, two workers on $name', (store) => {
  it('an approval asked on one worker is answered through another, which streams the answer', async () => {
    const url = store.url();
    const env = { DEMO_AGENT: 'langgraph', DEMO_TOKENS_PER_S: '400' };
    const [a, b] = await Promise.all([startDemo(url, env), startDemo(url, env)]);

    const asked = await rpc<Task>(a.baseUrl, 'message/send', {
      message: userMessage('approve: deploy the release'),
      configuration: { blocking: true },
    });
    const task = asked.result as Task;
    expect(task.status.state).toBe('input-required');
    expect(task.status.message?.parts[0]).toEqual({
      kind: 'text',
      text: 'Do you approve "deploy the release"? Any reply continues.',
    });

    const followed = await follow(b.baseUrl, sdkMessage('yes', { taskId: task.id, contextId: task.contextId }));
    expect(followed.states.at(-1)).toBe('completed');
    expect(followed.chunks.join('')).toBe(mockAnswer('approve: deploy the release', 'yes'));
    // Read back through the first worker: one task, answered.
    const done = await rpc<Task>(a.baseUrl, 'tasks/get', { id: task.id });
    expect(done.result?.status.state).toBe('completed');
  });
});
