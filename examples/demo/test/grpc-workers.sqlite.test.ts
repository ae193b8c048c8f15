import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { multiWorkerGrpcSuite } from './grpc-workers.js';

const dir = mkdtempSync(join(tmpdir(), 'a2a-grpc-workers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

// A database file per scenario, shared by its two workers.
multiWorkerGrpcSuite('SQLite', () => `sqlite:${join(dir, `a2a-${++files}.db`)}`);
