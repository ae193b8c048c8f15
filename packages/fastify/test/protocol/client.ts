/**
 * One client interface over both bindings and both protocol versions, so that the protocol
 * suite's scenarios are written once: JSON-RPC at `POST <prefix>/a2a` and HTTP+JSON at
 * `<prefix>/v1/…` (0.3) or `<prefix>/…` (1.0), over real HTTP, 1.0 calls carrying
 * `A2A-Version: 1.0`. Answers are normalised: a result in the 0.3 JSON model (`{ ok: true, result }`)
 * or an error with its A2A JSON-RPC code (`{ ok: false, code, message }`; 0.3 HTTP+JSON bodies carry
 * the code as `code`, 1.0 ones as an ErrorInfo reason), and streams as items `{ id, item }` (the SSE
 * id and the stream item).
 *
 * Streams use node:http rather than fetch so that `close()` really drops the connection: an
 * aborted fetch may leave its socket open, and the server would never see the client go.
 */

import { request as httpRequest, type IncomingMessage } from 'node:http';
import type {
  ListTasksParams,
  ListTasksResult,
  Message,
  MessageSendParams,
  StreamResult,
  Task,
  TaskIdParams,
  TaskQueryParams,
  TaskState,
} from '@fastify-a2a/core';
import { JsonRpcErrorCode } from '@fastify-a2a/core';
import { waitFor } from '../helpers.js';
import { sendRequestTo, sendResultFrom, streamItemFrom, taskFrom } from './proto-json.js';
import * as v1 from './proto-json-1.0.js';

export type BindingName = 'JSONRPC' | 'HTTP+JSON';
export type Version = '0.3' | '1.0';

/** How a protocol version is spoken, beside the binding's own envelope. */
interface Dialect {
  readonly version: Version;
  readonly headers: Readonly<Record<string, string>>;
  readonly methods: {
    send: string;
    stream: string;
    get: string;
    cancel: string;
    resubscribe: string;
    push: Readonly<Record<PushOperation, string>>;
    card: string;
  };
  /** JSON-RPC params and REST bodies of a send, and how results read back. */
  sendParams(params: MessageSendParams): unknown;
  sendResult(wire: unknown): Task | Message;
  task(wire: unknown): Task;
  streamItem(wire: unknown): StreamResult;
  /** The REST base under the agent's prefix, and a REST error body's failure. */
  readonly restBase: string;
  restFailure(body: unknown): Failure;
  /** JSON-RPC push-config params. */
  pushParams(operation: PushOperation, taskId: string, config?: unknown, configId?: string): unknown;
  /** A task state as this version's ProtoJSON names it. */
  stateName(state: TaskState): string;
}

/** Each task state as ProtoJSON names it (1.0's spelling; 0.3's REST spells canceled with two Ls). */
export const PROTO_STATES: Readonly<Record<TaskState, string>> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  completed: 'TASK_STATE_COMPLETED',
  canceled: 'TASK_STATE_CANCELED',
  failed: 'TASK_STATE_FAILED',
  rejected: 'TASK_STATE_REJECTED',
  'auth-required': 'TASK_STATE_AUTH_REQUIRED',
  unknown: 'TASK_STATE_UNSPECIFIED',
};

/** ListTasksResponse, its tasks read with `task`. */
function listResultFrom(wire: unknown, task: (wire: unknown) => Task): ListTasksResult {
  const { tasks, nextPageToken, pageSize, totalSize } = wire as Record<string, unknown>;
  if (
    !Array.isArray(tasks) ||
    typeof nextPageToken !== 'string' ||
    typeof pageSize !== 'number' ||
    typeof totalSize !== 'number'
  ) {
    throw new Error(`expected a ListTasksResponse with every member, got ${JSON.stringify(wire)}`);
  }
  return { tasks: tasks.map(task), nextPageToken, pageSize, totalSize };
}

