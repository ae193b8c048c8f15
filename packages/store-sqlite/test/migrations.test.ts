import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS_TABLE, migrate, migrations, SqliteStore } from '../src/index.js';
import { runChild, tempDir } from './helpers.js';

let dir: string;
let remove: () => void;
beforeEach(() => {
  ({ dir, remove } = tempDir());
});
afterEach(() => remove());

const appliedVersions = (filename: string): { version: number; count: number }[] => {
  const db = new Database(filename, { readonly: true });
  try {
    return db
      .prepare<[], { version: number; count: number }>(
        `SELECT version, count(*) AS count FROM ${MIGRATIONS_TABLE} GROUP BY version ORDER BY version`,
      )
      .all();
  } finally {
    db.close();
  }
};

const latest = Math.max(...migrations.map((step) => step.version));
const everyVersionOnce = migrations.map((step) => ({ version: step.version, count: 1 }));

describe('migrations', () => {
  it('are numbered from 1, ascending, each number once', () => {
    const versions = migrations.map((step) => step.version);
    expect(versions[0]).toBe(1);
    expect(versions).toEqual([...new Set(versions)].sort((x, y) => x - y));
  });

  it('apply a step numbered below the latest applied one when it lands later (branches merge in any order)', () => {
    const db = new Database(':memory:');
    try {
      migrate(db);
      const used = new Set(migrations.map((step) => step.version));
      const gap = Array.from({ length: latest }, (_, index) => index + 1).find((version) => !used.has(version));
      const later = {
        version: gap ?? latest + 1,
        name: 'a step landing later',
        sql: 'CREATE TABLE landed_later (x INTEGER)',
      };
      expect(migrate(db, Date.now, [...migrations, later])).toMatchObject({ applied: [later.version] });
      expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'landed_later'").pluck().get()).toBe(1);
    } finally {
      db.close();
    }
  });

  it('running twice does no harm', () => {
    const db = new Database(':memory:');
    try {
      expect(migrate(db)).toEqual({ applied: migrations.map((step) => step.version), version: latest });
      expect(migrate(db)).toEqual({ applied: [], version: latest });
      const rows = db.prepare(`SELECT version, name, applied_at FROM ${MIGRATIONS_TABLE}`).all();
      expect(rows).toHaveLength(migrations.length);
    } finally {
      db.close();
    }
  });

  it('records applied_at with the given clock', () => {
    const db = new Database(':memory:');
    try {
      migrate(db, () => 42);
      expect(db.prepare(`SELECT applied_at FROM ${MIGRATIONS_TABLE}`).pluck().all()).toEqual(migrations.map(() => 42));
    } finally {
      db.close();
    }
  });

  it('applies only the new steps to an older schema', () => {
    const db = new Database(':memory:');
    try {
      migrate(db);
      const next = { version: latest + 1, name: 'test step', sql: 'CREATE TABLE a2a_test_extra (x INTEGER)' };
      expect(migrate(db, Date.now, [...migrations, next])).toEqual({ applied: [latest + 1], version: latest + 1 });
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'a2a_test_extra'").pluck().get()).toBe(
        'a2a_test_extra',
      );
    } finally {
      db.close();
    }
  });

  it('rolls a failing step back entirely', () => {
    const db = new Database(':memory:');
    try {
      const broken = { version: 1, name: 'broken', sql: 'CREATE TABLE ok_table (x INTEGER); THIS IS NOT SQL' };
      expect(() => migrate(db, Date.now, [broken])).toThrow();
      expect(
        db.prepare("SELECT count(*) FROM sqlite_master WHERE name IN ('ok_table', ?)").pluck().get(MIGRATIONS_TABLE),
      ).toBe(0);
    } finally {
      db.close();
    }
  });

  it('opening a store twice (two instances, one file) applies each step once', async () => {
    const filename = join(dir, 'a2a.db');
    for (let i = 0; i < 2; i++) {
      const store = new SqliteStore({ filename });
      await store.open();
      await store.open();
      await store.close();
    }
    expect(appliedVersions(filename)).toEqual(everyVersionOnce);
  });

  it('refuses a file migrated by a newer release, saying what to do', async () => {
    const filename = join(dir, 'a2a.db');
    const first = new SqliteStore({ filename });
    await first.open();
    await first.close();
    const db = new Database(filename);
    db.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (version, name, applied_at) VALUES (?, 'future', 0)`).run(latest + 1);
    db.close();
    const store = new SqliteStore({ filename });
    await expect(store.open()).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringMatching(/upgrade @fastify-a2a\/store-sqlite/),
    });
  });

  it('two processes opening the same new file at once both succeed; each step is recorded once', async () => {
    const filename = join(dir, 'nested', 'a2a.db');
    // Children start at the same instant, after their (slower) module loading is done.
    const env = { START_AT: String(Date.now() + 2000) };
    const results = await Promise.all([1, 2, 3, 4].map(() => runChild(['open', filename], env)));
    for (const result of results) {
      expect(result.stderr).toBe('');
      expect(result.output).toEqual({ ok: true });
      expect(result.exitCode).toBe(0);
    }
    expect(appliedVersions(filename)).toEqual(everyVersionOnce);
  });
});
