/**
 * The A2A protocol suite: what a client of either binding and either protocol version (0.3, 1.0)
 * sees, asserted once through {@link ProtocolClient} and run for every (binding, version) on every
 * store (protocol.<store>.test.ts). Section numbers are 0.3's; where 1.0 differs, the scenario says
 * so. Each
 * scenario serves a fresh agent over real HTTP on a fresh store instance; the store fixture decides
 * what "fresh" costs (a new MemoryStore, a connection to the file's SQLite database or Postgres
 * schema).
 *
 * Runtime semantics that need no binding (turn order, leases, retries…) are tested in
 * core/test/runtime; what only one binding has (JSON-RPC envelopes, HTTP+JSON routes) in its own
 * file.
 */

import type { A2AStore, AgentExecutorLike } from '@fastify-a2a/core';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, it } from 'vitest';
import { type A2APluginOptions, a2aPlugin } from '../../src/index.js';
import { listen, testCard } from '../helpers.js';
import { type BindingName, type ProtocolClient, protocolClient, type Version } from './client.js';
import type { Served, SuiteContext } from './suite-context.js';
import { listAndOwnershipScenarios } from './suite-list-and-ownership.js';
import { pushScenarios } from './suite-push.js';
import { sendScenarios } from './suite-send.js';
import { streamScenarios } from './suite-streams.js';

export interface StoreFixture {
  /** Names the store in test titles. */
  readonly name: string;
  /** A store instance for one scenario; the suite closes it after the scenario. */
  create(): A2AStore | Promise<A2AStore>;
}

/**
 * A binding served by a listener of its own beside Fastify (gRPC, from @fastify-a2a/grpc's tests),
 * so the suite runs on it without this package depending on it.
 */
export interface ListenerBinding {
  readonly name: string;
  /** Starts the binding for the agent registered on `app` (before it listens); resolves its address. */
  serve(app: FastifyInstance): Promise<string>;
  /** A client of the binding at `address`; `headers` go with every call (credentials, say). */
  client(address: string, version: Version, headers: Readonly<Record<string, string>>): ProtocolClient;
}

export interface ProtocolSuiteOptions {
  binding: BindingName | ListenerBinding;
  store: StoreFixture;
  /** @default '0.3' */
  version?: Version;
}

export function protocolSuite({ binding, store, version = '0.3' }: ProtocolSuiteOptions): void {
  const listener = typeof binding === 'string' ? undefined : binding;
  // SSE gives each stream event its sequence number as its id, and Last-Event-ID resumes after it;
  // a gRPC stream's messages carry none (A2A 1.0 §10 defines no resume point), so the scenarios
  // about ids, heartbeat comments and Last-Event-ID are defined for SSE bindings only.
  const eventIds = listener === undefined;
  const itWithEventIds = eventIds ? it : () => undefined;
  const clientOf = (base: string, headers: Readonly<Record<string, string>> = {}): ProtocolClient =>
    listener === undefined
      ? protocolClient(binding as BindingName, base, version, headers)
      : listener.client(base, version, headers);
  describe(`A2A ${version} over ${listener?.name ?? binding} on ${store.name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    /** Serves `executor` on a fresh store and returns a client of this suite's binding for it. */
    async function serve(executor: AgentExecutorLike, options: Partial<A2APluginOptions> = {}): Promise<Served> {
      const instance = await store.create();
      cleanups.push(() => instance.close());
      // Force-close: a test that drops a stream must not hold the server's close up on its socket.
      const app = Fastify({ logger: false, forceCloseConnections: true });
      cleanups.push(() => app.close());
      await app.register(a2aPlugin, {
        agentCard: testCard,
        executor,
        store: instance,
        retention: false,
        drainTimeoutMs: 100,
        ...options,
      });
      const address = listener === undefined ? undefined : await listener.serve(app);
      const base = await listen(app);
      return { client: clientOf(address ?? base), base: address ?? base };
    }

    const suite: SuiteContext = {
      binding,
      version,
      store,
      listener,
      eventIds,
      itWithEventIds,
      clientOf,
      cleanups,
      serve,
    };
    sendScenarios(suite);
    streamScenarios(suite);
    listAndOwnershipScenarios(suite);
    pushScenarios(suite);
  });
}