const DIALECT_0_3: Dialect = {
  version: '0.3',
  headers: {},
  methods: {
    send: 'message/send',
    stream: 'message/stream',
    get: 'tasks/get',
    cancel: 'tasks/cancel',
    resubscribe: 'tasks/resubscribe',
    push: {
      set: 'tasks/pushNotificationConfig/set',
      get: 'tasks/pushNotificationConfig/get',
      list: 'tasks/pushNotificationConfig/list',
      delete: 'tasks/pushNotificationConfig/delete',
    },
    card: 'agent/getAuthenticatedExtendedCard',
  },
  // JSON-RPC 0.3 is the model's own shape; these are used by HTTP+JSON only.
  sendParams: sendRequestTo,
  sendResult: sendResultFrom,
  task: (wire) => taskFrom(wire),
  streamItem: streamItemFrom,
  restBase: '/v1',
  restFailure: (body) => failure(body),
  pushParams: (operation, taskId, config, configId = 'c-1') =>
    operation === 'set'
      ? { taskId, pushNotificationConfig: config }
      : operation === 'delete' || operation === 'get'
        ? { id: taskId, pushNotificationConfigId: configId }
        : { id: taskId },
  // The 0.3 proto spells it with two Ls.
  stateName: (state) => (state === 'canceled' ? 'TASK_STATE_CANCELLED' : PROTO_STATES[state]),
};

const DIALECT_1_0: Dialect = {
  version: '1.0',
  headers: { 'a2a-version': '1.0' },
  methods: {
    send: 'SendMessage',
    stream: 'SendStreamingMessage',
    get: 'GetTask',
    cancel: 'CancelTask',
    resubscribe: 'SubscribeToTask',
    push: {
      set: 'CreateTaskPushNotificationConfig',
      get: 'GetTaskPushNotificationConfig',
      list: 'ListTaskPushNotificationConfigs',
      delete: 'DeleteTaskPushNotificationConfig',
    },
    card: 'GetExtendedAgentCard',
  },
  sendParams: v1.sendRequestTo,
  sendResult: v1.sendResultFrom,
  task: (wire) => v1.taskFrom(wire),
  streamItem: v1.streamItemFrom,
  restBase: '',
  restFailure: (body) => ({ ok: false, ...v1.restFailureFrom(body) }),
  pushParams: (operation, taskId, config, configId = 'c-1') =>
    operation === 'set'
      ? { taskId, ...(config as object) }
      : operation === 'list'
        ? { taskId }
        : { taskId, id: configId },
  stateName: (state) => PROTO_STATES[state],
};

const DIALECTS: Readonly<Record<Version, Dialect>> = { '0.3': DIALECT_0_3, '1.0': DIALECT_1_0 };

/** The version's dialect, its headers joined by the caller's own (credentials, say). */
function dialectOf(version: Version, headers: Readonly<Record<string, string>>): Dialect {
  const dialect = DIALECTS[version];
  return { ...dialect, headers: { ...dialect.headers, ...headers } };
}

export type Failure = { ok: false; code: number; message: string };
export type Outcome<T> = { ok: true; result: T } | Failure;

/** The result of a call the test expects to succeed; fails the test with the error otherwise. */
export function ok<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new Error(`expected a result, got error ${outcome.code}: ${outcome.message}`);
  return outcome.result;
}

export interface StreamItem {
  /** The SSE event id: the sequence number of the event in the task's log. */
  id: string | undefined;
  item: StreamResult;
}

export interface OpenStream {
  /** The next item, or undefined once the server ended the stream. */
  next(): Promise<StreamItem | undefined>;
  /** Every item left, until the server ends the stream. */
  rest(): Promise<StreamItem[]>;
  /** SSE comment lines seen so far (heartbeats). */
  readonly comments: number;
  /** Drops the connection, as a client going away does. */
  close(): void;
}

export type StreamOutcome = { ok: true; stream: OpenStream } | Failure;

export type PushOperation = 'set' | 'get' | 'list' | 'delete';

