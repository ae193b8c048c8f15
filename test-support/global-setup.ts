/**
 * Vitest global setup: finds the PostgreSQL server the Postgres tests use, or starts a throwaway one.
 *
 * 1. Probe `A2A_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`) with one
 *    connection and a 2 s timeout. Every run does this; it is cheap.
 * 2. If nothing answers there, and the run includes a project that needs Postgres
 *    ({@link POSTGRES_PROJECTS}), start a throwaway cluster from the local binaries
 *    (`/usr/lib/postgresql/<version>/bin`): `initdb` into a temp dir, trust auth, 127.0.0.1 on a free
 *    port, run as the `postgres` OS user when we are root. It is stopped and removed at teardown.
 * 3. Where neither works, the run FAILS with a message saying what to do. A Postgres suite is never
 *    silently skipped.
 *
 * The resolved URL reaches test files through Vitest's provide/inject under the key
 * `a2aPostgresUrl` (typed in `./postgres.ts`); test files use the helpers there rather than
 * `inject` directly. We provide on the root project: Vitest merges the root's provided values into
 * every project's. Child processes a test spawns (multi-worker tests) get the URL from the test,
 * e.g. through their environment.
 *
 * Vitest calls this once for the root project and once more per project of the run (they inherit
 * `globalSetup` through `extends: true`); only the root call does any work.
 */

import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
// Type-only: brings in the `ProvidedContext` typing of `a2aPostgresUrl`. (A value import would load
// `vitest` itself, which must not happen in a global setup.)
import type {} from './postgres.js';

export const POSTGRES_URL_ENV = 'A2A_TEST_POSTGRES_URL';
export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** Projects whose tests need a Postgres server; others never cause a throwaway cluster to start. */
const POSTGRES_PROJECTS = new Set(['store-postgres', 'fastify', 'grpc', 'client', 'ai-sdk', 'langgraph', 'demo']);

const PROBE_TIMEOUT_MS = 2_000;

/** Errors that mean "nothing answers at that address", as opposed to "something answered and said no". */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

type Probe = { ok: true } | { ok: false; unreachable: boolean; missingDatabase: boolean; message: string };

function describe(error: unknown): { code: string | undefined; message: string } {
  const err = error as { code?: unknown; message?: unknown; errors?: unknown };
  // `localhost` resolves to ::1 and 127.0.0.1; a refused connection to both is an AggregateError
  // whose own message is empty.
  if (Array.isArray(err.errors) && err.errors.length > 0) {
    const inner = err.errors.map((e) => describe(e));
    return { code: inner[0]?.code, message: inner.map((i) => i.message).join('; ') };
  }
  const message = typeof err.message === 'string' && err.message !== '' ? err.message : String(error);
  return { code: typeof err.code === 'string' ? err.code : undefined, message };
}

async function probe(url: string): Promise<Probe> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
  client.on('error', () => {}); // a late socket error after a failed connect must not crash the run
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { ok: true };
  } catch (error) {
    const { code, message } = describe(error);
    const timedOut = /timeout/i.test(message);
    return {
      ok: false,
      unreachable: timedOut || (code !== undefined && UNREACHABLE.has(code)),
      missingDatabase: code === '3D000', // invalid_catalog_name: the server is there, the database is not
      message,
    };
  } finally {
    await client.end().catch(() => {});
  }
}

