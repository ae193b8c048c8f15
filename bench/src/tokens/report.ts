/** The results of `npm run bench:tokens` and bench/TOKENS.md made from them. */

import { fmt, type MachineInfo, machineLine, type RepoInfo, settingsLine } from '../lib/env.js';
import { median } from '../lib/rounds.js';

export const SERVERS = [
  { name: 'floor', label: 'a plain node:http server writing the same SSE frames (the floor)' },
  { name: 'sdk', label: '@a2a-js/sdk 0.3.14, in memory' },
  { name: 'memory', label: 'fastify-a2a, memory' },
  { name: 'sqlite', label: 'fastify-a2a, SQLite' },
  { name: 'postgres', label: 'fastify-a2a, Postgres' },
  { name: 'sqlite-2w', label: 'fastify-a2a, SQLite, clients on the other worker' },
  { name: 'postgres-2w', label: 'fastify-a2a, Postgres, clients on the other worker' },
] as const;

export interface LevelResult {
  streams: number;
  chunksExpected: number;
  chunksReceived: number;
  /** Chunks a resubscribing client found in the task snapshot it began with. */
  inSnapshot: number;
  lost: number;
  duplicated: number;
  outOfOrder: number;
  /** Streams that failed (an HTTP error, a timeout, no `completed`). */
  errors: number;
  firstError?: string;
  chunksPerSec: number;
  latencyMs: { p50: number; p99: number; max: number };
  serverCpuUsPerChunk: number;
  databaseCpuUsPerChunk: number;
  loadCpuUsPerChunk: number;
  storeBytesPerChunk: number;
  wallMs: number;
  pass: boolean;
}

export interface ServerRun {
  name: string;
  round: number;
  /** The most concurrent streams that passed (p99 ≤ limit, no error, nothing lost); 0 if none. */
  knee: number;
  levels: LevelResult[];
  finalTask?: { taskBytes: number; textBytes: number; parts: number };
  error?: string;
}

export interface TokensResult {
  date: string;
  machine: MachineInfo;
  repo: RepoInfo;
  config: {
    chunks: number;
    perSecond: number;
    rounds: number;
    levels: number[];
    p99LimitMs: number;
    cpuLevel: number;
    finalTaskChunks: number;
  };
  postgres: Record<string, string> | undefined;
  runs: ServerRun[];
}

/** Delivered chunks/s in the steady window must reach this share of what the agents emit in it for a level to pass. */
export const MIN_DELIVERED_SHARE = 0.9;
/** Streams of a level start evenly over this many ms. */
export const SPREAD_MS = 1000;
/** With the clients on the other worker, the agent waits this long before its first chunk (time to resubscribe). */
export const RESUBSCRIBE_DELAY_MS = 1000;

/**
 * The share of streams × rate the agents emit within the steady window ([SPREAD_MS, the answer's
 * duration] after the first start): all of it when each agent starts at once; less when it waits
 * RESUBSCRIBE_DELAY_MS first (the clients on the other worker), as a stream started at s emits
 * from s + delay on.
 */
export function emittedShare(name: string, config: TokensResult['config']): number {
  const duration = (config.chunks / config.perSecond) * 1000;
  const delay = name.endsWith('-2w') ? RESUBSCRIBE_DELAY_MS : 0;
  const steps = 1000;
  let sum = 0;
  for (let i = 0; i < steps; i++) {
    const start = ((i + 0.5) / steps) * SPREAD_MS;
    sum += Math.max(0, duration - Math.max(SPREAD_MS, start + delay)) / (duration - SPREAD_MS);
  }
  return sum / steps;
}

/**
 * Whether a level passed: no failed stream, nothing lost, duplicated or reordered, p99 within the
 * limit, and the chunks delivered at the rate the agents emit (a saturated server delays the
 * agents' emits too, which the emit → receipt latency alone would not show).
 */
export function levelPasses(level: LevelResult, config: TokensResult['config'], name: string): boolean {
  return (
    level.errors === 0 &&
    level.lost + level.duplicated + level.outOfOrder === 0 &&
    level.latencyMs.p99 <= config.p99LimitMs &&
    level.chunksPerSec >= MIN_DELIVERED_SHARE * emittedShare(name, config) * level.streams * config.perSecond
  );
}

/** The run's knee: the last level that passed before the first that did not (0 if none passed). */
export function kneeOf(run: ServerRun, config: TokensResult['config']): number {
  let knee = 0;
  for (const level of [...run.levels].sort((a, b) => a.streams - b.streams)) {
    if (!levelPasses(level, config, run.name)) break;
    knee = level.streams;
  }
  return knee;
}

