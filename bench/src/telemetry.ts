/**
 * `npm run bench:telemetry`: what metrics and tracing cost a server, in one run. Two fastify-a2a
 * servers (the demo echo agent, separate processes on loopback, the same store kind): `off` as
 * shipped, `on` with `metrics: true` and the OpenTelemetry SDK installed with no exporter (every
 * span sampled, recorded and dropped; see servers/tracing.ts). Blocking message/send windows
 * alternate off, on, off, on, … so drift on a shared machine hits both alike; each window gives
 * requests per second and the server's CPU time per request (user + system, from /proc), and the
 * summary is the median of each. The target (issue 18) is at most 5 % slower.
 *
 * Environment (defaults in parentheses): BENCH_ROUNDS (5, quick 3) windows per variant,
 * BENCH_DURATION_S (5, quick 2) per window after one BENCH_WARMUP_S (2) warm-up each,
 * BENCH_CONNECTIONS (64), BENCH_STORE (memory; or sqlite), BENCH_QUICK=1; BENCH_ON (on: metrics and
 * tracing; or metrics, or tracing, to see each one's share; sampled: on with a production sampler,
 * ParentBased with 10 % of new traces sampled; detached and detached-sampled: on and sampled with
 * the plugin's `tracing: { activeContext: false }`, no `context.with`; context: only the SDK's
 * AsyncLocalStorage context manager, no tracer; off: an A/A run, the noise floor).
 * Prints a Markdown table and writes bench/results/partial/telemetry-<time>.json.
 */

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServerProcess } from './lib/child.js';
import { envNumber, machineInfo, RESULTS_DIR, randomSuffix, writeFile } from './lib/env.js';
import { httpLoad } from './lib/load.js';

const quick = process.env.BENCH_QUICK === '1';
const rounds = envNumber('BENCH_ROUNDS', quick ? 3 : 5);
const durationS = envNumber('BENCH_DURATION_S', quick ? 2 : 5);
const warmupS = envNumber('BENCH_WARMUP_S', 2);
const connections = envNumber('BENCH_CONNECTIONS', 64);
const storeKind = process.env.BENCH_STORE ?? 'memory';
const onVariant = process.env.BENCH_ON ?? 'on';
const VARIANTS = ['on', 'sampled', 'detached', 'detached-sampled', 'metrics', 'tracing', 'context', 'off'];
/** The variants with metrics on: their server must serve /metrics. */
const WITH_METRICS = ['on', 'sampled', 'detached', 'detached-sampled', 'metrics'];
if (!VARIANTS.includes(onVariant)) {
  console.error(`BENCH_ON must be one of ${VARIANTS.join(', ')}; got "${onVariant}".`);
  process.exit(1);
}
const VARIANT_LABELS: Record<string, string> = {
  on: 'metrics + tracing',
  sampled: 'metrics + tracing, 10 % sampled',
  detached: 'metrics + tracing, activeContext false',
  'detached-sampled': 'metrics + tracing, activeContext false, 10 % sampled',
  off: 'off again (A/A)',
};
const onLabel = VARIANT_LABELS[onVariant] ?? `${onVariant} only`;
if (storeKind !== 'memory' && storeKind !== 'sqlite') {
  console.error(`BENCH_STORE must be memory or sqlite; got "${storeKind}".`);
  process.exit(1);
}

/** Clock ticks per second of /proc's CPU times. */
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** The process's user + system CPU time so far, in ms (fields 14 and 15 of /proc/<pid>/stat). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

/** A blocking message/send with a fresh messageId each time. */
function sendBody(): () => string {
  const run = randomSuffix();
  let n = 0;
  return () => {
    const id = `${run}-${n++}`;
    return JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'message/send',
      params: {
        message: { kind: 'message', messageId: `m-${id}`, role: 'user', parts: [{ kind: 'text', text: 'hello' }] },
        configuration: { blocking: true },
      },
    });
  };
}

const verify = (b: string) => b.includes('"state":"completed"') && !b.includes('"error"');

interface Window {
  variant: 'off' | 'on';
  reqPerSec: number;
  cpuMsPerRequest: number;
  p99Ms: number;
  errors: number;
}

