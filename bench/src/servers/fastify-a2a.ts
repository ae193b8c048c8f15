/**
 * fastify-a2a with the demo echo agent (examples/demo) on the store BENCH_STORE names (memory:,
 * sqlite:<path>, postgres://…?schema=…), as a separate process so its RSS is its own.
 * BENCH_RETENTION=off disables the retention sweep (default: the plugin's default). BENCH_GRPC_PORT:
 * also serve the gRPC binding (@fastify-a2a/grpc) on that loopback port, on the same agent.
 * BENCH_TELEMETRY=on turns on the plugin's metrics and installs the OpenTelemetry SDK with no
 * exporter (every span recorded, none sent), the cost `npm run bench:telemetry` measures;
 * BENCH_TELEMETRY=metrics or tracing turns on only that one; context installs only the SDK's
 * AsyncLocalStorage context manager (no tracer, so the plugin does not trace); sampled is `on` with
 * a production sampler (ParentBased, 10 % of new traces sampled) instead of every span; detached and
 * detached-sampled are on and sampled with the plugin's `tracing: { activeContext: false }`.
 * The configuration users run (issue 22): BENCH_PUSH=on adds the demo's push options as `npm start`
 * sets them for the echo agent (examples/demo/src/push.ts: push notifications on, no allow-lists);
 * BENCH_LOG_LEVEL=<pino level> gives Fastify a pino logger at that level writing to stdout, with the
 * demo's request-logger factory (BENCH_CHILD_LOGGER=fastify: without it), as the demo's
 * `Fastify({ logger: { level }, childLoggerFactory })` does (the bench runs that child with stdout discarded, so
 * the writes happen and cost what they cost, without filling the terminal). Unset: logger off, push
 * off, the bare configuration.
 */

import type { A2AStore } from '@fastify-a2a/core';
import { serveGrpc } from '@fastify-a2a/grpc';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { PostgresStore } from '@fastify-a2a/store-postgres';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import Fastify from 'fastify';
import { a2aChildLoggerFactory, a2aPlugin } from 'fastify-a2a';
import { demoCard, demoOptions, echoAgent } from '../../../examples/demo/src/agents.js';
import { demoPush } from '../../../examples/demo/src/push.js';
import { fail, LISTEN, rssReport, serve, wantsGc } from './common.js';
import { installContextManagerOnly, installTracingWithoutExporter, productionSampler } from './tracing.js';

const storeUrl = process.env.BENCH_STORE ?? 'memory:';

/**
 * The store the URL names, built here with static imports (the plugin's own `store: '<url>'` loads
 * the store package with a dynamic import, which the bench's bundle of this server cannot follow).
 * Same defaults as the URL form.
 */
function storeFor(url: string): A2AStore {
  if (url === 'memory:') return new MemoryStore();
  if (url.startsWith('sqlite:')) return new SqliteStore({ filename: url.slice('sqlite:'.length) });
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema');
  parsed.searchParams.delete('schema');
  return new PostgresStore({ connectionString: parsed.toString(), ...(schema ? { schema } : {}) });
}
const store = storeFor(storeUrl);
const telemetry = process.env.BENCH_TELEMETRY ?? 'off';
// Before the plugin registers: it traces when an SDK is installed by then.
const detached = telemetry === 'detached' || telemetry === 'detached-sampled';
if (telemetry === 'on' || telemetry === 'tracing' || telemetry === 'detached') installTracingWithoutExporter();
if (telemetry === 'sampled' || telemetry === 'detached-sampled') installTracingWithoutExporter(productionSampler());
if (telemetry === 'context') installContextManagerOnly();
const logLevel = process.env.BENCH_LOG_LEVEL;
// With a logger, the request-logger factory the demo passes too (BENCH_CHILD_LOGGER=fastify: Fastify's
// own child per request instead); bare has no logger to make children of.
const factory = process.env.BENCH_CHILD_LOGGER === 'fastify' ? {} : { childLoggerFactory: a2aChildLoggerFactory };
const app = Fastify(logLevel ? { logger: { level: logLevel }, ...factory } : { logger: false });
// The demo's push settings read from an empty environment: push on, the SSRF guard's defaults.
const push = process.env.BENCH_PUSH === 'on' ? demoPush({}) : {};

app.get('/__rss', async (request) => rssReport(wantsGc(request.url)));

try {
  await app.register(a2aPlugin, {
    agentCard: demoCard('echo'),
    executor: echoAgent,
    ...demoOptions('echo'),
    store,
    ...push,
    ...(process.env.BENCH_RETENTION === 'off' ? { retention: false as const } : {}),
    ...(telemetry === 'on' || telemetry === 'sampled' || telemetry === 'metrics' || detached ? { metrics: true } : {}),
    ...(detached ? { tracing: { activeContext: false } } : {}),
  });
  if (process.env.BENCH_GRPC_PORT) await serveGrpc(app, { port: Number(process.env.BENCH_GRPC_PORT) });
  await app.listen(LISTEN);
  const address = app.server.address();
  serve(typeof address === 'object' && address ? address.port : 0, () => app.close());
} catch (error) {
  fail(error);
}
