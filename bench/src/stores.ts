/**
 * `npm run bench:stores`: operations per second of each store adapter, measured in one run so the
 * ratios between adapters are comparable (absolute numbers depend on the machine and its load).
 *
 * Every measurement gets a fresh store (memory: a new instance; SQLite: a new file in a temp dir;
 * Postgres: a new namespace in a throwaway schema bench_<random>, dropped at the end), a short
 * warm-up, then runs until BENCH_STORES_MS (default 2000 ms) or BENCH_STORES_MAX_OPS (default
 * 20000) operations, whichever comes first. Postgres and SQLite are measured sequentially and
 * with BENCH_STORES_CONCURRENCY (default 16) operations in flight.
 *
 * BENCH_STORES_ONLY (adapter names, in the order to run them) and BENCH_STORES_OPS (op names)
 * narrow the run.
 *
 * Writes bench/results/stores-<date>.json and regenerates bench/STORES.md; with
 * BENCH_STORES_GROUP_COMMIT=compare, also measures each durable store with `groupCommit: false`
 * (sqlite-nogc, postgres-nogc) and writes bench/results/group-commit-<date>.json only
 * (bench/GROUP_COMMIT.md).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type {
  A2AStore,
  Message,
  Task,
  TaskArtifactUpdateEvent,
  TaskEvent,
  TaskStatusUpdateEvent,
} from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { PostgresStore } from '@fastify-a2a/store-postgres';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import {
  BENCH_DIR,
  dropSchema,
  envNumber,
  fmt,
  type MachineInfo,
  machineInfo,
  machineLine,
  POSTGRES_URL,
  postgresSettings,
  RESULTS_DIR,
  type RepoInfo,
  randomSuffix,
  ratio,
  repoInfo,
  settingsLine,
  today,
  writeFile,
} from './lib/env.js';

/** What the benchmark calls: the task-log part of the store contract. */
type BenchStore = Pick<A2AStore, 'open' | 'close' | 'commit' | 'getTask' | 'readEvents' | 'listTasksByContext'>;

/** `-nogc`: the same store with `groupCommit: false` (only with BENCH_STORES_GROUP_COMMIT=compare). */
type AdapterName = 'memory' | 'sqlite' | 'postgres' | 'sqlite-nogc' | 'postgres-nogc';
type OpName = 'create' | 'createFull' | 'append' | 'getTask' | 'byContext' | 'readEvents';

/** Creates per create measurement: with the warm-up's 2,000, the memory store stays at ≤ 10,000 tasks. */
const CREATE_MAX_OPS = 7_500;
/** Tasks created before the createFull measurement. */
const PREFILL = 10_000;

const OPS: { name: OpName; label: string; detail: string }[] = [
  {
    name: 'create',
    label: 'create task',
    detail: `commit, expectedVersion 0, one Task event; at most ${fmt(CREATE_MAX_OPS)} creates (after the warm-up's), so the memory store stays under its default maxTasks (10,000)`,
  },
  {
    name: 'createFull',
    label: 'create task, 10,000 active tasks stored',
    detail: `the same after ${fmt(PREFILL)} non-terminal tasks were created, i.e. with the memory store past its maxTasks bound (it then looks for terminal tasks to evict on every commit); no warm-up`,
  },
  { name: 'append', label: 'append event', detail: 'commit of one status or artifact event on an existing task' },
  { name: 'getTask', label: 'get task', detail: 'getTask of one of 100 tasks' },
  { name: 'byContext', label: 'tasks by context', detail: 'listTasksByContext, context with 20 tasks' },
  {
    name: 'readEvents',
    label: 'read events after N',
    detail: 'readEvents(task, 90, 256) on a 100-event log → 10 events',
  },
];

interface Measurement {
  adapter: AdapterName;
  op: OpName;
  concurrency: number;
  ops: number;
  ms: number;
  opsPerSec: number;
  p50us: number;
  p99us: number;
}

interface StoresResult {
  kind: 'stores';
  date: string;
  machine: MachineInfo;
  repo: RepoInfo;
  budget: { ms: number; maxOps: number; warmupMs: number; concurrency: number };
  postgres: Record<string, string> | undefined;
  /** 1-minute load average at the start and end of the run (the machine is shared). */
  loadAvg: { start: number; end: number };
  results: Measurement[];
}

interface Adapter {
  name: AdapterName;
  concurrencies: number[];
  /** A fresh, unopened store for one measurement. */
  create(label: string): BenchStore;
  cleanup(): Promise<void>;
}

// ---- fixtures: realistic, small documents like the echo agent's ----

const now = () => new Date().toISOString();

function userMessage(messageId: string, taskId: string, contextId: string): Message {
  return {
    kind: 'message',
    messageId,
    role: 'user',
    taskId,
    contextId,
    parts: [{ kind: 'text', text: 'hello benchmark world, please echo these words back' }],
  };
}

