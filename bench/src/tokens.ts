/**
 * `npm run bench:tokens`: the load an LLM agent makes — many concurrent tasks, each streaming one
 * artifact in small chunks (TOKENS_CHUNKS = 150 chunks of 4 characters at TOKENS_RATE = 50 a second)
 * — ramped in concurrent streams until the p99 chunk latency (agent emits → client receives) passes
 * 100 ms or a stream fails, on each server:
 *
 * - floor: a plain node:http server writing the same SSE frames (servers/tokens-floor.ts);
 * - sdk: @a2a-js/sdk 0.3.14 in memory with the same agent (servers/tokens-sdk.ts);
 * - memory, sqlite, postgres: fastify-a2a as a new user runs it (servers/tokens.ts), clients on
 *   message/stream;
 * - sqlite-2w, postgres-2w: two workers on one store; each message goes to worker A (non-blocking
 *   message/send) and its client reads it on worker B (tasks/resubscribe).
 *
 * Rounds alternate the order of the servers (forward, then backward, …). Per level: chunks/s in the
 * window where every stream is live, p50/p99/max latency, the servers' CPU per chunk, the database's
 * CPU per chunk (Postgres: every `postgres` process), bytes written to the store per chunk (Postgres:
 * WAL bytes; SQLite: the servers' write_bytes), chunks lost/duplicated/out of order. Plus the final
 * task of a 300-chunk answer. Writes bench/results/tokens-<date>.json and bench/TOKENS.md.
 *
 *   npm run bench:tokens
 *   TOKENS_QUICK=1 npm run bench:tokens        one round, three levels, short answers (no Markdown)
 *   TOKENS_SERVERS=sdk,memory TOKENS_ROUNDS=5 …  a subset, more rounds
 *   TOKENS_LEVELS=10,50,100 …                   the levels to ramp through
 *   TOKENS_PROFILE=memory …                     CPU-profiles that server (through tsx, so slower) with
 *                                               marks around its 100-stream level, into bench/profiles;
 *                                               `npm run bench:profile-summary` summarises the newest
 *   TOKENS_CPU_LEVEL=300 …                      the level whose CPU per chunk the report shows, and that
 *                                               TOKENS_PROFILE marks (default 100)
 *   TOKENS_PG_STATS=1 …                         prints which of the Postgres schema's indexes and tables
 *                                               the run read (pg_stat_user_indexes / _tables) before dropping it
 *   BENCH_STREAM_COMMIT_INTERVAL_MS=40 …        the plugin's streamCommitIntervalMs on our servers (by hand
 *                                               only: the bench measures the defaults)
 *   npm run bench:tokens -- --render bench/results/tokens-<date>.json   regenerates TOKENS.md only
 */

import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distribution } from './cross-worker/stats.js';
import { ServerProcess, type ServerSpec } from './lib/child.js';
import {
  BENCH_DIR,
  dropSchema,
  envNumber,
  machineInfo,
  POSTGRES_URL,
  postgresSettings,
  RESULTS_DIR,
  randomSuffix,
  repoInfo,
  sleep,
  today,
  writeFile,
} from './lib/env.js';
import { finalTaskSize, type LevelOutcome, runLevel } from './tokens/load.js';
import { type Counters, readCounters } from './tokens/measure.js';
import {
  type LevelResult,
  levelPasses,
  RESUBSCRIBE_DELAY_MS,
  renderTokens,
  SERVERS,
  type ServerRun,
  SPREAD_MS,
  type TokensResult,
} from './tokens/report.js';

const renderIndex = process.argv.indexOf('--render');
if (renderIndex >= 0) {
  const file = process.argv[renderIndex + 1];
  if (!file) throw new Error('--render needs a results file');
  const result = JSON.parse(readFileSync(file, 'utf8')) as TokensResult;
  writeFile(join(BENCH_DIR, 'TOKENS.md'), renderTokens(result));
  console.log('wrote bench/TOKENS.md');
  process.exit(0);
}

const quick = process.env.TOKENS_QUICK === '1';
const chunks = envNumber('TOKENS_CHUNKS', quick ? 100 : 150);
const perSecond = envNumber('TOKENS_RATE', 50);
const rounds = envNumber('TOKENS_ROUNDS', quick ? 1 : 3);
const levels = (process.env.TOKENS_LEVELS ?? (quick ? '10,50,100' : '10,25,50,75,100,150,200,300,400,500,600,800,1000'))
  .split(',')
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0)
  .sort((a, b) => a - b);
const serverNames = (process.env.TOKENS_SERVERS ?? SERVERS.map((s) => s.name).join(',')).split(',');
const P99_LIMIT_MS = 100;
/** CPU per chunk is compared at this many streams (measured even past the knee). */
const CPU_LEVEL = Number(process.env.TOKENS_CPU_LEVEL ?? 100);
if (!Number.isInteger(CPU_LEVEL) || CPU_LEVEL <= 0)
  throw new Error('TOKENS_CPU_LEVEL must be a positive integer (streams)');