export interface ProtocolClient {
  readonly binding: BindingName | 'GRPC';
  readonly version: Version;
  sendMessage(params: MessageSendParams): Promise<Outcome<Task | Message>>;
  getTask(params: TaskQueryParams): Promise<Outcome<Task>>;
  cancelTask(params: TaskIdParams): Promise<Outcome<Task>>;
  streamMessage(params: MessageSendParams): Promise<StreamOutcome>;
  /**
   * Reconnects to the stream of a message/stream after SSE event `lastEventId`: JSON-RPC sends the
   * same message/stream again with `Last-Event-ID`; HTTP+JSON subscribes to the task with it.
   */
  reconnectMessageStream(params: MessageSendParams, taskId: string, lastEventId: string): Promise<StreamOutcome>;
  /** tasks/resubscribe (JSON-RPC) or `:subscribe` (HTTP+JSON), after `lastEventId` when given. */
  resubscribe(params: TaskIdParams, lastEventId?: string): Promise<StreamOutcome>;
  /** A push notification config call on task `taskId`; `config` is the config to set. */
  /** A push config operation; get and delete address `configId` (default `c-1`). The result is the wire JSON. */
  pushConfig(operation: PushOperation, taskId: string, config?: unknown, configId?: string): Promise<Outcome<unknown>>;
  getExtendedCard(): Promise<Outcome<unknown>>;
  /** ListTasks; undefined where the binding and version have none (0.3's JSON-RPC). */
  listTasks(params: ListTasksParams): Promise<Outcome<ListTasksResult>> | undefined;
}

/** Polls tasks/get until the task reaches `state`, and returns it then. */
export function waitForState(client: ProtocolClient, id: string, state: TaskState, timeoutMs = 5000): Promise<Task> {
  return waitFor(
    async () => {
      const task = ok(await client.getTask({ id }));
      return task.status.state === state ? task : undefined;
    },
    timeoutMs,
    `task ${id} to be ${state}`,
  );
}

/**
 * As waitForState, for the task of a blocking send: the server may write that task only with the
 * agent's first updates (A2ARuntimeOptions.createTaskBeforeRun), after the agent already knows its
 * id, so "not found" (-32001) means "not written yet" until it reaches `state`. Any other error fails.
 */
export function waitForBlockingSendState(
  client: ProtocolClient,
  id: string,
  state: TaskState,
  timeoutMs = 5000,
): Promise<Task> {
  return waitFor(
    async () => {
      const outcome = await client.getTask({ id });
      if (!outcome.ok && outcome.code === JsonRpcErrorCode.TaskNotFound) return undefined;
      const task = ok(outcome);
      return task.status.state === state ? task : undefined;
    },
    timeoutMs,
    `task ${id} to be written and ${state}`,
  );
}

// ---- HTTP ----

interface RawResponse {
  status: number;
  contentType: string;
  response: IncomingMessage;
  close(): void;
}

/** Sends one request on a connection of its own (`agent: false`), which closes with it. */
function send(url: string, method: string, body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method,
        agent: false,
        headers: {
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
      },
      (response) =>
        resolve({
          status: response.statusCode ?? 0,
          contentType: String(response.headers['content-type'] ?? ''),
          response,
          close: () => request.destroy(),
        }),
    );
    request.once('error', reject);
    request.end(payload);
  });
}

async function readAll(response: IncomingMessage): Promise<string> {
  let text = '';
  response.setEncoding('utf8');
  for await (const chunk of response) text += chunk;
  return text;
}

async function json(raw: RawResponse): Promise<unknown> {
  const text = await readAll(raw.response);
  // JSON-RPC and 0.3's HTTP+JSON answer application/json; 1.0's HTTP+JSON application/a2a+json (§11.1).
  if (!/^application\/(a2a\+)?json/.test(raw.contentType)) {
    throw new Error(`expected JSON, got HTTP ${raw.status} ${raw.contentType}: ${text}`);
  }
  return JSON.parse(text);
}

interface SseEvent {
  id: string | undefined;
  event: string | undefined;
  data: unknown;
}

/** Reads `text/event-stream` events as they arrive, counting comment lines. */
class SseReader {
  comments = 0;
  readonly #events: AsyncGenerator<SseEvent>;

  constructor(response: IncomingMessage) {
    this.#events = this.#read(response);
  }

  async next(): Promise<SseEvent | undefined> {
    const { value, done } = await this.#events.next();
    return done ? undefined : value;
  }

