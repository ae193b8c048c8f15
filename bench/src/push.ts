/**
 * Push notification delivery latency: from the commit of a task's state to the webhook receiver,
 * under load. Writes bench/results/push-<date>.json and bench/PUSH.md.
 *
 * Each configuration serves the plugin as `workers` Fastify instances in this process, each with a
 * store instance of its own on one store (a fresh Postgres schema, a fresh SQLite file, or — one
 * worker only — a MemoryStore), all delivering. The load: `tasks` tasks, `concurrency` of them
 * in flight, each a non-blocking message/send to the next worker round-robin carrying a push
 * config for a receiver on 127.0.0.1 (allow-listed). The agent goes working, emits `chunks`
 * artifact chunks `chunkMs` apart, and completes. Every POST the receiver gets is a sample:
 * arrival time − the `status.timestamp` of the state it carries (set by the runtime as it builds
 * the update, just before its commit; so the figure includes the commit).
 *
 * Usage: npm run bench:push [-- --quick]   (BENCH_POSTGRES_URL as for the other benches)
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { A2AStore, Task, TurnContext } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { PostgresStore } from '@fastify-a2a/store-postgres';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import Fastify, { type FastifyInstance } from 'fastify';
import { a2aPlugin } from 'fastify-a2a';
import { type Distribution, distribution } from './cross-worker/stats.js';
import {
  BENCH_DIR,
  dropSchema,
  fmt,
  machineInfo,
  machineLine,
  POSTGRES_URL,
  postgresSettings,
  RESULTS_DIR,
  randomSuffix,
  repoInfo,
  settingsLine,
  sleep,
  today,
  writeFile,
} from './lib/env.js';

const quick = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';

interface RunConfig {
  store: 'memory' | 'sqlite' | 'postgres';
  workers: number;
  pollIntervalMs: number;
  throttleMs: number;
  tasks: number;
  concurrency: number;
  chunks: number;
  chunkMs: number;
}

interface RunResult {
  config: RunConfig;
  /** Latency of notifications carrying a final state (completed): the number that matters. */
  final: Distribution;
  /** Latency of notifications carrying a working state (bounded below by the throttle window). */
  working: Distribution;
  posts: number;
  /** Tasks whose completed state arrived more than once (at-least-once). */
  duplicateFinals: number;
  /** Tasks whose completed state never arrived (must be 0). */
  missingFinals: number;
  /** Deliveries the stores list as failed (must be 0). */
  failed: number;
  /** Tasks completed per second over the run. */
  tasksPerSecond: number;
  durationMs: number;
}

interface Sample {
  taskId: string;
  state: string;
  latencyMs: number;
}

async function startReceiver(samples: Sample[]): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      const task = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Task;
      const committed = Date.parse(task.status.timestamp ?? '');
      samples.push({ taskId: task.id, state: task.status.state, latencyMs: now - committed });
      res.end();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, server };
}

