/**
 * `npm run bench:list-tasks`: what listTasks costs on SQLite and Postgres with 10k, 100k and 1M
 * tasks, and whether a page stays O(page) however deep it is.
 *
 * Fill: rows are bulk-inserted directly through SQL into a schema at migration 2 (the release
 * before listTasks), SQLite from a prepared INSERT in transactions of 10,000 rows, Postgres from
 * INSERT … SELECT over generate_series on the server. The store's open() then applies migration 3
 * (status_ts, its backfill, three indexes), which is timed: it is what an upgrade of a database of
 * that size costs. Postgres is then VACUUM ANALYZEd (timed too), as its README advises after step 3.
 *
 * Data: task i has context `ctx-<i / 5>` (5 tasks per context), a state cycling through 8 values
 * (2 of them `working`: 25 %), and status timestamp 2026-01-01 + ⌊i / 2⌋ s (so ties come in
 * pairs); each task is about 500 bytes of JSON (a user message and an artifact).
 *
 * Measured through the store's own listTasks (one call = the page and its total) with limit 50,
 * each operation for BENCH_LIST_MS (default 1000) ms or BENCH_LIST_MAX_RUNS (default 200) runs,
 * after 3 warm-up calls. Then the parts of one call: SQLite's page and count statements run alone
 * (the store's prepared statements, captured as it prepares them), Postgres's from the timings of
 * EXPLAIN ANALYZE of the store's statement (captured from its pool). And the cost the three indexes
 * add to a commit (100k tasks only): status-update commits with and without them.
 *
 * BENCH_LIST_SIZES (default 10000,100000,1000000) and BENCH_LIST_BACKENDS (default sqlite,postgres)
 * choose what runs; BENCH_LIST_COMMIT_SIZE (default 100000) the size whose commits are measured. Writes bench/results/list-tasks-<date>.json and regenerates bench/LIST_TASKS.md.
 */

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { A2ARuntime, type Task, type TaskListCursor, type TaskListQuery, type TaskState } from '@fastify-a2a/core';
import { PostgresStore, migrate as pgMigrate, migrations as pgMigrations } from '@fastify-a2a/store-postgres';
import { SqliteStore, migrate as sqliteMigrate, migrations as sqliteMigrations } from '@fastify-a2a/store-sqlite';
import Database from 'better-sqlite3';
import pg from 'pg';
import {
  BENCH_DIR,
  dropSchema,
  envNumber,
  fmt,
  type MachineInfo,
  machineInfo,
  machineLine,
  POSTGRES_URL,
  postgresSettings,
  RESULTS_DIR,
  type RepoInfo,
  randomSuffix,
  repoInfo,
  settingsLine,
  today,
  writeFile,
} from './lib/env.js';

type Backend = 'sqlite' | 'postgres';

const SIZES = (process.env.BENCH_LIST_SIZES ?? '10000,100000,1000000')
  .split(',')
  .map((size) => Number(size.trim()))
  .filter((size) => Number.isSafeInteger(size) && size >= 100);
const BACKENDS = (process.env.BENCH_LIST_BACKENDS ?? 'sqlite,postgres')
  .split(',')
  .map((name) => name.trim())
  .filter((name): name is Backend => name === 'sqlite' || name === 'postgres');
const BUDGET_MS = envNumber('BENCH_LIST_MS', 1000);
const MAX_RUNS = envNumber('BENCH_LIST_MAX_RUNS', 200);
const PAGE = 50;
const COMMITS = 300;
/** The size at which commits are measured with and without the listTasks indexes. */
const COMMIT_SIZE = envNumber('BENCH_LIST_COMMIT_SIZE', 100_000);

// ---- data ----

const BASE = Date.parse('2026-01-01T00:00:00.000Z');
const STATES: readonly TaskState[] = [
  'completed',
  'completed',
  'working',
  'completed',
  'failed',
  'input-required',
  'working',
  'canceled',
];
const TEXT = 'hello benchmark world, please echo these words back';

