/**
 * `npm run bench:edge -- --profile`: where a plain request's CPU goes under load, by stage. For
 * each operation (tasks/get, message/send), binding (JSON-RPC, HTTP+JSON) and version (0.3, 1.0),
 * a fresh server process runs under `--cpu-prof` on loopback while autocannon (64 connections,
 * BENCH_EDGE_PROFILE_S seconds, default 3) calls it; every sample of the server's main thread is
 * charged to the stage of the nearest frame on its stack that belongs to one (a Node internal or a
 * promise job is passed over to its caller), so the shares add up to the busy time. Writes
 * bench/profiles/edge-profile.md (git-ignored; bench/PROFILE.md keeps the tables). BENCH_EDGE_LOGGING=warn|info|off (default warn, as the demo is run) sets
 * the server's pino level; BENCH_EDGE_PLUGIN=<path of a packages/fastify/src/index.ts> profiles
 * another checkout's plugin.
 */

import { fork } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MemoryStore } from '@fastify-a2a/store-memory';
import Fastify, { type FastifyPluginAsync } from 'fastify';
import type { A2APluginOptions } from 'fastify-a2a';
import { demoCard, echoAgent } from '../../examples/demo/src/agents.js';

// autocannon ships no type declarations and @types/autocannon is not a dependency: type what is used.
interface LoadOptions {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  requests?: { setupRequest: (request: { body?: string }) => { body?: string } }[];
}
interface LoadResult {
  requests: { average: number; total: number };
  errors: number;
  non2xx: number;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (
  options: LoadOptions & { connections: number; duration: number },
) => Promise<LoadResult>;

const SELF = fileURLToPath(import.meta.url);
const BENCH_DIR = join(SELF, '../..');
const DURATION_S = Number(process.env.BENCH_EDGE_PROFILE_S ?? 3);
const LOGGING = process.env.BENCH_EDGE_LOGGING ?? 'warn';

type Binding = 'jsonrpc' | 'rest';
type Version = '0.3' | '1.0';
type Operation = 'get' | 'send';

/** The child: the plugin on a loopback port, until the parent says to exit (which writes the profile). */
async function serve(): Promise<void> {
  const pluginPath = process.env.BENCH_EDGE_PLUGIN;
  const { a2aPlugin } = (await import(pluginPath ? pathToFileURL(pluginPath).href : 'fastify-a2a')) as {
    a2aPlugin: FastifyPluginAsync<A2APluginOptions>;
  };
  const discard = { write: (_line: string) => undefined };
  const app = Fastify({ logger: LOGGING === 'off' ? false : { level: LOGGING, stream: discard } });
  await app.register(a2aPlugin, { agentCard: demoCard('echo'), executor: echoAgent, store: new MemoryStore() });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  process.on('message', async (message) => {
    if (message !== 'exit') return;
    await app.close();
    process.exit(0);
  });
  process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
}

let messageCount = 0;
function sendRequest(binding: Binding, version: Version): { path: string; body: () => string } {
  const message = () =>
    version === '1.0'
      ? { messageId: `p-${++messageCount}`, role: 'ROLE_USER', parts: [{ text: 'hello benchmark world' }] }
      : {
          kind: 'message',
          messageId: `p-${++messageCount}`,
          role: 'user',
          parts: [{ kind: 'text', text: 'hello benchmark world' }],
        };
  if (binding === 'jsonrpc') {
    const method = version === '1.0' ? 'SendMessage' : 'message/send';
    return {
      path: '/a2a',
      body: () => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { message: message() } }),
    };
  }
  return {
    path: version === '1.0' ? '/message:send' : '/v1/message:send',
    body: () => JSON.stringify({ message: message() }),
  };
}

/** Stages, in the order the table lists them, and the rule that says which frame is whose. */
const STAGES = [
  'Fastify routing, hooks, request/reply objects',
  '@fastify/sse per-request wrapper',
  'body-deadline timer',
  'body read + content-type parser',
  'plugin handler (version, context, tenant, content type)',
  'JSON.parse of the body',
  'core binding (envelope, JSON-RPC/REST framing)',
  'ajv validation (envelope + params)',
  'codec (decode/encode)',
  'dispatch, authorisation and capability gates',
  'runtime + store + agent',
  'JSON.stringify of the result (Fastify serialize)',
  'reply headers and send',
  'logging (pino)',
  'Node HTTP parser, socket writes',
  'promise jobs, timers (no owner on the stack)',
  'garbage collector',
  'other',
] as const;
type Stage = (typeof STAGES)[number];

interface Frame {
  functionName: string;
  url: string;
}