/** Creates the database named in `url` through the server's `postgres` database. */
async function createDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const database = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.href, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } catch (error) {
    // duplicate_database: a concurrent run created it first.
    if ((error as { code?: string }).code !== '42P04') throw error;
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Throwaway cluster

export interface Cluster {
  url: string;
  /** Stops the server and removes its data directory. */
  stop(): Promise<void>;
  /**
   * Stops the server at once (`pg_ctl stop -m immediate`: connections cut, no shutdown checkpoint),
   * keeping its data: a store outage, for tests that must survive one. {@link resume} starts it again.
   */
  halt(): Promise<void>;
  /** Starts the server again after {@link halt}, on the same port and data (crash recovery runs). */
  resume(): Promise<void>;
}

/** The newest `/usr/lib/postgresql/<version>/bin` that has initdb and pg_ctl. */
async function findBinaries(): Promise<string | undefined> {
  const base = '/usr/lib/postgresql';
  const versions = await readdir(base).catch(() => [] as string[]);
  versions.sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
  for (const version of versions) {
    const bin = join(base, version, 'bin');
    const found = await Promise.all(
      ['initdb', 'pg_ctl'].map((tool) =>
        stat(join(bin, tool)).then(
          () => true,
          () => false,
        ),
      ),
    );
    if (found.every(Boolean)) return bin;
  }
  return undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** `argv` as `user` (through runuser) when given. */
const asUser = (argv: string[], user: string | undefined): [string, ...string[]] =>
  user === undefined ? (argv as [string, ...string[]]) : ['runuser', '-u', user, '--', ...argv];

/** Runs `argv` (as `user` when given) and rejects with its output when it fails. */
function run(argv: string[], user: string | undefined): Promise<void> {
  const [command, ...args] = asUser(argv, user);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${argv.join(' ')} exited with ${code}:\n${output.trim()}`)),
    );
  });
}

/**
 * Starts a throwaway cluster from the local binaries (initdb into a temp dir, trust auth, 127.0.0.1
 * on a free port). The global setup starts one when no server answers; a test that must stop and
 * restart its server (an outage test) starts its own, since the shared one serves other files.
 */
export async function startCluster(options: { durable?: boolean } = {}): Promise<Cluster> {
  const bin = await findBinaries();
  if (bin === undefined)
    throw new Error('no PostgreSQL server binaries (initdb, pg_ctl) under /usr/lib/postgresql/*/bin');
  // initdb refuses to run as root: run the cluster as the `postgres` OS user then.
  const user = userInfo().uid === 0 ? 'postgres' : undefined;
  if (user !== undefined && spawnSync('id', ['-u', user]).status !== 0) {
    throw new Error('running as root, but there is no "postgres" OS user to run initdb and postgres as');
  }
  const dir = await mkdtemp(join(tmpdir(), 'a2a-pg-'));
  await chmod(dir, 0o777); // the postgres user writes the data dir, socket and log here
  const data = join(dir, 'data');
  const pgCtl = join(bin, 'pg_ctl');
  let started = false;
  const stopSync = (): void => {
    if (!started) return;
    const [command, ...args] = asUser([pgCtl, '-D', data, '-m', 'immediate', 'stop'], user);
    spawnSync(command, args, { stdio: 'ignore' });
  };
  // If the run dies without teardown (e.g. an uncaught error in Vitest), don't leave a server behind.
  process.once('exit', stopSync);
  try {
    const port = await freePort();
    await run(
      [join(bin, 'initdb'), '-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync'],
      user,
    );
    // fsync off and friends: the data is thrown away anyway; these make the cluster start and run fast.
    // Not for `durable`: with them a crash (halt) loses commits the server had acknowledged, and a
    // test of surviving one would see the store go back in time.
    const fast = options.durable ? [] : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off'];
    const serverOptions = [
      `-p ${port}`,
      '-c listen_addresses=127.0.0.1',
      `-c unix_socket_directories=${dir}`,
      ...fast,
      '-c max_connections=200',
    ].join(' ');
    started = true;
    const log = join(dir, 'postgres.log');
    const startServer = () =>
      run([pgCtl, '-D', data, '-l', log, '-o', serverOptions, '-w', '-t', '30', 'start'], user).catch(
        async (error: Error) => {
          // pg_ctl only says "examine the log output"; the log is about to be deleted, so quote it.
          const tail = await readFile(log, 'utf8').catch(() => '');
          throw new Error(`${error.message}\n${tail.trim().split('\n').slice(-10).join('\n')}`);
        },
      );
    await startServer();
    const url = `postgres://postgres@127.0.0.1:${port}/test`;
    await createDatabase(url);
    return {
      url,
      async stop() {
        process.off('exit', stopSync);
        await run([pgCtl, '-D', data, '-m', 'immediate', '-w', 'stop'], user).catch(() => {});
        started = false;
        await rm(dir, { recursive: true, force: true });
      },
      halt: () => run([pgCtl, '-D', data, '-m', 'immediate', '-w', 'stop'], user),
      resume: startServer,
    };
  } catch (error) {
    stopSync();
    started = false;
    process.off('exit', stopSync);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------

function howToFix(url: string, reason: string): string {
  return [
    `The Postgres tests need a PostgreSQL server, and none could be used: ${reason}`,
    'Do one of:',
    `  - start a server that accepts ${DEFAULT_POSTGRES_URL} (trust auth), e.g.`,
    '      docker run --rm -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust -e POSTGRES_DB=test postgres:16',
    `  - point ${POSTGRES_URL_ENV} at a server where the tests may create and drop schemas, e.g.`,
    `      ${POSTGRES_URL_ENV}=postgres://user:password@host:5432/dbname npx vitest run`,
    '  - install the PostgreSQL server binaries (e.g. apt-get install postgresql) so a throwaway cluster can be',
    '    started (initdb and pg_ctl under /usr/lib/postgresql/<version>/bin).',
    `(Tried ${url}.)`,
  ].join('\n');
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!project.isRootProject()) return undefined;
  const url = process.env[POSTGRES_URL_ENV] || DEFAULT_POSTGRES_URL;
  const needed = project.vitest.projects.some((p) => POSTGRES_PROJECTS.has(p.name));

  let result = await probe(url);
  if (!result.ok && result.missingDatabase && needed) {
    try {
      await createDatabase(url);
    } catch (error) {
      throw new Error(howToFix(url, `${result.message}, and creating it failed: ${describe(error).message}`));
    }
    result = await probe(url);
  }
  if (result.ok) {
    project.provide('a2aPostgresUrl', url);
    return undefined;
  }
  if (!needed) return undefined; // nothing in this run uses Postgres: don't start a server for it
  if (!result.unreachable) throw new Error(howToFix(url, `${url} answered but refused: ${result.message}`));

  const startedAt = performance.now();
  let cluster: Cluster;
  try {
    cluster = await startCluster();
  } catch (error) {
    throw new Error(
      howToFix(
        url,
        `nothing answers at ${url} (${result.message}), and starting a throwaway cluster failed: ${describe(error).message}`,
      ),
    );
  }
  const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
  console.info(`[postgres] nothing answers at ${url}; started a throwaway cluster at ${cluster.url} in ${seconds} s`);
  project.provide('a2aPostgresUrl', cluster.url);
  return () => cluster.stop();
}
