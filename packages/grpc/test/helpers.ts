import type { A2AStore, AgentExecutorLike } from '@fastify-a2a/core';
import Fastify, { type FastifyInstance } from 'fastify';
import { type A2APluginOptions, a2aPlugin } from 'fastify-a2a';
import { listen } from '../../../test-support/helpers.js';
import { type GrpcServeOptions, type GrpcServer, serveGrpc } from '../src/index.js';

export { nextId, waitFor } from '../../../test-support/helpers.js';

export const testCard = { name: 'gRPC test agent', description: 'An agent for gRPC tests.', version: '1.0.0' } as const;

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
  const base = await listen(app);
  return {
    app,
    grpc,
    base,
    store,
    close: async () => {
      await app.close();
      await store.close();
    },
  };
}
