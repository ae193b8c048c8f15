/**
 * The protocol suite's client interface (packages/fastify/test/protocol) over gRPC, A2A 1.0 only:
 * requests and answers in 1.0 ProtoJSON through the raw client, read back into the model with the
 * suite's own 1.0 readers; a failed call as its ErrorInfo reason's A2A code. A ProtoJSON reader
 * takes a missing field as its default, so the defaults the wire leaves out are put back first.
 */

import type { ListTasksParams, MessageSendParams, TaskIdParams, TaskQueryParams } from '@fastify-a2a/core';
import type { ServiceError } from '@grpc/grpc-js';
import {
  type Failure,
  type OpenStream,
  type Outcome,
  PROTO_STATES,
  type ProtocolClient,
  type PushOperation,
  type StreamItem,
  type StreamOutcome,
  type Version,
} from '../../../fastify/test/protocol/client.js';
import * as v1 from '../../../fastify/test/protocol/proto-json-1.0.js';
import type { ListenerBinding } from '../../../fastify/test/protocol/suite.js';
import { serveGrpc } from '../../src/index.js';
import { type RawClient, rawClient, statusDetails } from '../raw-client.js';

type Json = Record<string, unknown>;

/** The A2A code of a failed call, from the ErrorInfo reason of its status details (as the 1.0 REST client reads it). */
function failureOf(error: ServiceError): Failure {
  const { details } = statusDetails(error);
  const reason = (details.find((d) => d['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo') as Json | undefined)
    ?.reason;
  // Refusals of the caller: JSON-RPC's -32600, as the suite's other clients read them.
  if (reason === 'UNAUTHENTICATED' || reason === 'PERMISSION_DENIED') {
    return { ok: false, code: -32600, message: error.details };
  }
  return { ok: false, ...v1.restFailureFrom({ error: { message: error.details, details } }) };
}

/** A Task with the members a ProtoJSON writer may leave out at their defaults put back. */
function taskWithDefaults(wire: unknown): Json {
  const task = { ...(wire as Json) };
  task.contextId ??= '';
  return task;
}

export class GrpcClient implements ProtocolClient {
  readonly binding = 'GRPC';
  readonly version: Version = '1.0';
  readonly #client: RawClient;
  readonly #headers: Record<string, string>;

  constructor(address: string, headers: Readonly<Record<string, string>> = {}) {
    this.#client = rawClient(address);
    this.#headers = { 'a2a-version': '1.0', ...headers };
  }

  async #call<T>(method: string, request: unknown, read: (wire: Json) => T): Promise<Outcome<T>> {
    try {
      return { ok: true, result: read(await this.#client.unary(method, request, this.#headers)) };
    } catch (error) {
      return failureOf(error as ServiceError);
    }
  }

  /** Opens a stream; a call refused before its first message is a failure, not a stream. */
  #stream(method: string, request: unknown): Promise<StreamOutcome> {
    const call = this.#client.stream(method, request, this.#headers);
    const queue: (StreamItem | Failure | undefined)[] = [];
    const waiting: ((value: StreamItem | Failure | undefined) => void)[] = [];
    let ended = false;
    const push = (value: StreamItem | Failure | undefined): void => {
      const resolve = waiting.shift();
      if (resolve !== undefined) resolve(value);
      else queue.push(value);
    };
    call.on('data', (wire: Json) => push({ id: undefined, item: v1.streamItemFrom(streamItemWithDefaults(wire)) }));
    call.on('error', (error: ServiceError) => {
      if (ended) return;
      ended = true;
      // The client's own cancel (close()) ends the stream as a drop does.
      push(error.code === 1 ? undefined : failureOf(error));
    });
    call.on('end', () => {
      if (ended) return;
      ended = true;
      push(undefined);
    });
    const take = (): Promise<StreamItem | Failure | undefined> =>
      queue.length > 0 ? Promise.resolve(queue.shift()) : new Promise((resolve) => waiting.push(resolve));
    return take().then((first) => {
      if (first !== undefined && 'ok' in first) return first;
      let pending: StreamItem | undefined = first;
      let done = first === undefined;
      const stream: OpenStream = {
        comments: 0,
        async next() {
          if (pending !== undefined) {
            const value = pending;
            pending = undefined;
            return value;
          }
          if (done) return undefined;
          const value = await take();
          if (value === undefined) {
            done = true;
            return undefined;
          }
          if ('ok' in value) throw new Error(`the stream failed: ${value.code} ${value.message}`);
          return value;
        },
        async rest() {
          const items: StreamItem[] = [];
          for (let value = await stream.next(); value !== undefined; value = await stream.next()) items.push(value);
          return items;
        },
        close: () => call.cancel(),
      };
      return { ok: true, stream };
    });
  }

  sendMessage(params: MessageSendParams) {
    return this.#call('SendMessage', v1.sendRequestTo(params), (wire) =>
      v1.sendResultFrom(wire.task === undefined ? wire : { task: taskWithDefaults(wire.task) }),
    );
  }

  getTask(params: TaskQueryParams) {
    return this.#call('GetTask', params, (wire) => v1.taskFrom(taskWithDefaults(wire)));
  }

  cancelTask(params: TaskIdParams) {
    return this.#call('CancelTask', params, (wire) => v1.taskFrom(taskWithDefaults(wire)));
  }

  streamMessage(params: MessageSendParams) {
    return this.#stream('SendStreamingMessage', v1.sendRequestTo(params));
  }

  reconnectMessageStream(): Promise<StreamOutcome> {
    throw new Error('gRPC has no Last-Event-ID: the suite defines reconnect scenarios for SSE bindings only');
  }

  resubscribe(params: TaskIdParams, lastEventId?: string) {
    if (lastEventId !== undefined) throw new Error('gRPC has no Last-Event-ID');
    return this.#stream('SubscribeToTask', { id: params.id });
  }

  pushConfig(operation: PushOperation, taskId: string, config?: unknown, configId = 'c-1') {
    const same = (wire: Json) => wire;
    switch (operation) {
      case 'set':
        return this.#call('CreateTaskPushNotificationConfig', { taskId, ...(config as object) }, same);
      case 'get':
        return this.#call('GetTaskPushNotificationConfig', { taskId, id: configId }, same);
      case 'list':
        return this.#call('ListTaskPushNotificationConfigs', { taskId }, (wire) => ({
          configs: [],
          nextPageToken: '',
          ...wire,
        }));
      case 'delete':
        return this.#call('DeleteTaskPushNotificationConfig', { taskId, id: configId }, same);
    }
  }

  getExtendedCard() {
    return this.#call('GetExtendedAgentCard', {}, (wire) => wire);
  }

  listTasks(params: ListTasksParams) {
    const request: Json = { ...params };
    if (params.status !== undefined) request.status = PROTO_STATES[params.status];
    return this.#call('ListTasks', request, (wire) => {
      const { tasks = [], nextPageToken = '', pageSize = 0, totalSize = 0 } = wire;
      return {
        tasks: (tasks as unknown[]).map((t) => v1.taskFrom(taskWithDefaults(t))),
        nextPageToken: nextPageToken as string,
        pageSize: pageSize as number,
        totalSize: totalSize as number,
      };
    });
  }

  close(): void {
    this.#client.close();
  }
}

function streamItemWithDefaults(wire: Json): Json {
  return wire.task === undefined ? wire : { task: taskWithDefaults(wire.task) };
}

/** gRPC as a binding of the protocol suite: serveGrpc on a free port beside the suite's app. */
export function grpcListenerBinding(): ListenerBinding {
  const clients: GrpcClient[] = [];
  return {
    name: 'GRPC',
    async serve(app) {
      const grpc = await serveGrpc(app, { port: 0, drainGraceMs: 100 });
      app.addHook('onClose', async () => {
        for (const client of clients.splice(0)) client.close();
      });
      return grpc.url;
    },
    client(address, version, headers) {
      if (version !== '1.0') throw new Error(`gRPC serves A2A 1.0 only, not ${version}`);
      const client = new GrpcClient(address, headers);
      clients.push(client);
      return client;
    },
  };
}
