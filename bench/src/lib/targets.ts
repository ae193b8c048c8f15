/**
 * Issue 22's targets, judged from one run: the throughput and CPU targets from the medians of the
 * alternating rounds, the memory targets from the once-per-server scenarios. Each is judged for the
 * configuration users run (the demo as shipped: push on, pino at `warn`) with the bare one (logger
 * off, push off) beside it.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, fmt } from './env.js';
import type { TargetKind } from './explanations.js';
import { type Comparison, compare, comparisonText, summarize } from './rounds.js';
import type { RunResult, SendResult, ServerResult } from './types.js';

const MB = 1024 * 1024;
const mb = (bytes: number | undefined): string => (bytes === undefined ? '–' : fmt(bytes / MB, 1));
const kb = (bytes: number | undefined): string => (bytes === undefined ? '–' : fmt(bytes / 1024, 1));
const pct = (value: number): string => `${value >= 0 ? '+' : ''}${value.toFixed(1)} %`;

/** Memory after a GC at the end of the measured message/send window and of the sustain window after it. */
export function sustainedGrowth(
  send: SendResult | undefined,
): { rss: [number, number]; heap: [number, number]; rssPct: number; heapPct: number } | undefined {
  if (!send?.sustain) return undefined;
  const a = send.after;
  const b = send.sustain.after;
  return {
    rss: [a.rss, b.rss],
    heap: [a.heapUsed, b.heapUsed],
    rssPct: ((b.rss - a.rss) / a.rss) * 100,
    heapPct: ((b.heapUsed - a.heapUsed) / a.heapUsed) * 100,
  };
}

/** Server bytes per open stream: RSS (after GC) with all open, minus before, over the number open. */
export function perStream(server: ServerResult): { rss: number; heap: number; open: number } | undefined {
  const s = server.streams;
  if (!s?.whileOpen || s.load.openAtMeasure === 0) return undefined;
  const open = s.load.openAtMeasure;
  return {
    rss: (s.whileOpen.rss - s.before.rss) / open,
    heap: (s.whileOpen.heapUsed - s.before.heapUsed) / open,
    open,
  };
}

/** The SDK peer on the same database as a fastify-a2a durable store (sqlite, sqlite-bare → sdk-sqlite), if any. */
export function durablePeerOf(name: string): string | undefined {
  const store = name.replace(/-(bare|info)$/, '');
  return store === 'sqlite' ? 'sdk-sqlite' : store === 'postgres' ? 'sdk-postgres' : undefined;
}

export type Verdict = 'met' | 'missed' | 'not measured';

export interface Measured {
  text: string;
  verdict: Verdict;
}

export interface TargetRow {
  kind: TargetKind;
  target: string;
  /** The demo as shipped (memory, sqlite, postgres). */
  shipped: Measured;
  /** Logger off, push off (memory-bare, sqlite-bare, postgres-bare). */
  bare: Measured;
}

const notMeasured = (text: string): Measured => ({ text, verdict: 'not measured' });

/** Errors in any round of a server's scenario fail the target whatever the rate. */
function roundErrors(result: RunResult, name: string, scenario: 'send' | 'get'): number {
  return summarize(result, name, scenario)?.errors ?? 0;
}

/** A ratio target: `name`'s median over `baseline`'s on a scenario, at least `factor`. */
function ratioTarget(
  result: RunResult,
  name: string,
  baseline: string,
  scenario: 'send' | 'get',
  factor: number,
): Measured {
  const comparison = compare(result, name, baseline, scenario);
  if (!comparison) return notMeasured(`no rounds of ${summarize(result, name, scenario) ? baseline : name}`);
  const errors = roundErrors(result, name, scenario);
  return {
    text: `${comparisonText(comparison)}${errors ? `, ${fmt(errors)} errors` : ''}`,
    verdict: comparison.ratio >= factor && errors === 0 ? 'met' : 'missed',
  };
}

