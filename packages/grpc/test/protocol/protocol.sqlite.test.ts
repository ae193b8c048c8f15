import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import { afterAll } from 'vitest';
import { protocolSuite } from '../../../fastify/test/protocol/suite.js';
import { grpcListenerBinding } from './grpc-client.js';

const dir = mkdtempSync(join(tmpdir(), 'a2a-grpc-protocol-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

protocolSuite({
  binding: grpcListenerBinding(),
  store: { name: 'SQLite', create: () => new SqliteStore({ filename: join(dir, 'a2a.db') }) },
  version: '1.0',
});
