import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { clientMultiWorker } from './multi-worker.js';

const dir = mkdtempSync(join(tmpdir(), 'a2a-client-workers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

clientMultiWorker({ name: 'SQLite', storeUrl: () => `sqlite:${join(dir, 'a2a.db')}` });
