/**
 * One worker process of the cross-worker benchmark: the fastify-a2a plugin on the store XW_STORE
 * names (sqlite:<path>, postgres://…?schema=…), with the product's default options (only the
 * worker id is set). Prints `READY <port>` on stdout once listening; closes on SIGTERM.
 *
 * The agent:
 * - `stamp:<n>:<ms>[:<delayMs>]` waits `delayMs` (default 0), then emits n chunks of one artifact,
 *   `ms` apart, each a data part `{ i, emittedAt, emittedAtHr }` taken just before the update is
 *   handed to the runtime: `emittedAt` is Date.now(), `emittedAtHr` the same clock with sub-ms
 *   resolution (performance.timeOrigin + performance.now()). Then it completes.
 * - anything else: the demo echo agent (examples/demo), as in the other benchmarks.
 */

import { performance } from 'node:perf_hooks';
import type { TurnContext } from '@fastify-a2a/core';
import Fastify from 'fastify';
import { a2aPlugin } from 'fastify-a2a';
import { demoCard, echoAgent, sleep } from '../../../examples/demo/src/agents.js';

const workerId = process.env.XW_WORKER_ID ?? `xw-${process.pid}`;
const store = process.env.XW_STORE;
if (!store) {
  process.stderr.write('XW_STORE is required (sqlite:<path> or postgres://…)\n');
  process.exit(2);
}

async function execute(turn: TurnContext): Promise<void> {
  const stamp = /^stamp:(\d+):(\d+)(?::(\d+))?$/.exec(turn.text.trim());
  if (!stamp) return echoAgent.execute(turn);
  const n = Number(stamp[1]);
  const ms = Number(stamp[2]);
  await sleep(Number(stamp[3] ?? 0), turn.signal);
  for (let i = 0; i < n; i++) {
    if (i > 0) await sleep(ms, turn.signal);
    await turn.artifact({
      artifactId: 'stamps',
      name: 'stamps',
      data: { i, emittedAt: Date.now(), emittedAtHr: performance.timeOrigin + performance.now(), worker: workerId },
      append: i > 0,
      lastChunk: i === n - 1,
    });
  }
  await turn.complete(`stamped ${n} times on ${workerId}`);
}

const app = Fastify({ logger: false });
try {
  await app.register(a2aPlugin, { agentCard: demoCard('echo'), executor: execute, store, workerId });
  await app.listen({ host: '127.0.0.1', port: 0 });
} catch (error) {
  process.stderr.write(`worker ${workerId} failed to start: ${(error as Error).stack ?? error}\n`);
  process.exit(1);
}
const address = app.server.address();
process.stdout.write(`READY ${typeof address === 'object' && address ? address.port : 0}\n`);

process.once('SIGTERM', () => {
  app.close().then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(`close failed: ${(error as Error).message}\n`);
      process.exit(1);
    },
  );
});
