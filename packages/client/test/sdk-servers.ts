/**
 * The official SDK servers, in this process on real ports, for the interop tests: @a2a-js/sdk
 * 0.3.14 (JSON-RPC and HTTP+JSON) and 1.3.0 (JSON-RPC and HTTP+JSON), each `DefaultRequestHandler`
 * + `InMemoryTaskStore` on express 5, with an executor that answers like ours:
 * - `sleep:<ms>`: working, then completed after that long (a cancel ends it as canceled);
 * - anything else: one artifact chunk per word, then completed.
 */

import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { AgentCard as Card03, TaskState as State03, TaskStatusUpdateEvent as Status03 } from '@a2a-js/sdk';
import {
  type AgentExecutor as Executor03,
  DefaultRequestHandler as Handler03,
  InMemoryTaskStore as Store03,
} from '@a2a-js/sdk/server';
import {
  agentCardHandler as cardHandler03,
  jsonRpcHandler as jsonRpc03,
  restHandler as rest03,
  UserBuilder as Users03,
} from '@a2a-js/sdk/server/express';
import { type AgentCard as Card1, Role, TaskState } from '@a2a-js/sdk-1';
import {
  AgentEvent,
  type AgentExecutor as Executor1,
  DefaultRequestHandler as Handler1,
  InMemoryTaskStore as Store1,
} from '@a2a-js/sdk-1/server';
import {
  agentCardHandler as cardHandler1,
  jsonRpcHandler as jsonRpc1,
  restHandler as rest1,
  UserBuilder as Users1,
} from '@a2a-js/sdk-1/server/express';

// express ships no type declarations (and @types/express is not a dependency): type what we use.
interface ExpressApp {
  use(path: string, handler: unknown): void;
  listen(port: number, host: string, callback: (error?: Error) => void): Server;
}
const express = createRequire(import.meta.url)('express') as () => ExpressApp;

export interface SdkServer {
  url: string;
  close(): Promise<void>;
}

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