  async *#read(response: IncomingMessage): AsyncGenerator<SseEvent> {
    response.setEncoding('utf8');
    let buffer = '';
    try {
      for await (const chunk of response) {
        buffer += chunk as string;
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = this.#parse(block);
          if (event !== undefined) yield event;
        }
      }
    } catch (error) {
      // The connection was dropped: by close() here, or by the server. The stream just ends.
      if ((error as { code?: string }).code !== 'ECONNRESET' && !response.destroyed) throw error;
    }
  }

  #parse(block: string): SseEvent | undefined {
    let id: string | undefined;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) this.comments++;
      else if (line.startsWith('id:')) id = line.slice(3).trim();
      else if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    return data.length === 0 ? undefined : { id, event, data: JSON.parse(data.join('\n')) };
  }
}

/**
 * A stream over an SSE response. `item` turns each event's data into a stream item, or returns a
 * failure for an event that reports one.
 */
async function openStream(raw: RawResponse, item: (event: SseEvent) => StreamResult | Failure): Promise<StreamOutcome> {
  const reader = new SseReader(raw.response);
  // A streaming call may be refused with one event carrying the error (JSON-RPC): read the first
  // event before answering, so a refusal is an outcome and not a stream.
  const first = await reader.next();
  const firstItem = first === undefined ? undefined : item(first);
  if (firstItem !== undefined && 'ok' in firstItem) {
    raw.close();
    return firstItem;
  }
  let pending: StreamItem | undefined =
    first === undefined ? undefined : { id: first.id, item: firstItem as StreamResult };
  const stream: OpenStream = {
    get comments() {
      return reader.comments;
    },
    async next() {
      if (pending !== undefined) {
        const value = pending;
        pending = undefined;
        return value;
      }
      const event = await reader.next();
      if (event === undefined) return undefined;
      const value = item(event);
      if ('ok' in value) throw new Error(`the stream failed: ${value.code} ${value.message}`);
      return { id: event.id, item: value };
    },
    async rest() {
      const items: StreamItem[] = [];
      for (let value = await stream.next(); value !== undefined; value = await stream.next()) items.push(value);
      return items;
    },
    close: raw.close,
  };
  return { ok: true, stream };
}

function failure(body: unknown): Failure {
  const { code, message } = (body ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code !== 'number' || typeof message !== 'string') {
    throw new Error(`expected an error body with a numeric code and a message, got ${JSON.stringify(body)}`);
  }
  return { ok: false, code, message };
}

// ---- JSON-RPC ----

let requestIds = 0;

export class JsonRpcClient implements ProtocolClient {
  readonly binding = 'JSONRPC';
  readonly version: Version;
  readonly #url: string;
  readonly #dialect: Dialect;

  /** `base` is the agent's base URL including its prefix; `headers` go with every request (credentials, say). */
  constructor(base: string, version: Version = '0.3', headers: Readonly<Record<string, string>> = {}) {
    this.#url = `${base}/a2a`;
    this.version = version;
    this.#dialect = dialectOf(version, headers);
  }

