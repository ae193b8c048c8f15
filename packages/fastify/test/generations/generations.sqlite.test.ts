import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import { afterAll } from 'vitest';
import { generationSuite } from './suite.js';

const dir = mkdtempSync(join(tmpdir(), 'a2a-generations-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

generationSuite({ name: 'SQLite', create: () => new SqliteStore({ filename: join(dir, 'a2a.db') }) });