async function run(config: RunConfig): Promise<RunResult> {
  const samples: Sample[] = [];
  const receiver = await startReceiver(samples);
  const schema = `bench_push_${randomSuffix()}`;
  const dir = mkdtempSync(join(tmpdir(), 'a2a-bench-push-'));
  const makeStore = (): A2AStore => {
    if (config.store === 'memory') return new MemoryStore();
    if (config.store === 'sqlite') return new SqliteStore({ filename: join(dir, 'a2a.db') });
    return new PostgresStore({ connectionString: POSTGRES_URL, schema });
  };
  const stores: A2AStore[] = [];
  const apps: FastifyInstance[] = [];
  const executor = async (turn: TurnContext): Promise<void> => {
    await turn.working('on it');
    for (let i = 0; i < config.chunks; i++) {
      await sleep(config.chunkMs);
      await turn.artifact({ artifactId: 'out', text: `${i} `, append: i > 0, lastChunk: i === config.chunks - 1 });
    }
    await turn.complete('done');
  };
  for (let i = 0; i < config.workers; i++) {
    const store = makeStore();
    stores.push(store);
    const app = Fastify({ logger: false });
    await app.register(a2aPlugin, {
      agentCard: { name: 'bench', description: 'push bench', version: '1.0.0' },
      executor,
      store,
      retention: false,
      pushNotifications: true,
      pushAllowedCidrs: ['127.0.0.1/32'],
      pushPollIntervalMs: config.pollIntervalMs,
      pushThrottleMs: config.throttleMs,
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    apps.push(app);
  }
  const urls = apps.map((app) => `http://127.0.0.1:${(app.server.address() as { port: number }).port}/a2a`);

  const started = Date.now();
  const taskIds: string[] = [];
  let next = 0;
  async function client(): Promise<void> {
    while (next < config.tasks) {
      const n = next++;
      const response = await fetch(urls[n % urls.length]!, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: n,
          method: 'message/send',
          params: {
            message: {
              kind: 'message',
              role: 'user',
              messageId: `m-${n}-${randomSuffix()}`,
              parts: [{ kind: 'text', text: 'go' }],
            },
            configuration: { blocking: true, pushNotificationConfig: { url: receiver.url, token: `t-${n}` } },
          },
        }),
      });
      const body = (await response.json()) as { result?: Task; error?: unknown };
      if (!body.result) throw new Error(`message/send failed: ${JSON.stringify(body.error)}`);
      taskIds.push(body.result.id);
    }
  }
  await Promise.all(Array.from({ length: config.concurrency }, client));
  // Every task is completed; wait for the last notifications.
  const deadline = Date.now() + 30_000;
  const finals = () => new Set(samples.filter((s) => s.state === 'completed').map((s) => s.taskId));
  while (finals().size < taskIds.length && Date.now() < deadline) await sleep(20);
  const durationMs = Date.now() - started;
  await sleep(Math.max(200, config.pollIntervalMs * 2));

  let failed = 0;
  for (const store of stores.slice(0, 1)) {
    failed = (await store.listPushDeliveries?.({ failed: true }))?.length ?? 0;
  }
  for (const app of apps) await app.close();
  for (const store of stores) await store.close();
  receiver.server.closeAllConnections();
  receiver.server.close();
  if (config.store === 'postgres') await dropSchema(schema);
  rmSync(dir, { recursive: true, force: true });

  const finalCounts = new Map<string, number>();
  for (const s of samples) if (s.state === 'completed') finalCounts.set(s.taskId, (finalCounts.get(s.taskId) ?? 0) + 1);
  return {
    config,
    final: distribution(samples.filter((s) => s.state === 'completed').map((s) => s.latencyMs)),
    working: distribution(samples.filter((s) => s.state === 'working').map((s) => s.latencyMs)),
    posts: samples.length,
    duplicateFinals: [...finalCounts.values()].filter((n) => n > 1).length,
    missingFinals: taskIds.filter((id) => !finalCounts.has(id)).length,
    failed,
    tasksPerSecond: taskIds.length / (durationMs / 1000),
    durationMs,
  };
}

function configs(): RunConfig[] {
  const base = {
    tasks: quick ? 60 : 400,
    concurrency: 16,
    chunks: 4,
    chunkMs: 50,
    throttleMs: 1500,
  };
  const list: RunConfig[] = [];
  for (const pollIntervalMs of [250, 50]) {
    list.push({ ...base, store: 'memory', workers: 1, pollIntervalMs });
    list.push({ ...base, store: 'sqlite', workers: 2, pollIntervalMs });
    list.push({ ...base, store: 'postgres', workers: 2, pollIntervalMs });
  }
  return list;
}

