/**
 * `npm run bench`: fastify-a2a against the official SDK server and the raw-Fastify ceiling, in one
 * run, each server a separate child process on its own loopback port (so RSS is per server), the
 * load generated from this process.
 *
 * Servers: ceiling (raw Fastify echo route), sdk (@a2a-js/sdk 0.3.14 + express, in memory),
 * sdk-sqlite and sdk-postgres (@a2a-js/sdk 1.3.0 + express with its Kysely `DatabaseTaskStore` and
 * its v0.3 compatibility layer on, on sqlite:<tmp file> and the same Postgres server in a schema
 * bench_sdk_<random>), and fastify-a2a with the demo echo agent on memory:, sqlite:<tmp file> and
 * postgres://…?schema=bench_<random> (schemas dropped at the end). Scenarios, per server, one after
 * another:
 * - send: blocking message/send, a fresh messageId per request; then a second, identical window
 *   (sustained load) with memory after a GC at the end of each;
 * - send1 (fastify-a2a only): the same send as A2A 1.0's SendMessage (A2A-Version: 1.0), so the
 *   cost of the 1.0 codec is known;
 * - grpc (fastify-a2a only): the same SendMessage over gRPC, on the listener @fastify-a2a/grpc
 *   starts in the same process: BENCH_CONNECTIONS calls in flight on one HTTP/2 connection;
 * - get: tasks/get of an existing task;
 * - streams: message/stream `sleep:<hold>` streams held open at once by a raw http client; server
 *   memory before, with all open, after they completed; final events counted.
 *
 * Environment (defaults in parentheses):
 * - BENCH_DURATION_S (5, quick 2) per load window, after BENCH_WARMUP_S (1); BENCH_CONNECTIONS (64);
 * - BENCH_STREAMS (1000, quick 200), BENCH_STREAM_HOLD_MS (3000 + 3 ms per stream, at least 4000),
 *   BENCH_STREAM_OPEN_CONCURRENCY (256 streams connecting at a time);
 * - BENCH_QUICK=1 for the quick defaults; BENCH_SERVERS / BENCH_SCENARIOS: comma lists to run a
 *   subset (ceiling,sdk,sdk-sqlite,sdk-postgres,memory,sqlite,postgres / send,send1,grpc,get,streams);
 * - BENCH_POSTGRES_URL (or A2A_TEST_POSTGRES_URL; default postgres://postgres@127.0.0.1:5432/test).
 *
 * Writes bench/results/<date>.json and regenerates bench/RESULTS.md (a subset run writes only
 * bench/results/partial/<time>.json, git-ignored); `npm run bench -- --render <file.json>`
 * regenerates RESULTS.md from a saved result.
 *
 * BENCH_PROFILE=1: only the send scenario of the memory store (BENCH_PROFILE_SERVER=sqlite or
 * postgres for those), the child run with --cpu-prof --cpu-prof-dir=bench/profiles; prints the top
 * self-time frames of the measured window (also written to bench/profiles/summary-<pid>.md) and
 * writes no results.
 */

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ServerProcess, type ServerSpec } from './lib/child.js';
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
import { type HttpLoadResult, httpLoad, streamLoad } from './lib/load.js';
import { samplePostgresWaits } from './lib/postgres-waits.js';
import { renderProfileSummary, type SourceMaps, summarizeProfile } from './lib/profile.js';
import { renderResults } from './lib/report.js';
import { prepareSdkPostgres, prepareSdkSqlite } from './lib/sdk-db.js';
import type {
  GetResult,
  RssSample,
  RunConfig,
  RunResult,
  ScenarioName,
  SendResult,
  ServerResult,
  StreamsResult,
} from './lib/types.js';
import type { RssReport } from './servers/common.js';

const ALL_SCENARIOS: ScenarioName[] = ['send', 'send1', 'grpc', 'get', 'streams'];

