/** The results file of the cross-worker benchmark and its Markdown rendering (bench/CROSS_WORKER.md). */

import { fmt, type MachineInfo, machineLine, type RepoInfo, ratio, settingsLine } from '../lib/env.js';
import type { LatencyConfig, LatencySummary, StoreLatencyResult } from './latency.js';
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
}

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
  return `| ${run.label} | ${cores(run.cpu.machineBusyCores)} of ${run.cpu.cores} | ${fmt(perRequest, 2)} | ${workers} | ${cores(
    groups.postgres,
  )} | ${cores(groups['load generator'])} | ${othersText(run.cpu)} | ${cores(run.cpu.unattributedCores)} | ${cores(
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

/** A warning line when processes outside the benchmark used a noticeable share of the CPU during a measured window. */
function disturbanceLines(r: CrossWorkerResult): string[] {
  const windows = [
    ...r.latency.map((l) => ({ name: `${storeName(l.store)} latency`, cpu: l.cpu, postgres: l.store === 'postgres' })),
    ...r.throughput.map((t) => ({ name: t.label, cpu: t.cpu, postgres: true })),
  ];
  const disturbed = windows.filter((w) => disturbance(w.cpu) >= DISTURBED_CORES);
  const repeated = [...r.latency, ...r.throughput].reduce((sum, part) => sum + (part.discarded?.length ?? 0), 0);
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
  const one = r.throughput.filter((t) => t.workers === 1);
  const two = r.throughput.find((t) => t.workers === 2);
  const oneMean = one.length > 0 ? one.reduce((sum, t) => sum + t.combined.reqPerSec, 0) / one.length : Number.NaN;
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
    '- Workers: separate Node processes (bench/src/cross-worker/worker.ts), each the fastify-a2a plugin with its default options on its own loopback port, all on the same store URL, as behind a load balancer without sticky sessions (the client here picks the worker itself).',
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
    `Needs Postgres at \`BENCH_POSTGRES_URL\` (default \`postgres://postgres@127.0.0.1:5432/test\`); the run creates and drops its own schemas. \`BENCH_CONNECTIONS\` (64), \`BENCH_DURATION\` (8 s, quick 3), \`BENCH_WARMUP\` (2 s, quick 1) set the throughput part; before each part the run waits up to \`BENCH_QUIET_WAIT_S\` (120 s, quick 0) for the shared machine to be quiet, and measures a part again (up to \`BENCH_ATTEMPTS\`, 3, quick 1) when other processes used ${DISTURBED_CORES} cores or more during it. The full run takes about two minutes on a quiet machine and writes bench/results/cross-worker-<date>.json and this file.`,
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
    '| run | worker | connections | req/s | p50 ms | p99 ms | max ms | errors |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const run of r.throughput) {
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
  const before = one[0];
  const after = one[1];
  lines.push(
    '',
    `Latency of "together": the larger of the two instances' percentiles (conservative); "exact" is the percentile over every response time both instances reported.`,
    '',
    two && before
      ? `**2 workers / 1 worker: ${ratio(two.combined.reqPerSec, oneMean)}** of the mean of the two 1-worker runs (${ratio(
          two.combined.reqPerSec,
          before.combined.reqPerSec,
        )} of the run before, ${after ? ratio(two.combined.reqPerSec, after.combined.reqPerSec) : '–'} of the run after; the two 1-worker runs differ by ${
          after ? ratio(after.combined.reqPerSec, before.combined.reqPerSec) : '–'
        }).`
      : 'The 2-worker or 1-worker run is missing.',
    '',
    `Where the CPU went during each measured window (average cores busy = CPU seconds / wall seconds, from /proc/stat and /proc/<pid>/stat; "machine busy" is user + system + irq + softirq time; "Postgres" is every postgres process on the machine, whoever it serves; "other processes" are the rest, with the largest named; "kernel" is busy time no process accounts for (interrupt handling, processes that came and went); "steal" is time the hypervisor gave to other guests, not counted as busy):`,
    '',
    '| run | machine busy (cores) | machine CPU ms per request | workers | Postgres | load generator | other processes | kernel | steal | load avg 1 min |',
    '| --- | ---: | ---: | --- | ---: | ---: | --- | ---: | ---: | ---: |',
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
            } cores idle on average: CPU was not the only limit; the Postgres lock below is the other, and it does not go away with more cores.`
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
  lines.push('');
  return `${lines.join('\n')}\n`;
}
