/**
 * fastify-a2a with the demo echo agent (examples/demo) on the store BENCH_STORE names (memory:,
 * sqlite:<path>, postgres://…?schema=…), as a separate process so its RSS is its own.
 * BENCH_RETENTION=off disables the retention sweep (default: the plugin's default).
 */

import Fastify from 'fastify';
import { a2aPlugin } from 'fastify-a2a';
import { demoCard, echoAgent } from '../../../examples/demo/src/agents.js';
import { fail, LISTEN, rssReport, serve, wantsGc } from './common.js';

const store = process.env.BENCH_STORE ?? 'memory:';
const app = Fastify({ logger: false });

app.get('/__rss', async (request) => rssReport(wantsGc(request.url)));

try {
  await app.register(a2aPlugin, {
    agentCard: demoCard('echo'),
    executor: echoAgent,
    store,
    ...(process.env.BENCH_RETENTION === 'off' ? { retention: false as const } : {}),
  });
  await app.listen(LISTEN);
  const address = app.server.address();
  serve(typeof address === 'object' && address ? address.port : 0, () => app.close());
} catch (error) {
  fail(error);
}
