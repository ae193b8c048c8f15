/**
 * Cross-worker benchmark: several worker processes on one store acting as one server.
 *
 * 1. Event latency across workers (Postgres, SQLite): an event emitted by the agent on worker A →
 *    the SSE frame on a tasks/resubscribe stream on worker B, against the same event on A's own
 *    message/stream (the same-worker baseline), measured in the same run.
 * 2. Blocking message/send throughput on Postgres with 1 worker, 2 workers, then 1 worker again
 *    (the same total connections), so the 2-worker run sits between two 1-worker runs.
 * 3. The same with every worker's CPU capped by a cgroup of its own (BENCH_WORKER_CAP cores each;
 *    by default chosen from part 2 so that 2 capped workers, Postgres and the load generator leave
 *    the machine well below its cores): the workers are the bottleneck, the database has headroom.
 *    Without a writable cpu cgroup controller (v1 or v2) the part is reported as skipped.
 * The report then models throughput from the CPU each process spent per request (report.ts, model.ts).
 *
 * Writes bench/results/cross-worker-<date>.json and bench/CROSS_WORKER.md.
 *
 *   node --conditions=@fastify-a2a/source --import tsx bench/src/cross-worker.ts
 *   BENCH_QUICK=1 …   short mode (fewer events, 3 s load windows): writes cross-worker-<date>-quick.json
 *                     and leaves bench/CROSS_WORKER.md as it is
 *   … --render bench/results/cross-worker-<date>.json   regenerates bench/CROSS_WORKER.md only
 *
 * Before each part it waits up to BENCH_QUIET_WAIT_S (120, quick 0) for the shared machine to be
 * quiet, and measures a part again (BENCH_ATTEMPTS in all: 3, quick 1) when other processes used a
 * noticeable share of the CPU during it; the Markdown flags any window still disturbed.
 *
 * Postgres: BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test); every schema
 * it creates is bench_xw_<random>[_<suffix>] and is dropped at the end, also on failure or SIGINT.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CpuCaps, detectCgroup, removeAllCapsSync } from './cross-worker/cgroup.js';
import type { Cluster } from './cross-worker/cluster.js';
import { type LatencyConfig, measureLatency, type StoreLatencyResult } from './cross-worker/latency.js';
import { chooseCap } from './cross-worker/model.js';
import { type CappedPart, type CrossWorkerResult, histogram, renderMarkdown } from './cross-worker/report.js';
import { type CpuWindow, cpuWindow, DISTURBED_CORES, disturbance } from './cross-worker/stats.js';
import { measureThroughput, type ThroughputConfig, type ThroughputRun } from './cross-worker/throughput.js';
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
  withPostgres,
  writeFile,
} from './lib/env.js';

const quick = process.env.BENCH_QUICK === '1';
const MARKDOWN = join(BENCH_DIR, 'CROSS_WORKER.md');

const latencyConfig: LatencyConfig = quick
  ? {
      sequentialTasks: 2,
      sequentialEvents: 50,
      concurrentTasks: 4,
      concurrentEvents: 25,
      intervalMs: 20,
      startDelayMs: 300,
    }
  : {
      sequentialTasks: 5,
      sequentialEvents: 100,
      concurrentTasks: 8,
      concurrentEvents: 50,
      intervalMs: 20,
      startDelayMs: 300,
    };

const throughputConfig: ThroughputConfig = {
  connections: envNumber('BENCH_CONNECTIONS', 64),
  durationS: envNumber('BENCH_DURATION', quick ? 3 : 8),
  warmupS: envNumber('BENCH_WARMUP', quick ? 1 : 2),
  echoText: 'hello benchmark world',
};

/** Before each part, wait up to this long for the shared machine to be quiet (0: don't wait). */
const QUIET_WAIT_S = envNumber('BENCH_QUIET_WAIT_S', quick ? 0 : 120);

/** Cores per capped worker in part 3; unset or 0: chosen from part 2 (see chooseCap). */
const WORKER_CAP = envNumber('BENCH_WORKER_CAP', 0);
/** The CFS period of the caps, µs. */
const CAP_PERIOD_US = envNumber('BENCH_CAP_PERIOD_US', 100_000);
/** Which cgroup interface part 3 uses: auto (v1, else v2), v1, v2, or off (skip part 3). */
const CGROUP_MODE = process.env.BENCH_CGROUP ?? 'auto';