const FINAL_TASK_CHUNKS = 300;
const CONFIG: TokensResult['config'] = {
  chunks,
  perSecond,
  rounds,
  levels,
  p99LimitMs: P99_LIMIT_MS,
  cpuLevel: CPU_LEVEL,
  finalTaskChunks: FINAL_TASK_CHUNKS,
};

const cleanups: (() => Promise<void>)[] = [];

async function startServers(name: string): Promise<{ servers: ServerProcess[]; postgresUrl?: string }> {
  const entry = name === 'floor' ? 'tokens-floor.ts' : name === 'sdk' ? 'tokens-sdk.ts' : 'tokens.ts';
  const base = name.replace(/-2w$/, '');
  const workers = name.endsWith('-2w') ? 2 : 1;
  let store = 'memory:';
  let postgresUrl: string | undefined;
  if (base === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'bench-tokens-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    store = `sqlite:${join(dir, 'a2a.db')}`;
  } else if (base === 'postgres') {
    const schema = `bench_tok_${randomSuffix()}`;
    cleanups.push(async () => {
      if (process.env.TOKENS_PG_STATS === '1') {
        // By hand only: which of the schema's indexes the run read, and how much.
        const { withPostgres } = await import('./lib/env.js');
        await withPostgres(async (client) => {
          const { rows } = await client.query(
            `SELECT relname, indexrelname, idx_scan, idx_tup_read, idx_tup_fetch FROM pg_stat_user_indexes
             WHERE schemaname = $1 AND idx_scan > 0 ORDER BY idx_tup_read DESC`,
            [schema],
          );
          console.table(rows);
          const tables = await client.query(
            `SELECT relname, seq_scan, seq_tup_read, idx_scan, idx_tup_fetch, n_tup_ins, n_tup_upd, n_tup_hot_upd
             FROM pg_stat_user_tables WHERE schemaname = $1`,
            [schema],
          );
          console.table(tables.rows);
        });
      }
      await dropSchema(schema);
    });
    const url = new URL(POSTGRES_URL);
    url.searchParams.set('schema', schema);
    store = url.toString();
    postgresUrl = POSTGRES_URL;
  }
  const servers: ServerProcess[] = [];
  for (let i = 0; i < workers; i++) {
    const spec: ServerSpec = {
      name,
      label: name,
      entry,
      env: { BENCH_STORE: store, ...(workers > 1 ? { BENCH_WORKER_ID: `tokens-${String.fromCharCode(65 + i)}` } : {}) },
      discardStdout: true,
    };
    // One after another, so the SQL stores' migrations never race.
    const profiled = process.env.TOKENS_PROFILE === name;
    const profileDir = join(BENCH_DIR, 'profiles');
    // The marks file is written before node writes its profile (which would create the folder).
    if (profiled) mkdirSync(profileDir, { recursive: true });
    servers.push(
      await ServerProcess.start(
        spec,
        profiled ? { cpuProfDir: profileDir, marksFile: join(profileDir, `marks-pending-${name}-${i}.json`) } : {},
      ),
    );
  }
  return { servers, ...(postgresUrl ? { postgresUrl } : {}) };
}

function levelResult(
  name: string,
  streams: number,
  outcome: LevelOutcome,
  before: Counters,
  after: Counters,
): LevelResult {
  const received = outcome.streams.reduce((sum, s) => sum + s.received, 0);
  const inSnapshot = outcome.streams.reduce((sum, s) => sum + s.inSnapshot, 0);
  const errors = outcome.streams.filter((s) => s.error !== undefined);
  // The steady state: after the last stream started (1 s) and before the first could end.
  const from = outcome.startedAt + SPREAD_MS;
  const to = outcome.startedAt + (chunks / perSecond) * 1000;
  const inWindow = outcome.arrivals.filter((t) => t >= from && t < to).length;
  const latency = distribution(outcome.latencies);
  const total = received + inSnapshot;
  const perChunkUs = (ms: number): number => (total > 0 ? (ms * 1000) / total : Number.NaN);
  const lost = outcome.streams.reduce((sum, s) => sum + s.lost, 0);
  const duplicated = outcome.streams.reduce((sum, s) => sum + s.duplicated, 0);
  const outOfOrder = outcome.streams.reduce((sum, s) => sum + s.outOfOrder, 0);
  const result: LevelResult = {
    streams,
    chunksExpected: streams * chunks,
    chunksReceived: received,
    inSnapshot,
    lost,
    duplicated,
    outOfOrder,
    errors: errors.length,
    ...(errors[0]?.error ? { firstError: errors[0].error } : {}),
    chunksPerSec: to > from ? inWindow / ((to - from) / 1000) : Number.NaN,
    latencyMs: { p50: latency.p50, p99: latency.p99, max: latency.max },
    serverCpuUsPerChunk: perChunkUs(after.serverCpuMs - before.serverCpuMs),
    databaseCpuUsPerChunk: perChunkUs(after.postgresCpuMs - before.postgresCpuMs),
    loadCpuUsPerChunk: perChunkUs(after.loadCpuMs - before.loadCpuMs),
    storeBytesPerChunk: total > 0 ? (after.storeBytes - before.storeBytes) / total : Number.NaN,
    wallMs: outcome.wallMs,
    pass: false,
  };
  result.pass = levelPasses(result, CONFIG, name);
  return result;
}