function taskSnapshot(taskId: string, contextId: string, messageId: string): Task {
  return {
    kind: 'task',
    id: taskId,
    contextId,
    status: { state: 'submitted', timestamp: now() },
    history: [userMessage(messageId, taskId, contextId)],
  };
}

/** The snapshot written with appended events: working, one artifact of a few chunks. */
function workingSnapshot(base: Task): Task {
  return {
    ...base,
    status: { state: 'working', timestamp: now() },
    artifacts: [
      {
        artifactId: `echo-${base.id}`,
        name: 'echo',
        parts: [{ kind: 'text', text: 'hello benchmark world, please echo these words back' }],
      },
    ],
  };
}

function appendEvent(task: Task, i: number): TaskEvent {
  if (i % 2 === 0) {
    const event: TaskStatusUpdateEvent = {
      kind: 'status-update',
      taskId: task.id,
      contextId: task.contextId,
      status: { state: 'working', timestamp: now() },
      final: false,
    };
    return event;
  }
  const event: TaskArtifactUpdateEvent = {
    kind: 'artifact-update',
    taskId: task.id,
    contextId: task.contextId,
    artifact: { artifactId: `echo-${task.id}`, name: 'echo', parts: [{ kind: 'text', text: ` word${i}` }] },
    append: true,
    lastChunk: false,
  };
  return event;
}

// ---- measurement ----

interface Budget {
  ms: number;
  maxOps: number;
}

/** Runs `op` from `concurrency` loops until the budget is spent; latency per op in µs. */
async function drive(
  concurrency: number,
  budget: Budget,
  op: (worker: number, i: number) => Promise<unknown>,
): Promise<{ ops: number; ms: number; latencies: Float64Array }> {
  const latencies = new Float64Array(budget.maxOps);
  let next = 0;
  const start = performance.now();
  const deadline = start + budget.ms;
  const loop = async (worker: number): Promise<void> => {
    while (next < budget.maxOps && performance.now() < deadline) {
      const i = next++;
      const t0 = performance.now();
      await op(worker, i);
      latencies[i] = (performance.now() - t0) * 1000;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, worker) => loop(worker)));
  const ms = performance.now() - start;
  return { ops: next, ms, latencies: latencies.subarray(0, next) };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** Prepares the data an operation needs and returns the operation itself. */
async function prepareOp(
  store: BenchStore,
  op: OpName,
  concurrency: number,
  run: string,
): Promise<(worker: number, i: number) => Promise<unknown>> {
  const create = async (taskId: string, contextId: string): Promise<Task> => {
    const task = taskSnapshot(taskId, contextId, `m-${taskId}`);
    await store.commit({ taskId, expectedVersion: 0, task, events: [task] });
    return task;
  };
  switch (op) {
    case 'createFull':
    case 'create': {
      if (op === 'createFull') {
        let k = 0;
        await Promise.all(
          Array.from({ length: 16 }, async () => {
            while (k < PREFILL) {
              const id = `${run}-p${k++}`;
              await create(id, `ctx-${id}`);
            }
          }),
        );
      }
      let n = 0;
      return async () => {
        const id = `${run}-c${n++}`;
        const task = taskSnapshot(id, `ctx-${id}`, `m-${id}`);
        await store.commit({ taskId: id, expectedVersion: 0, task, events: [task] });
      };
    }
    case 'append': {
      // One task per worker, so concurrent appends never conflict on a version.
      const tasks = await Promise.all(
        Array.from({ length: concurrency }, async (_, w) => {
          const base = await create(`${run}-a${w}`, `ctx-${run}-a${w}`);
          return { snapshot: workingSnapshot(base), version: 1 };
        }),
      );
      return async (worker, i) => {
        const state = tasks[worker]!;
        await store.commit({
          taskId: state.snapshot.id,
          expectedVersion: state.version,
          task: state.snapshot,
          events: [appendEvent(state.snapshot, i)],
        });
        state.version++;
      };
    }
    case 'getTask': {
      const ids: string[] = [];
      for (let k = 0; k < 100; k++) ids.push((await create(`${run}-g${k}`, `ctx-${run}-g${k}`)).id);
      return async (_w, i) => {
        if ((await store.getTask(ids[i % ids.length]!)) === undefined) throw new Error('getTask: missing task');
      };
    }
    case 'byContext': {
      const contextId = `ctx-${run}-shared`;
      for (let k = 0; k < 20; k++) await create(`${run}-x${k}`, contextId);
      return async () => {
        const tasks = await store.listTasksByContext(contextId);
        if (tasks.length !== 20) throw new Error(`listTasksByContext: ${tasks.length} tasks, expected 20`);
      };
    }
    case 'readEvents': {
      const base = await create(`${run}-r`, `ctx-${run}-r`);
      const snapshot = workingSnapshot(base);
      for (let v = 1; v < 100; v++) {
        await store.commit({ taskId: base.id, expectedVersion: v, task: snapshot, events: [appendEvent(snapshot, v)] });
      }
      return async () => {
        const events = await store.readEvents(base.id, 90, 256);
        if (events.length !== 10) throw new Error(`readEvents: ${events.length} events, expected 10`);
      };
    }
  }
}

