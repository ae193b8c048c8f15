import type { A2AStore, AgentExecutorLike, Message } from '@fastify-a2a/core';
import Fastify, { type FastifyInstance } from 'fastify';
import { type A2APluginOptions, a2aPlugin } from 'fastify-a2a';
import { type GrpcServeOptions, type GrpcServer, serveGrpc } from '../src/index.js';

export const testCard = { name: 'gRPC test agent', description: 'An agent for gRPC tests.', version: '1.0.0' } as const;

let counter = 0;
export const nextId = (prefix = 'm'): string => `${prefix}-${Date.now().toString(36)}-${++counter}`;

export function userMessage(text: string, extra: Partial<Message> = {}): Message {
  return { kind: 'message', role: 'user', messageId: nextId('msg'), parts: [{ kind: 'text', text }], ...extra };
}

/** What a test store fixture gives: a fresh store per app (each test closes its own). */
export interface StoreFixture {
  readonly name: string;
  create(): A2AStore | Promise<A2AStore>;
}

export interface Served {
  app: FastifyInstance;
  grpc: GrpcServer;
  /** The HTTP base URL (card, JSON-RPC). */
  base: string;
  store: A2AStore;
  /** Closes the app (and with it the gRPC server), then the store. */
  close(): Promise<void>;
}

/** The plugin on a real HTTP port and the gRPC binding on a real HTTP/2 port, both free ports. */
export async function serve(
  store: A2AStore,
  executor: AgentExecutorLike,
  options: Partial<A2APluginOptions> = {},
  grpcOptions: Partial<GrpcServeOptions> = {},
): Promise<Served> {
  const app = Fastify({ logger: false });
  await app.register(a2aPlugin, {
    agentCard: testCard,
    executor,
    store,
    retention: false,
    drainTimeoutMs: 500,
    ...options,
  });
  const grpc = await serveGrpc(app, { port: 0, ...grpcOptions });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    app,
    grpc,
    base: `http://127.0.0.1:${address.port}`,
    store,
    close: async () => {
      await app.close();
      await store.close();
    },
  };
}

/** Polls `probe` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(
  probe: () => Promise<T> | T,
  timeoutMs = 5000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
