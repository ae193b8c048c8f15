/** Part 3 of bench/CROSS_WORKER.md: message/send with every worker in a CPU-capped cgroup. */

import { fmt } from '../lib/env.js';
import { perRequest, pooled } from './model.js';
import type { CrossWorkerResult } from './report.js';
import {
  CPU_TABLE_HEAD,
  cores,
  othersText,
  pct,
  ratioLine,
  runCpuRow,
  scaling,
  TARGET_RATIO,
  throughputRows,
  waitsLine,
} from './report-format.js';
import type { ThroughputRun } from './throughput.js';

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

export function renderCapped(r: CrossWorkerResult): string[] {
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
