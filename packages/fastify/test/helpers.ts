import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import { Writable } from 'node:stream';
import type { A2AStore, AgentExecutorLike, JsonRpcResponse, Part } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import Fastify, { type FastifyInstance } from 'fastify';
import { nextId, userMessage } from '../../../test-support/helpers.js';
import { type A2APluginOptions, a2aPlugin } from '../src/index.js';

export { asTask, listen, nextId, userMessage, waitFor } from '../../../test-support/helpers.js';

export const testCard = {
  name: 'Test agent',
  description: 'An agent for tests.',
  version: '1.0.0',
} as const;

export function rpcBody(
  method: string,
  params?: unknown,
  id: string | number | null = nextId('req'),
): Record<string, unknown> {
  return params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
}

export interface TestApp {
  app: FastifyInstance;
  store: A2AStore;
  /** POSTs a JSON-RPC call and returns the parsed body (asserting HTTP 200 JSON). */
  call<T = unknown>(method: string, params?: unknown): Promise<JsonRpcResponse<T>>;
}

export async function buildApp(executor: AgentExecutorLike, options: Partial<A2APluginOptions> = {}): Promise<TestApp> {
  const store = (options.store as A2AStore | undefined) ?? new MemoryStore();
  const app = Fastify({ logger: false });
  await app.register(a2aPlugin, {
    agentCard: testCard,
    executor,
    store,
    retention: false,
    drainTimeoutMs: 200,
    ...options,
  });
  await app.ready();
  return {
    app,
    store,
    async call<T>(method: string, params?: unknown) {
      const res = await app.inject({
        method: 'POST',
        url: `${options.prefix ?? ''}/a2a`,
        payload: rpcBody(method, params),
      });
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${res.body}`);
      return res.json() as JsonRpcResponse<T>;
    },
  };
}

export interface SseEvent {
  id?: string;
  data: unknown;
}

/** Parses a complete text/event-stream body into its events (comments such as heartbeats dropped). */
export function parseSse(body: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of body.split('\n\n')) {
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length > 0)
      events.push(id === undefined ? { data: JSON.parse(data.join('\n')) } : { id, data: JSON.parse(data.join('\n')) });
  }
  return events;
}

export const textParts = (parts: Part[] | undefined): string =>
  (parts ?? []).map((p) => (p.kind === 'text' ? p.text : '')).join('');

/** Reads SSE events from a fetch Response as they arrive. */
export async function* readSse(response: Response): AsyncGenerator<SseEvent> {
  if (!response.body) throw new Error('no body');
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let index = buffer.indexOf('\n\n');
    while (index !== -1) {
      const block = buffer.slice(0, index);
      buffer = buffer.slice(index + 2);
      const [event] = parseSse(`${block}\n\n`);
      if (event) yield event;
      index = buffer.indexOf('\n\n');
    }
  }
}

export function postSse(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

/** POSTs `payload` as JSON to the app's JSON-RPC endpoint (`/a2a`) with `headers`, in process. */
export function postJson(app: FastifyInstance, payload: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/a2a',
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(payload),
  });
}

/** Fastify logger options at `level` writing into `lines`, for tests that read what was logged. */
export function capturedLogger(level = 'warn'): { logger: { level: string; stream: Writable }; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: { level, stream }, lines };
}

/**
 * Starts a message/stream over a real socket (inject has no backpressure) and resolves with the
 * request and its response once the head arrived, the response not yet read.
 */
export async function openRawStream(
  url: URL,
  text: string,
): Promise<{ clientRequest: ClientRequest; response: IncomingMessage }> {
  const clientRequest = request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
  });
  const head = new Promise<IncomingMessage>((resolve, reject) => {
    clientRequest.on('response', resolve);
    clientRequest.on('error', reject);
  });
  clientRequest.end(JSON.stringify(rpcBody('message/stream', { message: userMessage(text) })));
  return { clientRequest, response: await head };
}
