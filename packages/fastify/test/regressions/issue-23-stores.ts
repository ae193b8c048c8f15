/**
 * The three stores for issue 23's regression tests, and an agent served over real HTTP on one of
 * them: each test gets a fresh store instance (a new MemoryStore, a connection to the file's
 * SQLite database or the file's Postgres schema), closed after it with its app.
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

export interface Served {
  app: FastifyInstance;
  store: A2AStore;
  /** `http://127.0.0.1:<port>` */
  base: string;
}

const opened: { app: FastifyInstance; store: A2AStore }[] = [];
afterEach(async () => {
  for (const { app, store } of opened.splice(0)) {
    await app.close();
    await store.close();
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