/** message/send against the SDK in memory: the rate at least 3×, the p99 at most half. */
function sendAgainstSdk(result: RunResult, name: string): Measured {
  const rate = compare(result, name, 'sdk', 'send');
  const p99: Comparison | undefined = compare(result, name, 'sdk', 'send', 'p99Ms');
  if (!rate || !p99) return notMeasured('no rounds');
  const errors = roundErrors(result, name, 'send');
  return {
    text: `${comparisonText(rate)} req/s, p99 ${comparisonText(p99)} the SDK's${errors ? `, ${fmt(errors)} errors` : ''}`,
    verdict: rate.ratio >= 3 && p99.ratio <= 0.5 && errors === 0 ? 'met' : 'missed',
  };
}

/** Server CPU per blocking send at most 0.1 ms, the SDK's beside it. */
function cpuPerSend(result: RunResult, name: string): Measured {
  const ours = summarize(result, name, 'send');
  const sdk = summarize(result, 'sdk', 'send');
  if (!ours || !Number.isFinite(ours.cpuPerRequestMs)) return notMeasured('no rounds');
  return {
    text: `${fmt(ours.cpuPerRequestMs, 3)} ms (SDK ${sdk ? fmt(sdk.cpuPerRequestMs, 3) : '–'} ms)`,
    verdict: ours.cpuPerRequestMs <= 0.1 ? 'met' : 'missed',
  };
}

/**
 * Issue 18: blocking message/send with metrics and tracing on (memory-telemetry) at most 5 % slower
 * than the same server with them off (memory), both as shipped; the CPU per send beside it.
 */
function telemetryCost(result: RunResult): Measured {
  const rate = compare(result, 'memory-telemetry', 'memory', 'send');
  const on = summarize(result, 'memory-telemetry', 'send');
  const off = summarize(result, 'memory', 'send');
  if (!rate || !on || !off) return notMeasured('no rounds of memory-telemetry and memory');
  const errors = roundErrors(result, 'memory-telemetry', 'send');
  return {
    text: `${comparisonText(rate)} the rate (${Math.abs((1 - rate.ratio) * 100).toFixed(1)} % ${rate.ratio <= 1 ? 'slower' : 'faster'}), CPU per send ${fmt(on.cpuPerRequestMs, 3)} ms against ${fmt(off.cpuPerRequestMs, 3)} ms${errors ? `, ${fmt(errors)} errors` : ''}`,
    verdict: rate.ratio >= 0.95 && errors === 0 ? 'met' : 'missed',
  };
}

function streamsTarget(result: RunResult, name: string): Measured {
  const server = result.servers.find((s) => s.name === name);
  const s = server?.streams;
  const per = server ? perStream(server) : undefined;
  if (!s || !per) return notMeasured(server?.error ?? 'no result');
  const allOpen = s.load.openAtMeasure === s.load.requested;
  const allFinal = s.load.finals === s.load.requested && s.load.errors === 0;
  const text = `${fmt(s.load.openAtMeasure)} of ${fmt(s.load.requested)} open at once, ${kb(per.rss)} KB RSS each, ${fmt(s.load.finals)} finals, ${s.load.errors} errors`;
  if (per.rss >= 20 * 1024 || !allFinal || !allOpen) return { text, verdict: 'missed' };
  if (s.load.requested < 10_000) return notMeasured(`${text} (only ${fmt(s.load.requested)} streams in this run)`);
  return { text, verdict: 'met' };
}

function rssTarget(result: RunResult, name: string): Measured {
  const server = result.servers.find((s) => s.name === name);
  const growth = sustainedGrowth(server?.send);
  if (!growth) return notMeasured(server?.error ?? 'no result');
  return {
    text: `RSS ${mb(growth.rss[0])} → ${mb(growth.rss[1])} MB (${pct(growth.rssPct)}), heap ${mb(growth.heap[0])} → ${mb(growth.heap[1])} MB (${pct(growth.heapPct)})`,
    verdict: growth.rssPct <= 10 ? 'met' : 'missed',
  };
}

