/**
 * What the alternating rounds of a run add up to: per server and scenario the medians over the
 * rounds, and for a pair of servers the ratio of their medians with the range of the per-round
 * ratios (each round's pair measured minutes apart, so the range shows how far the machine drifted).
 */

import type { RoundScenario, RunResult, WindowResult } from './types.js';

export function median(values: number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** A server's windows of a scenario, one per round it was measured in (`undefined` where it failed). */
export function windowsOf(result: RunResult, name: string, scenario: RoundScenario): (WindowResult | undefined)[] {
  return (result.rounds ?? []).map((round) => round.servers.find((s) => s.name === name)?.[scenario]);
}

export interface RoundSummary {
  /** Rounds with a measurement. */
  rounds: number;
  reqPerSec: number;
  p99Ms: number;
  /** Server CPU (user + system) per request, ms. */
  cpuPerRequestMs: number;
  /** Every round's req/s, in round order (NaN where the server failed). */
  perRound: number[];
  /** Errors of every kind over all rounds. */
  errors: number;
}

export function errorCount(window: WindowResult): number {
  const e = window.load.errors;
  return e.socket + e.timeouts + e.non2xx + e.badBody;
}

/** Medians over the rounds of one server's scenario, or undefined when no round measured it. */
export function summarize(result: RunResult, name: string, scenario: RoundScenario): RoundSummary | undefined {
  const all = windowsOf(result, name, scenario);
  const measured = all.filter((w): w is WindowResult => w !== undefined && w.load.total > 0);
  if (measured.length === 0) return undefined;
  return {
    rounds: measured.length,
    reqPerSec: median(measured.map((w) => w.load.reqPerSec)),
    p99Ms: median(measured.map((w) => w.load.latencyMs.p99)),
    cpuPerRequestMs: median(measured.map((w) => w.cpu.perRequestMs)),
    perRound: all.map((w) => w?.load.reqPerSec ?? Number.NaN),
    errors: measured.reduce((sum, w) => sum + errorCount(w), 0),
  };
}

export interface Comparison {
  /** The ratio of the two servers' medians: what the targets are judged on. */
  ratio: number;
  /** The smallest and largest of the per-round ratios (rounds where both were measured). */
  min: number;
  max: number;
  rounds: number;
}

type Metric = 'reqPerSec' | 'p99Ms';
const metricOf = (window: WindowResult, metric: Metric): number =>
  metric === 'reqPerSec' ? window.load.reqPerSec : window.load.latencyMs.p99;

/** `name`'s median over `baseline`'s on a scenario's req/s (or p99), with the per-round range. */
export function compare(
  result: RunResult,
  name: string,
  baseline: string,
  scenario: RoundScenario,
  metric: Metric = 'reqPerSec',
): Comparison | undefined {
  const ours = summarize(result, name, scenario);
  const theirs = summarize(result, baseline, scenario);
  if (!ours || !theirs) return undefined;
  const a = windowsOf(result, name, scenario);
  const b = windowsOf(result, baseline, scenario);
  const perRound: number[] = [];
  a.forEach((window, i) => {
    const other = b[i];
    if (window && other && metricOf(other, metric) > 0)
      perRound.push(metricOf(window, metric) / metricOf(other, metric));
  });
  const ratio = ours[metric] / theirs[metric];
  if (!Number.isFinite(ratio)) return undefined;
  return { ratio, min: Math.min(...perRound), max: Math.max(...perRound), rounds: perRound.length };
}

/** `1.23× (rounds 1.10×–1.31×)`, or `–`. */
export function comparisonText(comparison: Comparison | undefined): string {
  if (!comparison) return '–';
  const range = comparison.rounds > 1 ? ` (rounds ${comparison.min.toFixed(2)}×–${comparison.max.toFixed(2)}×)` : '';
  return `${comparison.ratio.toFixed(2)}×${range}`;
}

/** A server's median req/s of a scenario over the rounds (undefined when not measured). */
export function medianRate(result: RunResult, name: string, scenario: RoundScenario): number | undefined {
  return summarize(result, name, scenario)?.reqPerSec;
}
