/** Serving an executor through the plugin on a loopback port, and a plain A2A client over HTTP. */
import type {
  A2AStore,
  AgentExecutorLike,
  Artifact,
  Part,
  Task,
  TaskArtifactUpdateEvent,
  TaskStatusUpdateEvent,
} from '@fastify-a2a/core';
import Fastify, { type FastifyInstance } from 'fastify';
import { a2aPlugin } from 'fastify-a2a';
import { listen, nextId } from '../../../test-support/helpers.js';

export { nextId, waitFor } from '../../../test-support/helpers.js';

export interface Served {
  app: FastifyInstance;
  url: string;
}

/** The plugin with `executor` on `store` (a store object or a store URL), listening on a free port. */
export async function serve(executor: AgentExecutorLike, store: A2AStore | string): Promise<Served> {
  const app = Fastify({ logger: false });
  await app.register(a2aPlugin, {
    agentCard: { name: 'LangGraph test agent', description: 'A LangGraph graph over A2A.', version: '1.0.0' },
    executor,
    store,
    retention: false,
    drainTimeoutMs: 500,
  });
  return { app, url: await listen(app) };
}

export function message(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { kind: 'message', role: 'user', messageId: nextId('msg'), parts: [{ kind: 'text', text }], ...extra };
}

/** One JSON-RPC call; throws on a JSON-RPC error. */
export async function rpc<T>(url: string, method: string, params: unknown): Promise<T> {
  const response = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId('rpc'), method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** A blocking message/send: the task as it ends the turn. */
export function send(url: string, msg: Record<string, unknown>): Promise<Task> {
  return rpc<Task>(url, 'message/send', { message: msg, configuration: { blocking: true } });
}

export type StreamEvent = Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent;

/** message/stream to its end: every event the server sent, in order. */
export async function stream(url: string, msg: Record<string, unknown>): Promise<StreamEvent[]> {
  const response = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId('rpc'), method: 'message/stream', params: { message: msg } }),
  });
  const events: StreamEvent[] = [];
  for (const block of (await response.text()).split('\n\n')) {
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => line.slice(6))
      .join('\n');
    if (data === '') continue;
    const frame = JSON.parse(data) as { result?: StreamEvent; error?: { message: string } };
    if (frame.error) throw new Error(`message/stream: ${frame.error.message}`);
    if (frame.result) events.push(frame.result);
  }
  return events;
}

export const textOf = (parts: readonly Part[] | undefined): string =>
  (parts ?? []).map((p) => (p.kind === 'text' ? p.text : '')).join('');

export const artifactChunks = (events: StreamEvent[]): TaskArtifactUpdateEvent[] =>
  events.filter((e): e is TaskArtifactUpdateEvent => e.kind === 'artifact-update');

export const statusUpdates = (events: StreamEvent[]): TaskStatusUpdateEvent[] =>
  events.filter((e): e is TaskStatusUpdateEvent => e.kind === 'status-update');

export const artifactText = (artifact: Artifact | undefined): string => textOf(artifact?.parts);