/** The runs of a server, their knees judged by {@link levelPasses} (results written before it had only p99 and losses). */
const runsOf = (result: TokensResult, name: string): ServerRun[] =>
  result.runs
    .filter((r) => r.name === name)
    .map((r) => ({
      ...r,
      knee: kneeOf(r, result.config),
      levels: r.levels.map((l) => ({ ...l, pass: levelPasses(l, result.config, r.name) })),
    }));

/** The median knee of a server over its rounds (NaN when it never ran). */
export function medianKnee(result: TokensResult, name: string): number {
  return median(
    runsOf(result, name)
      .filter((r) => !r.error)
      .map((r) => r.knee),
  );
}

/** A level's numbers, medians over the rounds that measured it. */
export function levelMedian(result: TokensResult, name: string, streams: number): LevelResult | undefined {
  const levels = runsOf(result, name)
    .flatMap((r) => r.levels)
    .filter((l) => l.streams === streams);
  if (levels.length === 0) return undefined;
  const m = (f: (l: LevelResult) => number): number => median(levels.map(f));
  const sum = (f: (l: LevelResult) => number): number => levels.reduce((s, l) => s + f(l), 0);
  return {
    streams,
    chunksExpected: m((l) => l.chunksExpected),
    chunksReceived: m((l) => l.chunksReceived),
    inSnapshot: sum((l) => l.inSnapshot),
    lost: sum((l) => l.lost),
    duplicated: sum((l) => l.duplicated),
    outOfOrder: sum((l) => l.outOfOrder),
    errors: sum((l) => l.errors),
    chunksPerSec: m((l) => l.chunksPerSec),
    latencyMs: { p50: m((l) => l.latencyMs.p50), p99: m((l) => l.latencyMs.p99), max: m((l) => l.latencyMs.max) },
    serverCpuUsPerChunk: m((l) => l.serverCpuUsPerChunk),
    databaseCpuUsPerChunk: m((l) => l.databaseCpuUsPerChunk),
    loadCpuUsPerChunk: m((l) => l.loadCpuUsPerChunk),
    storeBytesPerChunk: m((l) => l.storeBytesPerChunk),
    wallMs: m((l) => l.wallMs),
    pass: levels.filter((l) => l.pass).length * 2 > levels.length,
  };
}

const ms = (value: number): string => (Number.isFinite(value) ? value.toFixed(value < 10 ? 1 : 0) : '–');
const lossText = (l: { lost: number; duplicated: number; outOfOrder: number }): string =>
  `${l.lost} / ${l.duplicated} / ${l.outOfOrder}`;

interface Target {
  what: string;
  target: string;
  measured: string;
  met: boolean | undefined;
}