const taskIdOf = (i: number): string => `task-${i.toString().padStart(7, '0')}`;
const contextOf = (i: number): string => `ctx-${Math.floor(i / 5)}`;
const statusTsOf = (i: number): number => BASE + Math.floor(i / 2) * 1000;
const keyOf = (i: number): TaskListCursor => ({ statusTimestamp: statusTsOf(i), taskId: taskIdOf(i) });

function taskOf(i: number): Task {
  const id = taskIdOf(i);
  const contextId = contextOf(i);
  return {
    kind: 'task',
    id,
    contextId,
    status: { state: STATES[i % STATES.length] as TaskState, timestamp: new Date(statusTsOf(i)).toISOString() },
    history: [
      {
        kind: 'message',
        messageId: `msg-${i}`,
        role: 'user',
        parts: [{ kind: 'text', text: TEXT }],
        taskId: id,
        contextId,
      },
    ],
    artifacts: [{ artifactId: `artifact-${i}`, parts: [{ kind: 'text', text: `echo: ${TEXT}` }] }],
  };
}

// ---- measurement ----

interface Timing {
  runs: number;
  medianMs: number;
  p95Ms: number;
  minMs: number;
}

async function time(fn: () => unknown): Promise<Timing> {
  for (let i = 0; i < 3; i++) await fn();
  const samples: number[] = [];
  const deadline = performance.now() + BUDGET_MS;
  while (samples.length < MAX_RUNS && (samples.length < 5 || performance.now() < deadline)) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  const at = (p: number) => samples[Math.min(samples.length - 1, Math.floor(p * samples.length))] as number;
  return { runs: samples.length, medianMs: at(0.5), p95Ms: at(0.95), minMs: samples[0] as number };
}

/** The listTasks calls measured at each size: name, what it shows, the query. */
function operations(size: number): { name: string; detail: string; query: TaskListQuery; rows: number }[] {
  const middle = Math.floor(size / 2);
  const newest10 = statusTsOf(Math.floor(size * 0.9));
  return [
    { name: 'first page', detail: 'no filter', query: { limit: PAGE }, rows: PAGE },
    {
      name: 'deep page (middle)',
      detail: `cursor at task ${fmt(middle)} of ${fmt(size)}`,
      query: { limit: PAGE, after: keyOf(middle) },
      rows: PAGE,
    },
    {
      name: 'last page',
      detail: 'cursor 10 tasks before the oldest',
      query: { limit: PAGE, after: keyOf(10) },
      rows: 10,
    },
    {
      name: 'context',
      detail: 'contextId of one context (5 tasks)',
      query: { limit: PAGE, contextId: contextOf(middle) },
      rows: 5,
    },
    { name: 'state', detail: 'state working (25 %), first page', query: { limit: PAGE, state: 'working' }, rows: PAGE },
    {
      name: 'state, deep',
      detail: 'state working, cursor at the middle',
      query: { limit: PAGE, state: 'working', after: keyOf(middle) },
      rows: PAGE,
    },
    {
      name: 'since',
      detail: 'statusTimestampAfter: the newest 10 %, first page',
      query: { limit: PAGE, statusTimestampAfter: newest10 },
      rows: PAGE,
    },
    {
      name: 'state + since',
      detail: 'state working and the newest 10 %',
      query: { limit: PAGE, state: 'working', statusTimestampAfter: newest10 },
      rows: PAGE,
    },
  ];
}

interface OperationResult {
  name: string;
  detail: string;
  total: number;
  listTasks: Timing;
  /** The page statement alone (SQLite: run directly; Postgres: its EXPLAIN ANALYZE time). */
  pageMs: number | undefined;
  /** The count alone, likewise. */
  countMs: number | undefined;
}

