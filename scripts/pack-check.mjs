#!/usr/bin/env node
/**
 * `npm run pack:check`: proves the published packages work as a user gets them, from their
 * tarballs, outside the workspace.
 *
 * 1. `npm pack` each package into a temp dir. `prepack` builds `dist/` (and `build` deletes the old
 *    one first, so no stale file from a renamed source can ship).
 * 2. `attw` (are the types wrong) on each tarball, with the ESM-only profile: every `exports`
 *    entry must resolve to JavaScript and to declarations under Node 16+ and bundler resolution.
 * 3. A scratch app in a temp dir depends on the tarballs (`file:`) and on `fastify` from the
 *    registry; `npm install` there. better-sqlite3's install script gets the workspace's own
 *    compiled binary as a "local prebuild" (see `localPrebuild`), so it is not compiled again.
 * 4. Each `exports` target of the installed packages (`types`, `default`, and the workspace-only
 *    `@fastify-a2a/source`) is a real file.
 * 5. The app (plain `.mjs`, plain `node`: no tsx, no export conditions) registers `a2aPlugin` with
 *    an AI SDK executor (`fromAiSdk` from @fastify-a2a/ai-sdk over the SDK's mock model, which
 *    echoes; `ai` 6 from the registry) and imports `@fastify-a2a/core/testing` and
 *    `@fastify-a2a/core/agent-kit`; a message starting "graph:" goes to a LangGraph graph instead
 *    (`fromLangGraph` from @fastify-a2a/langgraph; LangGraph from the registry, with its official
 *    SQLite checkpointer on the store's file on `sqlite:`); it is started once per store URL
 *    (`memory:`, `sqlite:<tmp>/a.db`, `postgres://…?schema=<fresh>`), which makes the plugin load
 *    each store package by name from the installed layout. Each run answers the agent card, a
 *    JSON-RPC `message/send` (and one to the graph) and a REST `POST /v1/message:send`; the app also serves gRPC
 *    (`@fastify-a2a/grpc`, its .proto files from the tarball) and sends itself one SendMessage; on
 *    memory, the installed `a2a` bin of @fastify-a2a/client runs `card get` and `send` against it.
 *
 * Postgres: `A2A_TEST_POSTGRES_URL` (default postgres://postgres@127.0.0.1:5432/test), as for the
 * tests. The schema is created by the store's migrations and dropped afterwards.
 *
 * Exits non-zero with a message on the first failure; temp dirs are removed either way.
 */

import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = [
  'core',
  'store-memory',
  'store-sqlite',
  'store-postgres',
  'fastify',
  'grpc',
  'client',
  'ai-sdk',
  'langgraph',
];
const ATTW = '@arethetypeswrong/cli@0.18.5';
const POSTGRES_URL_ENV = 'A2A_TEST_POSTGRES_URL';
const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

class CheckError extends Error {}

const started = performance.now();
const seconds = (since) => `${((performance.now() - since) / 1000).toFixed(1)} s`;
const log = (message) => console.log(`[pack:check] ${message}`);

/** Runs a command to completion; throws a CheckError carrying its output when it fails. */
function run(command, args, { cwd = ROOT, env = process.env, what = `${command} ${args.join(' ')}` } = {}) {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw new CheckError(`${what} could not start: ${result.error.message}`);
  if (result.status !== 0) {
    const output = `${result.stdout}\n${result.stderr}`.trim();
    throw new CheckError(`${what} failed (exit ${result.status}):\n${output}`);
  }
  return result.stdout;
}

/** Timed step: logs its name and how long it took. */
async function step(name, fn) {
  const since = performance.now();
  const value = await fn();
  log(`${name}: ${seconds(since)}`);
  return value;
}

// ---------------------------------------------------------------------------------------------
// Packing

async function packAll(destination) {
  await mkdir(destination, { recursive: true });
  const args = [
    'pack',
    '--json',
    '--pack-destination',
    destination,
    ...PACKAGES.flatMap((p) => ['-w', `packages/${p}`]),
  ];
  const packed = JSON.parse(run('npm', args));
  return packed.map(({ name, filename, files }) => {
    const paths = new Set(files.map((f) => f.path));
    for (const required of ['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts']) {
      if (!paths.has(required)) throw new CheckError(`${filename} lacks ${required}; check "files" and "prepack".`);
    }
    const stray = [...paths].filter((p) => /(^|\/)test\/|\.test\.|tsbuildinfo$/.test(p));
    if (stray.length > 0) throw new CheckError(`${filename} ships files it should not: ${stray.join(', ')}`);
    return { name, tarball: join(destination, filename) };
  });
}