function targets(result: TokensResult): Target[] {
  const { cpuLevel } = result.config;
  const sdkKnee = medianKnee(result, 'sdk');
  const memoryKnee = medianKnee(result, 'memory');
  const knee = (name: string, min: number, what: string): Target => {
    const value = medianKnee(result, name);
    return {
      what,
      target: `≥ ${min} streams`,
      measured: Number.isFinite(value) ? `${value}` : 'not measured',
      met: Number.isFinite(value) ? value >= min : undefined,
    };
  };
  const atSdkKnee = Number.isFinite(sdkKnee) ? levelMedian(result, 'memory', sdkKnee) : undefined;
  const memoryCpu = levelMedian(result, 'memory', cpuLevel)?.serverCpuUsPerChunk;
  const postgresDb = levelMedian(result, 'postgres', cpuLevel)?.databaseCpuUsPerChunk;
  const list: Target[] = [
    {
      what: 'memory: concurrent streams against the SDK',
      target: `≥ the SDK's (${Number.isFinite(sdkKnee) ? sdkKnee : '?'})`,
      measured: Number.isFinite(memoryKnee) ? `${memoryKnee} (${(memoryKnee / sdkKnee).toFixed(2)}×)` : 'not measured',
      met: Number.isFinite(memoryKnee) && Number.isFinite(sdkKnee) ? memoryKnee >= sdkKnee : undefined,
    },
    {
      what: "memory: p50 chunk latency at the SDK's knee",
      target: '≤ 5 ms',
      measured: atSdkKnee ? `${ms(atSdkKnee.latencyMs.p50)} ms at ${sdkKnee} streams` : 'not measured at that level',
      met: atSdkKnee ? atSdkKnee.latencyMs.p50 <= 5 : false,
    },
    {
      what: `memory: server CPU per chunk at ${cpuLevel} streams`,
      target: '≤ 60 µs',
      measured: memoryCpu !== undefined ? `${ms(memoryCpu)} µs` : 'not measured',
      met: memoryCpu !== undefined ? memoryCpu <= 60 : undefined,
    },
    knee('sqlite', 300, 'SQLite, one worker'),
    knee('sqlite-2w', 100, 'SQLite, clients on the other worker'),
    knee('postgres', 300, 'Postgres, one worker'),
    knee('postgres-2w', 200, 'Postgres, clients on the other worker'),
    {
      what: `Postgres: database CPU per chunk at ${cpuLevel} streams`,
      target: '≤ 50 µs',
      measured: postgresDb !== undefined ? `${ms(postgresDb)} µs` : 'not measured',
      met: postgresDb !== undefined ? postgresDb <= 50 : undefined,
    },
  ];
  for (const name of ['memory', 'sqlite', 'postgres']) {
    const finals = runsOf(result, name).flatMap((r) => (r.finalTask ? [r.finalTask] : []));
    const last = finals.at(-1);
    if (!last) continue;
    const limit = 1.5 * last.textBytes + 2048;
    list.push({
      what: `${name}: the final task of a ${result.config.finalTaskChunks}-chunk answer`,
      target: `≤ ${fmt(limit)} bytes (1.5× text + 2 KB), ≤ 10 parts`,
      measured: `${fmt(last.taskBytes)} bytes for ${fmt(last.textBytes)} bytes of text, ${last.parts} parts`,
      met: last.taskBytes <= limit && last.parts <= 10,
    });
  }
  const ours = result.runs.filter((r) => r.name !== 'floor' && r.name !== 'sdk');
  const bad = ours.flatMap((r) => r.levels).reduce((s, l) => s + l.lost + l.duplicated + l.outOfOrder, 0);
  list.push({
    what: 'chunks lost, duplicated or reordered (fastify-a2a, every level, every store)',
    target: '0',
    measured: `${bad}`,
    met: bad === 0,
  });
  return list;
}