/** The whole run is aborted (and cleaned up) after this long. */
const MAX_RUN_MS = (quick ? 5 * 60_000 : 30 * 60_000) + 15 * QUIET_WAIT_S * 1000;

const baseSchema = `bench_xw_${randomSuffix()}`;
const tmp = mkdtempSync(join(tmpdir(), 'a2a-xw-'));
let liveCluster: Cluster | undefined;
/** Set once Postgres answered: only then is there anything to drop. */
let usedPostgres = false;
const trackCluster = (cluster: Cluster | undefined): void => {
  liveCluster = cluster;
};

function postgresUrl(schema: string): string {
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('schema', schema);
  return url.toString();
}

/** Drops every schema this run created (bench_xw_<random>…). */
async function dropSchemas(): Promise<void> {
  await withPostgres(async (client) => {
    const { rows } = await client.query<{ name: string }>(
      `SELECT schema_name AS name FROM information_schema.schemata WHERE schema_name = $1 OR schema_name LIKE $2`,
      [baseSchema, `${baseSchema}\\_%`],
    );
    for (const { name } of rows) await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  });
}

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await liveCluster?.stop().catch(() => undefined);
    const problems = removeAllCapsSync();
    if (problems.length > 0) console.error(`could not remove cgroups: ${problems.join('; ')}`);
    if (usedPostgres)
      await dropSchemas().catch((error) =>
        console.error(`could not drop schemas ${baseSchema}*: ${(error as Error).message}`),
      );
    rmSync(tmp, { recursive: true, force: true });
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`${signal}: stopping workers and dropping ${baseSchema}*`);
    void cleanup().finally(() => process.exit(130));
  });
}
// Last resort (e.g. an uncaught error): no cgroup of this run outlives it.
process.once('exit', () => removeAllCapsSync());
const watchdog = setTimeout(() => {
  console.error(`cross-worker: still running after ${MAX_RUN_MS / 60_000} min; giving up`);
  void cleanup().finally(() => process.exit(1));
}, MAX_RUN_MS);
watchdog.unref();

const log = (message: string): void => console.log(`[cross-worker] ${message}`);

/**
 * Waits (bounded by QUIET_WAIT_S) until the machine's busy time over 2 s is under 0.3 cores, so a
 * part does not start while another benchmark on this shared machine is running.
 */
async function waitForQuiet(part: string): Promise<void> {
  if (QUIET_WAIT_S <= 0) return;
  const deadline = Date.now() + QUIET_WAIT_S * 1000;
  let announced = false;
  for (;;) {
    const stop = cpuWindow({}, { postgres: false });
    await sleep(2000);
    const cpu = stop();
    if (cpu.machineBusyCores < 0.3) return;
    if (Date.now() >= deadline) {
      log(
        `  machine still busy (${cpu.machineBusyCores.toFixed(2)} cores) after ${QUIET_WAIT_S} s; measuring ${part} anyway`,
      );
      return;
    }
    if (!announced) {
      const top = cpu.topOthers.map((o) => `${o.name}[${o.pid}] ${o.cores.toFixed(2)}`).join(', ');
      log(
        `  machine busy (${cpu.machineBusyCores.toFixed(2)} cores: ${top}); waiting up to ${QUIET_WAIT_S} s before ${part}`,
      );
      announced = true;
    }
  }
}

/** Measurements of one part at most, when other processes disturb them (BENCH_ATTEMPTS; 3, quick 1). */
const ATTEMPTS = Math.max(1, envNumber('BENCH_ATTEMPTS', quick ? 1 : 3));

/**
 * Measures one part after waiting for quiet; measures it again (up to ATTEMPTS in all) while other
 * processes on the shared machine used DISTURBED_CORES or more during the window, keeping the last.
 */
