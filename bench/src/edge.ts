/**
 * `npm run bench:edge`: what each stage of a plain request costs at the HTTP edge, without the
 * network (issue 22). Whole requests go through Fastify's `inject` (no socket, so the load
 * generator's share of the cores is not in the number); single stages are called directly in a
 * loop. Every case runs once per round, rounds alternate the cases (this machine is shared and
 * drifts), and the table gives each case's median ns per operation. Writes bench/EDGE.md.
 *
 * BENCH_EDGE_BASELINE=<path of another checkout's packages/fastify/src/index.ts> also measures that
 * plugin, alternating with this one, for a before/after table (bench/PROFILE.md says how).
 * BENCH_EDGE_ROUNDS (default 15) and BENCH_EDGE_CASE_MS (default 30, the time one case runs per
 * round) trade precision for time.
 */

import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fastifySseModule, { type SSEPluginOptions } from '@fastify/sse';
import { type CallContext, JsonRpcBinding, jsonRpc0_3, jsonRpc1_0, type ProtocolVersion } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify';
import { type A2APluginOptions, a2aChildLoggerFactory, a2aPlugin } from 'fastify-a2a';
import { demoCard, demoOptions, echoAgent } from '../../examples/demo/src/agents.js';
import { demoPush } from '../../examples/demo/src/push.js';

const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.BENCH_EDGE_ROUNDS ?? 15);
const CASE_MS = Number(process.env.BENCH_EDGE_CASE_MS ?? 30);
const fastifySse = fastifySseModule as unknown as FastifyPluginAsync<SSEPluginOptions>;

/** One measured case: `run` does `batch` operations; its setup is done before the rounds. */
interface Case {
  readonly group: string;
  readonly name: string;
  run(batch: number): Promise<void> | void;
}

type Plugin = FastifyPluginAsync<A2APluginOptions>;
type Logging = 'off' | 'warn' | 'info';
type ChildLoggerFactory = NonNullable<FastifyServerOptions['childLoggerFactory']>;

/** What a plugin build's module gives the bench: the plugin, and the request-logger factory where it has one. */
interface PluginModule {
  readonly a2aPlugin: Plugin;
  readonly a2aChildLoggerFactory?: ChildLoggerFactory;
}

/** A pino destination that drops every line: logging's cost without the disk's. */
const discard = { write: (_line: string) => undefined };

interface ServerSetup {
  /** Push notifications on with the demo's settings (examples/demo/src/push.ts, an empty environment). */
  readonly push?: boolean;
  /** Fastify's `childLoggerFactory`; Fastify's default (a pino child per request) when absent. */
  readonly childLoggerFactory?: ChildLoggerFactory | undefined;
  /** The demo's plugin options for the echo agent (`demoOptions('echo')`), as `npm start` passes them. */
  readonly demo?: boolean;
}

async function agentServer(plugin: Plugin, logging: Logging, setup: ServerSetup = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: logging === 'off' ? false : { level: logging, stream: discard },
    ...(setup.childLoggerFactory !== undefined ? { childLoggerFactory: setup.childLoggerFactory } : {}),
  });
  await app.register(plugin, {
    agentCard: demoCard('echo'),
    executor: echoAgent,
    ...(setup.demo === true ? demoOptions('echo') : {}),
    store: new MemoryStore(),
    ...(setup.push === true ? demoPush({}) : {}),
  });
  await app.ready();
  return app;
}

interface Call {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly payload?: string;
}

const JSON_TYPE = { 'content-type': 'application/json' };
const V1 = { 'a2a-version': '1.0' };
let messageCount = 0;
const nextMessageId = () => `edge-${++messageCount}`;

/**
 * The send that creates a task and its id, on the binding and version named; `blocking` asks for
 * the completed task in the answer (0.3's `configuration.blocking`, as `npm run bench` sends it).
 */
function sendCall(binding: 'jsonrpc' | 'rest', version: ProtocolVersion, blocking = false): () => Call {
  const v1 = version === '1.0';
  const message = () =>
    v1
      ? { messageId: nextMessageId(), role: 'ROLE_USER', parts: [{ text: 'hello edge' }] }
      : { kind: 'message', messageId: nextMessageId(), role: 'user', parts: [{ kind: 'text', text: 'hello edge' }] };
  const headers = v1 ? { ...JSON_TYPE, ...V1 } : JSON_TYPE;
  const configuration = blocking ? { configuration: { blocking: true } } : {};
  if (binding === 'jsonrpc') {
    const method = v1 ? 'SendMessage' : 'message/send';
    return () => ({
      method: 'POST',
      url: '/a2a',
      headers,
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { message: message(), ...configuration } }),
    });
  }
  const url = v1 ? '/message:send' : '/v1/message:send';
  return () => ({ method: 'POST', url, headers, payload: JSON.stringify({ message: message() }) });
}

