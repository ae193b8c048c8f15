/**
 * A small hostile agent for the CLI's tests: a plain node:http server speaking A2A 1.0 JSON-RPC
 * (the card at the well-known path, SendMessage and GetTask at /a2a), answering every call with
 * the task it is given (encoded by core's 1.0 codec, so the wire form is right) and recording
 * each request's headers, so a test can see what the CLI sent it.
 */

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Part, protoJson1_0, type Task, type TaskPushNotificationConfig } from '@fastify-a2a/core/protocol';

export interface HostileAgent {
  url: string;
  /** Every request's method, path and headers, in order. */
  requests: { method: string; path: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

export async function hostileAgent(
  task: Task,
  options: { pushConfig?: TaskPushNotificationConfig; name?: string; errorMessage?: string } = {},
): Promise<HostileAgent> {
  let base = '';
  const requests: HostileAgent['requests'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
      if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            name: options.name ?? 'Hostile',
            description: 'Answers with whatever a test gives it.',
            version: '1',
            capabilities: { streaming: false, pushNotifications: true },
            defaultInputModes: ['text/plain'],
            defaultOutputModes: ['text/plain'],
            supportedInterfaces: [{ url: `${base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
            skills: [],
          }),
        );
        return;
      }
      let request: { id?: unknown; method?: string };
      try {
        request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      const result = (() => {
        switch (request.method) {
          case 'SendMessage':
            return protoJson1_0.encodeResult('sendMessage', task);
          case 'GetTask':
          case 'CancelTask':
            return protoJson1_0.encodeResult('getTask', task);
          case 'CreateTaskPushNotificationConfig':
          case 'GetTaskPushNotificationConfig':
            return options.pushConfig && protoJson1_0.encodeResult('getTaskPushNotificationConfig', options.pushConfig);
          case 'ListTaskPushNotificationConfigs':
          case 'ListTaskPushNotificationConfig':
            return (
              options.pushConfig && protoJson1_0.encodeResult('listTaskPushNotificationConfig', [options.pushConfig])
            );
          default:
            return undefined;
        }
      })();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          result === undefined
            ? {
                jsonrpc: '2.0',
                id: request.id ?? null,
                error: { code: -32601, message: options.errorMessage ?? 'Method not found' },
              }
            : { jsonrpc: '2.0', id: request.id ?? null, result },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A completed task whose one artifact holds the given parts. */
export function taskWith(parts: Part[]): Task {
  return {
    kind: 'task',
    id: 'hostile-task',
    contextId: 'hostile-context',
    status: { state: 'completed' },
    artifacts: [{ artifactId: 'result', name: 'result', parts }],
  };
}

/** A file part with bytes and the name the agent chose. */
export const filePart = (name: string, text: string, mimeType = 'text/plain') => ({
  kind: 'file' as const,
  file: { name, mimeType, bytes: Buffer.from(text).toString('base64') },
});