interface SizeResult {
  backend: Backend;
  size: number;
  fillMs: number;
  /** Migration 3: status_ts, its backfill and the three indexes. */
  migrateMs: number;
  /** Postgres: VACUUM ANALYZE after the migration. */
  vacuumMs?: number;
  /** Database size after the migration: SQLite file, Postgres tasks table with its indexes. */
  bytes: number;
  /** Of that, the three listTasks indexes. */
  indexBytes?: number;
  /** The runtime's ListTasks (token decode, page, trimming) for the first and second page. */
  runtime: { firstPage: Timing; secondPageByToken: Timing };
  operations: OperationResult[];
  /** Status-update commits (one event each) with and without the listTasks indexes. */
  commits?: { withIndexes: Timing; withoutIndexes: Timing };
  /** Query plans of the page (and count) statements. */
  plans: Record<string, string>;
}

// ---- SQLite ----

/** Captures the statements a store prepares, to run the store's own page and count statements alone. */
function capturingDatabase(filename: string): { db: Database.Database; statements: Database.Statement[] } {
  const db = new Database(filename);
  const statements: Database.Statement[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const statement = prepare(source);
    statements.push(statement);
    return statement;
  }) as typeof db.prepare;
  return { db, statements };
}

/** The named parameters the store binds for `query` (see listTasks in packages/store-sqlite/src/store.ts and statements.ts). */
function sqliteParams(query: TaskListQuery): Record<string, unknown> {
  const params: Record<string, unknown> = { namespace: 'default', limit: query.limit + 1 };
  if (query.contextId !== undefined) params.contextId = query.contextId;
  if (query.state !== undefined) params.state = query.state;
  if (query.statusTimestampAfter !== undefined) params.since = query.statusTimestampAfter;
  if (query.after !== undefined) {
    params.afterTs = query.after.statusTimestamp;
    params.afterId = query.after.taskId;
  }
  return params;
}

/** The captured statement of `kind` whose filters are those of `query`. */
function sqliteStatement(
  statements: Database.Statement[],
  kind: 'page' | 'count',
  query: TaskListQuery,
): Database.Statement {
  const wanted = { '@contextId': query.contextId, '@state': query.state, '@since': query.statusTimestampAfter };
  const found = statements.find(
    (s) =>
      (kind === 'page' ? s.source.includes('ORDER BY status_ts DESC') : s.source.includes('count(*)')) &&
      Object.entries(wanted).every(([param, value]) => s.source.includes(param) === (value !== undefined)) &&
      (kind === 'count' || s.source.includes('@afterTs') === (query.after !== undefined)),
  );
  if (found === undefined) throw new Error(`No captured ${kind} statement for ${JSON.stringify(query)}.`);
  return found;
}

