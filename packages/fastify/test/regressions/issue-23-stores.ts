/**
 * The three stores for issue 23's regression tests, and an agent served over real HTTP on one of
 * them, two ways:
 * - by instance ({@link issueStores}, {@link serveOn}): each test gets a fresh store instance (a new
 *   MemoryStore, a connection to the file's SQLite database or the file's Postgres schema);
 * - by URL ({@link issueStoreUrls}, {@link serveAtUrl}): the plugin opens (and closes) the store
 *   itself as a deployment does, and each call names fresh data, so a test can close a server and
 *   open the same data again to see what was really written.
 * Every app served here is closed after the test that started it (with its store).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { A2AStore, AgentExecutorLike } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { PostgresStore } from '@fastify-a2a/store-postgres';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, afterEach } from 'vitest';
import { withPostgres } from '../../../../test-support/postgres.js';
import { type A2APluginOptions, a2aPlugin } from '../../src/index.js';
import { listen, testCard } from '../helpers.js';

export interface StoreFixture {
  readonly name: string;
  create(): A2AStore;
}

/** The stores, each with a database of this test file's own (dropped or removed after it). */
export function issueStores(prefix: string): StoreFixture[] {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const pg = withPostgres(prefix.replace(/-/g, '_'));
  return [
    { name: 'memory', create: () => new MemoryStore() },
    { name: 'SQLite', create: () => new SqliteStore({ filename: join(dir, 'a2a.db') }) },
    { name: 'Postgres', create: () => new PostgresStore({ connectionString: pg.url, schema: pg.schema }) },
  ];
}

export interface StoreUrls {
  readonly name: 'memory' | 'sqlite' | 'postgres';
  /** Whether a second server on the same URL sees the first one's data. */
  readonly persistent: boolean;
  /** A URL naming fresh, empty data. */
  fresh(): string;
}

/** memory, SQLite (a file per call in a temporary directory) and Postgres (a schema per call). */
export function issueStoreUrls(prefix: string): StoreUrls[] {
  const pg = withPostgres(prefix);
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return [
    { name: 'memory', persistent: false, fresh: () => 'memory:' },
    { name: 'sqlite', persistent: true, fresh: () => `sqlite:${join(dir, `${crypto.randomUUID()}.db`)}` },
    {
      name: 'postgres',
      persistent: true,
      fresh: () => {
        const url = new URL(pg.url);
        url.searchParams.set('schema', pg.newSchema());
        return url.href;
      },
    },
  ];
}

export const BINDINGS = ['JSONRPC', 'HTTP+JSON'] as const;
export const VERSIONS = ['0.3', '1.0'] as const;
/** Every binding and protocol version a scenario runs on. */
export const BINDING_VERSIONS = BINDINGS.flatMap((binding) => VERSIONS.map((version) => ({ binding, version })));

export interface Served {
  app: FastifyInstance;
  store: A2AStore;
  /** `http://127.0.0.1:<port>` */
  base: string;
}

/** The apps served during the running test; a store is listed when the test opened it (not the plugin). */
const opened: { app: FastifyInstance; store?: A2AStore }[] = [];
afterEach(async () => {
  for (const { app, store } of opened.splice(0)) {
    await app.close();
    await store?.close();
  }
});

/** The agent on a fresh instance of `fixture`'s store, listening on a free loopback port. */
export async function serveOn(
  fixture: StoreFixture,
  executor: AgentExecutorLike,
  options: Partial<A2APluginOptions> = {},
): Promise<Served> {
  const store = fixture.create();
  const app = Fastify({ logger: false });
  opened.push({ app, store });
  await app.register(a2aPlugin, {
    agentCard: testCard,
    executor,
    store,
    retention: false,
    drainTimeoutMs: 200,
    ...options,
  });
  const base = await listen(app);
  return { app, store, base };
}

/**
 * The agent on the store at `storeUrl`, listening on a free loopback port, with the options the
 * lifecycle scenarios share (no retention, a short drain); `options` adds to or overrides them.
 */
export async function serveAtUrl(
  storeUrl: string,
  options: Partial<A2APluginOptions> & Pick<A2APluginOptions, 'executor'>,
): Promise<{ app: FastifyInstance; base: string }> {
  const app = Fastify({ logger: false });
  opened.push({ app });
  await app.register(a2aPlugin, {
    agentCard: testCard,
    store: storeUrl,
    retention: false,
    drainTimeoutMs: 100,
    ...options,
  });
  return { app, base: await listen(app) };
}
