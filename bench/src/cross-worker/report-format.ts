/** Formatting helpers and row builders the parts of bench/CROSS_WORKER.md share (report.ts, report-capped.ts, report-model.ts). */

import { fmt, ratio } from '../lib/env.js';
import type { LatencySummary } from './latency.js';
import type { CrossWorkerResult, StoreLatencyRecord } from './report.js';
import { type CpuWindow, DISTURBED_CORES, type Distribution, disturbance } from './stats.js';
import type { ThroughputRun } from './throughput.js';

export const ms = (value: number): string => fmt(value, value < 10 ? 2 : 1);
export const cores = (value: number | undefined): string => fmt(value, 2);
export const storeName = (store: string): string => (store === 'postgres' ? 'Postgres' : 'SQLite');

export function latencyRow(store: string, stream: string, d: Distribution, same?: Distribution): string {
  return `| ${store} | ${stream} | ${d.n} | ${ms(d.p50)} | ${ms(d.p90)} | ${ms(d.p99)} | ${ms(d.max)} | ${
    same ? ratio(d.p50, same.p50) : '1.00×'
  } | ${same ? ratio(d.p99, same.p99) : '1.00×'} |`;
}

export function phaseRow(store: string, phase: string, s: LatencySummary): string {
  return `| ${store} | ${phase} | ${s.cross.n} | ${ms(s.same.p50)} | ${ms(s.same.p99)} | ${ms(s.cross.p50)} | ${ms(
    s.cross.p99,
  )} | ${ms(s.extra.p50)} | ${ms(s.extra.p99)} | ${ms(s.extra.max)} |`;
}

export function histogramTable(record: StoreLatencyRecord): string[] {
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

export function othersText(cpu: CpuWindow): string {
  const top = cpu.topOthers.filter((o) => o.cores >= 0.01);
  return `${cores(cpu.otherProcessCores)}${
    top.length > 0 ? ` (${top.map((o) => `${o.name} ${cores(o.cores)}`).join(', ')})` : ''
  }`;
}

/** Machine CPU ms per request in the window. */
export function cpuPerRequest(run: ThroughputRun): number {
  return run.combined.total > 0 ? (run.cpu.machineBusyCores * run.cpu.seconds * 1000) / run.combined.total : Number.NaN;
}

/** CPU ms of the worker processes per request in the window. */
export function workerCpuPerRequest(run: ThroughputRun): number {
  const workers = Object.entries(run.cpu.groups)
    .filter(([name]) => name.startsWith('worker '))
    .reduce((sum, [, v]) => sum + v, 0);
  return run.combined.total > 0 ? (workers * run.cpu.seconds * 1000) / run.combined.total : Number.NaN;
}

export function runCpuRow(run: ThroughputRun): string {
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

export function waitsLine(run: ThroughputRun): string {
  const entries = Object.entries(run.postgresWaits).filter(([, v]) => v >= 0.05);
  const total = Object.values(run.postgresWaits).reduce((sum, v) => sum + v, 0);
  return `- ${run.label}: ${fmt(total, 2)} active backends on average; ${
    entries.length > 0 ? entries.map(([wait, v]) => `${wait} ${fmt(v, 2)}`).join(', ') : 'none sampled'
  }. Waiting for the NOTIFY queue lock (pg_locks, all backends of the server): ${fmt(
    run.notifyLockWaiters.avg,
    2,
  )} on average, at most ${run.notifyLockWaiters.max}.`;
}

export const cappedRuns = (r: CrossWorkerResult): ThroughputRun[] => (r.capped?.available ? r.capped.runs : []);

/** The per-worker rows of a set of message/send runs, with a "together" row for runs of several workers. */
export function throughputRows(runs: ThroughputRun[]): string[] {
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

export const CPU_TABLE_HEAD = [
  '| run | machine busy (cores) | machine CPU ms per request | workers | Postgres | load generator | other processes | kernel | steal | load avg 1 min |',
  '| --- | ---: | ---: | --- | --- | ---: | --- | ---: | ---: | ---: |',
];

/** The mean req/s of the 1-worker runs and the 2-worker run of a part, and their ratio. */
export function scaling(runs: ThroughputRun[]): {
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

export function ratioLine(runs: ThroughputRun[], what: string): string {
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
export function disturbanceLines(r: CrossWorkerResult): string[] {
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

export const pct = (value: number): string => (Number.isFinite(value) ? `${Math.round(value * 100)}%` : '–');

/** The 2-worker run's verdict against issue 13's target. */
export const TARGET_RATIO = 1.6;
