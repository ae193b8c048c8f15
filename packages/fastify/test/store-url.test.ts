import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { A2AError, type A2AStore } from '@fastify-a2a/core';
import { createTask, taskFixture } from '@fastify-a2a/core/testing';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { PostgresStore } from '@fastify-a2a/store-postgres';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { createStoreFromUrl, redact } from '../src/index.js';

const db = withPostgres('storeurl');
const dir = mkdtempSync(join(tmpdir(), 'a2a-store-url-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const opened: A2AStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0).reverse()) await store.close();
});

async function refusal(url: string): Promise<A2AError> {
  const error = await createStoreFromUrl(url).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!A2AError.is(error)) throw new Error(`expected an A2AError for ${url}, got ${String(error)}`);
  return error;
}

describe('createStoreFromUrl (lives in the plugin, which declares the store packages)', () => {
  it('memory: and sqlite:<path> create the stores of those packages', async () => {
    const memory = await createStoreFromUrl('memory:');
    expect(memory).toBeInstanceOf(MemoryStore);
    const sqlite = await createStoreFromUrl(`sqlite:${join(dir, 'a.db')}`, { namespace: 'billing' });
    opened.push(sqlite);
    expect(sqlite).toBeInstanceOf(SqliteStore);
    expect(sqlite.namespace).toBe('billing');
  });

  it('?preparedStatements=false reaches the Postgres store; any other value than true or false is refused', async () => {
    const base = `${db.url}${db.url.includes('?') ? '&' : '?'}schema=${db.schema}`;
    const plain = (await createStoreFromUrl(`${base}&preparedStatements=false`)) as PostgresStore;
    opened.push(plain);
    expect(plain).toBeInstanceOf(PostgresStore);
    expect(plain.preparedStatements).toBe(false);
    expect(((await createStoreFromUrl(base)) as PostgresStore).preparedStatements).toBe(true);
    await plain.open();
    const task = taskFixture();
    await createTask(plain, task);
    expect((await plain.getTask(task.id))?.version).toBe(1);
    const error = await refusal(`${base}&preparedStatements=maybe`);
    expect(error.code).toBe('INVALID_OPTIONS');
    expect(error.message).toMatch(/preparedStatements=maybe/);
  });

  it.each([
    ['', /empty/],
    ['redis://x', /Unsupported store URL "redis:\/\/x"/],
    ['sqlite:', /names no file/],
    ['postgres://user:secret@[bad', /not a valid URL/],
  ])('refuses %j naming the problem', async (url, pattern) => {
    const error = await refusal(url);
    expect(error.code).toBe('INVALID_OPTIONS');
    expect(error.message).toMatch(pattern);
    expect(error.message).not.toContain('secret');
  });

  it('redact hides a password', () => {
    expect(redact('postgres://alice:s3cret@db:5432/a2a')).toBe('postgres://alice:***@db:5432/a2a');
  });
});
