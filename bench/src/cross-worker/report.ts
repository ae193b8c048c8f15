/** The results file of the cross-worker benchmark and its Markdown rendering (bench/CROSS_WORKER.md). */

import { fmt, type MachineInfo, machineLine, type RepoInfo, ratio, settingsLine } from '../lib/env.js';
import type { CgroupKind } from './cgroup.js';
import type { LatencyConfig, LatencySummary, StoreLatencyResult } from './latency.js';
import { type PerRequest, perRequest, pooled, predictSeparate, predictShared } from './model.js';
import { type CpuWindow, DISTURBED_CORES, type Distribution, disturbance } from './stats.js';
import type { ThroughputConfig, ThroughputRun } from './throughput.js';

export interface Histogram {
  bucketMs: number;
  /** counts[k]: values in [k·bucketMs, (k+1)·bucketMs). */
  counts: number[];
  /** Values of counts.length·bucketMs or more. */
  overflow: number;
}

export function histogram(values: number[], bucketMs = 5, buckets = 20): Histogram {
  const counts = new Array<number>(buckets).fill(0);
  let overflow = 0;
  for (const value of values) {
    const k = Math.floor(Math.max(0, value) / bucketMs);
    if (k < buckets) counts[k] = (counts[k] ?? 0) + 1;
    else overflow++;
  }
  return { bucketMs, counts, overflow };
}

export type StoreLatencyRecord = Omit<StoreLatencyResult, 'samples'> & {
  histogram: { same: Histogram; cross: Histogram };
};

export interface CrossWorkerResult {
  kind: 'cross-worker';
  date: string;
  mode: 'quick' | 'full';
  machine: MachineInfo;
  repo: RepoInfo;
  postgres: Record<string, string>;
  config: { latency: LatencyConfig; throughput: ThroughputConfig };
  latency: StoreLatencyRecord[];
  throughput: ThroughputRun[];
  /** Part 3 (absent in results written before it existed). */
  capped?: CappedPart;
  /** How the workers ran: compiled by esbuild to plain JavaScript; absent: through tsx (older results). */
  workerRuntime?: 'compiled';
}

/** Part 3: the message/send runs with every worker in a cgroup of its own, or why there are none. */
export type CappedPart =
  | {
      available: true;
      kind: CgroupKind;
      /** The cpu hierarchy the groups were created in. */
      root: string;
      /** Cores per worker. */
      cores: number;
      periodUs: number;
      /** How the cap was chosen. */
      how: string;
      runs: ThroughputRun[];
    }
  | { available: false; reason: string };

const ms = (value: number): string => fmt(value, value < 10 ? 2 : 1);
const cores = (value: number | undefined): string => fmt(value, 2);
const storeName = (store: string): string => (store === 'postgres' ? 'Postgres' : 'SQLite');

function latencyRow(store: string, stream: string, d: Distribution, same?: Distribution): string {
  return `| ${store} | ${stream} | ${d.n} | ${ms(d.p50)} | ${ms(d.p90)} | ${ms(d.p99)} | ${ms(d.max)} | ${
    same ? ratio(d.p50, same.p50) : '1.00×'
  } | ${same ? ratio(d.p99, same.p99) : '1.00×'} |`;
}

function phaseRow(store: string, phase: string, s: LatencySummary): string {
  return `| ${store} | ${phase} | ${s.cross.n} | ${ms(s.same.p50)} | ${ms(s.same.p99)} | ${ms(s.cross.p50)} | ${ms(
    s.cross.p99,
  )} | ${ms(s.extra.p50)} | ${ms(s.extra.p99)} | ${ms(s.extra.max)} |`;
}

function histogramTable(record: StoreLatencyRecord): string[] {
  const { same, cross } = record.histogram;
  const rows: string[] = [];
  const peak = Math.max(1, ...cross.counts, cross.overflow);
  const bar = (n: number): string => '█'.repeat(Math.round((n / peak) * 30));
  const last = Math.max(
    same.counts.findLastIndex((n) => n > 0),
    cross.counts.findLastIndex((n) => n > 0),
  );
  for (let k = 0; k <= last; k++) {
    const c = cross.counts[k] ?? 0;
    rows.push(`| ${k * cross.bucketMs}–${(k + 1) * cross.bucketMs} | ${same.counts[k] ?? 0} | ${c} | ${bar(c)} |`);
  }
  if (same.overflow + cross.overflow > 0) {
    rows.push(
      `| ≥ ${cross.counts.length * cross.bucketMs} | ${same.overflow} | ${cross.overflow} | ${bar(cross.overflow)} |`,
    );
  }
  return [
    `${storeName(record.store)}: events per ${cross.bucketMs} ms of latency (all pairs)`,
    '',
    '| ms | same-worker | cross-worker | cross-worker |',
    '| --- | ---: | ---: | --- |',
    ...rows,
  ];
}

function othersText(cpu: CpuWindow): string {
  const top = cpu.topOthers.filter((o) => o.cores >= 0.01);
  return `${cores(cpu.otherProcessCores)}${
    top.length > 0 ? ` (${top.map((o) => `${o.name} ${cores(o.cores)}`).join(', ')})` : ''
  }`;
}

/** Machine CPU ms per request in the window. */
function cpuPerRequest(run: ThroughputRun): number {
  return run.combined.total > 0 ? (run.cpu.machineBusyCores * run.cpu.seconds * 1000) / run.combined.total : Number.NaN;
}

/** CPU ms of the worker processes per request in the window. */
function workerCpuPerRequest(run: ThroughputRun): number {
  const workers = Object.entries(run.cpu.groups)
    .filter(([name]) => name.startsWith('worker '))
    .reduce((sum, [, v]) => sum + v, 0);
  return run.combined.total > 0 ? (workers * run.cpu.seconds * 1000) / run.combined.total : Number.NaN;
}

function runCpuRow(run: ThroughputRun): string {
  const groups = run.cpu.groups;
  const workers = Object.entries(groups)
    .filter(([name]) => name.startsWith('worker '))
    .map(([name, value]) => `${name.slice('worker '.length)} ${cores(value)}`)
    .join(', ');
  const perRequest = cpuPerRequest(run);
  const pgSplit = run.cpu.postgresBreakdown;
  const postgres = pgSplit
    ? `${cores(groups.postgres)} (workers' sessions ${cores(pgSplit.workers)}, server ${cores(pgSplit.server)}, sampler ${cores(
        pgSplit.sampler,
      )}, other sessions ${cores(pgSplit.others)})`
    : cores(groups.postgres);
  return `| ${run.label} | ${cores(run.cpu.machineBusyCores)} of ${run.cpu.cores} | ${fmt(perRequest, 2)} | ${workers} | ${postgres} | ${cores(groups['load generator'])} | ${othersText(run.cpu)} | ${cores(run.cpu.unattributedCores)} | ${cores(
    run.cpu.machine.steal,
  )} | ${fmt(run.cpu.loadavg1mAtEnd, 2)} |`;
}

