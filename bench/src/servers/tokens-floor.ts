/**
 * The floor of `npm run bench:tokens`: a plain node:http server that answers every POST to /a2a
 * carrying a token command with the SSE frames an A2A `message/stream` would carry — the Task, a
 * `working` status, one `artifact-update` per chunk on the token agent's schedule, `completed` —
 * built with JSON.stringify and written one frame per write, with no protocol, runtime or store work
 * behind them: what the HTTP stack and the wire cost alone.
 */

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { parseTokenCommand, streamTokens } from '../tokens/agent.js';
import { LISTEN, rssReport, serve, wantsGc } from './common.js';

interface RpcBody {
  id?: string | number | null;
  params?: { message?: { parts?: { text?: string }[] } };
}

const server = http.createServer((request, response) => {
  if (request.method === 'GET' && request.url?.startsWith('/__rss')) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(rssReport(wantsGc(request.url))));
    return;
  }
  let body = '';
  request.setEncoding('utf8');
  request.on('data', (chunk: string) => {
    body += chunk;
  });
  request.on('end', () => {
    const rpc = JSON.parse(body) as RpcBody;
    const command = parseTokenCommand(rpc.params?.message?.parts?.[0]?.text ?? '');
    if (!command) {
      response.writeHead(400).end();
      return;
    }
    const taskId = randomUUID();
    const contextId = randomUUID();
    const frame = (result: unknown): string => `data: ${JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result })}\n\n`;
    const status = (state: string, final: boolean) => ({
      kind: 'status-update',
      taskId,
      contextId,
      status: { state, timestamp: new Date().toISOString() },
      final,
    });
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.write(
      frame({
        kind: 'task',
        id: taskId,
        contextId,
        status: { state: 'submitted', timestamp: new Date().toISOString() },
      }),
    );
    response.write(frame(status('working', false)));
    const controller = new AbortController();
    response.on('close', () => controller.abort());
    void streamTokens(
      command,
      (index, { part, metadata }) => {
        response.write(
          frame({
            kind: 'artifact-update',
            taskId,
            contextId,
            artifact: { artifactId: 'answer', name: 'answer', parts: [part], ...(metadata ? { metadata } : {}) },
            append: index > 0,
            lastChunk: index === command.count - 1,
          }),
        );
      },
      controller.signal,
    ).then(() => response.end(frame(status('completed', true))));
  });
});

server.listen(LISTEN.port, LISTEN.host, () => {
  const address = server.address();
  serve(
    typeof address === 'object' && address ? address.port : 0,
    () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
});
