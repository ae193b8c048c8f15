/**
 * `npm run bench`: fastify-a2a against the official SDK server, the raw-Fastify ceiling and a
 * minimal A2A server on Fastify, in one run that judges every target of issue 22 (bench/RESULTS.md).
 * Each server is a separate child process on its own loopback port (so RSS and CPU are per server),
 * the load generated from this process.
 *
 * Servers: ceiling (raw Fastify echo route), minimal (servers/minimal.ts: parses the request, keeps
 * the echo task in a Map, nothing else), sdk (@a2a-js/sdk 0.3.14 + express, in memory), sdk-sqlite
 * and sdk-postgres (@a2a-js/sdk 1.3.0 + express with its Kysely `DatabaseTaskStore` and its v0.3
 * compatibility layer on, on sqlite:<tmp file> and the same Postgres server in a schema
 * bench_sdk_<random>), and fastify-a2a with the demo echo agent on memory:, sqlite:<tmp file> and
 * postgres://…?schema=bench_<random> (schemas dropped at the end), each in two configurations:
 * memory, sqlite, postgres as users run the demo (its push options, push on, a pino logger at
 * `warn`) and memory-bare, sqlite-bare, postgres-bare (logger off, push off); plus memory-info, the
 * demo with Fastify's request logs at `info` (what request logging costs); and memory-telemetry, the
 * demo as shipped with metrics and tracing on (the OpenTelemetry SDK installed, every span sampled
 * and recorded, no exporter), measured next to memory in every round: what telemetry costs (issue 18).
 *
 * 1. Alternating rounds (BENCH_ROUNDS, default 3, quick 2): in every round each server in turn, in
 *    the same order (A B … A B … A B …), is started as a fresh process, measured on `send` (blocking
 *    message/send, a fresh messageId per request) and then `get` (tasks/get of a task it created),
 *    and stopped. A fresh process per round, rather than the same one re-measured, so every round
 *    measures the same thing (the memory stores start empty, JIT and heap start cold and warm up
 *    the same way) and the spread between rounds is the machine's drift, not the server's
 *    accumulated state; the durable stores keep their database files and schemas across rounds, as
 *    a restarted deployment would. The server's CPU (utime + stime from /proc/<pid>/stat) is read
 *    before and after each measured window. RESULTS.md gives the medians per server, the range of
 *    the per-round ratios, and the targets computed from the medians.
 * 2. Once per server (not minimal, memory-info or memory-telemetry), on a fresh process:
 *    - send: the blocking send again, then a second identical window (sustained load) with memory
 *      after a GC at the end of each (is RSS flat?);
 *    - send1 (fastify-a2a only): the same send as A2A 1.0's SendMessage (A2A-Version: 1.0), so the
 *      cost of the 1.0 codec is known;
 *    - grpc (fastify-a2a only): the same SendMessage over gRPC, on the listener @fastify-a2a/grpc
 *      starts in the same process: BENCH_CONNECTIONS calls in flight on one HTTP/2 connection;
 *    - streams: message/stream `sleep:<hold>` streams held open at once by a raw http client, on a
 *      restarted process; server memory before, with all open, after they completed; finals counted.
 *
 * Environment (defaults in parentheses):
 * - BENCH_DURATION_S (5, quick 2) per load window, after BENCH_WARMUP_S (1); BENCH_CONNECTIONS (64);
 * - BENCH_ROUNDS (3, quick 2): alternating rounds;
 * - BENCH_STREAMS (10000, quick 200), BENCH_STREAM_HOLD_MS (3000 + 3 ms per stream, at least 4000),
 *   BENCH_STREAM_OPEN_CONCURRENCY (256 streams connecting at a time);
 * - BENCH_QUICK=1 (or `npm run bench -- --quick`) for the quick defaults; BENCH_SERVERS /
 *   BENCH_SCENARIOS: comma lists to run a subset (ceiling,minimal,sdk,sdk-sqlite,sdk-postgres,memory,
 *   memory-bare,memory-info,memory-telemetry,sqlite,sqlite-bare,postgres,postgres-bare / send,send1,grpc,get,streams);
 * - BENCH_POSTGRES_URL (or A2A_TEST_POSTGRES_URL; default postgres://postgres@127.0.0.1:5432/test).
 *
 * Writes bench/results/<date>.json and regenerates bench/RESULTS.md (a subset run writes only
 * bench/results/partial/<time>.json, git-ignored); `npm run bench -- --render <file.json>`
 * regenerates RESULTS.md from a saved result.
 *
 * BENCH_PROFILE=1: only the send scenario of the memory store (BENCH_PROFILE_SERVER=sqlite or
 * postgres for those, or any other server name; BENCH_PROFILE_SCENARIO=get profiles a tasks/get
 * window after the send window instead), no rounds, the child run with --cpu-prof
 * --cpu-prof-dir=bench/profiles; prints the top self-time frames of the measured window (also
 * written to bench/profiles/summary-<pid>.md) and writes no results.
 */

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type CpuTime, ServerProcess, type ServerSpec } from './lib/child.js';
import {
  BENCH_DIR,
  dropSchema,
  envNumber,
  machineInfo,
  POSTGRES_URL,
  postgresSettings,
  RESULTS_DIR,
  randomSuffix,
  repoInfo,
  sleep,
  today,
  writeFile,
} from './lib/env.js';
import { grpcLoad } from './lib/grpc-load.js';
import { type HttpLoad, type HttpLoadResult, httpLoad, streamLoad } from './lib/load.js';
import { samplePostgresWaits } from './lib/postgres-waits.js';
import { renderProfileSummary, type SourceMaps, summarizeProfile } from './lib/profile.js';
import { renderResults } from './lib/report.js';
import { prepareSdkPostgres, prepareSdkSqlite } from './lib/sdk-db.js';
import type {
  Configuration,
  GetResult,
  RoundResult,
  RoundServerResult,
  RssSample,
  RunConfig,
  RunResult,
  ScenarioName,
  SendResult,
  ServerCpu,
  ServerResult,
  StreamsResult,
  WindowResult,
} from './lib/types.js';
import type { RssReport } from './servers/common.js';

