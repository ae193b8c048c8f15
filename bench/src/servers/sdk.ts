/**
 * The comparison point: the official SDK server, @a2a-js/sdk 0.3.14 `DefaultRequestHandler` +
 * `InMemoryTaskStore` on express 5 (`jsonRpcHandler` from `@a2a-js/sdk/server/express`), with an
 * executor that emits the same events as the demo echo agent on fastify-a2a:
 * - the Task, a `working` status (fastify-a2a's runtime writes that one before the agent runs);
 * - `sleep:<ms>`: a `working` status with a message, a wait, `completed` with a message;
 * - anything else: one artifact chunk per word (and per whitespace run), then `completed`.
 */

import { randomUUID } from 'node:crypto';
import type { AgentCard, Message, Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { serveSdkInMemory } from './sdk-express.js';

const card: AgentCard = {
  name: 'SDK echo agent',
  description: 'Echoes your words back as a streamed artifact (bench comparison point).',
  url: 'http://127.0.0.1/a2a',
  version: '0.1.0',
  protocolVersion: '0.3.0',
  preferredTransport: 'JSONRPC',
  capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'Echo', description: 'Streams the message back word by word.', tags: ['demo'] }],
};

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

class EchoExecutor implements AgentExecutor {
  readonly #running = new Map<string, AbortController>();

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage, task } = context;
    const controller = new AbortController();
    this.#running.set(taskId, controller);
    const timestamp = () => new Date().toISOString();
    const agentMessage = (text: string): Message => ({
      kind: 'message',
      messageId: randomUUID(),
      role: 'agent',
      taskId,
      contextId,
      parts: [{ kind: 'text', text }],
    });
    const status = (state: TaskState, text?: string): void => {
      const event: TaskStatusUpdateEvent = {
        kind: 'status-update',
        taskId,
        contextId,
        status: { state, timestamp: timestamp(), ...(text === undefined ? {} : { message: agentMessage(text) }) },
        final: state === 'completed' || state === 'canceled' || state === 'failed',
      };
      bus.publish(event);
    };
    try {
      if (!task) {
        const initial: Task = {
          kind: 'task',
          id: taskId,
          contextId,
          status: { state: 'submitted', timestamp: timestamp() },
          history: [userMessage],
        };
        bus.publish(initial);
      }
      status('working');
      const text = userMessage.parts
        .map((part) => (part.kind === 'text' ? part.text : ''))
        .join('')
        .trim();
      const sleepMatch = /^sleep:(\d+)$/.exec(text);
      if (sleepMatch) {
        const ms = Number(sleepMatch[1]);
        status('working', `Sleeping for ${ms} ms.`);
        await sleep(ms, controller.signal);
        if (controller.signal.aborted) return;
        status('completed', `Slept for ${ms} ms.`);
        return;
      }
      const words = text.split(/(\s+)/).filter((w) => w !== '');
      const artifactId = `echo-${taskId}`;
      for (let i = 0; i < words.length; i++) {
        const event: TaskArtifactUpdateEvent = {
          kind: 'artifact-update',
          taskId,
          contextId,
          artifact: { artifactId, name: 'echo', parts: [{ kind: 'text', text: words[i] as string }] },
          append: i > 0,
          lastChunk: i === words.length - 1,
        };
        bus.publish(event);
      }
      status('completed');
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

serveSdkInMemory(card, new EchoExecutor());
