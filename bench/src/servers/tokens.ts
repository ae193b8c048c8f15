/**
 * fastify-a2a serving the token agent (bench/src/tokens/agent.ts) as a new user would run it: the
 * plugin with its defaults, push off, a pino logger at `warn` (stdout discarded by the bench), on
 * the store BENCH_STORE names (memory:, sqlite:<path>, postgres://…?schema=…). BENCH_WORKER_ID
 * names the worker when several share one store. Messages that are not token commands get the demo
 * echo agent.
 */

import type { A2AStore, TurnContext } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { PostgresStore } from '@fastify-a2a/store-postgres';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import Fastify from 'fastify';
import { a2aPlugin } from 'fastify-a2a';
import { demoCard, echoAgent } from '../../../examples/demo/src/agents.js';
import { parseTokenCommand, streamTokens } from '../tokens/agent.js';
import { fail, LISTEN, rssReport, serve, wantsGc } from './common.js';

function storeFor(url: string): A2AStore {
  if (url === 'memory:') return new MemoryStore();
  if (url.startsWith('sqlite:')) return new SqliteStore({ filename: url.slice('sqlite:'.length) });
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema');
  parsed.searchParams.delete('schema');
  return new PostgresStore({ connectionString: parsed.toString(), ...(schema ? { schema } : {}) });
}

async function execute(turn: TurnContext): Promise<void> {
  const command = parseTokenCommand(turn.text);
  if (!command) return echoAgent.execute(turn);
  await streamTokens(
    command,
    (index, { part, metadata }) =>
      turn.artifact({
        artifactId: 'answer',
        name: 'answer',
        parts: [part],
        ...(metadata ? { metadata } : {}),
        append: index > 0,
        lastChunk: index === command.count - 1,
      }),
    turn.signal,
  );
  await turn.complete();
}

const app = Fastify({ logger: { level: 'warn' } });
app.get('/__rss', async (request) => rssReport(wantsGc(request.url)));
try {
  await app.register(a2aPlugin, {
    agentCard: demoCard('echo'),
    executor: execute,
    store: storeFor(process.env.BENCH_STORE ?? 'memory:'),
    ...(process.env.BENCH_WORKER_ID ? { workerId: process.env.BENCH_WORKER_ID } : {}),
    // Only to compare settings by hand; the bench itself measures the defaults.
    ...(process.env.BENCH_STREAM_COMMIT_INTERVAL_MS
      ? { streamCommitIntervalMs: Number(process.env.BENCH_STREAM_COMMIT_INTERVAL_MS) }
      : {}),
  });
  await app.listen(LISTEN);
  const address = app.server.address();
  serve(typeof address === 'object' && address ? address.port : 0, () => app.close());
} catch (error) {
  fail(error);
}
