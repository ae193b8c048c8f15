/**
 * The shared store conformance suite from @fastify-a2a/core/testing, run twice: on files (one file
 * per suite `location`, so reopen and namespace tests share a file) and in memory (one in-memory
 * connection per location, handed to the store as `database`).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { concurrency, storeConformance } from '@fastify-a2a/core/testing';
import Database from 'better-sqlite3';
import { afterAll, describe, it } from 'vitest';
import { SqliteStore } from '../src/index.js';

const root = mkdtempSync(join(tmpdir(), 'a2a-sqlite-conformance-'));
const memoryDatabases = new Map<string, Database.Database>();

afterAll(() => {
  for (const db of memoryDatabases.values()) db.close();
  rmSync(root, { recursive: true, force: true });
});

describe('SqliteStore on a file', () => {
  storeConformance({
    test: it,
    describe,
    factory: ({ clock, location, namespace }) =>
      new SqliteStore({ filename: join(root, `${location}.db`), clock, namespace, pollIntervalMs: 10 }),
  });
});

describe('SqliteStore in memory', () => {
  storeConformance({
    test: it,
    describe,
    locationPrefix: 'a2a_memory',
    factory: ({ clock, location, namespace }) => {
      let database = memoryDatabases.get(location);
      if (database === undefined) {
        database = new Database(':memory:');
        memoryDatabases.set(location, database);
      }
      return new SqliteStore({ database, clock, namespace });
    },
  });
});

// The commit tests again with a transaction per commit (group commit off).
describe('SqliteStore on a file, groupCommit: false', () => {
  concurrency({
    test: it,
    describe,
    locationPrefix: 'a2a_nogc',
    factory: ({ clock, location, namespace }) =>
      new SqliteStore({ filename: join(root, `${location}.db`), clock, namespace, groupCommit: false }),
  });
});