function getCall(binding: 'jsonrpc' | 'rest', version: ProtocolVersion, taskId: string): Call {
  const v1 = version === '1.0';
  if (binding === 'jsonrpc') {
    const method = v1 ? 'GetTask' : 'tasks/get';
    return {
      method: 'POST',
      url: '/a2a',
      headers: v1 ? { ...JSON_TYPE, ...V1 } : JSON_TYPE,
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { id: taskId } }),
    };
  }
  return { method: 'GET', url: v1 ? `/tasks/${taskId}` : `/v1/tasks/${taskId}`, headers: v1 ? V1 : {} };
}

async function inject(app: FastifyInstance, call: Call): Promise<string> {
  const response = await app.inject(call);
  if (response.statusCode !== 200 || response.body.includes('"error"')) {
    throw new Error(`${call.method} ${call.url} answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
  }
  return response.body;
}

/** The id of a completed task the send created. */
async function taskIdOf(app: FastifyInstance, binding: 'jsonrpc' | 'rest', version: ProtocolVersion): Promise<string> {
  const body = JSON.parse(await inject(app, sendCall(binding, version)())) as {
    result?: { id?: string; task?: { id?: string } };
    task?: { id?: string };
    id?: string;
  };
  const id = body.result?.id ?? body.result?.task?.id ?? body.task?.id ?? body.id;
  if (id === undefined) throw new Error(`no task id in ${JSON.stringify(body)}`);
  return id;
}

/** The per-request cases of one plugin build: both operations, both bindings, both versions, and logging. */
async function pluginCases(
  label: string,
  module: PluginModule,
): Promise<{ cases: Case[]; close: () => Promise<void> }> {
  const plugin = module.a2aPlugin;
  const cases: Case[] = [];
  const apps: FastifyInstance[] = [];
  const app = await agentServer(plugin, 'off');
  apps.push(app);
  for (const binding of ['jsonrpc', 'rest'] as const) {
    for (const version of ['0.3', '1.0'] as const) {
      const bindingName = binding === 'jsonrpc' ? 'JSON-RPC' : 'HTTP+JSON';
      const get = getCall(binding, version, await taskIdOf(app, binding, version));
      cases.push({
        group: `tasks/get ${bindingName} ${version}`,
        name: label,
        run: async (batch) => {
          for (let i = 0; i < batch; i++) await inject(app, get);
        },
      });
      const send = sendCall(binding, version);
      cases.push({
        group: `message/send ${bindingName} ${version}`,
        name: label,
        run: async (batch) => {
          for (let i = 0; i < batch; i++) await inject(app, send());
        },
      });
    }
  }
  for (const logging of ['warn', 'info'] as const) {
    const logged = await agentServer(plugin, logging);
    apps.push(logged);
    const get = getCall('jsonrpc', '0.3', await taskIdOf(logged, 'jsonrpc', '0.3'));
    cases.push({
      group: `tasks/get JSON-RPC 0.3, pino at ${logging}`,
      name: label,
      run: async (batch) => {
        for (let i = 0; i < batch; i++) await inject(logged, get);
      },
    });
  }
  // The configuration users run (issue 22) taken apart: the demo as `npm start` serves the echo
  // agent (its plugin options, push on, pino at warn, and the request-logger factory where the
  // build exports one, as the demo passes it), and each part of it alone over the bare server.
  const factory = module.a2aChildLoggerFactory;
  const configurations: { name: string; logging: Logging; setup: ServerSetup }[] = [
    { name: 'bare (logger off, push off)', logging: 'off', setup: {} },
    { name: 'push on', logging: 'off', setup: { push: true } },
    { name: "pino at warn, Fastify's child logger per request", logging: 'warn', setup: {} },
    ...(factory === undefined
      ? []
      : [
          {
            name: 'pino at warn, a2aChildLoggerFactory',
            logging: 'warn' as const,
            setup: { childLoggerFactory: factory },
          },
        ]),
    {
      name: 'as shipped (demo options, push on, pino at warn)',
      logging: 'warn',
      setup: { push: true, demo: true, childLoggerFactory: factory },
    },
    {
      name: 'as shipped, pino at info',
      logging: 'info',
      setup: { push: true, demo: true, childLoggerFactory: factory },
    },
  ];
  for (const { name, logging, setup } of configurations) {
    const server = await agentServer(plugin, logging, setup);
    apps.push(server);
    const get = getCall('jsonrpc', '0.3', await taskIdOf(server, 'jsonrpc', '0.3'));
    cases.push({
      group: `tasks/get JSON-RPC 0.3, ${name}`,
      name: label,
      run: async (batch) => {
        for (let i = 0; i < batch; i++) await inject(server, get);
      },
    });
    const send = sendCall('jsonrpc', '0.3', true);
    cases.push({
      group: `message/send JSON-RPC 0.3 blocking, ${name}`,
      name: label,
      run: async (batch) => {
        for (let i = 0; i < batch; i++) await inject(server, send());
      },
    });
  }
  return { cases, close: async () => void (await Promise.all(apps.map((a) => a.close()))) };
}

/**
 * Fastify alone, answering a body of tasks/get's size: the floor that `inject`, routing and the
 * reply cost whatever the plugin does, then the same route with one of the plugin's pieces added.
 */
async function floorCases(answer: unknown): Promise<{ cases: Case[]; close: () => Promise<void> }> {
  const apps: FastifyInstance[] = [];
  const variant = async (
    setup: (scope: FastifyInstance) => Promise<void> | void,
    routeOptions: object,
    serverOptions: FastifyServerOptions = { logger: false },
  ) => {
    const app = Fastify(serverOptions);
    await app.register(async (scope) => {
      await setup(scope);
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
      scope.post('/a2a', routeOptions, async (request) => {
        JSON.parse(request.body as string);
        return answer;
      });
    });
    await app.ready();
    apps.push(app);
    return app;
  };
  const call: Call = { method: 'POST', url: '/a2a', headers: JSON_TYPE, payload: '{"jsonrpc":"2.0","id":1}' };
  const runner = (app: FastifyInstance) => async (batch: number) => {
    for (let i = 0; i < batch; i++) await app.inject(call);
  };
  const bare = await variant(() => undefined, {});
  const withSse = await variant(
    async (scope) => {
      await scope.register(fastifySse);
    },
    { sse: { kind: 'manual', heartbeat: false, serializer: (data: unknown) => data } },
  );
  const withTimer = await variant((scope) => {
    // What a per-request body deadline costs: a timer set in onRequest, cleared in preValidation.
    const timers = new WeakMap<object, NodeJS.Timeout>();
    scope.addHook('onRequest', async (request) => {
      const timer = setTimeout(() => undefined, 10_000);
      timer.unref();
      timers.set(request, timer);
    });
    scope.addHook('preValidation', async (request) => clearTimeout(timers.get(request)));
  }, {});
  const withCallbackHook = await variant((scope) => {
    scope.addHook('onResponse', (_request, _reply, done) => done());
  }, {});
  const withAsyncHook = await variant((scope) => {
    scope.addHook('onResponse', async () => undefined);
  }, {});
  // What a logger at warn adds to a request that logs nothing, part by part: Fastify's child
  // logger, its "incoming request" / "request completed" calls (no-ops at warn, but their arguments
  // are built), and the request logger made on first use instead.
  const pinoAtWarn = { level: 'warn', stream: discard };
  const withLogger = await variant(() => undefined, {}, { logger: pinoAtWarn });
  const withLoggerNoRequestLogs = await variant(
    () => undefined,
    {},
    { logger: pinoAtWarn, disableRequestLogging: true },
  );
  const withLoggerNoChild = await variant(
    () => undefined,
    {},
    {
      logger: pinoAtWarn,
      childLoggerFactory: (logger) => logger,
    },
  );
  const withLazyLogger = await variant(
    () => undefined,
    {},
    {
      logger: pinoAtWarn,
      childLoggerFactory: a2aChildLoggerFactory,
    },
  );
  return {
    cases: [
      { group: 'Fastify floor (inject, route, string body, JSON.parse, reply)', name: 'bare', run: runner(bare) },
      { group: 'Fastify floor + @fastify/sse manual route', name: 'bare', run: runner(withSse) },
      { group: 'Fastify floor + a timer per request (onRequest/preValidation)', name: 'bare', run: runner(withTimer) },
      { group: 'Fastify floor + a callback onResponse hook', name: 'bare', run: runner(withCallbackHook) },
      { group: 'Fastify floor + an async onResponse hook', name: 'bare', run: runner(withAsyncHook) },
      {
        group: "Fastify floor + pino at warn (Fastify's child logger per request)",
        name: 'bare',
        run: runner(withLogger),
      },
      {
        group: 'Fastify floor + pino at warn, disableRequestLogging (no request-line calls)',
        name: 'bare',
        run: runner(withLoggerNoRequestLogs),
      },
      {
        group: 'Fastify floor + pino at warn, no child (factory returns the server logger)',
        name: 'bare',
        run: runner(withLoggerNoChild),
      },
      { group: 'Fastify floor + pino at warn, a2aChildLoggerFactory', name: 'bare', run: runner(withLazyLogger) },
    ],
    close: async () => void (await Promise.all(apps.map((a) => a.close()))),
  };
}

/** The stages under the plugin's handler, called directly: core's share of a request. */
async function stageCases(): Promise<{ cases: Case[]; answer: unknown; close: () => Promise<void> }> {
  const app = await agentServer(a2aPlugin, 'off');
  const agent = app.a2a.get();
  const binding = new JsonRpcBinding({
    dispatcher: agent.dispatcher,
    mappings: { '0.3': jsonRpc0_3, '1.0': jsonRpc1_0 },
  });
  const taskId = await taskIdOf(app, 'jsonrpc', '0.3');
  const ctx: CallContext = {
    version: '0.3',
    binding: 'JSONRPC',
    principal: undefined,
    tenant: undefined,
  } as CallContext;
  const getBody = getCall('jsonrpc', '0.3', taskId).payload as string;
  const sendBody = () => sendCall('jsonrpc', '0.3')().payload as string;
  const getRequest = JSON.parse(getBody) as { params: unknown };
  const sendRequest = JSON.parse(sendBody()) as { params: unknown };
  const codec = jsonRpc0_3.codec;
  const outcome = await binding.handle(getRequest, ctx);
  if (outcome.type !== 'response') throw new Error('tasks/get did not answer');
  const answer = outcome.response;
  const task = await agent.runtime.getTask({ id: taskId }, ctx);
  let sink: unknown;
  const loop = (step: () => unknown) => (batch: number) => {
    for (let i = 0; i < batch; i++) sink = step();
  };
  const asyncLoop = (step: () => Promise<unknown>) => async (batch: number) => {
    for (let i = 0; i < batch; i++) sink = await step();
  };
  const cases: Case[] = [
    { group: 'JSON.parse: tasks/get body', name: 'stage', run: loop(() => JSON.parse(getBody)) },
    { group: 'JSON.parse: message/send body', name: 'stage', run: loop(() => JSON.parse(sendBody())) },
    {
      group: 'core: params validation + decode (tasks/get)',
      name: 'stage',
      run: loop(() => codec.decode('getTask', getRequest.params, 'params')),
    },
    {
      group: 'core: params validation + decode (message/send)',
      name: 'stage',
      run: loop(() => codec.decode('sendMessage', sendRequest.params, 'params')),
    },
    {
      group: 'core: runtime getTask (memory store)',
      name: 'stage',
      run: asyncLoop(() => agent.runtime.getTask({ id: taskId }, ctx)),
    },
    { group: 'core: codec encodeResult (task)', name: 'stage', run: loop(() => codec.encodeResult('getTask', task)) },
    {
      group: 'core: dispatch (validate, gates, getTask, encode)',
      name: 'stage',
      run: asyncLoop(() => agent.dispatcher.dispatch(codec, 'getTask', getRequest.params, ctx)),
    },
    {
      group: 'core: JSON-RPC binding handle (envelope + dispatch)',
      name: 'stage',
      run: asyncLoop(() => binding.handle(getRequest, ctx)),
    },
    { group: 'JSON.stringify: tasks/get response', name: 'stage', run: loop(() => JSON.stringify(answer)) },
    ...loggerStages(loop),
  ];
  void sink;
  return { cases, answer, close: () => app.close() };
}

/**
 * A request logger's life at warn, called directly: made, then Fastify's two request-line calls
 * (`info`, not written at warn), with Fastify's default child and with a2aChildLoggerFactory.
 */
function loggerStages(loop: (step: () => unknown) => (batch: number) => void): Case[] {
  const root = Fastify({ logger: { level: 'warn', stream: discard } }).log;
  let requests = 0;
  const bindings = () => ({ reqId: `req-${(++requests).toString(36)}` });
  const request = {};
  const requestLines = (log: FastifyInstance['log']) => {
    log.info({ req: request }, 'incoming request');
    log.info({ res: request, responseTime: 1 }, 'request completed');
    return log;
  };
  return [
    {
      group: "pino: child({ reqId }, {}), Fastify's default request logger",
      name: 'stage',
      run: loop(() => root.child(bindings(), {})),
    },
    { group: 'pino: child({ reqId }) without options', name: 'stage', run: loop(() => root.child(bindings())) },
    {
      group: 'a2aChildLoggerFactory: a request logger',
      name: 'stage',
      run: loop(() => a2aChildLoggerFactory(root, bindings(), {})),
    },
    {
      group: "request logger + its two info calls at warn, Fastify's default",
      name: 'stage',
      run: loop(() => requestLines(root.child(bindings(), {}))),
    },
    {
      group: 'request logger + its two info calls at warn, a2aChildLoggerFactory',
      name: 'stage',
      run: loop(() => requestLines(a2aChildLoggerFactory(root, bindings(), {}))),
    },
  ];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * ns of this process's CPU (user + system) per operation. CPU time rather than wall time: every
 * case runs on this thread without waiting on anything outside it, and on a machine shared by
 * several busy processes wall time counts their turns on the cores too.
 */
async function timed(test: Case, batch: number): Promise<number> {
  const start = process.cpuUsage();
  await test.run(batch);
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / batch;
}

async function main(): Promise<void> {
  const stages = await stageCases();
  const floor = await floorCases(stages.answer);
  const current = await pluginCases('this branch', { a2aPlugin, a2aChildLoggerFactory });
  const baselinePath = process.env.BENCH_EDGE_BASELINE;
  const baseline =
    baselinePath === undefined
      ? undefined
      : await pluginCases('baseline', (await import(pathToFileURL(baselinePath).href)) as PluginModule);
  const cases = [...floor.cases, ...stages.cases, ...current.cases, ...(baseline?.cases ?? [])];

  // Warm-up, and the batch each case needs to run about CASE_MS.
  const batches = new Map<Case, number>();
  for (const test of cases) {
    await test.run(50);
    const ns = await timed(test, 200);
    batches.set(test, Math.max(50, Math.round((CASE_MS * 1e6) / ns)));
  }
  const samples = new Map<Case, number[]>(cases.map((test) => [test, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating order: forwards in even rounds, backwards in odd ones, so no case always runs
    // right after the same neighbour (nor always first after a GC-heavy one).
    const order = round % 2 === 0 ? cases : [...cases].reverse();
    for (const test of order) samples.get(test)?.push(await timed(test, batches.get(test) as number));
    process.stderr.write(`round ${round + 1}/${ROUNDS}\n`);
  }
  await Promise.all([stages.close(), floor.close(), current.close(), baseline?.close()]);

  const us = (ns: number) => (ns / 1000).toFixed(2);
  const lines = [
    '# The edge, stage by stage (npm run bench:edge)',
    '',
    `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${ROUNDS} alternating rounds of about ${CASE_MS} ms per case; medians in µs of the process's CPU time per operation (spread: lowest–highest round). No network: requests go through Fastify's \`inject\` (whose own cost is in the floor rows), stages are direct calls. Memory store, the demo's echo agent, logger off unless the row says otherwise. On this shared machine rows drift by 10–20 % between runs: compare rows of one run.`,
    '',
  ];
  const groups = [...new Set(cases.map((test) => test.group))];
  const withBaseline = baseline !== undefined;
  lines.push(
    withBaseline
      ? "| case | baseline µs | this branch µs | change (median of the rounds' ratios) |\n| --- | ---: | ---: | ---: |"
      : '| case | µs per op | spread |\n| --- | ---: | --- |',
  );
  for (const group of groups) {
    const inGroup = cases.filter((test) => test.group === group);
    const of = (name: string) => {
      const test = inGroup.find((t) => t.name === name);
      return test === undefined ? undefined : (samples.get(test) as number[]);
    };
    if (withBaseline && of('baseline') !== undefined) {
      const before = of('baseline') as number[];
      const after = of('this branch') as number[];
      // The change is the median of each round's own ratio: both ran in that round, minutes apart
      // at most, so the machine's drift between rounds cancels out.
      const change = median(after.map((value, round) => value / (before[round] as number) - 1));
      lines.push(`| ${group} | ${us(median(before))} | ${us(median(after))} | ${(change * 100).toFixed(0)} % |`);
    } else {
      const values = samples.get(inGroup[0] as Case) as number[];
      const spread = withBaseline ? us(median(values)) : `${us(Math.min(...values))}–${us(Math.max(...values))}`;
      lines.push(withBaseline ? `| ${group} | | ${spread} | |` : `| ${group} | ${us(median(values))} | ${spread} |`);
    }
  }
  const table = `${lines.join('\n')}\n`;
  process.stdout.write(table);
  const out = process.env.BENCH_EDGE_OUT ?? join(BENCH_DIR, 'EDGE.md');
  writeFileSync(out, table);
  process.stderr.write(`wrote ${out}\n`);
}

// `--profile`: the CPU profile under load instead (edge-profile.ts).
if (process.argv.includes('--profile')) await import('./edge-profile.js');
else await main();