async function measure(
  adapter: Adapter,
  op: OpName,
  concurrency: number,
  budget: Budget,
  warmupMs: number,
): Promise<Measurement> {
  const label = `${op}-c${concurrency}`;
  const store = adapter.create(label);
  await store.open();
  try {
    if (op !== 'createFull') {
      const warm = await prepareOp(store, op, concurrency, `w${label}`);
      await drive(concurrency, { ms: warmupMs, maxOps: Math.min(2000, budget.maxOps) }, warm);
    }
    const run = await prepareOp(store, op, concurrency, label);
    const { ops, ms, latencies } = await drive(
      concurrency,
      op === 'create' ? { ...budget, maxOps: Math.min(budget.maxOps, CREATE_MAX_OPS) } : budget,
      run,
    );
    const sorted = Float64Array.from(latencies).sort();
    return {
      adapter: adapter.name,
      op,
      concurrency,
      ops,
      ms: Math.round(ms),
      opsPerSec: (ops / ms) * 1000,
      p50us: percentile(sorted, 50),
      p99us: percentile(sorted, 99),
    };
  } finally {
    await store.close();
  }
}

// ---- report ----

function renderStores(result: StoresResult): string {
  const find = (adapter: AdapterName, op: OpName, concurrency: number) =>
    result.results.find((r) => r.adapter === adapter && r.op === op && r.concurrency === concurrency);
  const c = result.budget.concurrency;
  const lines: string[] = [];
  lines.push('# Store benchmarks');
  lines.push('');
  lines.push('Generated by `npm run bench:stores` (bench/src/stores.ts); do not edit by hand.');
  lines.push('');
  lines.push(`- Date: ${result.date}`);
  lines.push(`- Machine: ${machineLine(result.machine)}`);
  lines.push(
    `- Code: commit ${result.repo.commit}${result.repo.dirtyPaths.length > 0 ? ` plus uncommitted changes in ${result.repo.dirtyPaths.join(', ')}` : ''}`,
  );
  lines.push(
    `- Budget per measurement: ${result.budget.ms} ms or ${fmt(result.budget.maxOps)} operations, whichever first, after a ${result.budget.warmupMs} ms warm-up; a fresh store per measurement.`,
  );
  lines.push(
    `- SQLite: a file in a temp dir (WAL, synchronous=NORMAL, the store defaults). Postgres: local server over loopback (${settingsLine(result.postgres)}), a throwaway schema, the store's default pool (pg \`max\` 10): every commit waits for a WAL flush.`,
  );
  lines.push(
    `- Machine load (1-minute average, 2 cores shared with other work): ${result.loadAvg.start.toFixed(2)} at the start, ${result.loadAvg.end.toFixed(2)} at the end.`,
  );
  lines.push(
    '- Absolute numbers are noise on a shared machine; the ratios, measured in the same run, are what to read.',
  );
  lines.push('');
  lines.push('## Operations per second');
  lines.push('');
  lines.push(
    `| operation | memory | SQLite | SQLite vs memory | SQLite ×${c} in flight | Postgres | Postgres vs memory | Postgres ×${c} in flight | vs memory |`,
  );
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const op of OPS) {
    const mem = find('memory', op.name, 1)?.opsPerSec;
    const sqlite = find('sqlite', op.name, 1)?.opsPerSec;
    const sqliteConc = find('sqlite', op.name, c)?.opsPerSec;
    const pgSeq = find('postgres', op.name, 1)?.opsPerSec;
    const pgConc = find('postgres', op.name, c)?.opsPerSec;
    lines.push(
      `| ${op.label} | ${fmt(mem)} | ${fmt(sqlite)} | ${ratio(sqlite, mem)} | ${fmt(sqliteConc)} | ${fmt(pgSeq)} | ${ratio(pgSeq, mem)} | ${fmt(pgConc)} | ${ratio(pgConc, mem)} |`,
    );
  }
  lines.push('');
  lines.push('## Latency per operation (µs, p50 / p99)');
  lines.push('');
  lines.push(`| operation | memory | SQLite | SQLite ×${c} in flight | Postgres | Postgres ×${c} in flight |`);
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: |');
  const lat = (m: Measurement | undefined) => (m ? `${fmt(m.p50us, 1)} / ${fmt(m.p99us, 1)}` : '–');
  for (const op of OPS) {
    lines.push(
      `| ${op.label} | ${lat(find('memory', op.name, 1))} | ${lat(find('sqlite', op.name, 1))} | ${lat(find('sqlite', op.name, c))} | ${lat(find('postgres', op.name, 1))} | ${lat(find('postgres', op.name, c))} |`,
    );
  }
  lines.push('');
  lines.push('## What each operation does');
  lines.push('');
  for (const op of OPS) lines.push(`- **${op.label}**: ${op.detail}.`);
  lines.push('');
  return lines.join('\n');
}