const quick = process.env.BENCH_QUICK === '1';
const profile = process.env.BENCH_PROFILE === '1';
/** The server BENCH_PROFILE=1 profiles: memory (default), sqlite or postgres. */
const profileServer = process.env.BENCH_PROFILE_SERVER ?? 'memory';
const streamsDefault = quick ? 200 : 1000;
const streams = envNumber('BENCH_STREAMS', streamsDefault);
const config: RunConfig = {
  quick,
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

async function runSend(server: ServerProcess, spec: ServerSpec): Promise<SendResult> {
  const body = sendBody(config.echoText);
  const verify =
    spec.name === 'ceiling'
      ? (b: string) => b.includes('"result"')
      : (b: string) => b.includes('"state":"completed"') && !b.includes('"error"');
  const url = `${server.url}/a2a`;
  const window = () => httpLoad({ url, body, connections: config.connections, duration: config.durationS, verify });
  await httpLoad({ url, body, connections: config.connections, duration: config.warmupS, verify });
  const before = await server.memory(true);
  const timeline: RssSample[] = [];
  const t0 = Date.now();
  const sample = () => timeline.push({ t: Date.now() - t0, rss: server.procRss() });
  const sampler = setInterval(sample, 250);
  try {
    if (profile) await server.mark('start');
    const waitSchema = spec.name === 'postgres' ? postgresSchema : spec.name === 'sdk-postgres' ? sdkSchema : undefined;
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

async function runGet(server: ServerProcess, spec: ServerSpec): Promise<GetResult> {
  const taskId = await createTask(server.url);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: taskId } });
  const verify =
    spec.name === 'ceiling'
      ? (b: string) => b.includes('"result"')
      : (b: string) => b.includes(`"id":"${taskId}"`) && !b.includes('"error"');
  const url = `${server.url}/a2a`;
  await httpLoad({ url, body, connections: config.connections, duration: config.warmupS, verify });
  const before = await server.memory(true);
  const load = await httpLoad({ url, body, connections: config.connections, duration: config.durationS, verify });
  const after = await server.memory(true);
  return { load, before, after };
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

function logLoad(name: string, scenario: string, load: HttpLoadResult): void {
  const e = load.errors;
  console.log(
    `  ${name} ${scenario}: ${load.reqPerSec.toFixed(0)} req/s, p50 ${load.latencyMs.p50} ms, p99 ${load.latencyMs.p99} ms, errors ${e.socket}/${e.timeouts}/${e.non2xx}/${e.badBody} (socket/timeouts/non-2xx/bad body)`,
  );
}

async function benchServer(
  spec: ServerSpec,
  kind: ServerResult['kind'],
  prepare?: () => Promise<void>,
): Promise<ServerResult> {
  const result: ServerResult = { name: spec.name, label: spec.label, kind };
  const startedAt = Date.now();
  const loadStart = loadavg()[0] ?? 0;
  let server: ServerProcess | undefined;
  const profileDir = join(BENCH_DIR, 'profiles');
  const marksFile = join(profileDir, `marks-pending-${randomSuffix()}.json`);
  try {
    if (profile) mkdirSync(profileDir, { recursive: true });
    await prepare?.();
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
      } else if (scenario === 'get') {
        result.get = await runGet(server, spec);
        logLoad(spec.name, 'tasks/get', result.get.load);
      } else if (scenario === 'streams') {
        if (onlyScenarios.indexOf(scenario) > 0 && !profile) {
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

/** The throwaway schema of this run's Postgres server (bench_<random>). */
let postgresSchema: string | undefined;
/** The throwaway schema of the SDK peer's DatabaseTaskStore on the same server (bench_sdk_<random>). */
let sdkSchema: string | undefined;

async function main(): Promise<void> {
  // `npm run bench -- --render bench/results/<date>.json`: regenerate RESULTS.md from a result file.
  if (process.argv[2] === '--render' && process.argv[3]) {
    // npm runs this script in bench/; a relative path is meant from where npm was invoked.
    const file = resolve(process.env.INIT_CWD ?? process.cwd(), process.argv[3]);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as RunResult;
    writeFile(join(BENCH_DIR, 'RESULTS.md'), renderResults(saved));
    console.log(`rendered bench/RESULTS.md from ${file}`);
    return;
  }
  const tmp = mkdtempSync(join(tmpdir(), 'fastify-a2a-bench-'));
  const schema = `bench_${randomSuffix()}`;
  postgresSchema = schema;
  sdkSchema = `bench_sdk_${randomSuffix()}`;
  const pgUrl = new URL(POSTGRES_URL);
  pgUrl.searchParams.set('schema', schema);
  const sdkSqliteFile = join(tmp, 'sdk.db');
  const specs: { spec: ServerSpec; kind: ServerResult['kind']; prepare?: () => Promise<void> }[] = [
    { kind: 'ceiling', spec: { name: 'ceiling', label: 'raw Fastify (ceiling)', entry: 'ceiling.ts' } },
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
      prepare: () => prepareSdkPostgres(sdkSchema as string),
    },
    {
      kind: 'fastify-a2a',
      spec: {
        name: 'memory',
        label: 'fastify-a2a, memory',
        entry: 'fastify-a2a.ts',
        env: { BENCH_STORE: 'memory:', BENCH_GRPC_PORT: String(await freePort()) },
      },
    },
    {
      kind: 'fastify-a2a',
      spec: {
        name: 'sqlite',
        label: 'fastify-a2a, SQLite',
        entry: 'fastify-a2a.ts',
        env: { BENCH_STORE: `sqlite:${join(tmp, 'bench.db')}`, BENCH_GRPC_PORT: String(await freePort()) },
      },
    },
    {
      kind: 'fastify-a2a',
      spec: {
        name: 'postgres',
        label: 'fastify-a2a, Postgres',
        entry: 'fastify-a2a.ts',
        env: { BENCH_STORE: pgUrl.toString(), BENCH_GRPC_PORT: String(await freePort()) },
      },
    },
  ];
  const selected = specs.filter(({ spec }) =>
    profile ? spec.name === profileServer : !onlyServers || onlyServers.includes(spec.name),
  );
  if (profile) onlyScenarios.splice(0, onlyScenarios.length, 'send');
  console.log(
    `bench: ${config.quick ? 'quick' : 'full'} mode, ${config.durationS} s runs after ${config.warmupS} s warm-up, ${config.connections} connections, ${config.streams} streams held ${config.holdMs} ms${profile ? ', PROFILE' : ''}`,
  );

  const servers: ServerResult[] = [];
  try {
    for (const { spec, kind, prepare } of selected) servers.push(await benchServer(spec, kind, prepare));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    const drop = [
      ...(selected.some(({ spec }) => spec.name === 'postgres') ? [schema] : []),
      ...(selected.some(({ spec }) => spec.name === 'sdk-postgres') ? [sdkSchema] : []),
    ];
    for (const name of drop) {
      await dropSchema(name).catch((error) => console.error(`could not drop schema ${name}: ${error.message}`));
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