function waitsLine(run: ThroughputRun): string {
  const entries = Object.entries(run.postgresWaits).filter(([, v]) => v >= 0.05);
  const total = Object.values(run.postgresWaits).reduce((sum, v) => sum + v, 0);
  return `- ${run.label}: ${fmt(total, 2)} active backends on average; ${
    entries.length > 0 ? entries.map(([wait, v]) => `${wait} ${fmt(v, 2)}`).join(', ') : 'none sampled'
  }. Waiting for the NOTIFY queue lock (pg_locks, all backends of the server): ${fmt(
    run.notifyLockWaiters.avg,
    2,
  )} on average, at most ${run.notifyLockWaiters.max}.`;
}

const cappedRuns = (r: CrossWorkerResult): ThroughputRun[] => (r.capped?.available ? r.capped.runs : []);

/** The per-worker rows of a set of message/send runs, with a "together" row for runs of several workers. */
function throughputRows(runs: ThroughputRun[]): string[] {
  const lines: string[] = [
    '| run | worker | connections | req/s | p50 ms | p99 ms | max ms | errors |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const run of runs) {
    for (const w of run.perWorker) {
      const errors = w.errors.socket + w.errors.timeouts + w.errors.non2xx + w.errors.badBody;
      lines.push(
        `| ${run.label} | ${w.worker} | ${w.connections} | ${fmt(w.reqPerSec)} | ${fmt(w.latencyMs.p50, 1)} | ${fmt(
          w.latencyMs.p99,
          1,
        )} | ${fmt(w.latencyMs.max, 1)} | ${errors} |`,
      );
    }
    if (run.workers > 1) {
      lines.push(
        `| **${run.label}** | **together** | ${run.connections} | **${fmt(run.combined.reqPerSec)}** | ${fmt(
          run.combined.conservative.p50,
          1,
        )} (exact ${fmt(run.combined.merged.p50, 1)}) | ${fmt(run.combined.conservative.p99, 1)} (exact ${fmt(
          run.combined.merged.p99,
          1,
        )}) | ${fmt(run.combined.merged.max, 1)} | ${run.combined.errors} |`,
      );
    }
  }
  return lines;
}

const CPU_TABLE_HEAD = [
  '| run | machine busy (cores) | machine CPU ms per request | workers | Postgres | load generator | other processes | kernel | steal | load avg 1 min |',
  '| --- | ---: | ---: | --- | --- | ---: | --- | ---: | ---: | ---: |',
];

/** The mean req/s of the 1-worker runs and the 2-worker run of a part, and their ratio. */
function scaling(runs: ThroughputRun[]): {
  one: ThroughputRun[];
  two: ThroughputRun | undefined;
  oneMean: number;
  ratio: number;
} {
  const one = runs.filter((t) => t.workers === 1);
  const two = runs.find((t) => t.workers === 2);
  const oneMean = one.length > 0 ? one.reduce((sum, t) => sum + t.combined.reqPerSec, 0) / one.length : Number.NaN;
  return { one, two, oneMean, ratio: two ? two.combined.reqPerSec / oneMean : Number.NaN };
}

function ratioLine(runs: ThroughputRun[], what: string): string {
  const { one, two, oneMean } = scaling(runs);
  const [before, after] = one;
  return two && before
    ? `**${what}: ${ratio(two.combined.reqPerSec, oneMean)}** of the mean of the two 1-worker runs (${ratio(
        two.combined.reqPerSec,
        before.combined.reqPerSec,
      )} of the run before, ${after ? ratio(two.combined.reqPerSec, after.combined.reqPerSec) : '–'} of the run after; the two 1-worker runs differ by ${
        after ? ratio(after.combined.reqPerSec, before.combined.reqPerSec) : '–'
      })`
    : 'The 2-worker or 1-worker run is missing.';
}

/** A warning line when processes outside the benchmark used a noticeable share of the CPU during a measured window. */
function disturbanceLines(r: CrossWorkerResult): string[] {
  const windows = [
    ...r.latency.map((l) => ({ name: `${storeName(l.store)} latency`, cpu: l.cpu, postgres: l.store === 'postgres' })),
    ...[...r.throughput, ...cappedRuns(r)].map((t) => ({ name: t.label, cpu: t.cpu, postgres: true })),
  ];
  const disturbed = windows.filter((w) => disturbance(w.cpu) >= DISTURBED_CORES);
  const repeated = [...r.latency, ...r.throughput, ...cappedRuns(r)].reduce(
    (sum, part) => sum + (part.discarded?.length ?? 0),
    0,
  );
  const retries =
    repeated > 0
      ? ` ${repeated} measurement${repeated > 1 ? 's were' : ' was'} discarded and repeated because other processes used ${DISTURBED_CORES} cores or more meanwhile.`
      : '';
  if (disturbed.length === 0) {
    return [
      `- Other processes on the machine (including short-lived ones, counted as "kernel" below) used at most ${cores(
        Math.max(...windows.map((w) => disturbance(w.cpu))),
      )} cores during any kept measurement window.${retries}`,
    ];
  }
  return [
    `- ⚠️ Other processes used a noticeable share of the CPU during ${disturbed
      .map((w) => `${w.name} (${othersText(w.cpu)}, kernel/short-lived ${cores(w.cpu.unattributedCores)})`)
      .join('; ')}: those numbers are disturbed.${retries}`,
  ];
}