async function runSqlite(size: number, dir: string): Promise<SizeResult> {
  const filename = join(dir, `list-${size}.db`);
  const fillStart = performance.now();
  {
    const db = new Database(filename);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF'); // the fill only; the store sets NORMAL
    sqliteMigrate(db, Date.now, sqliteMigrations.slice(0, 2));
    const insert = db.prepare<[string, string, string, string, number, number]>(
      `INSERT INTO a2a_tasks (namespace, task_id, context_id, state, version, task_json, created_at, updated_at)
       VALUES ('default', ?, ?, ?, 1, ?, ?, ?)`,
    );
    const batch = db.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const task = taskOf(i);
        insert.run(task.id, task.contextId, task.status.state, JSON.stringify(task), BASE + i, BASE + i);
      }
    });
    for (let from = 0; from < size; from += 10_000) batch(from, Math.min(size, from + 10_000));
    db.close();
  }
  const fillMs = performance.now() - fillStart;

  const { db, statements } = capturingDatabase(filename);
  const store = new SqliteStore({ database: db });
  const migrateStart = performance.now();
  await store.open();
  const migrateMs = performance.now() - migrateStart;
  db.pragma('wal_checkpoint(TRUNCATE)');
  let indexBytes: number | undefined;
  try {
    indexBytes = db
      .prepare<[], number>(
        "SELECT sum(pgsize) FROM dbstat WHERE name IN ('a2a_tasks_by_status_ts', 'a2a_tasks_by_context_status_ts', 'a2a_tasks_by_state_status_ts')",
      )
      .pluck()
      .get();
  } catch {
    // A build of SQLite without the dbstat table: the size stays unknown.
  }

  try {
    const result: SizeResult = {
      backend: 'sqlite',
      size,
      fillMs,
      migrateMs,
      bytes: statSync(filename).size,
      indexBytes,
      runtime: await runtimeTimings(store),
      operations: [],
      plans: {},
    };
    for (const op of operations(size)) {
      const page = await store.listTasks(op.query);
      if (page.records.length !== op.rows)
        throw new Error(`${op.name}: ${page.records.length} rows, expected ${op.rows}`);
      const pageStatement = sqliteStatement(statements, 'page', op.query);
      const countStatement = sqliteStatement(statements, 'count', op.query);
      const params = sqliteParams(op.query);
      result.operations.push({
        name: op.name,
        detail: op.detail,
        total: page.total,
        listTasks: await time(() => store.listTasks(op.query)),
        pageMs: (await time(() => pageStatement.all(params))).medianMs,
        countMs: (await time(() => countStatement.get(params))).medianMs,
      });
      const plan = (statement: Database.Statement) =>
        db
          .prepare(`EXPLAIN QUERY PLAN ${statement.source}`)
          .all(params)
          .map((row) => (row as { detail: string }).detail)
          .join('; ');
      result.plans[op.name] = `page:  ${plan(pageStatement)}\ncount: ${plan(countStatement)}`;
    }
    if (size === COMMIT_SIZE) {
      result.commits = await commitTimings(store, size, () => {
        db.exec(
          'DROP INDEX a2a_tasks_by_status_ts; DROP INDEX a2a_tasks_by_context_status_ts; DROP INDEX a2a_tasks_by_state_status_ts',
        );
      });
    }
    return result;
  } finally {
    await store.close();
    db.close();
    rmSync(filename, { force: true });
    rmSync(`${filename}-wal`, { force: true });
    rmSync(`${filename}-shm`, { force: true });
  }
}

// ---- Postgres ----

interface CapturedQuery {
  text: string;
  values: unknown[];
}

/** A pool that remembers the last listTasks statement the store sent through it. */
function capturingPool(): { pool: pg.Pool; last: () => CapturedQuery } {
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 4 });
  let captured: CapturedQuery | undefined;
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  pool.query = ((...args: unknown[]) => {
    const [first, second] = args;
    const config =
      typeof first === 'object' && first !== null ? (first as { text: string; values?: unknown[] }) : undefined;
    const text = config?.text ?? (typeof first === 'string' ? first : '');
    if (text.includes('WITH page AS')) captured = { text, values: (config?.values ?? second ?? []) as unknown[] };
    return query(...args);
  }) as typeof pool.query;
  return {
    pool,
    last: () => {
      if (captured === undefined) throw new Error('No listTasks statement was captured.');
      return captured;
    },
  };
}

/**
 * Actual total time of the first node of `type` in EXPLAIN (ANALYZE, FORMAT JSON): Postgres inlines
 * the statement's two CTEs, so the page is its `Limit` node and the count its `Aggregate`.
 */