function attw(tarball) {
  // esm-only: the packages are ESM (`"type": "module"`, Node >= 20), so node10 and require() from
  // CommonJS are not supported resolutions, and attw is told so rather than failing on them.
  run('npx', ['--yes', ATTW, '--profile', 'esm-only', '--format', 'table-flipped', tarball], {
    what: `attw ${tarball.split('/').pop()}`,
  });
}

// ---------------------------------------------------------------------------------------------
// better-sqlite3 without compiling it again

/**
 * better-sqlite3 installs with `prebuild-install || node-gyp rebuild`; here the download of a
 * prebuilt binary fails (no GitHub access) and the fallback compiles SQLite from source, about two
 * minutes on two cores. prebuild-install first looks for the file it would download in a local
 * directory (`npm_config_<package>_local_prebuilds`), so we put the workspace's own binary there,
 * under the name it looks for. prebuild-install then `require()`s it to prove it loads, and if it
 * does not (another Node ABI), falls back to compiling: slower, never wrong.
 *
 * The scratch app pins better-sqlite3 to the workspace's version (an npm override), since the
 * binary is only valid for it. Returns the env additions for `npm install`, or {} without one.
 */
async function localPrebuild(dir) {
  const packageDir = join(ROOT, 'node_modules', 'better-sqlite3');
  const binary = join(packageDir, 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(binary)) return { env: {}, version: undefined, binary: undefined };
  const { version } = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8'));
  const libc = process.platform === 'linux' && !process.report.getReport().header.glibcVersionRuntime ? 'musl' : '';
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}${libc}-${process.arch}.tar.gz`;
  await mkdir(dir, { recursive: true });
  run('tar', ['-czf', join(dir, name), '-C', packageDir, 'build/Release/better_sqlite3.node']);
  return { env: { npm_config_better_sqlite3_local_prebuilds: dir }, version, binary };
}

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

// ---------------------------------------------------------------------------------------------
// The scratch app

const APP = `// Written by scripts/pack-check.mjs: the plugin, from the installed tarballs, on the store URL in argv.
import Fastify from 'fastify';
import { a2aPlugin } from 'fastify-a2a';
import * as testing from '@fastify-a2a/core/testing';
import { TextArtifactStream } from '@fastify-a2a/core/agent-kit';
import { a2aTool, fromAiSdk } from '@fastify-a2a/ai-sdk';
import { fromLangGraph } from '@fastify-a2a/langgraph';
import { AIMessage } from '@langchain/core/messages';
import { MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { a2aServiceDefinition, serveGrpc } from '@fastify-a2a/grpc';
import { credentials, makeGenericClientConstructor, Metadata } from '@grpc/grpc-js';
import { streamText } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

if (typeof testing.storeConformance !== 'function') {
  throw new Error('@fastify-a2a/core/testing has no storeConformance export');
}
if (typeof TextArtifactStream !== 'function' || typeof a2aTool !== 'function') {
  throw new Error('@fastify-a2a/core/agent-kit or @fastify-a2a/ai-sdk lacks an export');
}

// The SDK's mock model, echoing the user's last message as one text delta.
const usage = { inputTokens: { total: 1 }, outputTokens: { total: 1 } };
const model = new MockLanguageModelV3({
  doStream: async ({ prompt }) => {
    const said = prompt.at(-1).content.map((part) => (part.type === 'text' ? part.text : '')).join('');
    const parts = [
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: \`echo: \${said}\` },
      { type: 'text-end', id: 't' },
      { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage },
    ];
    return { stream: new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } }) };
  },
});

// A LangGraph graph that echoes too, its checkpoints on the store's SQLite file when there is one.
const store = process.argv[2];
const checkpointer = store.startsWith('sqlite:') ? SqliteSaver.fromConnString(store.slice(7)) : new MemorySaver();
const graph = new StateGraph(MessagesAnnotation)
  .addNode('echo', (state) => ({ messages: [new AIMessage(\`echo: \${state.messages.at(-1).text}\`)] }))
  .addEdge(START, 'echo')
  .compile({ checkpointer });
const graphAgent = fromLangGraph(graph);
const aiSdkAgent = fromAiSdk(({ messages, abortSignal }) => streamText({ model, messages, abortSignal }));

const app = Fastify();
await app.register(a2aPlugin, {
  agentCard: { name: 'Pack check', description: 'Echoes the text it is sent.', version: '1.0.0' },
  store,
  executor: (turn) => (turn.text.startsWith('graph:') ? graphAgent : aiSdkAgent).execute(turn),
});
const grpc = await serveGrpc(app, { port: 0 });
const url = await app.listen({ host: '127.0.0.1', port: 0 });
// The gRPC binding from its tarball (its .proto files included): one SendMessage to itself.
const Client = makeGenericClientConstructor(a2aServiceDefinition(), 'A2AService');
const client = new Client(grpc.url, credentials.createInsecure());
const grpcState = await new Promise((resolve, reject) =>
  client.sendMessage(
    { message: { messageId: \`grpc-\${Date.now()}\`, role: 'ROLE_USER', parts: [{ text: 'hi grpc' }] } },
    new Metadata(),
    (error, response) => (error ? reject(error) : resolve(response.task?.status?.state)),
  ),
);
client.close();
process.stdout.write(\`\${JSON.stringify({ url, grpcState })}\\n\`);
process.once('SIGTERM', () => {
  app.close().then(() => process.exit(0), (error) => {
    console.error(error);
    process.exit(1);
  });
});
`;

async function createApp(dir, tarballs, prebuild) {
  const fastifyManifest = JSON.parse(await readFile(join(ROOT, 'packages', 'fastify', 'package.json'), 'utf8'));
  const aiSdkManifest = JSON.parse(await readFile(join(ROOT, 'packages', 'ai-sdk', 'package.json'), 'utf8'));
  const langGraphManifest = JSON.parse(await readFile(join(ROOT, 'packages', 'langgraph', 'package.json'), 'utf8'));
  const manifest = {
    name: 'fastify-a2a-pack-check',
    private: true,
    type: 'module',
    dependencies: {
      ...Object.fromEntries(tarballs.map(({ name, tarball }) => [name, `file:${tarball}`])),
      // What the plugin declares it works with, from the registry as a user would get it.
      fastify: fastifyManifest.peerDependencies.fastify,
      // The AI SDK version the adapter is tested with (its peer range also admits 7, which needs Node 22).
      ai: aiSdkManifest.devDependencies.ai,
      // The LangGraph versions the adapter is tested with, and the official SQLite checkpointer.
      ...Object.fromEntries(
        ['@langchain/core', '@langchain/langgraph', '@langchain/langgraph-checkpoint-sqlite'].map((name) => [
          name,
          langGraphManifest.devDependencies[name],
        ]),
      ),
    },
    ...(prebuild.version ? { overrides: { 'better-sqlite3': prebuild.version } } : {}),
    allowScripts: { 'better-sqlite3': true },
  };
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(join(dir, 'app.mjs'), APP);
}

/** Every `exports` target of every installed package is a file in it. */
async function checkExports(appDir, tarballs) {
  for (const { name } of tarballs) {
    const packageDir = join(appDir, 'node_modules', ...name.split('/'));
    const manifest = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8'));
    for (const [entry, given] of Object.entries(manifest.exports)) {
      const conditions = typeof given === 'string' ? { default: given } : given;
      for (const [condition, target] of Object.entries(conditions)) {
        if (!existsSync(join(packageDir, target))) {
          throw new CheckError(
            `${name} exports["${entry}"]["${condition}"] is ${target}, which is not in the tarball.`,
          );
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Serving

/** Starts the app on `store`; resolves once it printed its URL. */
function startApp(appDir, store) {
  const env = { ...process.env };
  // Plain node: nothing from the caller (e.g. --conditions=@fastify-a2a/source, --import tsx).
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, ['app.mjs', store], { cwd: appDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const output = () => `${stdout}\n${stderr}`.trim();
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new CheckError(`the app did not start within 30 s:\n${output()}`)), 30_000);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const line = stdout.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) {
        clearTimeout(timer);
        const ready = JSON.parse(line);
        if (ready.grpcState !== 'TASK_STATE_COMPLETED') {
          reject(new CheckError(`the gRPC SendMessage did not complete (state ${ready.grpcState})`));
        }
        resolve(ready.url);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new CheckError(`the app exited (${signal ?? `code ${code}`}) before listening:\n${output()}`));
    });
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return {
    ready,
    output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

async function request(url, init) {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
  const text = await response.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, body };
}

function expect(condition, what, actual) {
  if (!condition) throw new CheckError(`${what}; got ${JSON.stringify(actual)}`);
}

/** The three requests against one running app. */
async function exercise(base) {
  const card = await request(`${base}/.well-known/agent-card.json`);
  expect(
    card.status === 200 && card.body.name === 'Pack check',
    'GET /.well-known/agent-card.json: 200 with the card',
    card,
  );
  expect(card.body.url === `${base}/a2a`, `the card's url is ${base}/a2a`, card.body.url);

  const rpc = await request(`${base}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: {
        message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'hi rpc' }] },
        configuration: { blocking: true },
      },
    }),
  });
  const task = rpc.body?.result;
  expect(
    rpc.status === 200 &&
      task?.kind === 'task' &&
      task.status?.state === 'completed' &&
      task.artifacts?.[0]?.parts?.[0]?.text === 'echo: hi rpc',
    'JSON-RPC message/send: a completed task with the artifact "echo: hi rpc"',
    rpc,
  );

  const graphRpc = await request(`${base}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'message/send',
      params: {
        message: {
          kind: 'message',
          messageId: randomUUID(),
          role: 'user',
          parts: [{ kind: 'text', text: 'graph: hi' }],
        },
        configuration: { blocking: true },
      },
    }),
  });
  const graphTask = graphRpc.body?.result;
  expect(
    graphRpc.status === 200 &&
      graphTask?.status?.state === 'completed' &&
      graphTask.artifacts?.[0]?.parts?.[0]?.text === 'echo: graph: hi',
    'JSON-RPC message/send to the LangGraph graph: a completed task with the artifact "echo: graph: hi"',
    graphRpc,
  );

  const rest = await request(`${base}/v1/message:send`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      message: { messageId: randomUUID(), role: 'ROLE_USER', content: [{ text: 'hi rest' }] },
      configuration: { blocking: true },
    }),
  });
  const restTask = rest.body?.task;
  expect(
    rest.status === 200 &&
      restTask?.status?.state === 'TASK_STATE_COMPLETED' &&
      restTask.artifacts?.[0]?.parts?.[0]?.text === 'echo: hi rest',
    'REST POST /v1/message:send: {task} completed with the artifact "echo: hi rest"',
    rest,
  );
}

/** The installed `a2a` bin (@fastify-a2a/client), plain node, against the app: card get and send. */
function exerciseCli(appDir, base) {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const a2a = (...args) => JSON.parse(run(join(appDir, 'node_modules', '.bin', 'a2a'), args, { cwd: appDir, env }));
  const card = a2a('card', 'get', base, '-o', 'json');
  expect(card.name === 'Pack check', 'a2a card get -o json: the card named "Pack check"', card);
  const sent = a2a('send', '-a', base, 'hi cli', '-o', 'json');
  expect(
    sent.task?.status?.state === 'TASK_STATE_COMPLETED' &&
      sent.task.artifacts?.[0]?.parts?.[0]?.text === 'echo: hi cli',
    'a2a send -o json: {task} completed with the artifact "echo: hi cli"',
    sent,
  );
}

async function serve(appDir, label, store) {
  const app = startApp(appDir, store);
  try {
    const base = await app.ready;
    await exercise(base);
    if (label === 'memory:') exerciseCli(appDir, base);
    // A clean close matters too: it is where the plugin closes the store it created.
    const { code, signal } = await app.stop();
    if (code !== 0) throw new CheckError(`the app did not close cleanly on SIGTERM (${signal ?? `exit ${code}`})`);
  } catch (error) {
    await app.stop();
    if (error instanceof CheckError) error.message = `${label}: ${error.message}\n--- app output ---\n${app.output()}`;
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Postgres

async function connect(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on('error', () => {});
  await client.connect();
  return client;
}

/** Checks that the server answers (creating the database if only it is missing). */
async function postgresReady(url) {
  try {
    const client = await connect(url);
    await client.end();
  } catch (error) {
    if (error.code === '3D000') {
      const admin = new URL(url);
      const database = decodeURIComponent(admin.pathname.slice(1));
      admin.pathname = '/postgres';
      const client = await connect(admin.href);
      try {
        await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
      } finally {
        await client.end();
      }
      return;
    }
    const reason = error.message || error.errors?.map((e) => e.message).join('; ') || String(error);
    throw new CheckError(
      [
        `No PostgreSQL server could be used at ${url}: ${reason}`,
        'Do one of:',
        `  - start one that accepts ${DEFAULT_POSTGRES_URL} (trust auth), e.g.`,
        '      docker run --rm -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust -e POSTGRES_DB=test postgres:16',
        `  - point ${POSTGRES_URL_ENV} at a server where a schema may be created and dropped:`,
        `      ${POSTGRES_URL_ENV}=postgres://user:password@host:5432/dbname npm run pack:check`,
      ].join('\n'),
    );
  }
}

async function dropSchema(url, schema) {
  const client = await connect(url);
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(schema)} CASCADE`);
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const postgresUrl = process.env[POSTGRES_URL_ENV] || DEFAULT_POSTGRES_URL;
  // Before the slow part: a missing server fails the check at once, saying what to run.
  await postgresReady(postgresUrl);

  const tmp = await mkdtemp(join(tmpdir(), 'fastify-a2a-pack-'));
  const schema = `pack_check_${randomBytes(8).toString('hex')}`;
  let schemaUsed = false;
  // Ctrl-C also reaches the children (one process group); the temp dir is ours to remove.
  const onSignal = (signal) => {
    rmSync(tmp, { recursive: true, force: true });
    console.error(`[pack:check] interrupted (${signal}); removed ${tmp}`);
    process.exit(130);
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    const tarballs = await step('npm pack (prepack builds dist/)', () => packAll(join(tmp, 'tarballs')));
    await step('attw --profile esm-only', () => {
      for (const { tarball } of tarballs) attw(tarball);
    });

    const appDir = join(tmp, 'app');
    const prebuild = await localPrebuild(join(tmp, 'prebuilds'));
    await createApp(appDir, tarballs, prebuild);
    await step('npm install in the scratch app', () =>
      run('npm', ['install', '--no-audit', '--no-fund'], { cwd: appDir, env: { ...process.env, ...prebuild.env } }),
    );
    const installed = join(appDir, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
    log(
      `better-sqlite3: ${
        prebuild.binary === undefined
          ? 'no binary in the workspace to reuse; its install script downloaded or compiled one'
          : existsSync(installed) && sha256(installed) === sha256(prebuild.binary)
            ? "reused the workspace's binary"
            : "the workspace's binary did not load here; its install script downloaded or compiled one"
      }`,
    );
    await checkExports(appDir, tarballs);

    await step('memory:', () => serve(appDir, 'memory:', 'memory:'));
    const dbFile = join(tmp, 'data', 'a.db');
    await mkdir(dirname(dbFile), { recursive: true });
    await step('sqlite:', () => serve(appDir, 'sqlite:', `sqlite:${dbFile}`));
    if (!existsSync(dbFile)) throw new CheckError(`sqlite: the store did not create ${dbFile}`);
    const pgUrl = new URL(postgresUrl);
    pgUrl.searchParams.set('schema', schema);
    schemaUsed = true;
    await step('postgres:', () => serve(appDir, 'postgres:', pgUrl.href));
  } finally {
    if (schemaUsed)
      await dropSchema(postgresUrl, schema).catch((error) => log(`could not drop ${schema}: ${error.message}`));
    await rm(tmp, { recursive: true, force: true });
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
}

main().then(
  () => log(`OK in ${seconds(started)}`),
  (error) => {
    console.error(
      `[pack:check] FAILED after ${seconds(started)}: ${error instanceof CheckError ? error.message : error.stack}`,
    );
    process.exitCode = 1;
  },
);