async function measureServer(name: string, round: number): Promise<ServerRun> {
  const run: ServerRun = { name, round, knee: 0, levels: [] };
  const { servers, postgresUrl } = await startServers(name);
  try {
    const sendUrl = servers[0]?.url as string;
    const readUrl = (servers[1] ?? servers[0])?.url as string;
    const pids = servers.map((s) => s.pid);
    if (name !== 'floor') run.finalTask = await finalTaskSize(sendUrl, FINAL_TASK_CHUNKS);
    const measure = async (streams: number): Promise<LevelResult> => {
      const profiled = process.env.TOKENS_PROFILE === name && streams === CPU_LEVEL;
      if (profiled) await Promise.all(servers.map((s) => s.mark('start')));
      const before = await readCounters(pids, postgresUrl);
      const outcome = await runLevel({
        streams,
        chunks,
        perSecond,
        sendUrl,
        readUrl,
        spreadMs: SPREAD_MS,
        resubscribeDelayMs: sendUrl === readUrl ? 0 : RESUBSCRIBE_DELAY_MS,
      });
      const after = await readCounters(pids, postgresUrl);
      if (profiled) await Promise.all(servers.map((s) => s.mark('end')));
      const level = levelResult(name, streams, outcome, before, after);
      console.log(
        `  ${name} round ${round} ${streams} streams: ${level.chunksPerSec.toFixed(0)} chunks/s, p50 ${level.latencyMs.p50.toFixed(1)} p99 ${level.latencyMs.p99.toFixed(1)} ms, ` +
          `${level.serverCpuUsPerChunk.toFixed(0)} µs CPU/chunk${postgresUrl ? ` + ${level.databaseCpuUsPerChunk.toFixed(0)} µs db` : ''}` +
          `${level.pass ? '' : `  FAIL${level.firstError ? ` (${level.errors} errors: ${level.firstError})` : ''}`}`,
      );
      await sleep(1000);
      return level;
    };
    for (const streams of levels) {
      const level = await measure(streams);
      run.levels.push(level);
      if (!level.pass) break;
      run.knee = streams;
    }
    if (!run.levels.some((l) => l.streams === CPU_LEVEL) && levels.includes(CPU_LEVEL)) {
      run.levels.push(await measure(CPU_LEVEL));
    }
  } catch (error) {
    run.error = (error as Error).message;
    console.error(`  ${name} round ${round}: ${run.error}`);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    // Its schema or file goes now, not at the end of the run, so that autovacuum has no earlier
    // server's 100,000s of event rows to work through while the next one is measured (its CPU
    // counts as the database's). In the run that kept them to the end, the Postgres levels of
    // rounds 2 and 3 cost the rest of the machine 20-40 % more per chunk than round 1's.
    await cleanup();
    if (process.env.TOKENS_PROFILE === name) {
      // Named as bench:profile-summary looks for them: marks-<pid>.json beside CPU.*.<pid>.*.cpuprofile.
      const profileDir = join(BENCH_DIR, 'profiles');
      for (const [i, s] of servers.entries()) {
        renameSync(join(profileDir, `marks-pending-${name}-${i}.json`), join(profileDir, `marks-${s.pid}.json`));
      }
    }
  }
  return run;
}

async function main(): Promise<void> {
  const result: TokensResult = {
    date: new Date().toISOString(),
    machine: machineInfo(),
    repo: repoInfo(),
    config: CONFIG,
    postgres: await postgresSettings(),
    runs: [],
  };
  const order = SERVERS.map((s) => s.name).filter((n) => serverNames.includes(n));
  for (let round = 1; round <= rounds; round++) {
    const names = round % 2 === 1 ? order : [...order].reverse();
    console.log(`round ${round}: ${names.join(', ')}`);
    for (const name of names) result.runs.push(await measureServer(name, round));
  }
  const file = join(RESULTS_DIR, `tokens-${today()}${quick ? '-quick' : ''}.json`);
  writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`wrote ${file}`);
  if (!quick) {
    writeFile(join(BENCH_DIR, 'TOKENS.md'), renderTokens(result));
    console.log('wrote bench/TOKENS.md');
  }
}

const cleanup = async (): Promise<void> => {
  for (const fn of cleanups.splice(0)) await fn().catch(() => undefined);
};
process.once('SIGINT', () => {
  void cleanup().then(() => process.exit(130));
});
try {
  await main();
} finally {
  await cleanup();
}