  /** The result as the 0.3 model: 0.3 JSON-RPC speaks it; 1.0 answers are read back with `read`. */
  #read<T>(outcome: Outcome<unknown>, read: (wire: unknown) => T): Outcome<T> {
    if (!outcome.ok) return outcome;
    return { ok: true, result: this.version === '0.3' ? (outcome.result as T) : read(outcome.result) };
  }

  async #call<T>(method: string, params: unknown, read: (wire: unknown) => T = (w) => w as T): Promise<Outcome<T>> {
    const id = `req-${++requestIds}`;
    const raw = await send(this.#url, 'POST', { jsonrpc: '2.0', id, method, params }, this.#dialect.headers);
    if (raw.status !== 200) throw new Error(`JSON-RPC answers HTTP 200, got ${raw.status}`);
    return this.#read(this.#response<unknown>(await json(raw), id), read);
  }

  async #stream(method: string, params: unknown, headers: Record<string, string> = {}): Promise<StreamOutcome> {
    const id = `req-${++requestIds}`;
    const raw = await send(
      this.#url,
      'POST',
      { jsonrpc: '2.0', id, method, params },
      { accept: 'text/event-stream', ...this.#dialect.headers, ...headers },
    );
    // Invalid params are refused before any stream starts, as a plain JSON-RPC answer.
    if (!raw.contentType.startsWith('text/event-stream')) return this.#response(await json(raw), id) as Failure;
    // §7.2: each event is a JSON-RPC response to the streaming request, with its id.
    return openStream(raw, (event) => {
      const outcome = this.#read(this.#response<unknown>(event.data, id), this.#dialect.streamItem);
      return outcome.ok ? outcome.result : outcome;
    });
  }

  #sendParams(params: MessageSendParams): unknown {
    return this.version === '0.3' ? params : this.#dialect.sendParams(params);
  }

  /** A JSON-RPC response to request `id`, checked as a client must (§6.11). */
  #response<T>(body: unknown, id: string): Outcome<T> {
    const response = body as { jsonrpc?: unknown; id?: unknown; result?: T; error?: unknown };
    if (response.jsonrpc !== '2.0' || response.id !== id) {
      throw new Error(`expected a JSON-RPC 2.0 response to request ${id}, got ${JSON.stringify(body)}`);
    }
    if ((response.error === undefined) === (response.result === undefined)) {
      throw new Error(`a JSON-RPC response has exactly one of result and error: ${JSON.stringify(body)}`);
    }
    return response.error !== undefined ? failure(response.error) : { ok: true, result: response.result as T };
  }

  sendMessage(params: MessageSendParams) {
    return this.#call(this.#dialect.methods.send, this.#sendParams(params), this.#dialect.sendResult);
  }

  getTask(params: TaskQueryParams) {
    return this.#call(this.#dialect.methods.get, params, this.#dialect.task);
  }

  cancelTask(params: TaskIdParams) {
    return this.#call(this.#dialect.methods.cancel, params, this.#dialect.task);
  }

  streamMessage(params: MessageSendParams) {
    return this.#stream(this.#dialect.methods.stream, this.#sendParams(params));
  }

  reconnectMessageStream(params: MessageSendParams, _taskId: string, lastEventId: string) {
    return this.#stream(this.#dialect.methods.stream, this.#sendParams(params), { 'last-event-id': lastEventId });
  }

  resubscribe(params: TaskIdParams, lastEventId?: string) {
    return this.#stream(
      this.#dialect.methods.resubscribe,
      params,
      lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
    );
  }

  pushConfig(operation: PushOperation, taskId: string, config?: unknown, configId?: string) {
    return this.#call(
      this.#dialect.methods.push[operation],
      this.#dialect.pushParams(operation, taskId, config, configId),
    );
  }

  getExtendedCard() {
    return this.#call(this.#dialect.methods.card, undefined);
  }

  listTasks(params: ListTasksParams) {
    if (this.version === '0.3') return undefined; // §7: 0.3 lists tasks over HTTP+JSON only
    const wire: Record<string, unknown> = { ...params };
    if (params.status !== undefined) wire.status = this.#dialect.stateName(params.status);
    return this.#call('ListTasks', wire, (result) => listResultFrom(result, this.#dialect.task));
  }
}

// ---- HTTP+JSON ----

export class RestClient implements ProtocolClient {
  readonly binding = 'HTTP+JSON';
  readonly version: Version;
  readonly #base: string;
  readonly #dialect: Dialect;

  /**
   * `base` is the agent's base URL including its prefix: routes are `<base>/v1/…` (0.3) or `<base>/…`
   * (1.0). `headers` go with every request (credentials, say).
   */
  constructor(base: string, version: Version = '0.3', headers: Readonly<Record<string, string>> = {}) {
    this.version = version;
    this.#dialect = dialectOf(version, headers);
    this.#base = `${base}${this.#dialect.restBase}`;
  }

