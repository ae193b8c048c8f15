import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import { afterAll } from 'vitest';
import { sdk0_3GrpcSuite } from './sdk-0.3-client.js';

const dir = mkdtempSync(join(tmpdir(), 'a2a-grpc-sdk03-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

sdk0_3GrpcSuite({ name: 'SQLite', create: () => new SqliteStore({ filename: join(dir, 'a2a.db') }) });
