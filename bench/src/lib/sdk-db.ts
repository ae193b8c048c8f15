/**
 * The durable SDK peer's database, made the way the SDK documents it: the table and indexes come
 * from the SDK's own migration CLI (`a2a-db upgrade --store tasks`, shipped in @a2a-js/sdk 1.3.0),
 * run before the server starts. On Postgres the bench gives it a throwaway schema of its own
 * (created here, dropped by the caller with `dropSchema`); on SQLite a file in the run's temp dir.
 */

import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { POSTGRES_URL, withPostgres } from './env.js';

/** node_modules/@a2a-js/sdk-1/dist/cli/a2a_db.js (the package's `a2a-db` bin). */
function cliPath(): string {
  const entry = createRequire(import.meta.url).resolve('@a2a-js/sdk-1');
  return join(dirname(entry), 'cli', 'a2a_db.js');
}

/** Runs `a2a-db upgrade --store tasks --url <url>`: creates the DatabaseTaskStore's table. */
async function upgrade(url: string): Promise<void> {
  await promisify(execFile)(process.execPath, [cliPath(), 'upgrade', '--store', 'tasks', '--url', url], {
    timeout: 60_000,
  });
}

/**
 * A fresh schema on the bench's Postgres server holding the SDK's task table. The CLI has no schema
 * option, so it connects with `search_path` set to the schema (libpq `options`).
 */
export async function prepareSdkPostgres(schema: string, url = POSTGRES_URL): Promise<void> {
  await withPostgres(async (client) => {
    await client.query(`CREATE SCHEMA "${schema}"`);
  }, url);
  const withPath = new URL(url);
  withPath.searchParams.set('options', `-c search_path=${schema}`);
  await upgrade(withPath.toString());
}

/** The SDK's task table in a new SQLite file. */
export async function prepareSdkSqlite(file: string): Promise<void> {
  await upgrade(`sqlite:${file}`);
}