const ALL_SCENARIOS: ScenarioName[] = ['send', 'send1', 'grpc', 'get', 'streams'];

const quick = process.env.BENCH_QUICK === '1' || process.argv.includes('--quick');
const profile = process.env.BENCH_PROFILE === '1';
/** The server BENCH_PROFILE=1 profiles: memory (default), sqlite or postgres. */
const profileServer = process.env.BENCH_PROFILE_SERVER ?? 'memory';
/**
 * What BENCH_PROFILE=1 profiles: `send` (default) the send window, or `get` a tasks/get window right
 * after an unprofiled send window, as in the rounds (a get then runs on a store full of tasks).
 */
const profileScenario = process.env.BENCH_PROFILE_SCENARIO === 'get' ? 'get' : 'send';
// The targets are for 10,000 held streams: a full run measures that many.
const streamsDefault = quick ? 200 : 10_000;
const streams = envNumber('BENCH_STREAMS', streamsDefault);
const config: RunConfig = {
  quick,
  rounds: envNumber('BENCH_ROUNDS', quick ? 2 : 3),
  warmupS: envNumber('BENCH_WARMUP_S', 1),
  durationS: envNumber('BENCH_DURATION_S', quick ? 2 : 5),
  connections: envNumber('BENCH_CONNECTIONS', 64),
  streams,
  // Long enough for every stream to open before the first one completes.
  holdMs: envNumber('BENCH_STREAM_HOLD_MS', Math.max(4000, 3000 + streams * 3)),
  openConcurrency: envNumber('BENCH_STREAM_OPEN_CONCURRENCY', 256),
  echoText: 'hello benchmark world',
};

const onlyServers = process.env.BENCH_SERVERS?.split(',').filter(Boolean);
const onlyScenarios = (process.env.BENCH_SCENARIOS?.split(',').filter(Boolean) ?? ALL_SCENARIOS) as ScenarioName[];

/** A blocking message/send with a fresh messageId (and JSON-RPC id) on every call. */
function sendBody(text: string): () => string {
  const run = randomSuffix();
  let n = 0;
  return () => {
    const id = `${run}-${n++}`;
    return JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'message/send',
      params: {
        message: { kind: 'message', messageId: `m-${id}`, role: 'user', parts: [{ kind: 'text', text }] },
        configuration: { blocking: true },
      },
    });
  };
}