export function renderTokens(result: TokensResult): string {
  const { config } = result;
  const lines: string[] = [];
  const verdict = (met: boolean | undefined): string =>
    met === undefined ? 'not measured' : met ? 'met' : '**missed**';
  lines.push('# Token streams: what an LLM agent’s load costs (`npm run bench:tokens`)');
  lines.push('');
  lines.push(
    `Generated by \`npm run bench:tokens\` (bench/src/tokens.ts) on ${result.date.slice(0, 10)} at ${result.repo.commit}` +
      `${result.repo.dirtyPaths.length ? ` with uncommitted changes in ${result.repo.dirtyPaths.join(', ')}` : ''}.`,
  );
  lines.push(`Machine: ${machineLine(result.machine)}. Postgres: ${settingsLine(result.postgres)}.`);
  lines.push('');
  lines.push(
    `Each stream is one task whose agent streams ${config.chunks} chunks of 4 characters at ${config.perSecond} a second ` +
      `(one artifact, \`append\`, the last with \`lastChunk\`; each chunk's emit time rides in its artifact's \`metadata\`, ` +
      `so the text parts are plain, as an LLM's are, and the task's snapshot holds the text in one part). ` +
      `Streams start evenly over one second; the level ` +
      `passes when the p99 of every chunk's latency (the agent's emit → the bytes' arrival at the client) is ≤ ` +
      `${config.p99LimitMs} ms, no stream failed, no chunk was lost, duplicated or reordered, and the chunks arrived at ` +
      `${MIN_DELIVERED_SHARE * 100} % or more of the rate the agents emit them (streams × ${config.perSecond}/s from one second ` +
      `after the first start to the answer's length; with the clients on the other worker each agent first waits ` +
      `${RESUBSCRIBE_DELAY_MS} ms for its client to resubscribe, so ${Math.round(emittedShare('x-2w', config) * 100)} % of that is emitted in the window): a saturated server delays the agents' emits too, which the latency alone would not show. The ramp stops at the ` +
      `first level that does not pass (the knee is the last that did); ${config.cpuLevel} streams is measured in any case, ` +
      `for the CPU per chunk. The highest level is ${Math.max(...config.levels)}: a knee there means at least that many. ${config.rounds} rounds; the order of the servers alternates from round to round; ` +
      `numbers are medians over the rounds. The load generator, the servers and Postgres share the machine's cores.`,
  );
  lines.push('');
  lines.push('## Summary');
  lines.push('');
  lines.push(
    '| server | knee per round | knee (median) | chunks/s at the knee | p50 / p99 at the knee (ms) | server CPU per chunk at 100 | database CPU per chunk at 100 | store bytes per chunk at 100 | final task: JSON bytes / text bytes / parts |',
  );
  lines.push('| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | --- |');
  for (const server of SERVERS) {
    const runs = runsOf(result, server.name);
    if (runs.length === 0) continue;
    const knee = medianKnee(result, server.name);
    const atKnee = knee > 0 ? levelMedian(result, server.name, knee) : undefined;
    const at100 = levelMedian(result, server.name, config.cpuLevel);
    const final = runs.flatMap((r) => (r.finalTask ? [r.finalTask] : [])).at(-1);
    const isPostgres = server.name.startsWith('postgres');
    const hasStore = server.name !== 'floor' && server.name !== 'sdk' && server.name !== 'memory';
    lines.push(
      `| ${server.label} | ${runs.map((r) => (r.error ? 'error' : r.knee)).join(', ')} | ${Number.isFinite(knee) ? knee : '–'} | ` +
        `${atKnee ? fmt(atKnee.chunksPerSec) : '–'} | ${atKnee ? `${ms(atKnee.latencyMs.p50)} / ${ms(atKnee.latencyMs.p99)}` : '–'} | ` +
        `${at100 ? `${ms(at100.serverCpuUsPerChunk)} µs` : '–'} | ${isPostgres && at100 ? `${ms(at100.databaseCpuUsPerChunk)} µs` : '–'} | ` +
        `${hasStore && at100 ? fmt(at100.storeBytesPerChunk) : '–'} | ${final ? `${fmt(final.taskBytes)} / ${fmt(final.textBytes)} / ${final.parts}` : '–'} |`,
    );
  }
  lines.push('');
  lines.push(
    'Store bytes: Postgres, the WAL the server wrote during the level (server-wide); SQLite, the bytes the worker processes caused to be written to disk (`/proc/<pid>/io` `write_bytes`).',
  );
  lines.push('');
  lines.push('## Targets (issue 30)');
  lines.push('');
  lines.push('| what | target | measured | verdict |');
  lines.push('| --- | --- | --- | --- |');
  for (const t of targets(result)) lines.push(`| ${t.what} | ${t.target} | ${t.measured} | ${verdict(t.met)} |`);
  lines.push('');
  lines.push('## Every level');
  for (const server of SERVERS) {
    const runs = runsOf(result, server.name);
    if (runs.length === 0) continue;
    lines.push('');
    lines.push(`### ${server.label}`);
    lines.push('');
    const errors = runs.filter((r) => r.error).map((r) => `round ${r.round}: ${r.error}`);
    if (errors.length) lines.push(`Failed runs: ${errors.join('; ')}.`, '');
    lines.push(
      '| streams | rounds passed | chunks/s | p50 (ms) | p99 (ms) | max (ms) | server CPU/chunk (µs) | database CPU/chunk (µs) | load generator CPU/chunk (µs) | store bytes/chunk | lost / dup / reordered | failed streams | first failure |',
    );
    lines.push('| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |');
    const measured = [...new Set(runs.flatMap((r) => r.levels.map((l) => l.streams)))].sort((a, b) => a - b);
    for (const streams of measured) {
      const all = runs.flatMap((r) => r.levels).filter((l) => l.streams === streams);
      const l = levelMedian(result, server.name, streams);
      if (!l) continue;
      lines.push(
        `| ${streams} | ${all.filter((x) => x.pass).length}/${all.length} | ${fmt(l.chunksPerSec)} | ${ms(l.latencyMs.p50)} | ${ms(l.latencyMs.p99)} | ${ms(l.latencyMs.max)} | ` +
          `${ms(l.serverCpuUsPerChunk)} | ${server.name.startsWith('postgres') ? ms(l.databaseCpuUsPerChunk) : '–'} | ${ms(l.loadCpuUsPerChunk)} | ` +
          `${server.name.includes('sqlite') || server.name.startsWith('postgres') ? fmt(l.storeBytesPerChunk) : '–'} | ${lossText(l)} | ${l.errors} | ${all.find((x) => x.firstError)?.firstError ?? ''} |`,
      );
    }
  }
  lines.push('');
  return lines.join('\n');
}