// ---- main ----

async function main(): Promise<void> {
  const budget: Budget = { ms: envNumber('BENCH_STORES_MS', 2000), maxOps: envNumber('BENCH_STORES_MAX_OPS', 20_000) };
  const warmupMs = envNumber('BENCH_STORES_WARMUP_MS', 300);
  const concurrency = envNumber('BENCH_STORES_CONCURRENCY', 16);
  const only = process.env.BENCH_STORES_ONLY?.split(',');
  const onlyOps = process.env.BENCH_STORES_OPS?.split(',');
  // compare: each durable store also with groupCommit: false, in the same run (bench/GROUP_COMMIT.md);
  // the results then go to bench/results/group-commit-<date>.json and STORES.md is left alone.
  const compare = process.env.BENCH_STORES_GROUP_COMMIT === 'compare';

  const tmp = mkdtempSync(join(tmpdir(), 'fastify-a2a-bench-stores-'));
  const schema = `bench_${randomSuffix()}`;
  const adapters: Adapter[] = [
    { name: 'memory', concurrencies: [1], create: () => new MemoryStore({}), cleanup: async () => {} },
    {
      name: 'sqlite',
      concurrencies: [1, concurrency],
      create: (label) => new SqliteStore({ filename: join(tmp, `${label}.db`) }),
      cleanup: async () => rmSync(tmp, { recursive: true, force: true }),
    },
    {
      name: 'postgres',
      concurrencies: [1, concurrency],
      create: (label) => new PostgresStore({ connectionString: POSTGRES_URL, schema, namespace: label }),
      cleanup: () => dropSchema(schema),
    },
  ];
  if (compare) {
    adapters.push(
      {
        name: 'sqlite-nogc',
        concurrencies: [1, concurrency],
        create: (label) => new SqliteStore({ filename: join(tmp, `nogc-${label}.db`), groupCommit: false }),
        cleanup: async () => {},
      },
      {
        name: 'postgres-nogc',
        concurrencies: [1, concurrency],
        create: (label) =>
          new PostgresStore({ connectionString: POSTGRES_URL, schema, namespace: `nogc-${label}`, groupCommit: false }),
        cleanup: async () => {},
      },
    );
  }

  const results: Measurement[] = [];
  const loadStart = loadavg()[0] ?? 0;
  try {
    // In the order BENCH_STORES_ONLY names them (e.g. to see whether going first costs an adapter).
    const chosen = only ? only.flatMap((name) => adapters.filter((a) => a.name === name)) : adapters;
    for (const adapter of chosen) {
      for (const op of OPS) {
        if (onlyOps && !onlyOps.includes(op.name)) continue;
        for (const c of adapter.concurrencies) {
          const m = await measure(adapter, op.name, c, budget, warmupMs);
          results.push(m);
          console.log(
            `${adapter.name.padEnd(8)} ${op.label.padEnd(20)} ×${String(c).padEnd(3)} ${fmt(m.opsPerSec).padStart(9)} ops/s  p50 ${fmt(m.p50us, 1)} µs  p99 ${fmt(m.p99us, 1)} µs  (${m.ops} ops in ${m.ms} ms)`,
          );
        }
      }
    }
  } finally {
    for (const adapter of adapters) await adapter.cleanup().catch((e) => console.error(`cleanup ${adapter.name}:`, e));
  }

  const result: StoresResult = {
    kind: 'stores',
    date: new Date().toISOString(),
    machine: machineInfo(),
    repo: repoInfo(),
    budget: { ...budget, warmupMs, concurrency },
    loadAvg: { start: loadStart, end: loadavg()[0] ?? 0 },
    postgres: await postgresSettings(),
    results,
  };
  if (compare) {
    const jsonPath = join(RESULTS_DIR, `group-commit-${today()}.json`);
    writeFile(jsonPath, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`\nwrote ${jsonPath}`);
    return;
  }
  const jsonPath = join(RESULTS_DIR, `stores-${today()}.json`);
  writeFile(jsonPath, `${JSON.stringify(result, null, 2)}\n`);
  writeFile(join(BENCH_DIR, 'STORES.md'), renderStores(result));
  console.log(`\nwrote ${jsonPath} and bench/STORES.md`);
}

await main();