/** The same blocking send as A2A 1.0's SendMessage (ProtoJSON, blocking by default), a fresh messageId each time. */
function send1Body(text: string): () => string {
  const run = randomSuffix();
  let n = 0;
  return () => {
    const id = `${run}-v1-${n++}`;
    return JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'SendMessage',
      params: { message: { messageId: `m-${id}`, role: 'ROLE_USER', parts: [{ text }] } },
    });
  };
}

/** A task to read in the get scenario, created through the server's own message/send. */
async function createTask(url: string): Promise<string> {
  const body = sendBody(config.echoText)();
  const response = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(30_000),
  });
  const json = (await response.json()) as { result?: { id?: string; kind?: string } };
  return json.result?.kind === 'task' && json.result.id ? json.result.id : 'no-task';
}

/** BENCH_PROFILE_SCENARIO=get: a send window, then a profiled tasks/get window (reported as `load`). */
async function profiledGetAfterSends(
  server: ServerProcess,
  sendWindow: () => Promise<HttpLoadResult>,
): Promise<SendResult> {
  await sendWindow();
  const taskId = await createTask(server.url);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: taskId } });
  const load = { url: `${server.url}/a2a`, body, connections: config.connections };
  await httpLoad({ ...load, duration: config.warmupS });
  const before = await server.memory(true);
  await server.mark('start');
  const measured = await httpLoad({ ...load, duration: config.durationS });
  await server.mark('end');
  return { load: measured, before, after: await server.memory(true), timeline: [] };
}

async function runSend(server: ServerProcess, spec: ServerSpec): Promise<SendResult> {
  const body = sendBody(config.echoText);
  const verify = sendVerify(spec);
  const url = `${server.url}/a2a`;
  const window = () => httpLoad({ url, body, connections: config.connections, duration: config.durationS, verify });
  await httpLoad({ url, body, connections: config.connections, duration: config.warmupS, verify });
  const before = await server.memory(true);
  const timeline: RssSample[] = [];
  const t0 = Date.now();
  const sample = () => timeline.push({ t: Date.now() - t0, rss: server.procRss() });
  const sampler = setInterval(sample, 250);
  try {
    if (profile && profileScenario === 'get') return await profiledGetAfterSends(server, window);
    if (profile) await server.mark('start');
    const waitSchema = postgresSchemas.get(spec.name);
    const stopWaits = waitSchema ? samplePostgresWaits(POSTGRES_URL, waitSchema) : undefined;
    const load = await window();
    const postgresWaits = (await stopWaits?.())?.waits;
    if (profile) await server.mark('end');
    sample();
    const after = await server.memory(true);
    const waits = postgresWaits ? { postgresWaits } : {};
    if (profile) return { load, before, after, timeline, ...waits };
    // Sustained load: a second window, then memory again.
    const again = await window();
    sample();
    return { load, before, after, timeline, ...waits, sustain: { load: again, after: await server.memory(true) } };
  } finally {
    clearInterval(sampler);
  }
}

/** A blocking send's answer is the completed task (the ceiling echoes any JSON-RPC body). */
function sendVerify(spec: ServerSpec): (body: string) => boolean {
  return spec.name === 'ceiling'
    ? (b) => b.includes('"result"')
    : (b) => b.includes('"state":"completed"') && !b.includes('"error"');
}

/** The server's CPU between two readings, and per response completed in the window. */
function cpuOver(before: CpuTime, after: CpuTime, responses: number): ServerCpu {
  const userMs = after.userMs - before.userMs;
  const systemMs = after.systemMs - before.systemMs;
  return { userMs, systemMs, perRequestMs: responses > 0 ? (userMs + systemMs) / responses : Number.NaN };
}

/** A warm-up, then one measured window with the server's CPU read from /proc before and after it. */
async function measuredWindow(server: ServerProcess, load: Omit<HttpLoad, 'duration'>): Promise<WindowResult> {
  await httpLoad({ ...load, duration: config.warmupS });
  const before = server.cpuTime();
  const measured = await httpLoad({ ...load, duration: config.durationS });
  return { load: measured, cpu: cpuOver(before, server.cpuTime(), measured.total) };
}