export function renderMarkdown(r: CrossWorkerResult): string {
  const lc = r.config.latency;
  const tc = r.config.throughput;
  const pg = r.latency.find((l) => l.store === 'postgres');
  const sqlite = r.latency.find((l) => l.store === 'sqlite');
  const { one, two, oneMean } = scaling(r.throughput);
  const before = one[0];
  const dirty =
    r.repo.dirtyPaths.length > 0
      ? ` plus uncommitted changes in ${r.repo.dirtyPaths.join(', ')} (the numbers measure that working tree)`
      : '';
  const lines: string[] = [
    '# fastify-a2a across workers: event latency and message/send scaling',
    '',
    'Generated by `npm run bench:cross-worker` (bench/src/cross-worker.ts) from one run; do not edit by hand.',
    '',
    `- Date: ${r.date}`,
    `- Machine: ${machineLine(r.machine)}`,
    `- Code: commit ${r.repo.commit}${dirty}`,
    `- Mode: ${r.mode}`,
    `- Postgres: local server over loopback (${settingsLine(r.postgres)}); each part of the run on a fresh schema \`bench_xw_<random>_…\`, dropped at the end; the store's default pool (pg \`max\` 10) per worker. SQLite: a file in a temp dir, \`sqlite:<path>\` (the store's defaults: WAL, synchronous=NORMAL, followers poll every 50 ms).`,
    `- Workers: separate Node processes (bench/src/cross-worker/worker.ts${
      r.workerRuntime === 'compiled'
        ? ', compiled by esbuild to bench/dist/cross-worker/worker.mjs and run by plain Node, as `npm run bench` runs its servers'
        : ', run through tsx'
    }), each the fastify-a2a plugin with its default options on its own loopback port, all on the same store URL, as behind a load balancer without sticky sessions (the client here picks the worker itself).`,
    ...disturbanceLines(r),
    `- The machine is shared and has ${r.machine.cores} cores: the workers, Postgres and the client or load generator all run on them. Absolute numbers are noise; read the ratios, each measured within this one run.`,
    '',
    '## Reproduce',
    '',
    '```sh',
    'npm run bench:cross-worker     # = node --conditions=@fastify-a2a/source --import tsx bench/src/cross-worker.ts',
    'BENCH_QUICK=1 npm run bench:cross-worker     # short mode: writes bench/results/cross-worker-<date>-quick.json only',
    'node --conditions=@fastify-a2a/source --import tsx bench/src/cross-worker.ts --render bench/results/cross-worker-<date>.json',
    '```',
    '',
    `Needs Postgres at \`BENCH_POSTGRES_URL\` (default \`postgres://postgres@127.0.0.1:5432/test\`); the run creates and drops its own schemas. \`BENCH_CONNECTIONS\` (64), \`BENCH_DURATION\` (8 s, quick 3), \`BENCH_WARMUP\` (2 s, quick 1) set the throughput part; before each part the run waits up to \`BENCH_QUIET_WAIT_S\` (120 s, quick 0) for the shared machine to be quiet, and measures a part again (up to \`BENCH_ATTEMPTS\`, 3, quick 1) when other processes used ${DISTURBED_CORES} cores or more during it. Part 3 caps each worker with a cgroup of its own: \`BENCH_WORKER_CAP\` (cores per worker; unset: chosen from part 2, see part 3), \`BENCH_CAP_PERIOD_US\` (the CFS period, 100000), \`BENCH_CGROUP\` (\`auto\`: cgroup v1's cpu controller, else v2; \`v1\`, \`v2\`, or \`off\` to skip part 3); it needs write access to the cpu hierarchy (root), and without it the part is reported as skipped. The full run takes about three minutes on a quiet machine and writes bench/results/cross-worker-<date>.json and this file.`,
    '',
    '## 1. Event latency: emitted on worker A → SSE frame on worker B',
    '',
    `Two workers, A and B, on one store. The agent, for \`stamp:<n>:<ms>:<delay>\`, waits \`delay\` (${lc.startDelayMs} ms), then emits n chunks of one artifact \`ms\` (${lc.intervalMs} ms) apart, each a data part \`{ emittedAt }\` stamped just before the update is handed to the runtime. The client sends the message with \`message/stream\` to the origin worker and, as soon as that stream's first frame names the task, opens \`tasks/resubscribe\` on the other worker. Every event then reaches both streams:`,
    '',
    "- **same-worker** (the baseline): the frame on the origin's own `message/stream`;",
    "- **cross-worker**: the frame on the other worker's `tasks/resubscribe`.",
    '',
    `Latency = the client's receive time of the frame's bytes − \`emittedAt\`, both on this host's wall clock with sub-ms resolution (\`performance.timeOrigin + performance.now()\` in each process; the \`Date.now()\` pair is recorded too, see the check below). It covers the runtime queueing the update, the store commit, waking the stream (same worker: the store's in-process notification after its own commit; other worker: Postgres LISTEN/NOTIFY or the SQLite poll), the stream reading the log, the SSE write and the loopback. Each event gives one pair (same, cross), so the two columns are measured on the same events at the same time.`,
    '',
    `Phases: **sequential**, ${lc.sequentialTasks} tasks one after another, ${lc.sequentialEvents} events each, origin A → follower B; **concurrent**, ${lc.concurrentTasks} tasks at once, ${lc.concurrentEvents} events each, origins alternating A, B (followers the other worker). A warm-up task in each direction is not counted.`,
    '',
    '| store | stream | pairs | p50 ms | p90 ms | p99 ms | max ms | p50 vs same | p99 vs same |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const l of r.latency) {
    lines.push(latencyRow(storeName(l.store), 'same-worker (A → A)', l.all.same));
    lines.push(latencyRow(storeName(l.store), '**cross-worker (A → B)**', l.all.cross, l.all.same));
  }
  lines.push(
    '',
    'By phase, with the extra time the other worker takes for the same event (cross − same, per event):',
    '',
    '| store | phase | pairs | same p50 | same p99 | cross p50 | cross p99 | cross − same p50 | cross − same p99 | cross − same max |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const l of r.latency) {
    lines.push(phaseRow(storeName(l.store), 'sequential', l.byPhase.sequential));
    lines.push(phaseRow(storeName(l.store), 'concurrent', l.byPhase.concurrent));
  }
  lines.push('');
  for (const l of r.latency) lines.push(...histogramTable(l), '');

  lines.push('Checks:', '');
  for (const l of r.latency) {
    const c = l.checks;
    lines.push(
      `- ${storeName(l.store)}: ${c.tasks} tasks, ${c.expectedPerStream} events per stream kind; received ${c.sameReceived} same-worker and ${c.crossReceived} cross-worker (${c.excluded} emitted before the follower's snapshot, not counted); ${
        c.problems.length === 0
          ? 'every stream ended with the final event, no event missing'
          : `problems: ${c.problems.join('; ')}`
      }. With \`Date.now()\` on both sides (1 ms steps): same p50 ${ms(l.all.sameMs.p50)} / p99 ${ms(
        l.all.sameMs.p99,
      )} ms, cross p50 ${ms(l.all.crossMs.p50)} / p99 ${ms(l.all.crossMs.p99)} ms. CPU meanwhile: machine ${cores(
        l.cpu.machineBusyCores,
      )} of ${l.cpu.cores} cores busy (workers ${cores(
        (l.cpu.groups['worker A'] ?? 0) + (l.cpu.groups['worker B'] ?? 0),
      )}, client ${cores(l.cpu.groups.client)}${
        l.cpu.groups.postgres !== undefined ? `, Postgres ${cores(l.cpu.groups.postgres)}` : ''
      }, other processes ${othersText(l.cpu)}, kernel/unattributed ${cores(l.cpu.unattributedCores)}).`,
    );
  }
  lines.push('', '### Reading it', '');
  if (pg) {
    lines.push(
      `- **Postgres: cross-worker p50 ${ms(pg.all.cross.p50)} ms, p99 ${ms(pg.all.cross.p99)} ms, against ${ms(
        pg.all.same.p50,
      )} / ${ms(pg.all.same.p99)} ms on the same worker (${ratio(pg.all.cross.p50, pg.all.same.p50)} at p50, ${ratio(
        pg.all.cross.p99,
        pg.all.same.p99,
      )} at p99).** The commit statement queues a \`pg_notify\` that Postgres delivers at commit to every worker's LISTEN connection, while the origin worker tells its own streams when the commit's answer comes back; then both do the same work (read the log after their last sequence, write the frame). ${
        Math.abs(pg.all.extra.p50) < 1
          ? 'So both learn of the event at about the same moment: the'
          : 'Here the other worker learned of it later: the'
      } per-event extra is ${ms(pg.all.extra.p50)} ms at p50 and ${ms(pg.all.extra.p99)} ms at p99 (max ${ms(
        pg.all.extra.max,
      )} ms).`,
    );
  }
  if (sqlite) {
    lines.push(
      `- **SQLite: cross-worker p50 ${ms(sqlite.all.cross.p50)} ms, p99 ${ms(sqlite.all.cross.p99)} ms, against ${ms(
        sqlite.all.same.p50,
      )} / ${ms(sqlite.all.same.p99)} ms on the same worker (${ratio(
        sqlite.all.cross.p50,
        sqlite.all.same.p50,
      )} at p50).** SQLite has no notifications between processes: a worker with open streams polls the file every \`pollIntervalMs\`, 50 ms by default (\`DEFAULT_POLL_INTERVAL_MS\` in packages/store-sqlite/src/sqlite-store.ts; a \`sqlite:<path>\` URL always uses the default, only a \`SqliteStore\` instance passed as \`store\` can change it). An event therefore waits for the follower's next poll tick, uniformly 0–50 ms, 25 ms on average: the extra over the same-worker path is ${ms(
        sqlite.all.extra.p50,
      )} ms at p50 and ${ms(sqlite.all.extra.p99)} ms at p99 (max ${ms(
        sqlite.all.extra.max,
      )} ms), i.e. about half the poll interval typically and about one interval at worst, as expected; the histogram above is that flat 0–50 ms spread. The same-worker path does not poll (the store calls its own subscribers right after a commit).`,
    );
  }
  if (pg && sqlite) {
    lines.push(
      `- Across stores: SQLite's same-worker latency (${ms(sqlite.all.same.p50)} ms p50) is ${
        sqlite.all.same.p50 < pg.all.same.p50 ? 'below' : 'above'
      } Postgres's (${ms(pg.all.same.p50)} ms): a local file commit against a loopback round trip plus a WAL flush. Across workers the order ${
        sqlite.all.cross.p50 > pg.all.cross.p50 ? 'turns around: the poll interval dominates' : 'stays the same'
      } (${ms(sqlite.all.cross.p50)} vs ${ms(pg.all.cross.p50)} ms p50).`,
    );
  }

  lines.push(
    '',
    '## 2. message/send throughput on Postgres: 1 worker vs 2 workers',
    '',
    `Blocking \`message/send\` of "${tc.echoText}" to the demo echo agent (the task gets a working status, 5 artifact chunks and the completed status), a fresh messageId per request (autocannon \`setupRequest\`); a response counts as an error unless it is the completed task. ${tc.connections} connections in total, ${tc.durationS} s after a ${tc.warmupS} s warm-up, each run on its own fresh schema and fresh worker processes. With 2 workers, one autocannon instance per worker with ${tc.connections / 2} connections each, both running at the same time in the same load-generator process as the single instance of the 1-worker runs (so the load generator's capacity is the same in every run). The 1-worker run is done before and after the 2-worker run, to see the drift of the shared machine.`,
    '',
    ...throughputRows(r.throughput),
    '',
    `Latency of "together": the larger of the two instances' percentiles (conservative); "exact" is the percentile over every response time both instances reported.`,
    '',
    `${ratioLine(r.throughput, '2 workers / 1 worker')}.`,
    '',
    `Where the CPU went during each measured window (average cores busy = CPU seconds / wall seconds, from /proc/stat and /proc/<pid>/stat; "machine busy" is user + system + irq + softirq time; "Postgres" is every postgres process on the machine, whoever it serves, split where measured into the backends of the workers' connections (matched by their client port), the server's own processes (walwriter, checkpointer, …), the backend of this benchmark's wait sampler, and other sessions (someone else's work on the shared server, counted as a disturbance); "other processes" are the rest, with the largest named; "kernel" is busy time no process accounts for (interrupt handling, processes that came and went); "steal" is time the hypervisor gave to other guests, not counted as busy):`,
    '',
    ...CPU_TABLE_HEAD,
    ...r.throughput.map(runCpuRow),
    '',
    "What the store's Postgres backends waited on (pg_stat_activity every 100 ms, sessions running this run's schema; average number of active backends per wait event; `CPU` = active with no wait event):",
    '',
    ...r.throughput.map(waitsLine),
    '',
    '### Reading it',
    '',
  );
  if (two && before) {
    const busy = two.cpu.machineBusyCores;
    const workerCores = Object.entries(two.cpu.groups)
      .filter(([name]) => name.startsWith('worker '))
      .reduce((sum, [, v]) => sum + v, 0);
    const lockWaits = Object.entries(two.postgresWaits)
      .filter(([wait]) => wait.startsWith('Lock/'))
      .reduce((sum, [, v]) => sum + v, 0);
    const allWaits = Object.values(two.postgresWaits).reduce((sum, v) => sum + v, 0);
    lines.push(
      `- ${
        two.combined.reqPerSec < oneMean * 0.95
          ? `Two workers served fewer requests per second than one: ${ratio(two.combined.reqPerSec, oneMean)}.`
          : `A second worker gives ${ratio(two.combined.reqPerSec, oneMean)} the throughput of one.`
      } On this ${
        r.machine.cores
      }-core machine that is bounded from the start: the workers, Postgres and the load generator share the same cores. During the 2-worker window the machine was ${cores(
        busy,
      )} of ${two.cpu.cores} cores busy (the two workers ${cores(workerCores)}, Postgres ${cores(
        two.cpu.groups.postgres,
      )}, the load generator ${cores(two.cpu.groups['load generator'])}, other processes ${othersText(
        two.cpu,
      )}, kernel ${cores(two.cpu.unattributedCores)}); during the 1-worker run before it, ${cores(before.cpu.machineBusyCores)} (the worker ${cores(
        Object.entries(before.cpu.groups)
          .filter(([name]) => name.startsWith('worker '))
          .reduce((sum, [, v]) => sum + v, 0),
      )}).`,
      `- Per request, the machine spent ${fmt(cpuPerRequest(two), 2)} ms of CPU with 2 workers against ${fmt(
        cpuPerRequest(before),
        2,
      )} ms with 1 (the workers alone: ${fmt(workerCpuPerRequest(two), 2)} against ${fmt(
        workerCpuPerRequest(before),
        2,
      )} ms)${
        cpuPerRequest(two) > cpuPerRequest(before) * 1.05
          ? ': each request costs more CPU with two processes on the same two cores'
          : ''
      }.`,
      `- ${
        busy >= two.cpu.cores * 0.95
          ? 'The machine was saturated with 2 workers: more workers cannot add throughput here, whatever the store does; a real deployment puts workers, Postgres and clients on separate cores or hosts.'
          : `The machine was close to saturated with 2 workers but still had ${cores(two.cpu.cores - busy)} of ${
              two.cpu.cores
            } cores idle on average: CPU was not the only limit (see what the backends waited on above, and part 4).`
      }`,
      `- Postgres: ${fmt(allWaits, 2)} of the store's backends were active on average with 2 workers, ${fmt(
        lockWaits,
        2,
      )} of them waiting on a lock (\`Lock/…\`). ${
        lockWaits >= allWaits * 0.3 && allWaits > 0
          ? `Every commit of events runs \`pg_notify\` in the same statement, and Postgres serialises the commits of all transactions that sent a NOTIFY: at commit such a transaction takes an exclusive lock on the notification queue, which is one for the whole server (\`Lock/object\`; in pg_locks object 0 of pg_database in database 0, AccessExclusiveLock: ${fmt(
              two.notifyLockWaiters.avg,
              1,
            )} backends waited for it on average with 2 workers, up to ${two.notifyLockWaiters.max}; ${fmt(
              before.notifyLockWaiters.avg,
              1,
            )}, up to ${before.notifyLockWaiters.max}, with 1 worker before), and holds it until its commit, WAL flush included, is over. So the store's event commits go one at a time, each paying its own WAL flush (no group commit), whatever the number of workers; a second worker only brings its own pool (${
              two.workers * 10
            } backends queueing instead of 10: ${fmt(lockWaits, 2)} waiting on that lock on average, against ${fmt(
              Object.entries(before.postgresWaits)
                .filter(([wait]) => wait.startsWith('Lock/'))
                .reduce((sum, [, v]) => sum + v, 0),
              2,
            )} with one worker).`
          : 'Lock waits were not the main wait in this run.'
      }`,
    );
  }
  lines.push('', ...renderCapped(r), ...renderModel(r));
  return `${lines.join('\n')}\n`;
}

const pct = (value: number): string => (Number.isFinite(value) ? `${Math.round(value * 100)}%` : '–');

/** The 2-worker run's verdict against issue 13's target. */
const TARGET_RATIO = 1.6;

function throttleRows(run: ThroughputRun): string[] {
  const cap = run.cap;
  if (!cap) return [];
  return Object.entries(cap.throttling).map(([worker, t]) => {
    const used = run.cpu.groups[`worker ${worker}`] ?? Number.NaN;
    return `| ${run.label} | ${worker} | ${fmt(cap.cores, 2)} | ${cores(used)} | ${pct(used / cap.cores)} | ${fmt(
      t.periods,
    )} | ${fmt(t.throttled)} | ${pct(t.throttled / t.periods)} | ${fmt(t.throttledMs / 1000 / run.cpu.seconds, 2)} |`;
  });
}

function renderCapped(r: CrossWorkerResult): string[] {
  const part = r.capped;
  const lines = ['## 3. message/send with each worker capped: the database has headroom', ''];
  if (!part) return [...lines, 'Not measured: these results were written before part 3 existed.', ''];
  if (!part.available) {
    return [
      ...lines,
      `**Skipped: no usable cpu cgroup controller on this machine** (${part.reason}). Without one the workers cannot be capped, so this run has no measurement where the database has headroom; part 4 models from the uncapped runs only.`,
      '',
    ];
  }
  const quotaUs = Math.round(part.cores * part.periodUs);
  const knob =
    part.kind === 'v1'
      ? `\`cpu.cfs_quota_us\` ${quotaUs} per \`cpu.cfs_period_us\` ${part.periodUs}`
      : `\`cpu.max\` "${quotaUs} ${part.periodUs}"`;
  const { two, oneMean, ratio: r2 } = scaling(part.runs);
  lines.push(
    `Part 2 again, but every worker process runs in a cgroup of its own (cgroup ${part.kind}, under ${part.root}; ${knob} = **${fmt(
      part.cores,
      2,
    )} cores per worker**), entered as soon as the worker is ready (before the warm-up) and removed after it exits. Each worker has its own budget, like a worker alone on a core ${fmt(
      part.cores,
      2,
    )} as fast as this one; Postgres and the load generator are not capped. The point is a setting where the workers, not Postgres or the machine, are the bottleneck, so that the ratio shows what a second worker adds when the database has headroom. The cap was ${
      part.how
    }. Same connections, durations, fresh schemas and fresh workers as part 2.`,
    '',
    ...throughputRows(part.runs),
    '',
    `${ratioLine(part.runs, '2 capped workers / 1 capped worker')}: the ≥ ${TARGET_RATIO}× target is ${
      r2 >= TARGET_RATIO ? '**met**' : '**not met**'
    }.`,
    '',
    'Where the CPU went (as in part 2):',
    '',
    ...CPU_TABLE_HEAD,
    ...part.runs.map(runCpuRow),
    '',
    `Throttling of each worker's group over the measured window (its cpu.stat; a period is ${fmt(
      part.periodUs / 1000,
    )} ms; "throttled" = periods in which the group used up its quota and was stopped until the next period; throttled time per second is summed over the group's threads):`,
    '',
    '| run | worker | cap (cores) | CPU used (cores) | used / cap | periods | throttled periods | throttled | throttled s per s |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...part.runs.flatMap(throttleRows),
    '',
    "What the store's Postgres backends waited on (as in part 2):",
    '',
    ...part.runs.map(waitsLine),
    '',
    '### Reading it',
    '',
  );
  if (two) {
    const busy = two.cpu.machineBusyCores;
    const workers = Object.entries(two.cpu.groups).filter(([name]) => name.startsWith('worker '));
    const used = workers.reduce((sum, [, v]) => sum + v, 0);
    const budget = part.cores * workers.length;
    const throttled = Object.values(two.cap?.throttling ?? {});
    const minShare = Math.min(...throttled.map((t) => t.throttled / t.periods));
    const saturatedWorkers = used >= budget * 0.9 && minShare >= 0.5;
    const headroom = busy <= two.cpu.cores * 0.8;
    lines.push(
      `- With 2 capped workers the machine was ${cores(busy)} of ${two.cpu.cores} cores busy (the workers ${cores(
        used,
      )} of their ${cores(budget)}, Postgres ${cores(two.cpu.groups.postgres)}, the load generator ${cores(
        two.cpu.groups['load generator'],
      )}, other processes ${othersText(two.cpu)}, kernel ${cores(two.cpu.unattributedCores)}): ${
        headroom
          ? `${cores(two.cpu.cores - busy)} cores stayed idle, so neither Postgres nor the machine was short of CPU.`
          : `only ${cores(two.cpu.cores - busy)} cores stayed idle: the cap was not low enough to leave the machine clear headroom (set \`BENCH_WORKER_CAP\` lower).`
      }`,
      `- ${
        saturatedWorkers
          ? `The workers were the bottleneck: together they used ${pct(used / budget)} of their budget and every group was throttled in ${
              minShare >= 0.995 ? 'every one' : `at least ${pct(minShare)}`
            } of its periods`
          : `The workers were not clearly the bottleneck: together they used ${pct(used / budget)} of their budget, and the least throttled group was stopped in ${pct(
              minShare,
            )} of the periods`
      } (the table above); Postgres and the load generator are in no capped group and were never throttled. ${
        saturatedWorkers && headroom
          ? `This is the setting the target is about, and 2 workers served ${fmt(r2, 2)}× the requests of one (${fmt(
              two.combined.reqPerSec,
            )} against ${fmt(oneMean)} req/s): ${
              r2 >= TARGET_RATIO
                ? `the ≥ ${TARGET_RATIO}× target is met; a second worker adds nearly a worker's worth when the database has headroom.`
                : `below the ≥ ${TARGET_RATIO}× target although the database had CPU to spare: a request cost the workers ${fmt(
                    perRequest(two).worker,
                    3,
                  )} ms of their budget with 2 workers against ${fmt(
                    pooled(part.runs.filter((t) => t.workers === 1)).worker,
                    3,
                  )} ms with 1 (part 4, "the cross-worker tax").`
            }`
          : `So this run does not show the setting the target is about; the ratio ${fmt(r2, 2)}× is reported as measured.`
      }`,
      `- Latency is the price of the cap: a worker that has spent its quota stops until the next ${fmt(
        part.periodUs / 1000,
      )} ms period, with its requests in flight; with ${r.config.throughput.connections} connections queueing on budget-bound workers, p50 is mostly queueing (connections / throughput).`,
    );
  }
  lines.push('');
  return lines;
}

function perRequestRow(run: ThroughputRun): string {
  const per = perRequest(run);
  const c = run.postgresCounters;
  const n = run.combined.total;
  const walBusy = run.postgresWaits['IO/WALSync'] ?? 0;
  return `| ${run.label} | ${fmt(per.reqPerSec)} | ${ms(run.combined.merged.p50)} | ${fmt(per.worker, 3)} | ${fmt(
    per.workerMain,
    3,
  )} | ${fmt(per.postgres, 3)} | ${fmt(per.loadGenerator, 3)} | ${fmt(per.kernel, 3)} | ${fmt(per.machine, 3)} | ${
    c ? fmt(c.commits / n, 2) : '–'
  } | ${c ? fmt(c.walSyncs / n, 2) : '–'} | ${c && c.walSyncs > 0 ? fmt(c.commits / c.walSyncs, 1) : '–'} | ${fmt(
    walBusy,
    2,
  )} |`;
}

/** Cores of the shared machine that went to work other than this run's requests. */
function otherCores(run: ThroughputRun): number {
  const pg = run.cpu.postgresBreakdown;
  return run.cpu.otherProcessCores + (pg ? pg.others + pg.sampler : 0);
}

const mean = (xs: number[]): number => xs.reduce((sum, x) => sum + x, 0) / xs.length;

function renderModel(r: CrossWorkerResult): string[] {
  const capped = cappedRuns(r);
  const fullSpeed = r.throughput.filter((t) => t.workers === 1);
  const params: PerRequest = pooled(fullSpeed.length > 0 ? fullSpeed : r.throughput);
  const twoRun = r.throughput.find((t) => t.workers === 2);
  const multi = twoRun ? perRequest(twoRun) : undefined;
  const cappedParams = capped.length > 0 ? pooled(capped) : undefined;
  const cap = r.capped?.available ? r.capped.cores : undefined;
  const machineCores = r.machine.cores;
  const total = params.worker + params.postgres + params.loadGenerator + params.kernel;
  const lines: string[] = [
    '## 4. Where the limit is, and what more cores would give',
    '',
    `CPU per request in every message/send run (CPU ms of the window / requests). "Postgres" here is the backends of the workers' connections and the server's own processes (walwriter, checkpointer, …), not the sampler or other sessions; "kernel" = busy time no process accounts for, as in the CPU tables; "machine" is all busy time, other processes included. Commits, WAL flushes: deltas of pg_stat_database.xact_commit (of the bench database) and pg_stat_wal.wal_sync over the window, whole server, approximate (backends report them at most once a second); fewer commits than requests means the store's group commit put several requests' events in one transaction. "WAL flush busy": the average number of the store's backends in \`IO/WALSync\`, i.e. about the share of the time a WAL flush was under way (flushes go one at a time).`,
    '',
    '| run | req/s | p50 ms | workers ms | of it main threads ms | Postgres ms | load generator ms | kernel ms | machine ms | commits / request | WAL flushes / request | commits per WAL flush | WAL flush busy |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...[...r.throughput, ...capped].map(perRequestRow),
    '',
  ];
  if (cappedParams) {
    lines.push(
      `**The cost per request is not a constant.** A capped worker spent ${fmt(cappedParams.worker, 3)} ms of CPU per request (its main thread ${fmt(
        cappedParams.workerMain,
        3,
      )}), against ${fmt(params.worker, 3)} ms (main thread ${fmt(
        params.workerMain,
        3,
      )}) for an uncapped one; Postgres ${fmt(cappedParams.postgres, 3)} against ${fmt(
        params.postgres,
        3,
      )} ms. A capped worker holds each of its ${r.config.throughput.connections} requests several times longer (p50 above), so more of their objects survive the young-generation collections and have to be marked and swept by the major GC, which runs on V8's helper threads (the difference between "workers" and "of it main threads"); and fewer requests share each of the store's batched commits and each WAL flush. So the capped runs measure scaling, but their per-request cost is not that of a worker on a full core.`,
      '',
    );
  }
  lines.push(
    `The model is a CPU budget. Per request, the workers spend w, Postgres p, the load generator g and the kernel k ms of CPU; a worker can use at most c cores (its cgroup quota, or 1: one core per worker, its JavaScript thread and GC helpers together), Postgres P cores; on the shared machine other work (other processes, other Postgres sessions, the bench's wait sampler) took o cores during the window:`,
    '',
    '- everything on C shared cores (the runs here): **X ≈ min(W × c / w, (C − o) / (w + p + g + k))**;',
    '- workers and Postgres on separate cores, the load generator elsewhere: **X ≈ min(W / w, P / p)**.',
    '',
    `Parameters at full speed, from part 2's 1-worker runs together (their CPU seconds over their requests): **w = ${fmt(
      params.worker,
      3,
    )} ms, p = ${fmt(params.postgres, 3)} ms, g = ${fmt(params.loadGenerator, 3)} ms, k = ${fmt(
      params.kernel,
      3,
    )} ms** (${fmt(total, 3)} ms in all). One worker on a full core of its own could serve 1000 / w = ${fmt(
      1000 / params.worker,
    )} req/s; one core of Postgres 1000 / p = ${fmt(1000 / params.postgres)} req/s.`,
    '',
    `Predicted against measured on this ${machineCores}-core machine (C = ${machineCores}; c = 1 for the uncapped workers${
      cap !== undefined ? `, ${fmt(cap, 2)} for the capped ones` : ''
    }). "Full-speed costs" uses the parameters above for every run; "the run's own costs" uses each run's own w, p, g, k (the table above), which says which resource bound given what a request cost in that run:`,
    '',
    "| run | W | c | o | workers limit W × c / w | machine limit (C − o) / (w + p + g + k) | predicted, full-speed costs | binds | predicted, the run's own costs | binds | measured req/s | measured / full-speed | measured / own |",
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- | ---: | ---: | ---: |',
  );
  const checks = [...r.throughput, ...capped].map((run) => {
    const c = run.cap ? run.cap.cores : 1;
    const o = otherCores(run);
    const prediction = predictShared(params, run.workers, c, run.cpu.cores, o);
    const own = predictShared(perRequest(run), run.workers, c, run.cpu.cores, o);
    lines.push(
      `| ${run.label} | ${run.workers} | ${fmt(c, 2)} | ${cores(o)} | ${fmt(prediction.workerLimit)} | ${fmt(
        prediction.machineLimit,
      )} | ${fmt(prediction.predicted)} | ${prediction.binds} | ${fmt(own.predicted)} | ${own.binds} | ${fmt(
        run.combined.reqPerSec,
      )} | ${ratio(run.combined.reqPerSec, prediction.predicted)} | ${ratio(run.combined.reqPerSec, own.predicted)} |`,
    );
    return { run, prediction, own, share: run.combined.reqPerSec / prediction.predicted };
  });
  const uncapped1 = checks.filter((k) => !k.run.cap && k.run.workers === 1);
  const uncapped2 = checks.find((k) => !k.run.cap && k.run.workers === 2);
  const capped1 = checks.filter((k) => k.run.cap && k.run.workers === 1);
  const capped2 = checks.find((k) => k.run.cap && k.run.workers === 2);
  lines.push('', '### The limit on this machine', '');
  if (uncapped1.length > 0 && uncapped2) {
    const p1 = uncapped1[0]?.prediction;
    const p2 = uncapped2.prediction;
    const measuredRatio = uncapped2.run.combined.reqPerSec / mean(uncapped1.map((k) => k.run.combined.reqPerSec));
    lines.push(
      `- **1 uncapped worker: ${p1?.binds ?? '–'} binds** (${fmt(p1?.predicted)} req/s predicted: the machine's ${machineCores} cores${
        p1 && p1.machineLimit < p1.workerLimit ? ` over ${fmt(total, 3)} ms of CPU per request` : ''
      }, against ${fmt(p1?.workerLimit)} req/s the worker could do on a full core); measured ${uncapped1.map((k) => fmt(k.run.combined.reqPerSec)).join(' and ')} req/s, ${uncapped1
        .map((k) => ratio(k.share, 1))
        .join(' and ')} of the prediction. The worker used ${uncapped1
        .map((k) => cores(k.run.cpu.groups['worker A']))
        .join(' and ')} cores: it was not its own limit; the machine was ${uncapped1
        .map((k) => cores(k.run.cpu.machineBusyCores))
        .join(' and ')} of ${machineCores} cores busy.`,
      `- **2 uncapped workers: ${p2.binds} binds** (${fmt(p2.predicted)} req/s predicted${
        p1 ? `, ${ratio(p2.predicted, p1.predicted)} of one worker` : ''
      }): ${
        p2.binds === 'machine CPU'
          ? "a second worker adds worker capacity, but the machine's cores were already the limit with one, and every request still needs its Postgres, load-generator and kernel CPU on the same cores;"
          : 'the workers could still use more;'
      } measured ${fmt(uncapped2.run.combined.reqPerSec)} req/s, ${ratio(uncapped2.share, 1)} of the prediction, ${ratio(
        measuredRatio,
        1,
      )} of one worker.`,
    );
    const below = [...uncapped1, uncapped2].filter((k) => k.share < 0.85);
    if (below.length > 0) {
      lines.push(
        `- Below the CPU budget by more than 15% (${below.map((k) => `${k.run.label} ${ratio(k.share, 1)}`).join(', ')}): near saturation not every idle moment of a core can be used (a process that wakes up waits in the run queue while the other core is busy; the machine was ${below
          .map((k) => cores(k.run.cpu.machineBusyCores))
          .join(
            ', ',
          )} busy), and requests also wait for things that take no CPU: mostly WAL flushes (the backends' main waits in part 2 are \`LWLock/WALWrite\`, queueing for the one flush under way, and \`IO/WALSync\`, the flush itself). There the model is an upper bound, not a fit.`,
      );
    }
  }
  if (capped1.length > 0 && capped2) {
    const ownRatio = capped2.own.predicted / mean(capped1.map((k) => k.own.predicted));
    const measuredRatio = capped2.run.combined.reqPerSec / mean(capped1.map((k) => k.run.combined.reqPerSec));
    lines.push(
      `- **Capped workers: ${capped2.own.binds === 'workers' ? 'the workers bind' : 'machine CPU binds'}**, with 1 worker and with 2. The model's ratio is ${ratio(
        capped2.prediction.predicted,
        mean(capped1.map((k) => k.prediction.predicted)),
      )} with full-speed costs and ${fmt(ownRatio, 2)}× with the runs' own; measured ${fmt(
        measuredRatio,
        2,
      )}×. In absolute terms full-speed costs over-predict the capped runs (measured ${[...capped1, capped2]
        .map((k) => ratio(k.share, 1))
        .join(
          ', ',
        )} of the prediction), by the rise in CPU per request described above; with the runs' own costs the prediction is the measurement (${[
        ...capped1,
        capped2,
      ]
        .map((k) => ratio(k.run.combined.reqPerSec, k.own.predicted))
        .join(', ')}), i.e. the workers spent their whole budget and nothing else bound.`,
    );
  }
  if (multi) {
    const cappedOne = capped.filter((t) => t.workers === 1);
    const cappedTwo = capped.find((t) => t.workers === 2);
    const c1 = cappedOne.length > 0 ? pooled(cappedOne) : undefined;
    const c2 = cappedTwo ? perRequest(cappedTwo) : undefined;
    const commits = (t: ThroughputRun | undefined): number =>
      t?.postgresCounters ? t.postgresCounters.commits / t.combined.total : Number.NaN;
    const commits1 = mean(fullSpeed.map(commits));
    lines.push(
      `- **A second worker costs CPU per request: the cross-worker tax.** With 2 workers a request cost the workers ${fmt(
        multi.worker,
        3,
      )} ms of CPU against ${fmt(params.worker, 3)} ms with 1 (${ratio(multi.worker, params.worker)}; main threads ${fmt(
        multi.workerMain,
        3,
      )} against ${fmt(params.workerMain, 3)} ms)${
        c1 && c2
          ? `, and the capped workers ${fmt(c2.worker, 3)} against ${fmt(c1.worker, 3)} ms (${ratio(c2.worker, c1.worker)})`
          : ''
      }; Postgres ${fmt(multi.postgres, 3)} against ${fmt(params.postgres, 3)} ms. Commits per request went from ${fmt(
        commits1,
        2,
      )} to ${fmt(
        commits(twoRun),
        2,
      )}: each worker's group commit batches only its own requests, so with the connections split over two workers each batch holds about half as many, and every request carries more of a commit's fixed cost (statement, round trip, WAL flush wait); each worker also receives every other worker's NOTIFYs. ${
        c1 && c2
          ? `With the workers binding, 2 workers serve 2 × w₁ / w₂ = ${fmt((2 * c1.worker) / c2.worker, 2)}× of one: that, not Postgres, is why part 3 ${
              scaling(capped).ratio >= TARGET_RATIO ? 'stayed below 2×' : `stayed below ${TARGET_RATIO}×`
            }.`
          : ''
      } The model below therefore uses the 2-worker costs for 2 or more workers.`,
    );
  }
  const waits = r.throughput.find((t) => t.workers === 2);
  if (waits) {
    const walBusy = waits.postgresWaits['IO/WALSync'] ?? 0;
    if (walBusy > 0.05) {
      lines.push(
        `- The WAL: in the 2-worker run of part 2 a flush was under way ${pct(walBusy)} of the time${
          waits.postgresCounters && waits.postgresCounters.walSyncs > 0
            ? `, ${fmt(waits.postgresCounters.commits / waits.postgresCounters.walSyncs, 1)} commits per flush`
            : ''
        }. Flushes go one at a time, so at that many commits per flush the flush device would be busy all the time at about ${fmt(
          waits.combined.reqPerSec / walBusy,
        )} req/s (${fmt(waits.combined.reqPerSec)} / ${fmt(walBusy, 2)}). That is not a hard ceiling: with more requests waiting, each flush carries more commits (Postgres' group commit, and the store's own batching of commits that wait at the same moment), so the flush rate grows slower than the request rate.`,
      );
    }
  }

  lines.push(
    '',
    '### More cores',
    '',
    `Predicted req/s with the workers and Postgres on separate cores (one core per worker, the rest for Postgres, the split with the most throughput), the load generator on other cores; with 1 worker from the full-speed w and p above, with more from ${
      multi
        ? `part 2's 2-worker run (w = ${fmt(multi.worker, 3)} ms, p = ${fmt(multi.postgres, 3)} ms: the cross-worker tax, assumed not to grow further with more workers)`
        : 'the same (no 2-worker run)'
    }:`,
    '',
    '| cores | workers | Postgres cores | workers limit W / w | Postgres limit P / p | predicted req/s | binds | 1 worker, the rest Postgres | best / 1 worker |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |',
  );
  const separate = [2, 4, 8, 16].map((c) => predictSeparate(params, c, multi));
  for (const s of separate) {
    lines.push(
      `| ${s.cores} | ${s.workers} | ${s.postgresCores} | ${fmt(s.workerLimit)} | ${fmt(s.postgresLimit)} | **${fmt(
        s.predicted,
      )}** | ${s.binds} | ${fmt(s.oneWorker)} | ${ratio(s.predicted, s.oneWorker)} |`,
    );
  }
  const m = multi ?? params;
  const share = m.worker / (m.worker + m.postgres);
  const responseMs = mean(fullSpeed.map((t) => t.combined.merged.mean));
  const two = Math.min(2000 / m.worker, 2000 / m.postgres);
  const one = Math.min(1000 / params.worker, 2000 / params.postgres);
  lines.push(
    '',
    `- Balance: with several workers a worker costs ${fmt(m.worker, 3)} ms and Postgres ${fmt(m.postgres, 3)} ms per request, so the best split gives about ${pct(
      share,
    )} of the cores to workers and ${pct(1 - share)} to Postgres: each worker core needs ${fmt(
      m.postgres / m.worker,
      2,
    )} Postgres cores beside it. With 2 workers and 2 Postgres cores (4 cores): ${fmt(two)} req/s, ${ratio(
      two,
      one,
    )} of 1 worker on the same Postgres cores: ${
      two / one >= TARGET_RATIO
        ? `the ≥ ${TARGET_RATIO}× of part 3, when Postgres has room for both`
        : 2000 / m.postgres <= 2000 / m.worker
          ? `below ${TARGET_RATIO}×: Postgres binds first`
          : `below ${TARGET_RATIO}×: the workers bind, at the 2-worker cost per request of part 2 (the cross-worker tax above), measured with every process on this machine's 2 saturated cores`
    }.`,
    `- Assumed: Postgres' CPU work spreads over its cores (each connection is its own backend process); the workers share nothing but the database; the CPU per request stays at the full-speed figures as the load grows (it may fall: the store and Postgres batch more commits per transaction and per flush under more load; it rises when requests wait longer, as the capped runs show); the load generator (${fmt(
      params.loadGenerator,
      3,
    )} ms per request here) and the kernel's share (${fmt(params.kernel, 3)} ms) are left out.`,
    `- Ignored: the WAL flush device (its latency and the one-at-a-time flushes; see the estimate above: on more cores it becomes the ceiling once the CPU limits pass it, unless group commit packs more commits per flush), lock waits (the NOTIFY queue lock and row locks; part 2 shows their share), network round trips between hosts (each request's commits wait for one), memory bandwidth and caches, and the closed loop's connection count (${r.config.throughput.connections} connections must be enough to keep every core busy: by Little's law, ${fmt(
      separate[separate.length - 1]?.predicted,
    )} req/s at the ${ms(responseMs)} ms mean response of part 2's 1-worker runs takes about ${fmt(
      ((separate[separate.length - 1]?.predicted ?? 0) * responseMs) / 1000,
    )} requests in flight). It is an upper bound from CPU; the tables above show how far below it this machine lands.`,
    '',
  );
  return lines;
}