function nodeTime(plan: unknown, type: string): number | undefined {
  const visit = (node: Record<string, unknown>): number | undefined => {
    if (node['Node Type'] === type) return node['Actual Total Time'] as number;
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) {
      const found = visit(child);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return visit((plan as { Plan: Record<string, unknown> }[])[0]?.Plan ?? {});
}

async function runPostgres(size: number): Promise<SizeResult> {
  const schema = `bench_list_${randomSuffix()}`;
  const s = pg.escapeIdentifier(schema);
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  const { pool, last } = capturingPool();
  let store: PostgresStore | undefined;
  try {
    const fillStart = performance.now();
    await admin.query(`CREATE SCHEMA ${s}`);
    await admin.query(
      `CREATE TABLE ${s}.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    for (const step of pgMigrations.filter((m) => m.version <= 2)) {
      await admin.query(step.sql(s));
      await admin.query(`INSERT INTO ${s}.migrations (version, name) VALUES ($1, $2)`, [step.version, step.name]);
    }
    // The same tasks as taskOf(i), built on the server.
    const states = `ARRAY[${STATES.map((state) => `'${state}'`).join(', ')}]`;
    for (let from = 0; from < size; from += 100_000) {
      await admin.query(
        `INSERT INTO ${s}.tasks (namespace, task_id, context_id, state, version, task, created_at, updated_at)
         SELECT 'default', t.id, t.ctx, t.state, 1,
           json_build_object(
             'kind', 'task', 'id', t.id, 'contextId', t.ctx,
             'status', json_build_object('state', t.state, 'timestamp',
               to_char(to_timestamp(($3::bigint + (i / 2) * 1000) / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
             'history', json_build_array(json_build_object('kind', 'message', 'messageId', 'msg-' || i, 'role', 'user',
               'parts', json_build_array(json_build_object('kind', 'text', 'text', $4::text)), 'taskId', t.id, 'contextId', t.ctx)),
             'artifacts', json_build_array(json_build_object('artifactId', 'artifact-' || i,
               'parts', json_build_array(json_build_object('kind', 'text', 'text', 'echo: ' || $4::text))))),
           $3::bigint + i, $3::bigint + i
         FROM generate_series($1::int, $2::int - 1) AS i,
           LATERAL (SELECT 'task-' || lpad(i::text, 7, '0') AS id, 'ctx-' || (i / 5) AS ctx,
                           (${states})[1 + i % ${STATES.length}] AS state) AS t`,
        [from, Math.min(size, from + 100_000), BASE, TEXT],
      );
    }
    const fillMs = performance.now() - fillStart;

    const migrateStart = performance.now();
    const { applied } = await pgMigrate(pool, schema);
    const migrateMs = performance.now() - migrateStart;
    if (applied.join() !== '3') throw new Error(`expected migration 3 alone, applied ${applied.join()}`);
    const vacuumStart = performance.now();
    await admin.query(`VACUUM ANALYZE ${s}.tasks`);
    const vacuumMs = performance.now() - vacuumStart;
    const sizes = await admin.query<{ total: string; indexes: string }>(
      `SELECT pg_total_relation_size('${s}.tasks') AS total,
              pg_relation_size('${s}.tasks_by_status_ts') + pg_relation_size('${s}.tasks_by_context_status_ts')
              + pg_relation_size('${s}.tasks_by_state_status_ts') AS indexes`,
    );

    store = new PostgresStore({ pool, schema, migrate: false, listen: false });
    await store.open();
    const result: SizeResult = {
      backend: 'postgres',
      size,
      fillMs,
      migrateMs,
      vacuumMs,
      bytes: Number(sizes.rows[0]?.total),
      indexBytes: Number(sizes.rows[0]?.indexes),
      runtime: await runtimeTimings(store),
      operations: [],
      plans: {},
    };
    for (const op of operations(size)) {
      const page = await store.listTasks(op.query);
      if (page.records.length !== op.rows)
        throw new Error(`${op.name}: ${page.records.length} rows, expected ${op.rows}`);
      const listTasks = await time(() => (store as PostgresStore).listTasks(op.query));
      const { text, values } = last();
      const explained = await admin.query<{ 'QUERY PLAN': unknown }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`,
        values,
      );
      const planJson = explained.rows[0]?.['QUERY PLAN'];
      result.operations.push({
        name: op.name,
        detail: op.detail,
        total: page.total,
        listTasks,
        pageMs: nodeTime(planJson, 'Limit'),
        countMs: nodeTime(planJson, 'Aggregate'),
      });
      // The plan the store's prepared statement runs once Postgres settles on a generic plan.
      await admin.query('SET plan_cache_mode = force_generic_plan');
      await admin.query(`PREPARE bench_list AS ${text}`);
      const literals = values.map((v) => (typeof v === 'number' ? String(v) : admin.escapeLiteral(String(v))));
      const generic = await admin.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE bench_list(${literals.join(', ')})`,
      );
      await admin.query('DEALLOCATE bench_list');
      await admin.query('RESET plan_cache_mode');
      result.plans[op.name] = generic.rows.map((row) => row['QUERY PLAN']).join('\n');
    }
    if (size === COMMIT_SIZE) {
      result.commits = await commitTimings(store, size, async () => {
        await admin.query(
          `DROP INDEX ${s}.tasks_by_status_ts, ${s}.tasks_by_context_status_ts, ${s}.tasks_by_state_status_ts`,
        );
      });
    }
    return result;
  } finally {
    await store?.close();
    await pool.end();
    await admin.end();
    await dropSchema(schema);
  }
}

// ---- shared ----

/** The runtime's ListTasks over `store`: the first page, and the second through its token. */
async function runtimeTimings(store: SqliteStore | PostgresStore): Promise<SizeResult['runtime']> {
  const runtime = new A2ARuntime({ store, executor: () => {}, retention: false, closeStore: false });
  try {
    const first = await runtime.listTasks({ pageSize: PAGE });
    return {
      firstPage: await time(() => runtime.listTasks({ pageSize: PAGE })),
      secondPageByToken: await time(() => runtime.listTasks({ pageSize: PAGE, pageToken: first.nextPageToken })),
    };
  } finally {
    await runtime.close();
  }
}

/**
 * COMMITS status-update commits on distinct tasks, then the same after `dropIndexes()` on other
 * tasks: what keeping the three listTasks indexes adds to a commit.
 */
async function commitTimings(
  store: SqliteStore | PostgresStore,
  size: number,
  dropIndexes: () => unknown,
): Promise<NonNullable<SizeResult['commits']>> {
  const commitsFrom = async (first: number): Promise<Timing> => {
    const samples: number[] = [];
    for (let k = 0; k < COMMITS; k++) {
      const i = (first + k * 7) % size;
      const record = await store.getTask(taskIdOf(i));
      if (record === undefined) throw new Error(`task ${i} is missing`);
      const event = {
        kind: 'status-update' as const,
        taskId: record.task.id,
        contextId: record.task.contextId,
        status: { state: 'working' as const, timestamp: new Date(BASE + size * 1000 + k).toISOString() },
        final: false,
      };
      // The snapshot the event gives (stores do not check transitions; some of these tasks are terminal).
      const task: Task = { ...record.task, status: event.status };
      const start = performance.now();
      await store.commit({ taskId: task.id, expectedVersion: record.version, task, events: [event] });
      samples.push(performance.now() - start);
    }
    samples.sort((a, b) => a - b);
    const at = (p: number) => samples[Math.min(samples.length - 1, Math.floor(p * samples.length))] as number;
    return { runs: samples.length, medianMs: at(0.5), p95Ms: at(0.95), minMs: samples[0] as number };
  };
  const withIndexes = await commitsFrom(1);
  await dropIndexes();
  const withoutIndexes = await commitsFrom(3);
  return { withIndexes, withoutIndexes };
}

// ---- report ----

interface ListTasksBench {
  kind: 'list-tasks';
  date: string;
  machine: MachineInfo;
  repo: RepoInfo;
  postgres: Record<string, string> | undefined;
  budget: { ms: number; maxRuns: number; pageSize: number };
  loadAvg: { start: number; end: number };
  results: SizeResult[];
}

const ms = (value: number | undefined): string =>
  value === undefined ? '–' : value < 10 ? fmt(value, 2) : value < 100 ? fmt(value, 1) : fmt(value);
const mb = (bytes: number | undefined): string => (bytes === undefined ? '–' : `${fmt(bytes / 1024 / 1024)} MB`);
const seconds = (value: number | undefined): string => (value === undefined ? '–' : `${fmt(value / 1000, 1)} s`);

function render(bench: ListTasksBench): string {
  const lines: string[] = [];
  const push = (...more: string[]) => lines.push(...more);
  const backends = [...new Set(bench.results.map((r) => r.backend))];
  const sizes = [...new Set(bench.results.map((r) => r.size))].sort((a, b) => a - b);
  const find = (backend: Backend, size: number) => bench.results.find((r) => r.backend === backend && r.size === size);
  const name = (backend: Backend) => (backend === 'sqlite' ? 'SQLite' : 'Postgres');

  push(
    '# listTasks benchmark',
    '',
    'Generated by `npm run bench:list-tasks` (bench/src/list-tasks.ts); do not edit by hand.',
    '',
    `- Date: ${bench.date}`,
    `- Machine: ${machineLine(bench.machine)}; 1-minute load average ${bench.loadAvg.start.toFixed(2)} at the start, ${bench.loadAvg.end.toFixed(2)} at the end (2 cores shared with other work: absolute numbers are noisy, compare within a column).`,
    `- Code: commit ${bench.repo.commit}${bench.repo.dirtyPaths.length > 0 ? ` plus uncommitted changes to ${bench.repo.dirtyPaths.join(', ')}` : ''}.`,
    `- SQLite: a file in a temp dir, the store's settings (WAL, synchronous=NORMAL), no ANALYZE. Postgres: local server (${settingsLine(bench.postgres)}), a throwaway schema, VACUUM ANALYZE after the migration.`,
    '- Fill: rows bulk-inserted through SQL into a schema at migration 2, then the store applies migration 3 (status_ts, backfill, three indexes). Task i: context `ctx-<i/5>` (5 tasks each), state cycling through 8 values (25 % `working`), status timestamp 2026-01-01 + ⌊i/2⌋ s (ties in pairs), about 500 bytes of JSON.',
    `- Each figure: the median of up to ${bench.budget.maxRuns} calls in ${bench.budget.ms} ms after 3 warm-up calls, page size ${bench.budget.pageSize}.`,
    '',
    '## Fill and migration 3',
    '',
    '| backend | tasks | bulk fill | migration 3 (column, backfill, 3 indexes) | VACUUM ANALYZE | size after | of which the 3 indexes |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const backend of backends) {
    for (const size of sizes) {
      const r = find(backend, size);
      if (r === undefined) continue;
      push(
        `| ${name(backend)} | ${fmt(size)} | ${seconds(r.fillMs)} | ${seconds(r.migrateMs)} | ${seconds(r.vacuumMs)} | ${mb(r.bytes)} | ${mb(r.indexBytes)} |`,
      );
    }
  }
  push(
    '',
    'The migration holds the write lock (SQLite) or the lock on `tasks` (Postgres) throughout: commits wait for it.',
    '',
    '## listTasks: one call (page of 50 + total), median ms',
    '',
    `| operation | ${backends.flatMap((b) => sizes.map((size) => `${name(b)} ${fmt(size)}`)).join(' | ')} |`,
    `| --- | ${backends.flatMap(() => sizes.map(() => '---:')).join(' | ')} |`,
  );
  const opNames = [...new Set(bench.results.flatMap((r) => r.operations.map((o) => o.name)))];
  for (const op of opNames) {
    const cells = backends.flatMap((b) =>
      sizes.map((size) => ms(find(b, size)?.operations.find((o) => o.name === op)?.listTasks.medianMs)),
    );
    push(`| ${op} | ${cells.join(' | ')} |`);
  }
  const runtimeRow = (label: string, pick: (r: SizeResult) => Timing) =>
    push(
      `| ${label} | ${backends
        .flatMap((b) =>
          sizes.map((size) => {
            const r = find(b, size);
            return r ? ms(pick(r).medianMs) : '–';
          }),
        )
        .join(' | ')} |`,
    );
  runtimeRow('runtime: first page', (r) => r.runtime.firstPage);
  runtimeRow('runtime: second page by token', (r) => r.runtime.secondPageByToken);

  push(
    '',
    '## The parts of one call: page alone / count alone, median ms',
    '',
    "SQLite: the store's own page and count statements run alone. Postgres: the two parts of the store's one statement, from EXPLAIN ANALYZE (instrumented, so a little slower than the call).",
    '',
    `| operation | detail | matches at ${fmt(sizes.at(-1))} | ${backends.flatMap((b) => sizes.map((size) => `${name(b)} ${fmt(size)}`)).join(' | ')} |`,
    `| --- | --- | ---: | ${backends.flatMap(() => sizes.map(() => '---:')).join(' | ')} |`,
  );
  const largest = sizes.at(-1) as number;
  for (const op of opNames) {
    const sample = bench.results.find((r) => r.size === largest)?.operations.find((o) => o.name === op);
    const cells = backends.flatMap((b) =>
      sizes.map((size) => {
        const o = find(b, size)?.operations.find((x) => x.name === op);
        return o ? `${ms(o.pageMs)} / ${ms(o.countMs)}` : '–';
      }),
    );
    push(`| ${op} | ${sample?.detail ?? ''} | ${fmt(sample?.total)} | ${cells.join(' | ')} |`);
  }

  const withCommits = bench.results.filter((r) => r.commits !== undefined);
  if (withCommits.length > 0) {
    push(
      '',
      `## What the three indexes add to a commit (${fmt(COMMIT_SIZE)} tasks)`,
      '',
      `${COMMITS} status-update commits (one event, the status timestamp changes) on distinct tasks, then the same after dropping the three listTasks indexes. Median / p95 ms.`,
      '',
      '| backend | with the indexes | without them |',
      '| --- | ---: | ---: |',
    );
    for (const r of withCommits) {
      const c = r.commits as NonNullable<SizeResult['commits']>;
      push(
        `| ${name(r.backend)} | ${ms(c.withIndexes.medianMs)} / ${ms(c.withIndexes.p95Ms)} | ${ms(c.withoutIndexes.medianMs)} / ${ms(c.withoutIndexes.p95Ms)} |`,
      );
    }
  }

  push('', `## Query plans at ${fmt(largest)} tasks`, '');
  for (const backend of backends) {
    const r = find(backend, largest);
    if (r === undefined) continue;
    push(
      `### ${name(backend)}`,
      '',
      backend === 'sqlite'
        ? "EXPLAIN QUERY PLAN of the store's page and count statements: each page is a SEARCH of one index with the cursor as a range (no TEMP B-TREE: no sort)."
        : "EXPLAIN (ANALYZE, BUFFERS) of the store's statement with the generic plan forced (what its prepared statement settles on): the page is an Index Scan whose Index Cond holds the cursor, reading limit + 1 rows; the count is the scan over every match.",
      '',
    );
    for (const [op, plan] of Object.entries(r.plans)) push(`**${op}**`, '', '```', plan, '```', '');
  }
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const loadStart = loadavg()[0] ?? 0;
  const results: SizeResult[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'a2a-bench-list-'));
  try {
    for (const backend of BACKENDS) {
      for (const size of SIZES) {
        process.stdout.write(`${backend} ${fmt(size)} tasks… `);
        const result = backend === 'sqlite' ? await runSqlite(size, dir) : await runPostgres(size);
        results.push(result);
        const first = result.operations[0];
        console.log(
          `fill ${seconds(result.fillMs)}, migration ${seconds(result.migrateMs)}, first page ${ms(first?.listTasks.medianMs)} ms (page ${ms(first?.pageMs)}, count ${ms(first?.countMs)})`,
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const bench: ListTasksBench = {
    kind: 'list-tasks',
    date: new Date().toISOString(),
    machine: machineInfo(),
    repo: repoInfo(),
    postgres: BACKENDS.includes('postgres') ? await postgresSettings() : undefined,
    budget: { ms: BUDGET_MS, maxRuns: MAX_RUNS, pageSize: PAGE },
    loadAvg: { start: loadStart, end: loadavg()[0] ?? 0 },
    results,
  };
  writeFile(join(RESULTS_DIR, `list-tasks-${today()}.json`), `${JSON.stringify(bench, null, 2)}\n`);
  writeFile(join(BENCH_DIR, 'LIST_TASKS.md'), render(bench));
  console.log(`Wrote bench/LIST_TASKS.md and bench/results/list-tasks-${today()}.json`);
}

await main();