/** The names of the servers whose one-time preparation (an SDK peer's table) has run. */
const prepared = new Set<string>();

async function prepareOnce(entry: BenchEntry): Promise<void> {
  if (prepared.has(entry.spec.name)) return;
  await entry.prepare?.();
  prepared.add(entry.spec.name);
}

/** One server's turn in a round: a fresh process, the send window, the get window, stopped. */
async function measureInRound(entry: BenchEntry, round: number): Promise<RoundServerResult> {
  const { spec } = entry;
  const result: RoundServerResult = { name: spec.name, label: spec.label, kind: entry.kind };
  let server: ServerProcess | undefined;
  try {
    await prepareOnce(entry);
    server = await ServerProcess.start(spec);
    const url = `${server.url}/a2a`;
    const connections = config.connections;
    if (onlyScenarios.includes('send')) {
      result.send = await measuredWindow(server, {
        url,
        body: sendBody(config.echoText),
        connections,
        verify: sendVerify(spec),
      });
      logWindow(`round ${round} ${spec.name}`, 'message/send', result.send);
    }
    if (onlyScenarios.includes('get')) {
      const taskId = await createTask(server.url);
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: taskId } });
      const verify =
        spec.name === 'ceiling'
          ? (b: string) => b.includes('"result"')
          : (b: string) => b.includes(`"id":"${taskId}"`) && !b.includes('"error"');
      result.get = await measuredWindow(server, { url, body, connections, verify });
      logWindow(`round ${round} ${spec.name}`, 'tasks/get', result.get);
    }
  } catch (error) {
    result.error = (error as Error).message;
    console.error(`round ${round} ${spec.label}: ${result.error}`);
  } finally {
    const code = await server?.stop();
    if (code !== undefined && code !== 0 && code !== null) console.error(`${spec.label}: exited with code ${code}`);
  }
  return result;
}

/** Every selected server once per round, in the same order each round (A B … A B …). */
async function runRounds(entries: BenchEntry[]): Promise<RoundResult[]> {
  const rounds: RoundResult[] = [];
  for (let round = 1; round <= (config.rounds ?? 1); round++) {
    const startedAt = Date.now();
    const loadStart = loadavg()[0] ?? 0;
    console.log(`round ${round} of ${config.rounds}`);
    const servers: RoundServerResult[] = [];
    for (const entry of entries) servers.push(await measureInRound(entry, round));
    rounds.push({
      round,
      servers,
      loadAvg: { start: loadStart, end: loadavg()[0] ?? 0 },
      wallMs: Date.now() - startedAt,
    });
  }
  return rounds;
}

/**
 * The send scenario again, as A2A 1.0's SendMessage over JSON-RPC: the same agent, store and turn,
 * so the difference from `send` is what the 1.0 codec costs (reading ProtoJSON into the model,
 * writing the task back as ProtoJSON).
 */
async function runSend1(server: ServerProcess): Promise<GetResult> {
  const body = send1Body(config.echoText);
  const headers = { 'a2a-version': '1.0' };
  const verify = (b: string) => b.includes('"TASK_STATE_COMPLETED"') && !b.includes('"error"');
  const url = `${server.url}/a2a`;
  await httpLoad({ url, body, headers, connections: config.connections, duration: config.warmupS, verify });
  const before = await server.memory(true);
  const load = await httpLoad({
    url,
    body,
    headers,
    connections: config.connections,
    duration: config.durationS,
    verify,
  });
  const after = await server.memory(true);
  return { load, before, after };
}

/**
 * The send1 scenario over gRPC (SendMessage on `lf.a2a.v1.A2AService`), on the same process, agent
 * and store: the difference from send1 is what gRPC framing and protobuf cost against JSON-RPC and
 * ProtoJSON text.
 */