async function listen(mount: (app: ExpressApp, base: string) => void): Promise<SdkServer> {
  const app = express();
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', (error) => (error ? reject(error) : resolve(s)));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  mount(app, url);
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ---- 0.3.14 ----

class Executor03Impl implements Executor03 {
  readonly #running = new Map<string, AbortController>();

  async execute(
    context: Parameters<Executor03['execute']>[0],
    bus: Parameters<Executor03['execute']>[1],
  ): Promise<void> {
    const { taskId, contextId, userMessage, task } = context;
    const controller = new AbortController();
    this.#running.set(taskId, controller);
    const status = (state: State03): Status03 => ({
      kind: 'status-update',
      taskId,
      contextId,
      status: { state, timestamp: new Date().toISOString() },
      final: state === 'completed' || state === 'canceled' || state === 'failed',
    });
    try {
      if (!task) {
        bus.publish({ kind: 'task', id: taskId, contextId, status: { state: 'submitted' }, history: [userMessage] });
      }
      bus.publish(status('working'));
      const text = userMessage.parts
        .map((part) => (part.kind === 'text' ? part.text : ''))
        .join('')
        .trim();
      const sleepMatch = /^sleep:(\d+)$/.exec(text);
      if (sleepMatch) {
        await sleep(Number(sleepMatch[1]), controller.signal);
        if (controller.signal.aborted) return;
        bus.publish(status('completed'));
        return;
      }
      const words = text.split(/\s+/).filter((w) => w !== '');
      for (let i = 0; i < words.length; i++) {
        bus.publish({
          kind: 'artifact-update',
          taskId,
          contextId,
          artifact: { artifactId: 'echo', parts: [{ kind: 'text', text: words[i] as string }] },
          append: i > 0,
          lastChunk: i === words.length - 1,
        });
      }
      bus.publish(status('completed'));
    } finally {
      this.#running.delete(taskId);
      bus.finished();
    }
  }

  cancelTask = async (taskId: string, bus: Parameters<Executor03['execute']>[1]): Promise<void> => {
    this.#running.get(taskId)?.abort();
    bus.publish({
      kind: 'status-update',
      taskId,
      contextId: '',
      status: { state: 'canceled', timestamp: new Date().toISOString() },
      final: true,
    });
    bus.finished();
  };
}

export function startSdk03(): Promise<SdkServer> {
  return listen((app, base) => {
    const card: Card03 = {
      name: 'SDK 0.3.14 agent',
      description: 'The official 0.3 SDK server.',
      url: `${base}/a2a`,
      version: '1.0.0',
      protocolVersion: '0.3.0',
      preferredTransport: 'JSONRPC',
      additionalInterfaces: [
        { url: `${base}/a2a`, transport: 'JSONRPC' },
        { url: `${base}/rest`, transport: 'HTTP+JSON' },
      ],
      capabilities: { streaming: true, pushNotifications: false },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [],
    };
    const requestHandler = new Handler03(card, new Store03(), new Executor03Impl());
    app.use('/.well-known/agent-card.json', cardHandler03({ agentCardProvider: requestHandler }));
    app.use('/a2a', jsonRpc03({ requestHandler, userBuilder: Users03.noAuthentication }));
    app.use('/rest', rest03({ requestHandler, userBuilder: Users03.noAuthentication }));
  });
}

// ---- 1.3.0 ----

const textPart = (value: string) => ({
  content: { $case: 'text' as const, value },
  metadata: undefined,
  filename: '',
  mediaType: '',
});

class Executor1Impl implements Executor1 {
  readonly #running = new Map<string, AbortController>();

  async execute(context: Parameters<Executor1['execute']>[0], bus: Parameters<Executor1['execute']>[1]): Promise<void> {
    const { taskId, contextId, userMessage, task } = context;
    const controller = new AbortController();
    this.#running.set(taskId, controller);
    const status = (state: TaskState) =>
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: { state, timestamp: new Date().toISOString(), message: undefined },
          metadata: undefined,
        }),
      );
    try {
      bus.publish(
        AgentEvent.task(
          task ?? {
            id: taskId,
            contextId,
            status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined },
            artifacts: [],
            history: [userMessage],
            metadata: undefined,
          },
        ),
      );
      status(TaskState.TASK_STATE_WORKING);
      const text = userMessage.parts
        .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
        .join('')
        .trim();
      const sleepMatch = /^sleep:(\d+)$/.exec(text);
      if (sleepMatch) {
        await sleep(Number(sleepMatch[1]), controller.signal);
        if (controller.signal.aborted) return;
        status(TaskState.TASK_STATE_COMPLETED);
        return;
      }
      const words = text.split(/\s+/).filter((w) => w !== '');
      for (let i = 0; i < words.length; i++) {
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact: {
              artifactId: 'echo',
              name: 'echo',
              description: '',
              parts: [textPart(words[i] as string)],
              metadata: undefined,
              extensions: [],
            },
            append: i > 0,
            lastChunk: i === words.length - 1,
            metadata: undefined,
          }),
        );
      }
      status(TaskState.TASK_STATE_COMPLETED);
    } finally {
      this.#running.delete(taskId);
      bus.finished();
    }
  }

  cancelTask = async (taskId: string, bus: Parameters<Executor1['execute']>[1]): Promise<void> => {
    this.#running.get(taskId)?.abort();
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: '',
        status: { state: TaskState.TASK_STATE_CANCELED, timestamp: new Date().toISOString(), message: undefined },
        metadata: undefined,
      }),
    );
    bus.finished();
  };
}

export function startSdk13(): Promise<SdkServer> {
  return listen((app, base) => {
    const card: Card1 = {
      name: 'SDK 1.3.0 agent',
      description: 'The official 1.0 SDK server.',
      supportedInterfaces: [
        { url: `${base}/a2a`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
        { url: `${base}/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
      ],
      provider: undefined,
      version: '1.0.0',
      capabilities: { streaming: true, pushNotifications: false, extensions: [] },
      securitySchemes: {},
      securityRequirements: [],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [],
      signatures: [],
    } as unknown as Card1;
    const requestHandler = new Handler1(card, new Store1(), new Executor1Impl());
    app.use('/.well-known/agent-card.json', cardHandler1({ agentCardProvider: requestHandler }));
    app.use('/a2a', jsonRpc1({ requestHandler, userBuilder: Users1.noAuthentication }));
    app.use('/rest', rest1({ requestHandler, userBuilder: Users1.noAuthentication }));
  });
}

export { Role, randomUUID };
