import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import { afterAll } from 'vitest';
import { protocolSuite, type StoreFixture } from './suite.js';

// One database file for this test file; each scenario opens its own connection to it (and closes
// it), as a worker would. Scenarios use fresh task, message and context ids, so they never meet.
const dir = mkdtempSync(join(tmpdir(), 'a2a-protocol-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const store: StoreFixture = { name: 'SQLite', create: () => new SqliteStore({ filename: join(dir, 'a2a.db') }) };

for (const version of ['0.3', '1.0'] as const) {
  protocolSuite({ binding: 'JSONRPC', store, version });
  protocolSuite({ binding: 'HTTP+JSON', store, version });
}
