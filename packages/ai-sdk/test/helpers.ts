/**
 * The adapter served by the real plugin over HTTP, on a store URL, and a plain A2A client: JSON-RPC
 * over fetch, reading a `message/stream` answer event by event as a client receives it.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentExecutor, Message, Part, StreamResult, Task } from '@fastify-a2a/core';
import Fastify, { type FastifyInstance } from 'fastify';
import { type A2APluginOptions, a2aPlugin } from 'fastify-a2a';
import { afterAll, afterEach } from 'vitest';
import { nextId } from '../../../test-support/helpers.js';
import { withPostgres } from '../../../test-support/postgres.js';

export { asTask, nextId, userMessage, waitFor } from '../../../test-support/helpers.js';

export interface StoreUnderTest {
  name: string;
  /** A store URL nobody else uses (a fresh SQLite file, a fresh Postgres schema). */
  url: () => string;
}

/** memory, SQLite and Postgres: each call of `url` gives a store of its own. */
export function storesUnderTest(prefix: string): StoreUnderTest[] {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const pg = withPostgres(prefix.replace(/-/g, '_'));
  let files = 0;
  return [
    { name: 'memory', url: () => 'memory:' },
    { name: 'SQLite', url: () => `sqlite:${join(dir, `a2a-${++files}.db`)}` },
    { name: 'Postgres', url: () => `${pg.url}${pg.url.includes('?') ? '&' : '?'}schema=${pg.newSchema()}` },
  ];
}

/** Starts the plugin serving `executor` on `store` on a loopback port (closed after the test); its base URL. */
export function useServers(): (
  executor: AgentExecutor,
  store: string,
  options?: Partial<A2APluginOptions>,
) => Promise<string> {
  const open: FastifyInstance[] = [];
  afterEach(async () => {
    for (const app of open.splice(0)) await app.close();
  });
  return async (executor, store, options = {}) => {
    const app = Fastify({ logger: false });
    open.push(app);
    await app.register(a2aPlugin, {
      agentCard: { name: 'AI SDK test agent', description: 'fromAiSdk under test.', version: '1.0.0' },
      executor,
      store,
      retention: false,
      drainTimeoutMs: 500,
      ...options,
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return `http://127.0.0.1:${address.port}`;
  };
}

export async function rpc<T>(url: string, method: string, params: unknown): Promise<T> {
  const response = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId('req'), method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: unknown };
  if (body.error !== undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result as T;
}

export const send = (url: string, message: Message): Promise<Task> => rpc<Task>(url, 'message/send', { message });

export const getTask = (url: string, id: string): Promise<Task> => rpc<Task>(url, 'tasks/get', { id });

/**
 * `message/stream` (A2A 0.3 JSON-RPC over SSE): every event's `result`, in order, as the client
 * receives them. `onEvent` sees each as it arrives (e.g. to cancel after the first chunk).
 */
export async function stream(
  url: string,
  message: Message,
  onEvent?: (event: StreamResult, index: number) => void | Promise<void>,
): Promise<StreamResult[]> {
  const response = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId('req'), method: 'message/stream', params: { message } }),
  });
  if (!response.body) throw new Error('no body');
  const events: StreamResult[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      if (data === '') continue;
      const body = JSON.parse(data) as { result?: StreamResult; error?: unknown };
      if (body.error !== undefined) throw new Error(`stream error: ${JSON.stringify(body.error)}`);
      const event = body.result as StreamResult;
      events.push(event);
      await onEvent?.(event, events.length - 1);
    }
  }
  return events;
}

export const textOf = (parts: readonly Part[] | undefined): string =>
  (parts ?? []).map((part) => (part.kind === 'text' ? part.text : '')).join('');

/** One line per event, for asserting a stream's shape: `task submitted`, `status working`, `artifact +`, `artifact + last`, `status completed final`. */
export function shapeOf(event: StreamResult): string {
  switch (event.kind) {
    case 'task':
      return `task ${event.status.state}`;
    case 'status-update':
      return `status ${event.status.state}${event.final ? ' final' : ''}`;
    case 'artifact-update':
      return `artifact ${event.append ? '+' : 'new'}${event.lastChunk ? ' last' : ''}`;
    case 'message':
      return 'message';
  }
}