async function measurePart<T extends { cpu: CpuWindow; attempts?: number; discarded?: number[] }>(
  part: string,
  measure: (attempt: number) => Promise<T>,
): Promise<T> {
  const discarded: number[] = [];
  for (let attempt = 1; ; attempt++) {
    await waitForQuiet(part);
    log(`${part}${attempt > 1 ? ` (attempt ${attempt})` : ''}…`);
    const result = await measure(attempt);
    const disturbed = disturbance(result.cpu);
    if (disturbed < DISTURBED_CORES || attempt >= ATTEMPTS) {
      if (disturbed >= DISTURBED_CORES) log(`  disturbed (${disturbed.toFixed(2)} cores of other processes); kept`);
      return { ...result, attempts: attempt, discarded };
    }
    const top = result.cpu.topOthers.map((o) => `${o.name}[${o.pid}] ${o.cores.toFixed(2)}`).join(', ');
    log(`  disturbed: other processes used ${disturbed.toFixed(2)} cores (${top}); measuring again`);
    discarded.push(Math.round(disturbed * 100) / 100);
  }
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const postgres = await postgresSettings();
  if (!postgres) throw new Error(`Postgres does not answer at ${POSTGRES_URL} (set BENCH_POSTGRES_URL).`);
  usedPostgres = true;
  log(
    `${quick ? 'quick' : 'full'} mode; Postgres schemas ${baseSchema}*, SQLite in ${tmp}; ` +
      `latency ${latencyConfig.sequentialTasks}×${latencyConfig.sequentialEvents} + ${latencyConfig.concurrentTasks}×${latencyConfig.concurrentEvents} events at ${latencyConfig.intervalMs} ms; ` +
      `throughput ${throughputConfig.connections} connections, ${throughputConfig.durationS} s after ${throughputConfig.warmupS} s warm-up`,
  );

  const latency: StoreLatencyResult[] = [];
  const stores = [
    {
      store: 'postgres' as const,
      url: (attempt: number) => postgresUrl(`${baseSchema}_lat${attempt}`),
      description: 'Postgres, a fresh schema; followers woken by LISTEN/NOTIFY',
    },
    {
      store: 'sqlite' as const,
      url: (attempt: number) => `sqlite:${join(tmp, `xw-${attempt}.db`)}`,
      description: 'SQLite, a file in a temp dir (sqlite:<path>, store defaults: poll every 50 ms)',
    },
  ];
  for (const { store, url, description } of stores) {
    const result = await measurePart(`latency on ${store}`, (attempt) =>
      measureLatency(store, url(attempt), description, latencyConfig, trackCluster),
    );
    latency.push(result);
    const { same, cross } = result.all;
    log(
      `  ${store}: ${cross.n} pairs; same-worker p50 ${same.p50.toFixed(2)} p99 ${same.p99.toFixed(2)} ms; ` +
        `cross-worker p50 ${cross.p50.toFixed(2)} p99 ${cross.p99.toFixed(2)} max ${cross.max.toFixed(2)} ms` +
        (result.checks.problems.length > 0 ? `; ${result.checks.problems.length} problems` : ''),
    );
  }

  const throughput: ThroughputRun[] = [];
  const plan = [
    { label: '1 worker (before)', workers: 1, suffix: 't1a' },
    { label: '2 workers', workers: 2, suffix: 't2' },
    { label: '1 worker (after)', workers: 1, suffix: 't1b' },
  ];
  for (const { label, workers, suffix } of plan) {
    const run = await measurePart(`message/send on Postgres, ${label}`, async (attempt) => {
      const schema = `${baseSchema}_${suffix}${attempt}`;
      try {
        return await measureThroughput(
          label,
          workers,
          postgresUrl(schema),
          POSTGRES_URL,
          schema,
          throughputConfig,
          trackCluster,
        );
      } finally {
        await dropSchema(schema);
      }
    });
    throughput.push(run);
    log(
      `  ${label}: ${run.combined.reqPerSec.toFixed(0)} req/s, p50 ${run.combined.conservative.p50} p99 ${run.combined.conservative.p99} ms, ` +
        `${run.combined.errors} errors, machine ${run.cpu.machineBusyCores.toFixed(2)} of ${run.cpu.cores} cores busy ` +
        `(${JSON.stringify(run.cpu.groups)}, others ${JSON.stringify(run.cpu.topOthers)}, ` +
        `kernel ${run.cpu.unattributedCores.toFixed(2)}, steal ${run.cpu.machine.steal.toFixed(2)})`,
    );
  }

  const capped = await measureCapped(throughput).catch((error: unknown): CappedPart => {
    // The part must not cost the rest of the run: report why it is missing.
    log(`capped workers failed: ${(error as Error).message}`);
    return { available: false, reason: `the part failed: ${(error as Error).message}` };
  });

  const result: CrossWorkerResult = {
    kind: 'cross-worker',
    workerRuntime: 'compiled',
    date: startedAt.toISOString(),
    mode: quick ? 'quick' : 'full',
    machine: machineInfo(),
    repo: repoInfo(),
    postgres,
    config: { latency: latencyConfig, throughput: throughputConfig },
    latency: latency.map(({ samples, ...rest }) => ({
      ...rest,
      histogram: {
        same: histogram(samples.map((s) => s.same)),
        cross: histogram(samples.map((s) => s.cross)),
      },
    })),
    throughput,
    capped,
  };
  const file = join(RESULTS_DIR, `cross-worker-${today()}${quick ? '-quick' : ''}.json`);
  writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  if (quick) {
    log(`wrote ${file} (quick mode: bench/CROSS_WORKER.md left as it is; --render ${file} to see it)`);
  } else {
    writeFile(MARKDOWN, renderMarkdown(result));
    log(`wrote ${file} and ${MARKDOWN}`);
  }
}