async function measure(server: ServerProcess, variant: Window['variant']): Promise<Window> {
  const before = cpuMs(server.pid);
  const load = await httpLoad({ url: `${server.url}/a2a`, body: sendBody(), connections, duration: durationS, verify });
  const used = cpuMs(server.pid) - before;
  const { socket, timeouts, non2xx, badBody } = load.errors;
  return {
    variant,
    reqPerSec: load.reqPerSec,
    cpuMsPerRequest: used / Math.max(1, load.total),
    p99Ms: load.latencyMs.p99,
    errors: socket + timeouts + non2xx + badBody,
  };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

const dir = mkdtempSync(join(tmpdir(), 'a2a-bench-telemetry-'));
const storeFor = (name: string) => (storeKind === 'memory' ? 'memory:' : `sqlite:${join(dir, `${name}.db`)}`);
const servers: ServerProcess[] = [];
try {
  const off = await ServerProcess.start({
    name: 'off',
    label: 'telemetry off',
    entry: 'fastify-a2a.ts',
    env: { BENCH_STORE: storeFor('off'), BENCH_RETENTION: 'off' },
  });
  servers.push(off);
  const on = await ServerProcess.start({
    name: 'on',
    label: onLabel,
    entry: 'fastify-a2a.ts',
    env: { BENCH_STORE: storeFor('on'), BENCH_RETENTION: 'off', BENCH_TELEMETRY: onVariant },
  });
  servers.push(on);
  // The "on" server must really have metrics when asked for.
  const scrape = await fetch(`${on.url}/metrics`);
  if (scrape.status !== (WITH_METRICS.includes(onVariant) ? 200 : 404)) {
    throw new Error(`the "on" server's /metrics answered ${scrape.status}`);
  }
  if ((await fetch(`${off.url}/metrics`)).status !== 404) throw new Error('the "off" server serves /metrics');

  for (const server of [off, on]) {
    await httpLoad({ url: `${server.url}/a2a`, body: sendBody(), connections, duration: warmupS, verify });
  }
  const windows: Window[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const [server, variant] of [
      [off, 'off'],
      [on, 'on'],
    ] as const) {
      const window = await measure(server, variant);
      windows.push(window);
      console.error(
        `round ${round} ${variant}: ${window.reqPerSec.toFixed(0)} req/s, ${window.cpuMsPerRequest.toFixed(3)} ms CPU/req`,
      );
    }
  }
  const summary = (variant: Window['variant']) => {
    const of = windows.filter((w) => w.variant === variant);
    return {
      reqPerSec: median(of.map((w) => w.reqPerSec)),
      cpuMsPerRequest: median(of.map((w) => w.cpuMsPerRequest)),
      p99Ms: median(of.map((w) => w.p99Ms)),
      errors: of.reduce((sum, w) => sum + w.errors, 0),
    };
  };
  const offSummary = summary('off');
  const onSummary = summary('on');
  const slower = (1 - onSummary.reqPerSec / offSummary.reqPerSec) * 100;
  const moreCpu = (onSummary.cpuMsPerRequest / offSummary.cpuMsPerRequest - 1) * 100;
  const rows = [
    '| variant | req/s (median) | CPU ms/request (median) | p99 ms (median) | errors |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...(
      [
        ['off', offSummary],
        [onLabel, onSummary],
      ] as const
    ).map(
      ([name, s]) =>
        `| ${name} | ${s.reqPerSec.toFixed(0)} | ${s.cpuMsPerRequest.toFixed(3)} | ${s.p99Ms.toFixed(1)} | ${s.errors} |`,
    ),
  ];
  console.log(
    [
      `blocking message/send on ${storeKind}, ${connections} connections, ${rounds} alternating windows of ${durationS} s each`,
      '',
      ...rows,
      '',
      `${onLabel}: ${slower.toFixed(1)} % ${slower >= 0 ? 'slower' : 'faster'} (target ≤ 5 %), ${moreCpu.toFixed(1)} % CPU per request`,
    ].join('\n'),
  );
  const file = join(RESULTS_DIR, 'partial', `telemetry-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFile(
    file,
    `${JSON.stringify(
      {
        machine: machineInfo(),
        loadavg: loadavg(),
        config: { rounds, durationS, warmupS, connections, store: storeKind, on: onVariant },
        windows,
        off: offSummary,
        on: onSummary,
        slowerPercent: slower,
        cpuPerRequestPercent: moreCpu,
      },
      null,
      2,
    )}\n`,
  );
  console.error(`wrote ${file}`);
} finally {
  for (const server of servers) await server.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