/** The stage `frame` belongs to, or undefined to pass the sample on to the caller. */
function stageOf({ functionName: fn, url }: Frame): Stage | undefined {
  if (fn === '(garbage collector)') return 'garbage collector';
  if (url.includes('/pino') || url.includes('/fastify/lib/logger') || url.includes('sonic-boom')) {
    return 'logging (pino)';
  }
  if (url.includes('/@fastify/sse/')) return '@fastify/sse per-request wrapper';
  if (url.includes('body-deadline')) return 'body-deadline timer';
  if (url.includes('/fastify/lib/reply.js')) {
    return fn === 'serialize' ? 'JSON.stringify of the result (Fastify serialize)' : 'reply headers and send';
  }
  if (url.includes('/fastify/lib/content-type-parser.js') || url.includes('/fastify/lib/content-type.js')) {
    return 'body read + content-type parser';
  }
  if (url.includes('/node_modules/fastify/') || url.includes('/find-my-way/') || url.includes('/avvio/')) {
    return 'Fastify routing, hooks, request/reply objects';
  }
  if (url.includes('packages/fastify/src/')) {
    if (fn === 'parsedJson' || fn === 'parseBody') return 'JSON.parse of the body';
    return 'plugin handler (version, context, tenant, content type)';
  }
  if (/^validate\d*$/.test(fn) || url.includes('/ajv/') || url.includes('protocol/validation.ts')) {
    return 'ajv validation (envelope + params)';
  }
  if (url.includes('protocol/bindings/')) return 'core binding (envelope, JSON-RPC/REST framing)';
  if (url.includes('protocol/v0_3/') || url.includes('protocol/v1_0/') || url.includes('protocol/codec.ts')) {
    return 'codec (decode/encode)';
  }
  if (url.includes('packages/core/src/protocol/')) return 'dispatch, authorisation and capability gates';
  if (url.includes('packages/core/') || url.includes('packages/store-memory/') || url.includes('examples/demo/')) {
    return 'runtime + store + agent';
  }
  if (
    url.startsWith('node:_http') ||
    url.startsWith('node:net') ||
    url.includes('stream_base_commons') ||
    url.startsWith('node:internal/streams') ||
    url.startsWith('node:internal/http') ||
    fn === 'writev' ||
    fn === 'writeUtf8String' ||
    fn === 'writeBuffer'
  ) {
    return 'Node HTTP parser, socket writes';
  }
  return undefined;
}

interface CpuProfile {
  nodes: { id: number; callFrame: Frame; children?: number[] }[];
  /** µs on the monotonic clock that process.hrtime reads too, in every process of the machine. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Now on the clock of a profile's startTime, in µs. */
function nowUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/**
 * Busy µs per stage in one profile, of the samples taken while the load ran (`window`): the
 * server's start (module loading, tsx compiling TypeScript, ajv compiling its schemas) is in the
 * profile too, and was charged to the stages as if requests had cost it (ajv's "validation" share
 * was mostly its schema compiler).
 */
function stageTimes(profile: CpuProfile, window: { fromUs: number; toUs: number }): Map<Stage, number> {
  const parent = new Map<number, number>();
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stageOfNode = new Map<number, Stage | null>();
  const resolve = (id: number): Stage | null => {
    const known = stageOfNode.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    if (node === undefined) return null;
    const { functionName } = node.callFrame;
    if (functionName === '(idle)' || functionName === '(root)') return null;
    let stage: Stage | null = stageOf(node.callFrame) ?? null;
    if (stage === null) {
      const up = parent.get(id);
      stage = up === undefined ? null : resolve(up);
      if (stage === null && functionName !== '(program)') stage = 'promise jobs, timers (no owner on the stack)';
      if (stage === null) stage = 'other';
    }
    stageOfNode.set(id, stage);
    return stage;
  };
  const times = new Map<Stage, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (at < window.fromUs || at > window.toUs) return;
    const node = byId.get(id);
    if (node?.callFrame.functionName === '(idle)') return;
    const stage = resolve(id);
    if (stage === null) return;
    times.set(stage, (times.get(stage) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return times;
}

async function profileOne(
  operation: Operation,
  binding: Binding,
  version: Version,
): Promise<{ times: Map<Stage, number>; requests: number; reqPerSec: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'edge-prof-'));
  const child = fork(SELF, [], {
    env: { ...process.env, BENCH_EDGE_PROFILE_CHILD: '1' },
    execArgv: ['--conditions=@fastify-a2a/source', '--import', 'tsx', '--cpu-prof', `--cpu-prof-dir=${dir}`],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve) =>
    child.once('message', (m) => resolve((m as { port: number }).port)),
  );
  const base = `http://127.0.0.1:${port}`;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...(version === '1.0' ? { 'a2a-version': '1.0' } : {}),
  };
  const send = sendRequest(binding, version);
  let options: LoadOptions;
  if (operation === 'send') {
    options = {
      url: base + send.path,
      method: 'POST',
      headers,
      body: send.body(),
      requests: [{ setupRequest: (request) => ({ ...request, body: send.body() }) }],
    };
  } else {
    const created = (await (await fetch(base + send.path, { method: 'POST', headers, body: send.body() })).json()) as {
      result?: { id?: string; task?: { id?: string } };
      task?: { id?: string };
      id?: string;
    };
    const id = created.result?.id ?? created.result?.task?.id ?? created.task?.id ?? created.id;
    if (binding === 'jsonrpc') {
      const method = version === '1.0' ? 'GetTask' : 'tasks/get';
      options = {
        url: `${base}/a2a`,
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { id } }),
      };
    } else {
      options = { url: `${base}${version === '1.0' ? '' : '/v1'}/tasks/${id}`, method: 'GET', headers };
    }
  }
  // A second of warm-up for the JIT, then the measured run. The profile holds both; the request
  // count below does too, so µs per request is over the same span.
  const fromUs = nowUs();
  await autocannon({ ...options, connections: 64, duration: 1 });
  const result = await autocannon({ ...options, connections: 64, duration: DURATION_S });
  const toUs = nowUs();
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${operation} ${binding} ${version}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  child.send('exit');
  await new Promise((resolve) => child.once('exit', resolve));
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error('no profile written');
  const times = stageTimes(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile, { fromUs, toUs });
  // BENCH_EDGE_PROFILE_KEEP=<dir> keeps each column's profile there, to open in a profiler.
  const keep = process.env.BENCH_EDGE_PROFILE_KEEP;
  if (keep !== undefined) {
    mkdirSync(keep, { recursive: true });
    copyFileSync(join(dir, file), join(keep, `${operation}-${binding}-${version}.cpuprofile`));
  }
  rmSync(dir, { recursive: true, force: true });
  // The warm-up's requests are in the profile too.
  return {
    times,
    requests: result.requests.total * ((DURATION_S + 1) / DURATION_S),
    reqPerSec: result.requests.average,
  };
}

