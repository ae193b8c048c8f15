import { A2AError } from '@fastify-a2a/core';
import { createTask, taskFixture } from '@fastify-a2a/core/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { appliedVersions, LATEST_VERSION, migrate, migrationSql, migrations, PostgresStore } from '../src/index.js';

const db = withPostgres('pgstore_migrations');
const pool = new pg.Pool({ connectionString: db.url, max: 25 });
afterAll(() => pool.end());

const recorded = async (schema: string) =>
  (
    await db.query<{ version: number; count: number }>(
      `SELECT version, count(*)::int AS count FROM ${pg.escapeIdentifier(schema)}.migrations GROUP BY version ORDER BY version`,
    )
  ).rows;

/** A schema name that needs quoting (capitals, a quote, a semicolon), dropped after the file. */
const oddSchema = (): string => db.track(`${db.newSchema('pgstore_odd')}_Odd"Name; DROP`);

const allVersions = migrations.map((m) => ({ version: m.version, count: 1 }));

describe('migrations', () => {
  it('migrating twice does no harm: the second run applies nothing and keeps the data', async () => {
    const schema = db.newSchema();
    expect(await migrate(pool, schema)).toEqual({ applied: migrations.map((m) => m.version) });

    const store = new PostgresStore({ pool, schema });
    await store.open();
    await createTask(store, taskFixture({ id: 'kept' }));
    await store.close();

    expect(await migrate(pool, schema)).toEqual({ applied: [] });
    const again = new PostgresStore({ pool, schema }); // open() migrates once more
    await again.open();
    expect((await again.getTask('kept'))?.version).toBe(1);
    await again.close();
    expect(await recorded(schema)).toEqual(allVersions);
  });

  it('20 concurrent migrators on a fresh schema all succeed and record each version once', async () => {
    const schema = db.newSchema();
    // Separate pools, as 20 workers starting at once would have.
    const pools = Array.from({ length: 20 }, () => new pg.Pool({ connectionString: db.url, max: 2 }));
    try {
      const results = await Promise.allSettled(pools.map((p) => migrate(p, schema)));
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      const applied = results.flatMap((r) => (r.status === 'fulfilled' ? r.value.applied : []));
      expect(applied.sort()).toEqual(migrations.map((m) => m.version)); // each step applied by exactly one
      expect(await recorded(schema)).toEqual(allVersions);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it('20 stores opening concurrently on a fresh schema all open', async () => {
    const schema = db.newSchema();
    const stores = Array.from({ length: 20 }, () => new PostgresStore({ connectionString: db.url, schema }));
    try {
      await Promise.all(stores.map((s) => s.open()));
      expect(await recorded(schema)).toEqual(allVersions);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('migrate: false on an unmigrated schema fails at open() and names the SQL to apply', async () => {
    const schema = db.newSchema();
    const store = new PostgresStore({ pool, schema, migrate: false });
    const error = await store.open().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(A2AError.is(error) && error.code).toBe('STORE_UNAVAILABLE');
    expect((error as Error).message).toContain(`migrationSql("${schema}")`);
    expect((error as Error).message).toContain('migrate: false');
    expect((error as Error).message).toContain('missing migration(s) 1');
    // Nothing was created behind the DBA's back.
    expect(await appliedVersions(pool, schema)).toEqual([]);
    const { rowCount } = await db.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    expect(rowCount).toBe(0);
    await store.close();
  });

  it('migrationSql() applied by a DBA gives a schema that migrate: false accepts', async () => {
    const schema = oddSchema();
    const sql = migrationSql(schema);
    expect(sql).toContain(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(schema)}`);
    await db.query(sql); // one multi-statement script, as psql -f would run it

    expect(await appliedVersions(pool, schema)).toEqual(migrations.map((m) => m.version));
    const store = new PostgresStore({ pool, schema, migrate: false });
    await store.open();
    await createTask(store, taskFixture({ id: 'dba' }));
    expect((await store.getTask('dba'))?.version).toBe(1);
    await store.close();
    // The runtime migrator agrees that nothing is pending.
    expect(await migrate(pool, schema)).toEqual({ applied: [] });
  });

  it('migrationSql({ after }) leaves out the steps already applied', () => {
    expect(migrationSql('a2a', { after: LATEST_VERSION })).not.toContain('CREATE TABLE "a2a".tasks');
    expect(migrationSql('a2a')).toContain('CREATE TABLE "a2a".tasks');
  });

  it('a schema name with quotes and capitals stays one identifier', async () => {
    const schema = oddSchema();
    const store = new PostgresStore({ pool, schema });
    await store.open();
    await createTask(store, taskFixture({ id: 'odd' }));
    expect((await store.getTask('odd'))?.version).toBe(1);
    await store.close();
    expect(await recorded(schema)).toEqual(allVersions);
  });
});
