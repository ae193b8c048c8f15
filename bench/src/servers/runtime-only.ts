/**
 * A child of `npm run bench:runtime`: blocking message/send straight through the A2ARuntime (no
 * HTTP) with the demo echo agent on one store, measuring the CPU it takes. Reports over IPC:
 * sends, wall time, this process's CPU (user, system) and the whole machine's busy CPU over the
 * same window (from /proc/stat), so the rest (the Postgres server, mostly) can be told apart.
 */

import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { A2ARuntime, type A2AStore, encodePushNotification } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { PostgresStore } from '@fastify-a2a/store-postgres';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import { echoAgent } from '../../../examples/demo/src/agents.js';
import { dropSchema } from '../lib/env.js';

const kind = process.env.RUNTIME_STORE ?? 'memory';
/** '1': every task written before its agent runs (two commits per send), as before issue 13. */
const createTaskBeforeRun = process.env.RUNTIME_CREATE_TASK_BEFORE_RUN === '1';
/** '1': push notifications on with the plugin's defaults, as the demo ships (no send carries a config). */
const pushOn = process.env.RUNTIME_PUSH === '1';
const durationMs = Number(process.env.RUNTIME_DURATION_MS ?? 4000);
const concurrency = Number(process.env.RUNTIME_CONCURRENCY ?? 64);
const postgresUrl = process.env.RUNTIME_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const name = `runtime_${randomUUID().slice(0, 8)}`;
const sqliteFile = join(tmpdir(), `${name}.db`);

/** Busy CPU time of the whole machine so far, in ms (user + nice + system + irq + softirq). */
function machineBusyMs(): number {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = fields;
  return ((user + nice + system + irq + softirq) * 1000) / 100; // USER_HZ is 100 on Linux
}

function createStore(): A2AStore {
  if (kind === 'memory') return new MemoryStore();
  if (kind === 'sqlite') return new SqliteStore({ filename: sqliteFile });
  return new PostgresStore({ connectionString: postgresUrl, schema: name });
}

const store = createStore();
const runtime = new A2ARuntime({
  store,
  executor: echoAgent,
  retention: false,
  closeStore: false,
  createTaskBeforeRun,
  ...(pushOn ? { push: { encodeNotification: encodePushNotification } } : {}),
});
await runtime.start();

async function load(ms: number): Promise<number> {
  const until = Date.now() + ms;
  let sends = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        await runtime.sendMessage({
          message: {
            kind: 'message',
            role: 'user',
            messageId: randomUUID(),
            parts: [{ kind: 'text', text: 'hello benchmark world' }],
          },
        });
        sends++;
      }
    }),
  );
  return sends;
}

await load(1000); // warm-up
const cpuStart = process.cpuUsage();
const busyStart = machineBusyMs();
const started = performance.now();
const sends = await load(durationMs);
const wallMs = performance.now() - started;
const cpu = process.cpuUsage(cpuStart);
const busyMs = machineBusyMs() - busyStart;
process.send?.({
  kind,
  createTaskBeforeRun,
  pushOn,
  sends,
  wallMs,
  userMs: cpu.user / 1000,
  systemMs: cpu.system / 1000,
  machineBusyMs: busyMs,
});

await runtime.close();
await store.close();
if (kind === 'sqlite') for (const suffix of ['', '-wal', '-shm']) rmSync(`${sqliteFile}${suffix}`, { force: true });
if (kind === 'postgres') await dropSchema(name, postgresUrl);
