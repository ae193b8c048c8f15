/**
 * Postgres helpers for test files. The server itself is found or started by `./global-setup.ts`,
 * which hands its URL over with Vitest's `provide('a2aPostgresUrl', url)`; read it here with
 * {@link postgresUrl} (or `inject('a2aPostgresUrl')`).
 *
 * Every test file works in schemas of its own, named `<prefix>_<random>`, and drops them when it
 * is done, so files running in parallel (and runs on a shared server) never see each other's rows:
 *
 * ```ts
 * const pg = withPostgres('conformance');          // registers afterAll(() => drop every schema)
 * const store = new PostgresStore({ connectionString: pg.url, schema: pg.schema });
 * const other = pg.newSchema();                     // one more fresh schema, dropped with the file's
 * ```
 *
 * Import this only from test files: it uses Vitest's `inject` and `afterAll`.
 */

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the PostgreSQL server of this run (see test-support/global-setup.ts). */
    a2aPostgresUrl: string;
  }
}

/** The URL of this run's PostgreSQL server. Throws when the global setup did not provide one. */
export function postgresUrl(): string {
  const url = inject('a2aPostgresUrl');
  if (!url) {
    throw new Error(
      'No PostgreSQL server was prepared for this test run. test-support/global-setup.ts only starts one for the ' +
        'projects listed in its POSTGRES_PROJECTS: add this project there (or set A2A_TEST_POSTGRES_URL to a running server).',
    );
  }
  return url;
}

/** A fresh schema name: `<prefix>_<16 hex digits>`, lower case, at most 63 bytes (Postgres' limit). */
export function freshSchemaName(prefix = 'a2a_test'): string {
  const clean = prefix
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 40);
  return `${clean}_${randomBytes(8).toString('hex')}`;
}

async function dropSchemas(url: string, schemas: readonly string[]): Promise<void> {
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const schema of schemas)
      await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(schema)} CASCADE`);
  } finally {
    await client.end();
  }
}

export interface TestSchema {
  /** The server's URL. */
  readonly url: string;
  /** A schema name nobody else uses. It is not created here: the store's migrations create it. */
  readonly schema: string;
  /** Drops the schema and everything in it (if it exists). */
  drop(): Promise<void>;
}

/** Reserves a fresh schema on this run's server. Call `drop()` when done (or use {@link withPostgres}). */
export function createTestSchema(prefix?: string): TestSchema {
  const url = postgresUrl();
  const schema = freshSchemaName(prefix);
  return { url, schema, drop: () => dropSchemas(url, [schema]) };
}

export interface PostgresTestContext {
  /** The server's URL. */
  readonly url: string;
  /** This file's schema (not created: a store's migrations create it). */
  readonly schema: string;
  /** One more fresh schema name, dropped with the file's (e.g. one per test). */
  newSchema(prefix?: string): string;
  /** Drops `schema` too after the file (a name made elsewhere, e.g. a conformance `location`). Returns it. */
  track(schema: string): string;
  /** Runs a query on a pool of this file's (closed after the file), e.g. `pg_terminate_backend`. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/**
 * Gives the calling test file a fresh schema (plus more on demand) and drops them all in `afterAll`.
 * Call it at the top level of a test file (or in a `describe`).
 */
export function withPostgres(prefix = 'a2a_test'): PostgresTestContext {
  const url = postgresUrl();
  const schemas: string[] = [];
  let pool: pg.Pool | undefined;
  const newSchema = (p = prefix): string => {
    const schema = freshSchemaName(p);
    schemas.push(schema);
    return schema;
  };
  const schema = newSchema();
  afterAll(async () => {
    await pool?.end();
    await dropSchemas(url, schemas);
  });
  return {
    url,
    schema,
    newSchema,
    track(name) {
      if (!schemas.includes(name)) schemas.push(name);
      return name;
    },
    query<R extends pg.QueryResultRow>(text: string, values?: unknown[]) {
      pool ??= new pg.Pool({ connectionString: url, max: 2 });
      return pool.query<R>(text, values);
    },
  };
}
