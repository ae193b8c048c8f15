/**
 * Storage chosen by configuration: `memory:`, `sqlite:<path>` or `postgres://…`. The adapter
 * packages are loaded by name only when their URL is used, so an application installs just the
 * adapter it uses. They are optional peer dependencies of this package, which is what lets it
 * import them under isolated layouts (pnpm, Yarn PnP).
 */

import { A2AError, type A2AStore, type Clock } from '@fastify-a2a/core';

export interface StoreUrlOptions {
  /** Isolates this agent's rows when several agents share one database. */
  namespace?: string;
  clock?: Clock;
}

type StoreModule = Record<string, new (options: Record<string, unknown>) => A2AStore>;

/**
 * Each adapter behind an `import()` of its literal name: Node still loads it only when its URL is
 * used, and a bundler (esbuild, webpack) sees the name and includes the adapter, so a bundled
 * application (the demo's `npm start`) resolves store URLs without the packages' built `dist/`.
 */
const ADAPTERS = {
  '@fastify-a2a/store-memory': () => import('@fastify-a2a/store-memory'),
  '@fastify-a2a/store-sqlite': () => import('@fastify-a2a/store-sqlite'),
  '@fastify-a2a/store-postgres': () => import('@fastify-a2a/store-postgres'),
} as const;

async function load(
  packageName: keyof typeof ADAPTERS,
  exportName: string,
): Promise<new (options: Record<string, unknown>) => A2AStore> {
  let module: StoreModule;
  try {
    module = (await ADAPTERS[packageName]()) as unknown as StoreModule;
  } catch (error) {
    throw new A2AError(
      'INVALID_OPTIONS',
      `The store URL needs the package ${packageName}; install it with \`npm install ${packageName}\`.`,
      {
        cause: error,
      },
    );
  }
  const StoreClass = module[exportName];
  if (typeof StoreClass !== 'function') {
    throw new A2AError(
      'INVALID_OPTIONS',
      `${packageName} does not export ${exportName}; check that its version matches @fastify-a2a/core.`,
    );
  }
  return StoreClass;
}

const SUPPORTED =
  'use memory:, sqlite:<path> (e.g. sqlite:./.data/a2a.db) or postgres://user:password@host:5432/database';

/**
 * Creates (does not open) the store a URL names.
 * - `memory:` — in-process, lost on restart.
 * - `sqlite:<path>` or `sqlite::memory:` — a better-sqlite3 file; relative paths from the working directory.
 * - `postgres://…` or `postgresql://…` — a pg connection string; `?schema=<name>` picks the schema,
 *   `?preparedStatements=false` sends plain statements (PgBouncer before 1.21 in transaction mode).
 * @throws {A2AError} INVALID_OPTIONS naming what is wrong with the URL.
 */
export async function createStoreFromUrl(url: string, options: StoreUrlOptions = {}): Promise<A2AStore> {
  if (typeof url !== 'string' || url.trim() === '') {
    throw new A2AError('INVALID_OPTIONS', `The store URL is empty; ${SUPPORTED}.`);
  }
  const common: Record<string, unknown> = {};
  if (options.clock) common.clock = options.clock;
  if (options.namespace) common.namespace = options.namespace;
  if (url === 'memory:' || url === 'memory://') {
    const MemoryStore = await load('@fastify-a2a/store-memory', 'MemoryStore');
    return new MemoryStore({ ...(options.clock ? { clock: options.clock } : {}) });
  }
  if (url.startsWith('sqlite:')) {
    const filename = url.slice('sqlite:'.length).replace(/^\/\//, '');
    if (filename === '')
      throw new A2AError(
        'INVALID_OPTIONS',
        `The store URL "${url}" names no file; write sqlite:<path>, e.g. sqlite:./.data/a2a.db.`,
      );
    const SqliteStore = await load('@fastify-a2a/store-sqlite', 'SqliteStore');
    return new SqliteStore({ ...common, filename });
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new A2AError('INVALID_OPTIONS', `The store URL "${redact(url)}" is not a valid URL; ${SUPPORTED}.`);
    }
    const schema = parsed.searchParams.get('schema');
    parsed.searchParams.delete('schema');
    const prepared = parsed.searchParams.get('preparedStatements');
    parsed.searchParams.delete('preparedStatements');
    if (prepared !== null && prepared !== 'true' && prepared !== 'false') {
      throw new A2AError(
        'INVALID_OPTIONS',
        `The store URL "${redact(url)}" has preparedStatements=${prepared}; write preparedStatements=true or preparedStatements=false.`,
      );
    }
    const PostgresStore = await load('@fastify-a2a/store-postgres', 'PostgresStore');
    return new PostgresStore({
      ...common,
      connectionString: parsed.toString(),
      ...(schema ? { schema } : {}),
      ...(prepared !== null ? { preparedStatements: prepared === 'true' } : {}),
    });
  }
  throw new A2AError('INVALID_OPTIONS', `Unsupported store URL "${redact(url)}"; ${SUPPORTED}.`);
}

/** Hides a password in a URL before it goes into a message or a log. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
}
