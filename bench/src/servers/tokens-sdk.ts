/**
 * The anchor of `npm run bench:tokens`: the official SDK server, @a2a-js/sdk 0.3.14
 * `DefaultRequestHandler` + `InMemoryTaskStore` on express 5, with the same token agent
 * (bench/src/tokens/agent.ts) as fastify-a2a: the Task, `working`, the chunks, `completed`.
 */

import type { AgentCard, Task, TaskState, TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { parseTokenCommand, streamTokens } from '../tokens/agent.js';
import { serveSdkInMemory } from './sdk-express.js';

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
          (index, { part, metadata }) =>
            bus.publish({
              kind: 'artifact-update',
              taskId,
              contextId,
              artifact: { artifactId: 'answer', name: 'answer', parts: [part], ...(metadata ? { metadata } : {}) },
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

serveSdkInMemory(card, new TokenExecutor());
