/** bench/RESULTS.md from one run's results: a table per scenario, ratios, and the issue's targets. */

import { fmt, machineLine, ratio, settingsLine } from './env.js';
import { type TargetKind, whyMissed } from './explanations.js';
import type { RunResult, SendResult, ServerResult } from './types.js';

const MB = 1024 * 1024;
const mb = (bytes: number | undefined): string => (bytes === undefined ? '–' : fmt(bytes / MB, 1));
const kb = (bytes: number | undefined): string => (bytes === undefined ? '–' : fmt(bytes / 1024, 1));

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

const pct = (value: number): string => `${value >= 0 ? '+' : ''}${value.toFixed(1)} %`;

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

function errorsOf(load: { errors: { socket: number; timeouts: number; non2xx: number; badBody: number } }): string {
  const e = load.errors;
  const total = e.socket + e.timeouts + e.non2xx + e.badBody;
  if (total === 0) return '0';
  return `${fmt(total)} (${[
    e.socket ? `${e.socket} socket` : '',
    e.timeouts ? `${e.timeouts} timeouts` : '',
    e.non2xx ? `${e.non2xx} non-2xx` : '',
    e.badBody ? `${e.badBody} bad body` : '',
  ]
    .filter(Boolean)
    .join(', ')})`;
}

type Verdict = 'met' | 'missed' | 'not measured';

interface Target {
  kind: TargetKind;
  target: string;
  measured: string;
  verdict: Verdict;
}

/** The SDK peer on the same database as a fastify-a2a durable store (sqlite → sdk-sqlite), if any. */
export function durablePeerOf(name: string): string | undefined {
  return name === 'sqlite' ? 'sdk-sqlite' : name === 'postgres' ? 'sdk-postgres' : undefined;
}

export function evaluateTargets(result: RunResult): Target[] {
  const by = (name: string) => result.servers.find((s) => s.name === name);
  const targets: Target[] = [];
  const throughput = (
    kind: TargetKind,
    name: 'memory' | 'sqlite' | 'postgres',
    baseline: 'sdk' | 'sdk-sqlite' | 'sdk-postgres',
    target: string,
    factor: number,
    p99Half: boolean,
  ): void => {
    const ours = by(name)?.send?.load;
    const theirs = by(baseline)?.send?.load;
    if (!ours || !theirs || ours.reqPerSec === 0 || theirs.reqPerSec === 0) {
      const measured = by(name)?.error ?? (ours ? (by(baseline)?.error ?? `no ${baseline} result`) : 'no result');
      targets.push({ kind, target, measured, verdict: 'not measured' });
      return;
    }
    const r = ours.reqPerSec / theirs.reqPerSec;
    const p99 = ours.latencyMs.p99 / theirs.latencyMs.p99;
    const errors = Object.values(ours.errors).reduce((a, b) => a + b, 0);
    const ok = r >= factor && (!p99Half || p99 <= 0.5) && errors === 0;
    targets.push({
      kind,
      target,
      measured: `${r.toFixed(2)}× req/s${p99Half ? `, p99 ${p99.toFixed(2)}× SDK` : ''}${errors ? `, ${errors} errors` : ''}`,
      verdict: ok ? 'met' : 'missed',
    });
  };
  throughput(
    'send-memory',
    'memory',
    'sdk',
    'memory store message/send ≥ 3× SDK in-memory req/s with p99 ≤ ½ SDK p99',
    3,
    true,
  );
  throughput('send-sqlite', 'sqlite', 'sdk', 'SQLite store message/send ≥ 2× SDK in-memory req/s', 2, false);
  throughput(
    'send-sqlite-peer',
    'sqlite',
    'sdk-sqlite',
    "SQLite store message/send ≥ 3× the SDK's DatabaseTaskStore on SQLite",
    3,
    false,
  );
  throughput('send-postgres', 'postgres', 'sdk', 'Postgres store message/send ≥ 1× SDK in-memory req/s', 1, false);
  throughput(
    'send-postgres-peer',
    'postgres',
    'sdk-postgres',
    "Postgres store message/send ≥ 3× the SDK's DatabaseTaskStore on Postgres",
    3,
    false,
  );

  for (const name of ['memory', 'sqlite', 'postgres']) {
    const server = by(name);
    const s = server?.streams;
    const per = server ? perStream(server) : undefined;
    const target = `10,000 concurrent SSE streams under 20 KB RSS each (${name})`;
    if (!s || !per) {
      targets.push({ kind: 'streams', target, measured: server?.error ?? 'no result', verdict: 'not measured' });
      continue;
    }
    const allOpen = s.load.openAtMeasure === s.load.requested;
    const allFinal = s.load.finals === s.load.requested && s.load.errors === 0;
    const measured = `${fmt(s.load.openAtMeasure)} of ${fmt(s.load.requested)} open at once, ${kb(per.rss)} KB RSS each, ${fmt(s.load.finals)} finals, ${s.load.errors} errors`;
    let verdict: Verdict;
    if (per.rss >= 20 * 1024 || !allFinal || !allOpen) verdict = 'missed';
    else verdict = s.load.requested >= 10_000 ? 'met' : 'not measured';
    targets.push({
      kind: 'streams',
      target,
      measured:
        verdict === 'not measured' ? `${measured} (only ${fmt(s.load.requested)} streams in this run)` : measured,
      verdict,
    });
  }

  for (const name of ['memory', 'sqlite', 'postgres']) {
    const server = by(name);
    const growth = sustainedGrowth(server?.send);
    const target = `RSS flat after a sustained run (${name}: RSS after GC grows ≤ 10 % over a second message/send window)`;
    if (!growth) {
      targets.push({ kind: 'rss', target, measured: server?.error ?? 'no result', verdict: 'not measured' });
      continue;
    }
    targets.push({
      kind: 'rss',
      target,
      measured: `RSS ${mb(growth.rss[0])} → ${mb(growth.rss[1])} MB (${pct(growth.rssPct)}), heap ${mb(growth.heap[0])} → ${mb(growth.heap[1])} MB (${pct(growth.heapPct)})`,
      verdict: growth.rssPct <= 10 ? 'met' : 'missed',
    });
  }
  return targets;
}