/** Part 3: 1, 2, 1 workers again, each worker in a cgroup of its own with a CPU cap. */
async function measureCapped(uncapped: ThroughputRun[]): Promise<CappedPart> {
  const support = detectCgroup(CGROUP_MODE);
  if (!support.available) {
    log(`capped workers: skipped, no usable cpu cgroup (${support.reason})`);
    return { available: false, reason: support.reason };
  }
  const chosen =
    WORKER_CAP > 0
      ? { cores: WORKER_CAP, how: `BENCH_WORKER_CAP=${WORKER_CAP}` }
      : chooseCap(
          uncapped.filter((run) => run.workers === 1),
          2,
        );
  log(`capped workers: ${chosen.cores} cores each (${chosen.how}), cgroup ${support.kind} at ${support.root}`);
  const runs: ThroughputRun[] = [];
  const plan = [
    { label: '1 capped worker (before)', workers: 1, suffix: 'c1a' },
    { label: '2 capped workers', workers: 2, suffix: 'c2' },
    { label: '1 capped worker (after)', workers: 1, suffix: 'c1b' },
  ];
  for (const { label, workers, suffix } of plan) {
    const run = await measurePart(`message/send on Postgres, ${label}`, async (attempt) => {
      const schema = `${baseSchema}_${suffix}${attempt}`;
      const caps = new CpuCaps(support, `${baseSchema}_${suffix}${attempt}`, chosen.cores, CAP_PERIOD_US);
      try {
        return await measureThroughput(
          label,
          workers,
          postgresUrl(schema),
          POSTGRES_URL,
          schema,
          throughputConfig,
          trackCluster,
          caps,
        );
      } finally {
        await dropSchema(schema);
      }
    });
    runs.push(run);
    const throttled = Object.entries(run.cap?.throttling ?? {})
      .map(([w, t]) => `${w} ${t.throttled}/${t.periods} periods, ${(t.throttledMs / 1000).toFixed(1)} s`)
      .join('; ');
    log(
      `  ${label}: ${run.combined.reqPerSec.toFixed(0)} req/s, p50 ${run.combined.conservative.p50} p99 ${run.combined.conservative.p99} ms, ` +
        `${run.combined.errors} errors, machine ${run.cpu.machineBusyCores.toFixed(2)} of ${run.cpu.cores} cores busy ` +
        `(${JSON.stringify(run.cpu.groups)}); throttled: ${throttled}`,
    );
  }
  return {
    available: true,
    kind: support.kind,
    root: support.root,
    cores: chosen.cores,
    periodUs: CAP_PERIOD_US,
    how: chosen.how,
    runs,
  };
}

const renderIndex = process.argv.indexOf('--render');
const renderFrom = renderIndex >= 0 ? process.argv[renderIndex + 1] : undefined;

try {
  if (renderFrom) {
    // Regenerates the Markdown from a results file, measuring nothing.
    writeFile(MARKDOWN, renderMarkdown(JSON.parse(readFileSync(renderFrom, 'utf8')) as CrossWorkerResult));
    log(`wrote ${MARKDOWN} from ${renderFrom}`);
  } else await main();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await cleanup();
  clearTimeout(watchdog);
}
