import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { generationClusterScenarios } from './generations/multi-worker.js';

const dir = mkdtempSync(join(tmpdir(), 'a2a-generations-workers-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

generationClusterScenarios({ name: 'SQLite', storeUrl: () => `sqlite:${join(dir, 'a2a.db')}` });