async function runGrpc(server: ServerProcess, target: string): Promise<GetResult> {
  const run = randomSuffix();
  let n = 0;
  const request = () => ({
    message: { messageId: `m-${run}-grpc-${n++}`, role: 'ROLE_USER', parts: [{ text: config.echoText }] },
  });
  const verify = (response: Record<string, unknown>) =>
    (response.task as { status?: { state?: string } } | undefined)?.status?.state === 'TASK_STATE_COMPLETED';
  const load = { target, method: 'SendMessage', request, concurrency: config.connections, verify };
  await grpcLoad({ ...load, duration: config.warmupS });
  const before = await server.memory(true);
  const measured = await grpcLoad({ ...load, duration: config.durationS });
  return { load: measured, before, after: await server.memory(true) };
}

/** A loopback port nothing listens on right now (for a server's second listener). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

async function runStreams(server: ServerProcess): Promise<StreamsResult> {
  const run = randomSuffix();
  const before = await server.memory(true);
  let whileOpen: RssReport | undefined;
  let peakRss = server.procRss();
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, server.procRss());
  }, 200);
  const load = await streamLoad({
    port: server.port,
    streams: config.streams,
    openConcurrency: config.openConcurrency,
    timeoutMs: config.holdMs + 120_000,
    body: (i) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'message/stream',
        params: {
          message: {
            kind: 'message',
            messageId: `stream-${run}-${i}`,
            role: 'user',
            parts: [{ kind: 'text', text: `sleep:${config.holdMs}` }],
          },
        },
      }),
    onAllOpen: async () => {
      whileOpen = await server.memory(true);
    },
  });
  clearInterval(sampler);
  await sleep(200);
  const after = await server.memory(true);
  return { load, holdMs: config.holdMs, before, whileOpen, peakRss, after };
}

const mb = (bytes: number | undefined) => (bytes === undefined ? '–' : `${(bytes / 1024 / 1024).toFixed(1)} MB`);

function logWindow(name: string, scenario: string, window: WindowResult): void {
  const l = window.load;
  const e = l.errors;
  console.log(
    `  ${name} ${scenario}: ${l.reqPerSec.toFixed(0)} req/s, p99 ${l.latencyMs.p99} ms, server CPU ${window.cpu.perRequestMs.toFixed(3)} ms/request, errors ${e.socket + e.timeouts + e.non2xx + e.badBody}`,
  );
}

function logLoad(name: string, scenario: string, load: HttpLoadResult): void {
  const e = load.errors;
  console.log(
    `  ${name} ${scenario}: ${load.reqPerSec.toFixed(0)} req/s, p50 ${load.latencyMs.p50} ms, p99 ${load.latencyMs.p99} ms, errors ${e.socket}/${e.timeouts}/${e.non2xx}/${e.badBody} (socket/timeouts/non-2xx/bad body)`,
  );
}

/** The once-per-server scenarios (see the top of this file) on one server. */
async function benchServer(entry: BenchEntry): Promise<ServerResult> {
  const { spec, kind } = entry;
  const result: ServerResult = {
    name: spec.name,
    label: spec.label,
    kind,
    ...(entry.configuration ? { configuration: entry.configuration } : {}),
  };
  const startedAt = Date.now();
  const loadStart = loadavg()[0] ?? 0;
  let server: ServerProcess | undefined;
  const profileDir = join(BENCH_DIR, 'profiles');
  const marksFile = join(profileDir, `marks-pending-${randomSuffix()}.json`);
  try {
    if (profile) mkdirSync(profileDir, { recursive: true });
    await prepareOnce(entry);
    server = await ServerProcess.start(spec, profile ? { cpuProfDir: profileDir, marksFile } : {});
    console.log(`${spec.label}: pid ${server.pid}, port ${server.port}`);
    if (server.settings) {
      result.settings = server.settings;
      console.log(
        `  settings: ${Object.entries(server.settings)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      );
    }
    result.startup = await server.memory(true);
    for (const scenario of onlyScenarios) {
      if (scenario === 'send') {
        result.send = await runSend(server, spec);
        logLoad(spec.name, 'message/send', result.send.load);
        const { sustain, after } = result.send;
        if (sustain) {
          logLoad(spec.name, 'message/send (window 2)', sustain.load);
          console.log(
            `  ${spec.name} memory after GC: window 1 ${mb(after.rss)} RSS / ${mb(after.heapUsed)} heap, window 2 ${mb(sustain.after.rss)} RSS / ${mb(sustain.after.heapUsed)} heap`,
          );
        }
      } else if (scenario === 'send1') {
        // Only fastify-a2a speaks A2A 1.0 here (the SDK server is 0.3.14; the ceiling has no protocol).
        if (kind !== 'fastify-a2a') continue;
        result.send1 = await runSend1(server);
        logLoad(spec.name, 'SendMessage (A2A 1.0)', result.send1.load);
      } else if (scenario === 'grpc') {
        const grpcPort = spec.env?.BENCH_GRPC_PORT;
        if (kind !== 'fastify-a2a' || grpcPort === undefined) continue;
        result.grpc = await runGrpc(server, `127.0.0.1:${grpcPort}`);
        logLoad(spec.name, 'SendMessage over gRPC (A2A 1.0)', result.grpc.load);
      } else if (scenario === 'streams') {
        if ((result.send || result.send1 || result.grpc) && !profile) {
          // A fresh process: the memory store is full of the send scenario's tasks by now, and each
          // new stream's task would evict one, hiding part of what a stream costs.
          await server.stop();
          server = await ServerProcess.start(spec);
          console.log(`${spec.label}: restarted for the streams scenario (pid ${server.pid})`);
        }
        result.streams = await runStreams(server);
        const s = result.streams;
        console.log(
          `  ${spec.name} streams: ${s.load.opened}/${s.load.requested} opened (max ${s.load.maxConcurrent} at once, ${s.load.openMs} ms), ${s.load.finals} finals, ${s.load.errors} errors; RSS ${mb(s.before.rss)} → ${mb(s.whileOpen?.rss)} open → ${mb(s.after.rss)} after`,
        );
        if (s.load.errorSamples.length > 0) console.log(`    e.g. ${s.load.errorSamples.join(' | ')}`);
      }
    }
    result.end = await server.memory(true);
    result.loadAvg = { start: loadStart, end: loadavg()[0] ?? 0 };
    result.wallMs = Date.now() - startedAt;
  } catch (error) {
    result.error = (error as Error).message;
    console.error(`${spec.label}: ${result.error}`);
  } finally {
    const code = await server?.stop();
    if (code !== undefined && code !== 0 && code !== null) console.error(`${spec.label}: exited with code ${code}`);
    if (profile && server) {
      try {
        const named = join(profileDir, `marks-${server.pid}.json`);
        renameSync(marksFile, named);
        const file = readdirSync(profileDir).find((f) => f.includes(`.${server?.pid}.0.`) && f.endsWith('.cpuprofile'));
        if (file) {
          const written = JSON.parse(readFileSync(named, 'utf8')) as {
            marks: { start: number; end: number };
            sourceMaps?: SourceMaps;
          };
          const summary = renderProfileSummary(
            summarizeProfile(join(profileDir, file), written.marks, written.sourceMaps),
          );
          writeFile(join(profileDir, `summary-${server.pid}.md`), summary);
          console.log(`\n${summary}`);
        } else {
          console.error('no main-thread .cpuprofile found in bench/profiles');
        }
      } catch (error) {
        console.error(`profile summary failed: ${(error as Error).message}`);
      }
    }
  }
  return result;
}

/** The throwaway Postgres schema of each server that has one (its name → bench_<random>), for the wait sampler and the cleanup. */
const postgresSchemas = new Map<string, string>();

/** A server of the run: how to start it, what it is, and whether it takes part in the once-per-server scenarios. */
interface BenchEntry {
  spec: ServerSpec;
  kind: ServerResult['kind'];
  configuration?: Configuration;
  /** Runs once, before the server's first start (an SDK peer's table). */
  prepare?: () => Promise<void>;
  /** Only in the rounds: the minimal server (no streams, no 1.0), memory-info and memory-telemetry (costs measured against memory). */
  roundsOnly?: boolean;
}

/** What a configuration sets in the fastify-a2a bench server's environment (servers/fastify-a2a.ts). */
const CONFIGURATION_ENV: Record<Configuration, Record<string, string>> = {
  shipped: { BENCH_PUSH: 'on', BENCH_LOG_LEVEL: 'warn' },
  bare: {},
  info: { BENCH_PUSH: 'on', BENCH_LOG_LEVEL: 'info' },
  telemetry: { BENCH_PUSH: 'on', BENCH_LOG_LEVEL: 'warn', BENCH_TELEMETRY: 'on' },
};
const CONFIGURATION_LABEL: Record<Configuration, string> = {
  shipped: 'as shipped (push on, logger warn)',
  bare: 'bare (logger off, push off)',
  info: 'as shipped, request logs at info',
  telemetry: 'as shipped, metrics + tracing (SDK, no exporter)',
};

/**
 * The fastify-a2a servers: each store as shipped and bare, and the memory store with info request
 * logs and with telemetry on.
 */
async function fastifyA2aEntries(tmp: string): Promise<BenchEntry[]> {
  const stores: { name: string; label: string; url: (suffix: string) => string }[] = [
    { name: 'memory', label: 'memory', url: () => 'memory:' },
    { name: 'sqlite', label: 'SQLite', url: (suffix) => `sqlite:${join(tmp, `bench${suffix}.db`)}` },
    {
      name: 'postgres',
      label: 'Postgres',
      url: (suffix) => {
        const schema = `bench${suffix.replace('-', '_')}_${randomSuffix()}`;
        const url = new URL(POSTGRES_URL);
        url.searchParams.set('schema', schema);
        postgresSchemas.set(`postgres${suffix}`, schema);
        return url.toString();
      },
    },
  ];
  const entries: BenchEntry[] = [];
  for (const configuration of ['shipped', 'bare', 'info', 'telemetry'] as const) {
    // The two costs measured against memory as shipped: one store is enough to see them.
    const costOnly = configuration === 'info' || configuration === 'telemetry';
    for (const store of stores) {
      if (costOnly && store.name !== 'memory') continue;
      const suffix = configuration === 'shipped' ? '' : `-${configuration}`;
      entries.push({
        kind: 'fastify-a2a',
        configuration,
        ...(costOnly ? { roundsOnly: true } : {}),
        spec: {
          name: `${store.name}${suffix}`,
          label: `fastify-a2a, ${store.label}, ${CONFIGURATION_LABEL[configuration]}`,
          entry: 'fastify-a2a.ts',
          env: {
            BENCH_STORE: store.url(suffix),
            BENCH_GRPC_PORT: String(await freePort()),
            ...CONFIGURATION_ENV[configuration],
          },
          ...(configuration === 'info' ? { discardStdout: true } : {}),
        },
      });
    }
  }
  return entries;
}

/**
 * The order of every round: each fastify-a2a server next to what it is compared with (the limits,
 * the SDK, its durable peer), so a pair is measured minutes apart at most.
 */
const ROUND_ORDER = [
  'ceiling',
  'minimal',
  'memory',
  // Right after memory: the telemetry cost is a ratio of two windows measured seconds apart.
  'memory-telemetry',
  'sdk',
  'memory-bare',
  'memory-info',
  'sqlite',
  'sdk-sqlite',
  'sqlite-bare',
  'postgres',
  'sdk-postgres',
  'postgres-bare',
];

async function main(): Promise<void> {
  // `npm run bench -- --render bench/results/<date>.json`: regenerate RESULTS.md from a result file.
  const renderAt = process.argv.indexOf('--render');
  const renderFile = renderAt >= 0 ? process.argv[renderAt + 1] : undefined;
  if (renderFile) {
    // npm runs this script in bench/; a relative path is meant from where npm was invoked.
    const file = resolve(process.env.INIT_CWD ?? process.cwd(), renderFile);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as RunResult;
    writeFile(join(BENCH_DIR, 'RESULTS.md'), renderResults(saved));
    console.log(`rendered bench/RESULTS.md from ${file}`);
    return;
  }
  const tmp = mkdtempSync(join(tmpdir(), 'fastify-a2a-bench-'));
  const sdkSchema = `bench_sdk_${randomSuffix()}`;
  postgresSchemas.set('sdk-postgres', sdkSchema);
  const sdkSqliteFile = join(tmp, 'sdk.db');
  const others: BenchEntry[] = [
    { kind: 'ceiling', spec: { name: 'ceiling', label: 'raw Fastify (ceiling)', entry: 'ceiling.ts' } },
    {
      kind: 'minimal',
      roundsOnly: true,
      spec: { name: 'minimal', label: 'minimal A2A server on Fastify', entry: 'minimal.ts' },
    },
    { kind: 'sdk', spec: { name: 'sdk', label: '@a2a-js/sdk 0.3.14 + express', entry: 'sdk.ts' } },
    {
      kind: 'sdk-db',
      spec: {
        name: 'sdk-sqlite',
        label: '@a2a-js/sdk 1.3.0 DatabaseTaskStore, SQLite',
        entry: 'sdk-db.ts',
        env: { BENCH_SDK_DB: `sqlite:${sdkSqliteFile}` },
      },
      prepare: () => prepareSdkSqlite(sdkSqliteFile),
    },
    {
      kind: 'sdk-db',
      spec: {
        name: 'sdk-postgres',
        label: '@a2a-js/sdk 1.3.0 DatabaseTaskStore, Postgres',
        entry: 'sdk-db.ts',
        env: { BENCH_SDK_DB: POSTGRES_URL, BENCH_SDK_DB_SCHEMA: sdkSchema },
      },
      // Once per run: the server starts again every round and keeps its schema, as the durable
      // stores keep theirs, and neither CREATE SCHEMA nor the SDK's `a2a-db upgrade` runs twice.
      prepare: once(() => prepareSdkPostgres(sdkSchema)),
    },
  ];
  const entries = [...others, ...(await fastifyA2aEntries(tmp))].sort(
    (a, b) => ROUND_ORDER.indexOf(a.spec.name) - ROUND_ORDER.indexOf(b.spec.name),
  );
  const selected = entries.filter(({ spec }) =>
    profile ? spec.name === profileServer : !onlyServers || onlyServers.includes(spec.name),
  );
  if (profile) onlyScenarios.splice(0, onlyScenarios.length, 'send');
  console.log(
    `bench: ${config.quick ? 'quick' : 'full'} mode, ${config.rounds} alternating rounds of send and get, ${config.durationS} s runs after ${config.warmupS} s warm-up, ${config.connections} connections, ${config.streams} streams held ${config.holdMs} ms${profile ? ', PROFILE' : ''}`,
  );

  let rounds: RoundResult[] = [];
  const servers: ServerResult[] = [];
  try {
    const roundScenarios = onlyScenarios.filter((name) => name === 'send' || name === 'get');
    if (!profile && roundScenarios.length > 0) rounds = await runRounds(selected);
    const onceScenarios = onlyScenarios.filter((name) => name !== 'get');
    if (profile || onceScenarios.length > 0) {
      for (const entry of selected.filter((e) => !e.roundsOnly || profile)) servers.push(await benchServer(entry));
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    for (const [name, schema] of postgresSchemas) {
      if (!prepared.has(name) && !selected.some(({ spec }) => spec.name === name)) continue;
      await dropSchema(schema).catch((error) => console.error(`could not drop schema ${schema}: ${error.message}`));
    }
  }
  if (profile) return;

  const result: RunResult = {
    kind: 'run',
    date: new Date().toISOString(),
    machine: machineInfo(),
    repo: repoInfo(),
    config,
    postgres: await postgresSettings(),
    servers,
    rounds,
  };
  // A subset run (BENCH_SERVERS / BENCH_SCENARIOS) must not replace the full run's files.
  const partial = onlyServers !== undefined || process.env.BENCH_SCENARIOS !== undefined;
  if (partial) {
    const jsonPath = join(RESULTS_DIR, 'partial', `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFile(jsonPath, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`\nsubset run: wrote ${jsonPath} (bench/RESULTS.md left as it is; --render this file to see it)`);
    return;
  }
  const jsonPath = join(RESULTS_DIR, `${today()}.json`);
  writeFile(jsonPath, `${JSON.stringify(result, null, 2)}\n`);
  writeFile(join(BENCH_DIR, 'RESULTS.md'), renderResults(result));
  console.log(`\nwrote ${jsonPath} and bench/RESULTS.md`);
}

await main();

/** `fn` run on the first call only; later calls get the first call's promise. */
function once(fn: () => Promise<void>): () => Promise<void> {
  let first: Promise<void> | undefined;
  return () => {
    first ??= fn();
    return first;
  };
}
