/**
 * The anchor of `npm run bench:tokens`: the official SDK server, @a2a-js/sdk 0.3.14
 * `DefaultRequestHandler` + `InMemoryTaskStore` on express 5, with the same token agent
 * (bench/src/tokens/agent.ts) as fastify-a2a: the Task, `working`, the chunks, `completed`.
 */

import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AgentCard, Task, TaskState, TaskStatusUpdateEvent } from '@a2a-js/sdk';
import {
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { parseTokenCommand, streamTokens } from '../tokens/agent.js';
import { fail, LISTEN, rssReport, serve, wantsGc } from './common.js';

interface ExpressResponse {
  json(body: unknown): void;
}
interface ExpressApp {
  get(path: string, handler: (request: { url: string }, response: ExpressResponse) => void): void;
  use(path: string, handler: unknown): void;
  listen(port: number, host: string, callback: (error?: Error) => void): Server;
}
const express = createRequire(import.meta.url)('express') as () => ExpressApp;

const card: AgentCard = {
  name: 'SDK token agent',
  description: 'Streams an answer in small chunks (bench comparison point).',
  url: 'http://127.0.0.1/a2a',
  version: '0.1.0',
  protocolVersion: '0.3.0',
  preferredTransport: 'JSONRPC',
  capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'tokens', name: 'Tokens', description: 'Streams chunks.', tags: ['bench'] }],
};

class TokenExecutor implements AgentExecutor {
  readonly #running = new Map<string, AbortController>();

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage, task } = context;
    const controller = new AbortController();
    this.#running.set(taskId, controller);
    const status = (state: TaskState): void => {
      bus.publish({
        kind: 'status-update',
        taskId,
        contextId,
        status: { state, timestamp: new Date().toISOString() },
        final: state === 'completed' || state === 'canceled' || state === 'failed',
      } satisfies TaskStatusUpdateEvent);
    };
    try {
      if (!task) {
        bus.publish({
          kind: 'task',
          id: taskId,
          contextId,
          status: { state: 'submitted', timestamp: new Date().toISOString() },
          history: [userMessage],
        } satisfies Task);
      }
      status('working');
      const text = userMessage.parts.map((part) => (part.kind === 'text' ? part.text : '')).join('');
      const command = parseTokenCommand(text);
      if (command) {
        await streamTokens(
          command,
          (index, part) =>
            bus.publish({
              kind: 'artifact-update',
              taskId,
              contextId,
              artifact: { artifactId: 'answer', name: 'answer', parts: [part] },
              append: index > 0,
              lastChunk: index === command.count - 1,
            }),
          controller.signal,
        );
      }
      if (!controller.signal.aborted) status('completed');
    } finally {
      this.#running.delete(taskId);
      bus.finished();
    }
  }

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    this.#running.get(taskId)?.abort();
    bus.publish({
      kind: 'status-update',
      taskId,
      contextId: '',
      status: { state: 'canceled', timestamp: new Date().toISOString() },
      final: true,
    } satisfies TaskStatusUpdateEvent);
  };
}

const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new TokenExecutor());
const app = express();
app.get('/__rss', (request, response) => response.json(rssReport(wantsGc(request.url))));
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: requestHandler }));
app.use('/a2a', jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));

const server = app.listen(LISTEN.port, LISTEN.host, (error) => {
  if (error) fail(error);
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