function render(results: RunResult[], meta: Record<string, unknown>): string {
  const row = (r: RunResult): string => {
    const c = r.config;
    return `| ${c.store} | ${c.workers} | ${c.pollIntervalMs} | ${fmt(r.final.p50)} | ${fmt(r.final.p90)} | ${fmt(r.final.p99)} | ${fmt(r.final.max)} | ${fmt(r.working.p50)} | ${r.final.n} | ${r.posts} | ${r.duplicateFinals} | ${r.missingFinals} | ${r.failed} | ${fmt(r.tasksPerSecond, 1)} |`;
  };
  const c = results[0]?.config;
  return `# Push notification delivery latency

Generated by \`npm run bench:push\` (bench/src/push.ts) from one run; do not edit by hand.

- Date: ${meta.date}
- Machine: ${meta.machine}
- Code: commit ${meta.commit}${(meta.dirty as string[]).length ? ` (with uncommitted changes in ${(meta.dirty as string[]).join(', ')})` : ''}
- Mode: ${quick ? 'quick' : 'full'}
- Postgres: ${meta.postgres}
- The machine is shared and has 2 cores: the workers, Postgres, the receiver and the client all run on them.

## Reproduce

\`\`\`sh
npm run bench:push              # = node --conditions=@fastify-a2a/source --import tsx bench/src/push.ts
npm run bench:push -- --quick   # 60 tasks per configuration; writes bench/results/push-<date>-quick.json only
\`\`\`

## What is measured

Each configuration serves the plugin as *workers* Fastify instances in one process, each with its
own store instance on one store (a fresh Postgres schema; one SQLite file; the memory store with
one worker), every one running the delivery job. A client keeps ${c?.concurrency} blocking
\`message/send\` calls in flight, round-robin over the workers, ${c?.tasks} tasks in all, each
with a push config for a receiver on 127.0.0.1. The agent goes \`working\`, emits ${c?.chunks}
artifact chunks ${c?.chunkMs} ms apart and completes. Each POST is a sample: its arrival at the
receiver minus the \`status.timestamp\` of the state it carries, which the runtime sets as it
builds the update, just before the commit (so the commit's own time is included). Millisecond
clock; one machine, so no clock skew.

- **final**: notifications carrying \`completed\`. The throttle does not hold these back: the
  latency is the wait for the next poll of a worker (uniform in 0…\`pushPollIntervalMs\`), the
  claim, the task read and the POST.
- **working p50**: notifications carrying \`working\`: the first POST of a config goes out at once
  (cursor 0); later non-final ones wait for the throttle window (${c?.throttleMs} ms), so most
  tasks here end before a second \`working\` POST is due and their next POST is the final state.
- **dup. finals**: tasks whose \`completed\` arrived twice (at-least-once; 0 without crashes).
  **missing**: tasks whose \`completed\` never arrived. **failed**: deliveries the store lists as failed.

## Results (ms)

| store | workers | poll (ms) | final p50 | final p90 | final p99 | final max | working p50 | finals | POSTs | dup. finals | missing | failed | tasks/s |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${results.map(row).join('\n')}

## Reading it

- The poll interval is the main term: with the default 250 ms a final state waits about half of
  it on average, and p99 is about the interval; 50 ms cuts that at the price of five times the
  claim queries per worker (one \`claimPushDeliveries\` per worker per tick, even when idle).
- Throughput is bounded by the POSTs, not by the poll: a claim that fills every free slot
  (\`pushConcurrency\`) chains into the next as deliveries end. Without that (the first version),
  a worker claimed at most 16 deliveries per poll, 64 per second at 250 ms, and at ~75 tasks per
  second (two POSTs each) final states queued for over a second (p50 0.7-1.2 s).
- The rest is the store's claim and task read plus one loopback POST per config; on Postgres each
  delivery is a claim, a read and a complete (three round trips), shared across workers.
- No duplicates and no missing finals without crashes; duplicates only appear when a worker dies
  between a POST and its complete (see packages/fastify/test/multi-worker-push.postgres.test.ts).
`;
}

async function main(): Promise<void> {
  const results: RunResult[] = [];
  for (const config of configs()) {
    process.stdout.write(`${config.store} × ${config.workers} workers, poll ${config.pollIntervalMs} ms … `);
    const result = await run(config);
    results.push(result);
    process.stdout.write(
      `final p50 ${fmt(result.final.p50)} p99 ${fmt(result.final.p99)} ms, ${result.posts} POSTs, missing ${result.missingFinals}\n`,
    );
  }
  const repo = repoInfo();
  const meta = {
    date: new Date().toISOString(),
    machine: machineLine(machineInfo()),
    commit: repo.commit,
    dirty: repo.dirtyPaths,
    postgres: `local server over loopback (${settingsLine(await postgresSettings())}), a fresh schema per configuration, dropped at the end`,
  };
  const file = join(RESULTS_DIR, `push-${today()}${quick ? '-quick' : ''}.json`);
  writeFile(file, `${JSON.stringify({ meta, results }, null, 2)}\n`);
  if (!quick) writeFile(join(BENCH_DIR, 'PUSH.md'), render(results, meta));
  process.stdout.write(`wrote ${file}${quick ? '' : ' and bench/PUSH.md'}\n`);
}

await main();
