/** RESULTS.md's tables of the alternating rounds: medians per server, ratios with their per-round range. */

import { fmt } from './env.js';
import { compare, comparisonText, type RoundSummary, summarize, windowsOf } from './rounds.js';
import { durablePeerOf } from './targets.js';
import type { RoundScenario, RunResult, ServerResult } from './types.js';

/** The servers of the rounds, in round order. */
function roundServers(result: RunResult): { name: string; label: string; kind: ServerResult['kind'] }[] {
  return (result.rounds?.[0]?.servers ?? []).map(({ name, label, kind }) => ({ name, label, kind }));
}

function roundTable(result: RunResult, scenario: RoundScenario, title: string, what: string): string[] {
  const rounds = result.rounds?.length ?? 0;
  const lines = [`## ${title}`, '', what, ''];
  const roundHeads = Array.from({ length: rounds }, (_, i) => `round ${i + 1}`);
  lines.push(
    `| server | median req/s | ${roundHeads.join(' | ')} | median p99 ms | median server CPU ms / request | vs SDK | vs minimal | vs ceiling | vs SDK DB (same DB) | p99 vs SDK | errors (all rounds) |`,
    `| --- | ---: | ${roundHeads.map(() => '---:').join(' | ')} | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |`,
  );
  for (const server of roundServers(result)) {
    const summary: RoundSummary | undefined = summarize(result, server.name, scenario);
    if (!summary) {
      // Failed to start or answer in every round, or no response completed within any window.
      const failed = windowsOf(result, server.name, scenario).every((window) => window === undefined);
      lines.push(
        `| ${server.label} | – | ${roundHeads.map(() => '–').join(' | ')} | – | – | – | – | – | – | – | ${failed ? 'failed' : 'no response in any window'} |`,
      );
      continue;
    }
    const against = (baseline: string | undefined): string =>
      baseline === undefined || baseline === server.name
        ? '–'
        : comparisonText(compare(result, server.name, baseline, scenario));
    const peer = server.kind === 'sdk-db' ? undefined : durablePeerOf(server.name);
    lines.push(
      `| ${server.label} | ${fmt(summary.reqPerSec)} | ${summary.perRound.map((rate) => fmt(rate)).join(' | ')} | ${fmt(summary.p99Ms, 1)} | ${fmt(summary.cpuPerRequestMs, 3)} | ${against('sdk')} | ${against('minimal')} | ${against('ceiling')} | ${against(peer)} | ${server.name === 'sdk' ? '–' : comparisonText(compare(result, server.name, 'sdk', scenario, 'p99Ms'))} | ${fmt(summary.errors)} |`,
    );
  }
  lines.push('');
  return lines;
}

/** The rounds' section of RESULTS.md: one table per scenario and the run conditions of each round. */
export function renderRounds(result: RunResult): string[] {
  const c = result.config;
  if (!result.rounds?.length) {
    return [
      '## Alternating rounds',
      '',
      'This result was written before the bench measured in alternating rounds.',
      '',
    ];
  }
  const lines = [
    ...roundTable(
      result,
      'send',
      'message/send (blocking, echo agent), alternating rounds',
      `Each request a fresh messageId (autocannon \`setupRequest\`); a response counts as an error unless it is the completed task. ${c.connections} connections, ${c.durationS} s after a ${c.warmupS} s warm-up, in each of ${result.rounds.length} rounds. Ratios are of the medians, with the range of the per-round ratios in brackets. Server CPU is the server process's user + system time over the window (/proc/<pid>/stat) per response: for Postgres it leaves out the database server's own CPU (bench/RUNTIME.md measures that).`,
    ),
    ...roundTable(
      result,
      'get',
      'tasks/get (existing task), alternating rounds',
      `The task created by one message/send on the same process, right after the send window. ${c.connections} connections, ${c.durationS} s after a ${c.warmupS} s warm-up, in each round.`,
    ),
  ];
  lines.push('Rounds: the 1-minute load average (2 cores) when each round started and ended, and its wall time.', '');
  lines.push('| round | load avg start → end | wall time |', '| --- | --- | ---: |');
  for (const round of result.rounds) {
    lines.push(
      `| ${round.round} | ${round.loadAvg.start.toFixed(2)} → ${round.loadAvg.end.toFixed(2)} | ${fmt(round.wallMs / 1000)} s |`,
    );
  }
  lines.push('');
  return lines;
}
