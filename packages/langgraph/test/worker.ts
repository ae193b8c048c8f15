/**
 * One worker process of the cross-worker test: the plugin serving `assistantGraph` on STORE_URL,
 * with LangGraph's official checkpointer on the same database; SLEEP_MS paces the fake model. Prints `READY <port>`; SIGTERM closes it.
 */
import Fastify from 'fastify';
import { a2aPlugin } from 'fastify-a2a';
import { serveAsChildProcess } from '../../../test-support/child-server.js';
import { fromLangGraph } from '../src/index.js';
import { checkpointerFor } from './checkpointers.js';
import { assistantGraph } from './graphs.js';

const storeUrl = process.env.STORE_URL;
if (!storeUrl) throw new Error('STORE_URL is required');
const shared = await checkpointerFor(storeUrl);
const graph = assistantGraph({
  checkpointer: shared.checkpointer,
  workerId: process.env.WORKER_ID ?? 'a worker',
  sleepMs: Number(process.env.SLEEP_MS ?? 1),
});

const app = Fastify({ logger: { level: 'warn' } });
await app.register(a2aPlugin, {
  agentCard: { name: 'LangGraph worker', description: 'A LangGraph graph on a shared store.', version: '1.0.0' },
  executor: fromLangGraph(graph),
  store: storeUrl,
  drainTimeoutMs: 1000,
});
app.addHook('onClose', () => shared.close());
await serveAsChildProcess(app);
