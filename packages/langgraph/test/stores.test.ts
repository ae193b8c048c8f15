/**
 * fromLangGraph on the SQLite and Postgres stores, with LangGraph's official checkpointer on the
 * same database: the answer streams, and an interrupt raised before a restart (a new server, a new
 * checkpointer instance, as after a deploy) is resumed after it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { fromLangGraph } from '../src/index.js';
import { checkpointerFor } from './checkpointers.js';
import { assistantGraph, DEFAULT_ANSWER } from './graphs.js';
import { artifactChunks, artifactText, message, send, serve, statusUpdates, stream, textOf } from './helpers.js';

const postgres = withPostgres('langgraph_stores');
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'a2a-langgraph-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const stores = [
  {
    name: 'sqlite',
    url: () => `sqlite:${join(dir, `${crypto.randomUUID()}.db`)}`,
    async tables(url: string): Promise<string[]> {
      const db = new Database(url.slice('sqlite:'.length), { readonly: true });
      try {
        return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map(
          (r) => r.name,
        );
      } finally {
        db.close();
      }
    },
  },
  {
    name: 'postgres',
    url: () => {
      const url = new URL(postgres.url);
      url.searchParams.set('schema', postgres.newSchema());
      return url.href;
    },
    async tables(url: string): Promise<string[]> {
      const schema = new URL(url).searchParams.get('schema');
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ table_name: string }>(
          'SELECT table_name FROM information_schema.tables WHERE table_schema = $1',
          [schema],
        );
        return rows.map((r) => r.table_name);
      } finally {
        await client.end();
      }
    },
  },
] as const;

/** The plugin and the graph on `storeUrl`, each with its own connections; `close` ends both. */
async function server(storeUrl: string) {
  const shared = await checkpointerFor(storeUrl);
  const served = await serve(fromLangGraph(assistantGraph({ checkpointer: shared.checkpointer })), storeUrl);
  return {
    ...served,
    async close() {
      await served.app.close();
      await shared.close();
    },
  };
}

describe.each(stores)('fromLangGraph on $name with the official checkpointer', (store) => {
  it('streams the answer, and resumes an interrupt after a restart; both sets of tables in one database', async () => {
    const storeUrl = store.url();
    const first = await server(storeUrl);
    let asked: Awaited<ReturnType<typeof send>>;
    try {
      const events = await stream(first.url, message('hello'));
      const chunks = artifactChunks(events);
      expect(chunks.length).toBeGreaterThan(0);
      expect(chunks.map((c) => textOf(c.artifact.parts)).join('')).toBe(DEFAULT_ANSWER);
      expect(statusUpdates(events).at(-1)?.status.state).toBe('completed');

      asked = await send(first.url, message('approve: the migration'));
      expect(asked.status.state).toBe('input-required');
    } finally {
      await first.close();
    }

    const second = await server(storeUrl);
    try {
      const done = await send(second.url, message('approved', { taskId: asked.id, contextId: asked.contextId }));
      expect(done.status.state).toBe('completed');
      expect(artifactText(done.artifacts?.at(-1))).toBe('Approved the migration on this worker: "approved"');
    } finally {
      await second.close();
    }

    const tables = await store.tables(storeUrl);
    // LangGraph's tables beside the store's, in the same file or schema.
    expect(tables).toEqual(expect.arrayContaining(['checkpoints']));
    expect(tables.some((t) => t === 'tasks' || t === 'a2a_tasks')).toBe(true);
  });
});
