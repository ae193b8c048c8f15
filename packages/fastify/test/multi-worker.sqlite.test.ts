import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import { afterAll } from 'vitest';
import { multiWorkerScenarios } from './multi-worker/scenarios.js';

const dir = mkdtempSync(join(tmpdir(), 'a2a-multiworker-sqlite-'));
const filename = join(dir, 'a2a.db');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

multiWorkerScenarios({
  name: 'SQLite',
  workers: 2,
  storeUrl: () => `sqlite:${filename}`,
  openStore: async () => new SqliteStore({ filename }),
});