export function renderResults(result: RunResult): string {
  const c = result.config;
  const servers = result.servers;
  const by = (name: string) => servers.find((s) => s.name === name);
  const sdk = by('sdk');
  const ceiling = by('ceiling');
  const lines: string[] = [];
  const push = (...l: string[]) => lines.push(...l);

  push('# fastify-a2a benchmarks: against the official SDK and the raw-Fastify ceiling', '');
  push('Generated by `npm run bench` (bench/src/run.ts) from one run; do not edit by hand.', '');
  push(`- Date: ${result.date}`);
  push(`- Machine: ${machineLine(result.machine)}`);
  push(
    `- Code: commit ${result.repo.commit}${result.repo.dirtyPaths.length > 0 ? ` plus uncommitted changes in ${result.repo.dirtyPaths.join(', ')} (others were editing; the numbers measure that working tree)` : ''}`,
  );
  push(
    `- Mode: ${c.quick ? 'quick (BENCH_QUICK=1)' : 'full'}: ${c.durationS} s per load after a ${c.warmupS} s warm-up, ${c.connections} connections (autocannon, in the parent process); ${fmt(c.streams)} held streams of \`sleep:${c.holdMs}\`, at most ${c.openConcurrency} connecting at a time.`,
  );
  push(
    `- Postgres: local server over loopback (${settingsLine(result.postgres)}); the store's default pool (pg \`max\` 10). SQLite: a file in a temp dir, the store's defaults (WAL, synchronous=NORMAL).`,
  );
  const peers = servers.filter((s) => s.kind === 'sdk-db');
  if (peers.length > 0) {
    const settings = peers.map((s) => `**${s.name}** ${s.settings ? settingsLine(s.settings) : 'not reported'}`);
    const sameSqlitePragmas = by('sdk-sqlite')?.settings?.pragmas?.startsWith('fastify-a2a') === true;
    push(
      [
        "- The durable SDK peer (@a2a-js/sdk 1.3.0 `DatabaseTaskStore`, Kysely): its table and indexes made by the SDK's own `a2a-db upgrade --store tasks`; on Postgres the same server in a schema of its own (dropped afterwards), on SQLite its own file in the temp dir.",
        `Settings as the server read them back: ${settings.join('; ')}.`,
        sameSqlitePragmas
          ? "Its SQLite connection gets the pragmas fastify-a2a's SQLite store sets (better-sqlite3's defaults would be a rollback journal with synchronous=FULL, an fsync per commit), so both SQLite servers promise the same durability."
          : '',
        "Its Postgres pool has as many connections as fastify-a2a's store's.",
      ]
        .filter(Boolean)
        .join(' '),
    );
  }
  push(
    '- Each server is a separate child process on its own loopback port, started and measured one after another (never two at once). RSS comes from the child (`/__rss`, after a full GC) or `/proc/<pid>/status`.',
    "- Every server runs as plain JavaScript under `node`: its entry is compiled with esbuild (the repository's packages bundled from their TypeScript sources, npm dependencies loaded from node_modules), not run through tsx, whose keep-names wrappers add about 4 KB of heap per held stream.",
  );
  push(
    '- The load generator shares the 2 cores with the server under test, so absolute numbers understate a real deployment; the ratios, measured in the same run, are what to read.',
  );
  push(
    `- Servers: **ceiling** raw Fastify echoing the JSON-RPC body (SSE: one event, a final one after the sleep); **sdk** @a2a-js/sdk 0.3.14 \`DefaultRequestHandler\` + \`InMemoryTaskStore\` + express 5 with an executor emitting the same events as the demo echo agent;${peers.length > 0 ? ' **sdk-sqlite / sdk-postgres** @a2a-js/sdk 1.3.0 `DefaultRequestHandler` + `DatabaseTaskStore` + express 5 with its v0.3 compatibility layer on (`legacyCompat: { enabled: true }`, a card declaring a 0.3 JSON-RPC interface), so it gets the same 0.3 requests, and the same executor events in the 1.0 model (its request handler loads the task and upserts the whole row for each of them);' : ''} **memory / sqlite / postgres** fastify-a2a with the demo echo agent (examples/demo) on that store (default options, retention default).`,
  );
  push(
    `- The echo message is "${c.echoText}": per message/send the task gets the Task, a working status, ${c.echoText.split(/(\s+)/).filter((w) => w !== '').length} artifact chunks and the completed status.`,
    '',
  );

  const failed = servers.filter((s) => s.error);
  if (failed.length > 0) {
    push('**Servers that failed in this run:**', '');
    for (const s of failed) push(`- ${s.label}: ${s.error}`);
    push('');
  }

  push('## Targets (from the issue)', '');
  push('| target | this run | verdict |', '| --- | --- | --- |');
  const targets = evaluateTargets(result);
  for (const t of targets) {
    push(
      `| ${t.target} | ${t.measured} | ${t.verdict === 'met' ? '✅ met' : t.verdict === 'missed' ? '❌ missed' : '– not measured'} |`,
    );
  }
  push('');
  const missed = [...new Set(targets.filter((t) => t.verdict === 'missed').map((t) => t.kind))];
  if (missed.length > 0) {
    push('### Why the missed targets are missed', '');
    for (const kind of missed) {
      const why = whyMissed(kind, result);
      if (why) push(`- ${why}`);
    }
    push('');
  }

  const httpTable = (key: 'send' | 'get', title: string, what: string): void => {
    push(`## ${title}`, '', what, '');
    // "vs SDK DB": against the SDK's DatabaseTaskStore on the same database (only with the peer in the run).
    const withPeer = servers.some((s) => s.kind === 'sdk-db');
    push(
      `| server | req/s | vs SDK | ${withPeer ? 'vs SDK DB (same DB) | ' : ''}vs ceiling | p50 ms | p99 ms | p99 vs SDK | errors | RSS before → after (MB) |`,
      `| --- | ---: | ---: | ${withPeer ? '---: | ' : ''}---: | ---: | ---: | ---: | --- | --- |`,
    );
    const sdkLoad = sdk?.[key]?.load;
    const ceilingLoad = ceiling?.[key]?.load;
    for (const s of servers) {
      const r = s[key];
      if (!r) {
        push(`| ${s.label} | – | – | ${withPeer ? '– | ' : ''}– | – | – | – | ${s.error ? 'failed' : 'not run'} | – |`);
        continue;
      }
      const l = r.load;
      const peerName = s.kind === 'sdk-db' ? s.name : durablePeerOf(s.name);
      const peerLoad = peerName ? by(peerName)?.[key]?.load : undefined;
      const vsPeer = withPeer ? `${ratio(l.reqPerSec, peerLoad?.reqPerSec)} | ` : '';
      push(
        `| ${s.label} | ${fmt(l.reqPerSec)} | ${ratio(l.reqPerSec, sdkLoad?.reqPerSec)} | ${vsPeer}${ratio(l.reqPerSec, ceilingLoad?.reqPerSec)} | ${fmt(l.latencyMs.p50, 1)} | ${fmt(l.latencyMs.p99, 1)} | ${ratio(l.latencyMs.p99, sdkLoad?.latencyMs.p99)} | ${errorsOf(l)} | ${mb(r.before.rss)} → ${mb(r.after.rss)} |`,
      );
    }
    push('');
  };
  httpTable(
    'send',
    'message/send (blocking, echo agent)',
    `Each request a fresh messageId (autocannon \`setupRequest\`); a response counts as an error unless it is the completed task. ${c.connections} connections, ${c.durationS} s.`,
  );
  const topWaits = (name: string): string | undefined => {
    const waits = by(name)?.send?.postgresWaits;
    if (!waits || Object.keys(waits).length === 0) return undefined;
    return Object.entries(waits)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([wait, n]) => `${wait} ${n.toFixed(2)}`)
      .join(', ');
  };
  const ourWaits = topWaits('postgres');
  const peerWaits = topWaits('sdk-postgres');
  if (ourWaits || peerWaits) {
    push(
      `What the Postgres backends waited on during message/send (pg_stat_activity every 100 ms; average number of active backends per wait event): ${[
        ourWaits ? `fastify-a2a's store ${ourWaits}` : '',
        peerWaits ? `the SDK's DatabaseTaskStore ${peerWaits}` : '',
      ]
        .filter(Boolean)
        .join(
          '; ',
        )}. \`Lock/object\` is the lock a transaction that ran NOTIFY takes at commit (one at a time, across the whole Postgres server); \`IO/WALSync\` is the commit's WAL flush.`,
      '',
    );
  }
  push('## message/send over A2A 1.0 (SendMessage) beside 0.3', '');
  push(
    `The send scenario again as A2A 1.0's \`SendMessage\` over JSON-RPC (\`A2A-Version: 1.0\`, ProtoJSON params and result), on the same server process right after it: same agent, store and turn, so the ratio is what the 1.0 codec costs. fastify-a2a only (the SDK server speaks 0.3). ${c.connections} connections, ${c.durationS} s.`,
    '',
  );
  push(
    '| server | 0.3 message/send req/s | 1.0 SendMessage req/s | 1.0 vs 0.3 | 0.3 p99 ms | 1.0 p99 ms | errors (1.0) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | --- |',
  );
  for (const s of servers.filter((x) => x.kind === 'fastify-a2a')) {
    const v03 = s.send?.load;
    const v10 = s.send1?.load;
    push(
      `| ${s.label} | ${fmt(v03?.reqPerSec)} | ${fmt(v10?.reqPerSec)} | ${ratio(v10?.reqPerSec, v03?.reqPerSec)} | ${fmt(v03?.latencyMs.p99, 1)} | ${fmt(v10?.latencyMs.p99, 1)} | ${v10 ? errorsOf(v10) : 'not run'} |`,
    );
  }
  push(
    '',
    'The 1.0 window runs after the 0.3 ones, on a store that already holds their tasks; on the durable stores that makes it slightly slower for reasons other than the codec.',
    '',
  );
  push('## A2A 1.0 SendMessage over gRPC beside JSON-RPC', '');
  push(
    `The 1.0 send again over gRPC (\`lf.a2a.v1.A2AService/SendMessage\`, @fastify-a2a/grpc), on the listener the same server process runs beside Fastify, right after the JSON-RPC window: same agent, store and turn, so the ratio is what gRPC framing and binary protobuf cost or save against JSON-RPC and ProtoJSON text. ${c.connections} calls in flight on one HTTP/2 connection (the JSON-RPC load uses ${c.connections} HTTP/1.1 connections), ${c.durationS} s.`,
    '',
  );
  push(
    '| server | 1.0 JSON-RPC req/s | 1.0 gRPC req/s | gRPC vs JSON-RPC | JSON-RPC p99 ms | gRPC p99 ms | errors (gRPC) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | --- |',
  );
  for (const s of servers.filter((x) => x.kind === 'fastify-a2a')) {
    const jsonRpc = s.send1?.load;
    const grpc = s.grpc?.load;
    push(
      `| ${s.label} | ${fmt(jsonRpc?.reqPerSec)} | ${fmt(grpc?.reqPerSec)} | ${ratio(grpc?.reqPerSec, jsonRpc?.reqPerSec)} | ${fmt(jsonRpc?.latencyMs.p99, 1)} | ${fmt(grpc?.latencyMs.p99, 1)} | ${grpc ? errorsOf(grpc) : 'not run'} |`,
    );
  }
  push('');
  httpTable(
    'get',
    'tasks/get (existing task)',
    `The task created by one message/send. ${c.connections} connections, ${c.durationS} s.`,
  );

  push('## Concurrent message/stream streams held open', '');
  push(
    `${fmt(c.streams)} \`message/stream\` requests of \`sleep:${c.holdMs}\`, opened by a raw http client and held until the agent completes them, on a freshly started server process (an empty store: with the tasks of the earlier scenarios, each stream's task would evict one and hide part of its cost). "KB per stream" is (RSS with all open − RSS before) / streams open, both after a full GC: the whole server-side cost of a stream (socket, request, task, turn, timers, store rows in memory). "KB per stream (heap)" is the same for the JS heap's live objects only; RSS also keeps what the heap and allocators grew to while the streams were opening, which the GC does not hand back.`,
    '',
  );
  push(
    '| server | open at once | time to open all | finals / streams | errors | RSS before (MB) | RSS all open (MB) | peak RSS (MB) | KB per stream (RSS) | KB per stream (heap) | vs SDK (RSS/stream) | RSS after (MB) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  const sdkPer = sdk ? perStream(sdk) : undefined;
  for (const s of servers) {
    const st = s.streams;
    if (!st) {
      push(`| ${s.label} | – | – | – | ${s.error ? 'failed' : 'not run'} | – | – | – | – | – | – | – |`);
      continue;
    }
    const per = perStream(s);
    push(
      `| ${s.label} | ${fmt(st.load.openAtMeasure)} (max ${fmt(st.load.maxConcurrent)}) | ${fmt(st.load.openMs)} ms | ${fmt(st.load.finals)} / ${fmt(st.load.requested)} | ${fmt(st.load.errors)} | ${mb(st.before.rss)} | ${mb(st.whileOpen?.rss)} | ${mb(st.peakRss)} | ${kb(per?.rss)} | ${kb(per?.heap)} | ${ratio(per?.rss, sdkPer?.rss)} | ${mb(st.after.rss)} |`,
    );
  }
  const samples = servers.flatMap((s) => (s.streams?.load.errorSamples ?? []).map((e) => `${s.name}: ${e}`));
  if (samples.length > 0) push('', `Stream errors seen: ${samples.slice(0, 6).join('; ')}`);
  push('');

  push('## Memory under sustained load', '');
  push(
    `Right after the measured message/send window, a second identical window (${c.durationS} s, same load); memory after a full GC at the end of each. VmRSS was also sampled every 250 ms over both windows (no GC). The memory stores keep tasks by design (fastify-a2a: up to \`maxTasks\` 10,000, then it evicts terminal ones; the SDK's InMemoryTaskStore: all of them, forever), so their growth is data until that bound, not a leak.`,
    '',
  );
  push(
    '| server | RSS at start | after window 1 (GC) | after window 2 (GC) | RSS growth | heap after window 1 → 2 (GC) | heap growth | sampled RSS min → max | req/s window 2 |',
    '| --- | ---: | ---: | ---: | ---: | --- | ---: | --- | ---: |',
  );
  for (const s of servers) {
    const g = sustainedGrowth(s.send);
    const rssSamples = (s.send?.timeline ?? []).map((x) => x.rss).filter(Number.isFinite);
    push(
      `| ${s.label} | ${mb(s.startup?.rss)} | ${mb(g?.rss[0])} | ${mb(g?.rss[1])} | ${g ? pct(g.rssPct) : '–'} | ${g ? `${mb(g.heap[0])} → ${mb(g.heap[1])}` : '–'} | ${g ? pct(g.heapPct) : '–'} | ${rssSamples.length ? `${mb(Math.min(...rssSamples))} → ${mb(Math.max(...rssSamples))}` : '–'} | ${fmt(s.send?.sustain?.load.reqPerSec)} |`,
    );
  }
  push('', 'Sizes in MB.', '');

  push('## Run conditions', '');
  push(
    "Other work shares this machine; the 1-minute load average (2 cores) when each server's scenarios started and ended shows how much. Servers run one after another, so a busy neighbour during one server skews its ratios.",
    '',
  );
  push('| server | load avg start → end | wall time |', '| --- | --- | ---: |');
  for (const s of servers) {
    push(
      `| ${s.label} | ${s.loadAvg ? `${s.loadAvg.start.toFixed(2)} → ${s.loadAvg.end.toFixed(2)}` : '–'} | ${s.wallMs ? `${fmt(s.wallMs / 1000)} s` : '–'} |`,
    );
  }
  push('');
  push(
    'Raw numbers: `bench/results/<date>.json`. Reproduce: `npm run bench` (full) or `BENCH_QUICK=1 npm run bench`.',
    '',
  );
  return lines.join('\n');
}