async function main(): Promise<void> {
  const columns: { label: string; times: Map<Stage, number>; requests: number; reqPerSec: number }[] = [];
  for (const operation of ['get', 'send'] as const) {
    for (const binding of ['jsonrpc', 'rest'] as const) {
      for (const version of ['0.3', '1.0'] as const) {
        const label = `${operation === 'get' ? 'get' : 'send'} ${binding === 'jsonrpc' ? 'RPC' : 'REST'} ${version}`;
        process.stderr.write(`profiling ${label}\n`);
        columns.push({ label, ...(await profileOne(operation, binding, version)) });
      }
    }
  }
  const total = (c: (typeof columns)[number]) => [...c.times.values()].reduce((a, b) => a + b, 0);
  const lines = [
    '# Where a plain request’s CPU goes under load, by stage (npm run bench:edge -- --profile)',
    '',
    `${new Date().toISOString().slice(0, 10)}, Node ${process.version}; server with pino at \`${LOGGING}\`, memory store, the demo echo agent, push off; 64 loopback connections, ${DURATION_S} s after 1 s warm-up, one fresh server per column; TypeScript through tsx. Each cell: % of the server's busy CPU (idle excluded), charged to the nearest frame on the stack that belongs to a stage. On this shared machine req/s varies 2× between runs; the shares are steadier.`,
    '',
    `| stage | ${columns.map((c) => c.label).join(' | ')} |`,
    `| --- | ${columns.map(() => '---:').join(' | ')} |`,
  ];
  for (const stage of STAGES) {
    if (columns.every((c) => (c.times.get(stage) ?? 0) === 0)) continue;
    lines.push(
      `| ${stage} | ${columns.map((c) => `${(((c.times.get(stage) ?? 0) / total(c)) * 100).toFixed(1)}`).join(' | ')} |`,
    );
  }
  lines.push(`| **busy CPU µs per request** | ${columns.map((c) => (total(c) / c.requests).toFixed(0)).join(' | ')} |`);
  lines.push(`| req/s (measured run) | ${columns.map((c) => c.reqPerSec.toFixed(0)).join(' | ')} |`);
  const table = `${lines.join('\n')}\n`;
  process.stdout.write(table);
  const out = process.env.BENCH_EDGE_OUT ?? join(BENCH_DIR, 'profiles', 'edge-profile.md');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, table);
  process.stderr.write(`wrote ${out}\n`);
}

if (process.env.BENCH_EDGE_PROFILE_CHILD === '1') await serve();
else await main();