export function evaluateTargets(result: RunResult): TargetRow[] {
  const row = (kind: TargetKind, target: string, judge: (suffix: '' | '-bare') => Measured): TargetRow => ({
    kind,
    target,
    shipped: judge(''),
    bare: judge('-bare'),
  });
  const rows: TargetRow[] = [
    row('get-ceiling', 'tasks/get (memory) ≥ 0.6× the raw-Fastify ceiling', (x) =>
      ratioTarget(result, `memory${x}`, 'ceiling', 'get', 0.6),
    ),
    row('get-minimal', 'tasks/get (memory) ≥ 0.85× the minimal A2A server', (x) =>
      ratioTarget(result, `memory${x}`, 'minimal', 'get', 0.85),
    ),
    row('send-minimal', 'message/send (memory) ≥ 0.75× the minimal A2A server', (x) =>
      ratioTarget(result, `memory${x}`, 'minimal', 'send', 0.75),
    ),
    row('send-memory', 'message/send (memory) ≥ 3× SDK 0.3.14 in memory, p99 ≤ ½ its p99', (x) =>
      sendAgainstSdk(result, `memory${x}`),
    ),
    row('cpu-send', 'server CPU per blocking message/send (memory) ≤ 0.1 ms', (x) => cpuPerSend(result, `memory${x}`)),
    row('send-postgres', 'message/send (Postgres) ≥ 1× SDK in memory', (x) =>
      ratioTarget(result, `postgres${x}`, 'sdk', 'send', 1),
    ),
    row('send-sqlite', 'message/send (SQLite) ≥ 1.5× SDK in memory', (x) =>
      ratioTarget(result, `sqlite${x}`, 'sdk', 'send', 1.5),
    ),
    row(
      'send-postgres-peer',
      "message/send (Postgres) ≥ 3× the SDK's DatabaseTaskStore on Postgres (earlier target)",
      (x) => ratioTarget(result, `postgres${x}`, 'sdk-postgres', 'send', 3),
    ),
    row('send-sqlite-peer', "message/send (SQLite) ≥ 3× the SDK's DatabaseTaskStore on SQLite (earlier target)", (x) =>
      ratioTarget(result, `sqlite${x}`, 'sdk-sqlite', 'send', 3),
    ),
  ];
  rows.push({
    kind: 'telemetry',
    target:
      'message/send (memory) with metrics + tracing on vs off ≤ 5 % slower (SDK installed, every span sampled, no exporter)',
    shipped: telemetryCost(result),
    bare: notMeasured('measured as shipped only'),
  });
  for (const store of ['memory', 'sqlite', 'postgres']) {
    rows.push(
      row('streams', `10,000 held streams < 20 KB RSS each (${store})`, (x) => streamsTarget(result, `${store}${x}`)),
    );
  }
  for (const store of ['memory', 'sqlite', 'postgres']) {
    rows.push(
      row('rss', `RSS flat under sustained load (${store}: RSS after GC grows ≤ 10 % over a second send window)`, (x) =>
        rssTarget(result, `${store}${x}`),
      ),
    );
  }
  return rows;
}

/**
 * The profile share that binds each missed target, as bench/PROFILE.md (and, for the telemetry
 * target, bench/TELEMETRY.md) states it: a line `binds <target kind>: <text>` there (e.g.
 * `binds send-memory: JSON.stringify of the result, 18 % of busy time`), written by whoever
 * profiles it. Read at render time, so RESULTS.md carries the profile's current word without a
 * copy kept here.
 */
export function readBindingShares(
  paths = [join(BENCH_DIR, 'PROFILE.md'), join(BENCH_DIR, 'TELEMETRY.md')],
): Map<string, string> {
  const shares = new Map<string, string>();
  for (const path of paths) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    for (const match of text.matchAll(/^\s*(?:[-*]\s+)?`?binds ([a-z0-9-]+)`?:\s*(.+)$/gm)) {
      shares.set(match[1] as string, (match[2] as string).trim());
    }
  }
  return shares;
}
