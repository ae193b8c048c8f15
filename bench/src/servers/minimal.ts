/**
 * The minimal A2A server: the truer limit of what fastify-a2a's request path can reach on Fastify
 * (issue 22). It does only the work every A2A server must do for the two requests measured against
 * it — Fastify parses the JSON-RPC body; `message/send` builds the echo agent's completed task (the
 * user's message in the history, one `echo` artifact with a part per word and per whitespace run,
 * as the demo echo agent's chunks leave it) and keeps it in a Map; `tasks/get` answers the task
 * from the Map — and nothing else: no validation, no logging, no event log, no SSE, no push, no
 * idempotency index. Anything it does not know is answered with JSON-RPC's method-not-found.
 */

import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { listenAndServe, rssReport, wantsGc } from './common.js';

interface TextPart {
  kind: 'text';
  text: string;
}
interface MinimalMessage {
  kind: 'message';
  messageId: string;
  role: string;
  parts: TextPart[];
  taskId?: string;
  contextId?: string;
}
interface MinimalTask {
  kind: 'task';
  id: string;
  contextId: string;
  status: { state: 'completed'; timestamp: string };
  history: MinimalMessage[];
  artifacts: { artifactId: string; name: string; parts: TextPart[] }[];
}
interface RpcRequest {
  id?: string | number | null;
  method?: string;
  params?: { id?: string; message?: MinimalMessage };
}

/**
 * As many tasks as the memory store keeps by default (`maxTasks`), the oldest dropped first, so a
 * long run measures the same Map size as fastify-a2a's memory store rather than a growing heap.
 */
const MAX_TASKS = 10_000;
const tasks = new Map<string, MinimalTask>();

function echoTask(message: MinimalMessage): MinimalTask {
  const id = randomUUID();
  const contextId = message.contextId ?? randomUUID();
  const text = message.parts.map((part) => part.text ?? '').join('');
  const words = text
    .trim()
    .split(/(\s+)/)
    .filter((word) => word !== '');
  const task: MinimalTask = {
    kind: 'task',
    id,
    contextId,
    status: { state: 'completed', timestamp: new Date().toISOString() },
    history: [{ ...message, taskId: id, contextId }],
    artifacts: [{ artifactId: `echo-${id}`, name: 'echo', parts: words.map((word) => ({ kind: 'text', text: word })) }],
  };
  if (tasks.size >= MAX_TASKS) tasks.delete(tasks.keys().next().value as string);
  tasks.set(id, task);
  return task;
}

const app = Fastify({ logger: false });

app.get('/__rss', async (request) => rssReport(wantsGc(request.url)));

app.post('/a2a', async (request) => {
  const body = request.body as RpcRequest;
  const id = body.id ?? null;
  if (body.method === 'message/send' && body.params?.message) {
    return { jsonrpc: '2.0', id, result: echoTask(body.params.message) };
  }
  if (body.method === 'tasks/get') {
    const task = tasks.get(body.params?.id ?? '');
    if (task) return { jsonrpc: '2.0', id, result: task };
    return { jsonrpc: '2.0', id, error: { code: -32001, message: 'Task not found' } };
  }
  return { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } };
});

await listenAndServe(app);