  async #call<T>(method: string, path: string, body: unknown, read: (wire: unknown) => T): Promise<Outcome<T>> {
    // Like @a2a-js/sdk, a bodiless POST still says its (absent) body would be JSON.
    const headers: Record<string, string> = {
      ...this.#dialect.headers,
      ...(body === undefined && method === 'POST' ? { 'content-type': 'application/json' } : {}),
    };
    const raw = await send(`${this.#base}${path}`, method, body, headers);
    const wire = await json(raw);
    if (raw.status >= 400) return this.#dialect.restFailure(wire);
    if (raw.status !== 200) throw new Error(`expected HTTP 200 or an error status, got ${raw.status}`);
    return { ok: true, result: read(wire) };
  }

  async #stream(path: string, body: unknown, headers: Record<string, string> = {}): Promise<StreamOutcome> {
    const raw = await send(`${this.#base}${path}`, 'POST', body, {
      accept: 'text/event-stream',
      ...(body === undefined ? { 'content-type': 'application/json' } : {}),
      ...this.#dialect.headers,
      ...headers,
    });
    // A refused stream is an HTTP error status with the error body, before any event.
    if (raw.status !== 200) return this.#dialect.restFailure(await json(raw));
    if (!raw.contentType.startsWith('text/event-stream')) {
      throw new Error(`expected text/event-stream, got ${raw.contentType}: ${await readAll(raw.response)}`);
    }
    return openStream(raw, (event) =>
      event.event === 'error' ? this.#dialect.restFailure(event.data) : this.#dialect.streamItem(event.data),
    );
  }

  sendMessage(params: MessageSendParams) {
    return this.#call('POST', '/message:send', this.#dialect.sendParams(params), this.#dialect.sendResult);
  }

  getTask(params: TaskQueryParams) {
    const query = params.historyLength === undefined ? '' : `?historyLength=${params.historyLength}`;
    return this.#call('GET', `/tasks/${encodeURIComponent(params.id)}${query}`, undefined, this.#dialect.task);
  }

  cancelTask(params: TaskIdParams) {
    return this.#call('POST', `/tasks/${encodeURIComponent(params.id)}:cancel`, undefined, this.#dialect.task);
  }

  streamMessage(params: MessageSendParams) {
    return this.#stream('/message:stream', this.#dialect.sendParams(params));
  }

  reconnectMessageStream(_params: MessageSendParams, taskId: string, lastEventId: string) {
    return this.#stream(`/tasks/${encodeURIComponent(taskId)}:subscribe`, undefined, { 'last-event-id': lastEventId });
  }

  resubscribe(params: TaskIdParams, lastEventId?: string) {
    return this.#stream(
      `/tasks/${encodeURIComponent(params.id)}:subscribe`,
      undefined,
      lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
    );
  }

  pushConfig(operation: PushOperation, taskId: string, config?: unknown, configId = 'c-1') {
    const base = `/tasks/${encodeURIComponent(taskId)}/pushNotificationConfigs`;
    const same = (wire: unknown) => wire;
    switch (operation) {
      case 'set': {
        const body = this.version === '0.3' ? { pushNotificationConfig: config } : config;
        return this.#call('POST', base, config === undefined ? {} : body, same);
      }
      case 'get':
        return this.#call('GET', `${base}/${encodeURIComponent(configId)}`, undefined, same);
      case 'list':
        return this.#call('GET', base, undefined, same);
      case 'delete':
        return this.#call('DELETE', `${base}/${encodeURIComponent(configId)}`, undefined, same);
    }
  }

  getExtendedCard() {
    return this.#call('GET', this.version === '0.3' ? '/card' : '/extendedAgentCard', undefined, (wire) => wire);
  }

  listTasks(params: ListTasksParams) {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) {
      if (value === undefined) continue;
      query.set(name, name === 'status' ? this.#dialect.stateName(value as TaskState) : String(value));
    }
    const search = query.size === 0 ? '' : `?${query}`;
    return this.#call('GET', `/tasks${search}`, undefined, (wire) => listResultFrom(wire, this.#dialect.task));
  }
}

/** The client of `binding` and `version` for the agent at `base` (its URL including the prefix). */
export function protocolClient(
  binding: BindingName,
  base: string,
  version: Version = '0.3',
  headers: Readonly<Record<string, string>> = {},
): ProtocolClient {
  return binding === 'JSONRPC' ? new JsonRpcClient(base, version, headers) : new RestClient(base, version, headers);
}
