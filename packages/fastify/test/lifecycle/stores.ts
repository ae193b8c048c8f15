/**
 * The three stores as the lifecycle tests (issue 23 items 9, 11, 12, 13) use them: by URL, so the
 * plugin opens (and closes) the store itself as a deployment does, and a fresh one per call, so a
 * test can close a server and open the same data again to see what was really written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { withPostgres } from '../../../../test-support/postgres.js';

export interface StoreUrls {
  readonly name: 'memory' | 'sqlite' | 'postgres';
  /** Whether a second server on the same URL sees the first one's data. */
  readonly persistent: boolean;
  /** A URL naming fresh, empty data. */
  fresh(): string;
}

/** memory, SQLite (a file per call in a temporary directory) and Postgres (a schema per call). */
export function lifecycleStores(prefix: string): StoreUrls[] {
  const pg = withPostgres(prefix);
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return [
    { name: 'memory', persistent: false, fresh: () => 'memory:' },
    { name: 'sqlite', persistent: true, fresh: () => `sqlite:${join(dir, `${crypto.randomUUID()}.db`)}` },
    {
      name: 'postgres',
      persistent: true,
      fresh: () => {
        const url = new URL(pg.url);
        url.searchParams.set('schema', pg.newSchema());
        return url.href;
      },
    },
  ];
}
