/**
 * The ceiling: raw Fastify with one JSON POST route that echoes a JSON-RPC-shaped body — what the
 * HTTP stack costs before any A2A work. For `message/stream` it answers a minimal SSE stream (one
 * event at once, a final one after the `sleep:<ms>` of the message text), the floor for held
 * streams.
 */

import Fastify from 'fastify';
import { listenAndServe, rssReport, wantsGc } from './common.js';

interface RpcBody {
  jsonrpc?: string;
  id?: string | number | null;
  method?: string;
  params?: { message?: { parts?: { text?: string }[] } };
}

const app = Fastify({ logger: false });

app.get('/__rss', async (request) => rssReport(wantsGc(request.url)));

app.post('/a2a', async (request, reply) => {
  const body = request.body as RpcBody;
  if (body.method !== 'message/stream') return { jsonrpc: '2.0', id: body.id ?? null, result: body.params };
  const ms = Number(/^sleep:(\d+)$/.exec(body.params?.message?.parts?.[0]?.text ?? '')?.[1] ?? 0);
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.write(
    `data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { kind: 'task', status: { state: 'working' } } })}\n\n`,
  );
  const timer = setTimeout(() => {
    res.end(
      `data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { kind: 'status-update', status: { state: 'completed' }, final: true } })}\n\n`,
    );
  }, ms);
  res.on('close', () => clearTimeout(timer));
});

await listenAndServe(app);
