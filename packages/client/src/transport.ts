/**
 * The two bindings, framing only (as on the server side): the codec of the endpoint's version turns
 * the model's parameters into wire JSON and the wire's results back, and a binding carries them —
 * JSON-RPC 2.0 (0.3 §7, 1.0 §9) or HTTP+JSON (1.0 §11, routes from core's `rest1_0` table) — and
 * reads its error format into one A2AClientError.
 */

import {
  type CallerCodec,
  json0_3Caller,
  jsonRpc0_3,
  METHOD_NAMES_1_0,
  type OperationName,
  type OperationParams,
  type OperationResult,
  protoJson0_3Caller,
  protoJson1_0Caller,
  type RestRoute,
  rest0_3,
  rest1_0,
  type StreamResult,
} from '@fastify-a2a/core/protocol';
import type { AgentEndpoint, Json } from './card.js';
import { A2AClientError, codeForJsonRpc, codeForReason } from './errors.js';
import type { CallScope, HttpClient, HttpResponse } from './http.js';
import { readSse } from './sse.js';

export type UnaryOperation = Exclude<OperationName, 'sendStreamingMessage' | 'subscribeToTask'>;
export type StreamOperation = 'sendStreamingMessage' | 'subscribeToTask';

/** One stream item and the SSE id of the event that carried it (undefined when the server sends none). */
export interface StreamItem {
  id: string | undefined;
  result: StreamResult;
}

export interface Transport {
  readonly endpoint: AgentEndpoint;
  call<K extends UnaryOperation>(
    operation: K,
    params: OperationParams<K>,
    scope: CallScope,
  ): Promise<OperationResult<K>>;
  /** Opens a stream; `lastEventId` resumes after that event (SSE `Last-Event-ID`). */
  stream(
    operation: StreamOperation,
    params: OperationParams<StreamOperation>,
    scope: CallScope,
    lastEventId?: string,
  ): Promise<{ items: AsyncGenerator<StreamItem>; close(): void }>;
}

export interface TransportOptions {
  http: HttpClient;
  maxEventBytes?: number | undefined;
}

const METHODS_0_3 = new Map<OperationName, string>([...jsonRpc0_3.methods].map(([method, op]) => [op, method]));

function parseJson(response: HttpResponse, what: string): unknown {
  try {
    return JSON.parse(response.text);
  } catch {
    if (response.status === 502 || response.status === 503 || response.status === 504) {
      // What a proxy or balancer says when no agent answers it, after every retry.
      throw new A2AClientError(
        'unreachable',
        `${what} answered HTTP ${response.status} on every try: the agent is not reachable.`,
        {
          status: response.status,
        },
      );
    }
    const type = response.headers.get('content-type')?.split(';')[0] ?? 'no content type';
    const start = response.text.trimStart().slice(0, 15).toLowerCase();
    const kind =
      start.startsWith('<!doctype') || start.startsWith('<html') ? 'an HTML page' : `${type} that is not JSON`;
    throw new A2AClientError(
      'invalid-response',
      `${what} answered HTTP ${response.status} with ${kind}: is this an A2A agent?`,
      {
        status: response.status,
      },
    );
  }
}

function authError(status: number, message: string | undefined): A2AClientError {
  return new A2AClientError(
    'auth',
    `The agent refused the credentials (HTTP ${status}${message ? `: ${message}` : ''}); pass --bearer or --api-key, or check them.`,
    { status, a2aCode: status === 401 ? 'UNAUTHENTICATED' : 'PERMISSION_DENIED' },
  );
}

/** A JSON-RPC error object as an A2AClientError. */
function jsonRpcError(error: unknown, status: number): A2AClientError {
  const object = (error ?? {}) as Json;
  const message = typeof object.message === 'string' ? object.message : 'The agent answered with an error.';
  // 1.0 §9.5 errors also carry google.rpc.ErrorInfo in `data`: its reason is the more precise name.
  const details = Array.isArray(object.data) ? (object.data as Json[]) : [];
  const reason = details.find((d) => typeof d?.reason === 'string')?.reason;
  const code = codeForReason(reason) ?? codeForJsonRpc(object.code);
  if (status === 401 || status === 403) return authError(status, message);
  return new A2AClientError('protocol', message, {
    a2aCode: code,
    wireCode: object.code as number,
    status,
    data: object.data,
  });
}

/** A 1.0 HTTP+JSON error (google.rpc.Status, §11.6) or a 0.3-style body as an A2AClientError. */
function restError(body: unknown, status: number): A2AClientError {
  if (status === 401 || status === 403) {
    const message = ((body as Json)?.error as Json)?.message ?? (body as Json)?.message;
    return authError(status, typeof message === 'string' ? message : undefined);
  }
  const outer = (body ?? {}) as Json;
  const error = (typeof outer.error === 'object' && outer.error !== null ? outer.error : outer) as Json;
  const details = Array.isArray(error.details) ? (error.details as Json[]) : [];
  const reason = details.find((d) => typeof d?.reason === 'string')?.reason;
  const code = codeForReason(reason) ?? codeForJsonRpc(error.code) ?? codeForReason(error.status);
  const message = typeof error.message === 'string' ? error.message : `The agent answered HTTP ${status}.`;
  return new A2AClientError('protocol', message, {
    a2aCode: code ?? (status === 404 ? 'TASK_NOT_FOUND' : undefined),
    wireCode: (error.status as string) ?? (error.code as number) ?? status,
    status,
    data: details.length > 0 ? details : error.data,
  });
}

function unsupported(operation: string, endpoint: AgentEndpoint): A2AClientError {
  return new A2AClientError(
    'protocol',
    `${operation} is not part of A2A ${endpoint.version} over ${endpoint.binding}; use an agent interface of a later version.`,
    { a2aCode: 'UNSUPPORTED_OPERATION' },
  );
}

const looksLikeJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

let nextRequestId = 1;

class JsonRpcTransport implements Transport {
  readonly #codec: CallerCodec;
  readonly #http: HttpClient;
  readonly #maxEventBytes: number | undefined;

  constructor(
    readonly endpoint: AgentEndpoint,
    options: TransportOptions,
  ) {
    this.#codec = endpoint.version === '1.0' ? protoJson1_0Caller : json0_3Caller;
    this.#http = options.http;
    this.#maxEventBytes = options.maxEventBytes;
  }

  #method(operation: OperationName): string {
    const method = this.endpoint.version === '1.0' ? METHOD_NAMES_1_0[operation] : METHODS_0_3.get(operation);
    if (method === undefined) throw unsupported(operation, this.endpoint);
    return method;
  }

  #body(operation: OperationName, params: unknown): string {
    const wire = this.#codec.encodeParams(operation, params as never) as Json;
    if (this.endpoint.tenant !== undefined) wire.tenant = this.endpoint.tenant;
    return JSON.stringify({ jsonrpc: '2.0', id: nextRequestId++, method: this.#method(operation), params: wire });
  }

  #headers(accept: string, lastEventId?: string): Record<string, string> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept,
      // 1.0 §3.6.1: the client MUST say its version; an empty one means 0.3 (§3.6.2).
      'a2a-version': this.endpoint.version,
    };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    return headers;
  }

  async call<K extends UnaryOperation>(operation: K, params: OperationParams<K>, scope: CallScope) {
    const body = this.#body(operation, params);
    const response = await this.#http.send(
      { method: 'POST', url: this.endpoint.url, headers: this.#headers('application/json'), body },
      scope,
    );
    if ((response.status === 401 || response.status === 403) && response.text === '')
      throw authError(response.status, undefined);
    const json = parseJson(response, this.endpoint.url) as Json;
    if (json === null || typeof json !== 'object' || json.jsonrpc !== '2.0') {
      throw new A2AClientError(
        'invalid-response',
        `${this.endpoint.url} answered HTTP ${response.status} with JSON that is not JSON-RPC 2.0.`,
        {
          status: response.status,
        },
      );
    }
    if (json.error !== undefined) throw jsonRpcError(json.error, response.status);
    return this.#codec.decodeResult(operation, json.result) as OperationResult<K>;
  }

  async stream(
    operation: StreamOperation,
    params: OperationParams<StreamOperation>,
    scope: CallScope,
    lastEventId?: string,
  ) {
    const body = this.#body(operation, params);
    const response = await this.#http.send(
      {
        method: 'POST',
        url: this.endpoint.url,
        headers: this.#headers('text/event-stream', lastEventId),
        body,
        stream: true,
      },
      scope,
    );
    if (response.body === undefined) {
      // Not a stream: an error answered as plain JSON-RPC (1.0), or not A2A at all.
      if (response.status === 401 || response.status === 403) throw authError(response.status, undefined);
      const json = parseJson(response, this.endpoint.url) as Json;
      if (json?.error !== undefined) throw jsonRpcError(json.error, response.status);
      throw new A2AClientError(
        'invalid-response',
        `${this.endpoint.url} answered a stream request with HTTP ${response.status} and no stream.`,
      );
    }
    const codec = this.#codec;
    const maxEventBytes = this.#maxEventBytes;
    const url = this.endpoint.url;
    async function* items(): AsyncGenerator<StreamItem> {
      for await (const event of readSse(response.body as AsyncIterable<Uint8Array>, maxEventBytes)) {
        let json: Json;
        try {
          json = JSON.parse(event.data) as Json;
        } catch {
          throw new A2AClientError('invalid-response', `${url} sent a stream event that is not JSON.`);
        }
        if (json.error !== undefined) throw jsonRpcError(json.error, 200);
        yield { id: event.id, result: codec.decodeStreamItem(json.result) };
      }
    }
    return { items: items(), close: response.close };
  }
}

/** A version's routes from core's tables, by operation: the first of each (POST for subscribe), no tenant prefix. */
const routesOf = (routes: readonly RestRoute[]) =>
  new Map(
    routes
      .filter((route) => !route.path.startsWith('/{tenant}'))
      .reverse()
      .map((route) => [route.operation, route]),
  );
const ROUTES_1_0 = routesOf(rest1_0.routes);
const ROUTES_0_3 = routesOf(rest0_3.routes);

class RestTransport implements Transport {
  readonly #http: HttpClient;
  readonly #maxEventBytes: number | undefined;
  readonly #codec: CallerCodec;
  readonly #routes: typeof ROUTES_1_0;

  constructor(
    readonly endpoint: AgentEndpoint,
    options: TransportOptions,
  ) {
    this.#http = options.http;
    this.#maxEventBytes = options.maxEventBytes;
    // 0.3's HTTP+JSON speaks its proto's ProtoJSON under /v1 (0.3 §3.5.6); 1.0's, its own (§11).
    const legacy = endpoint.version === '0.3';
    this.#codec = legacy ? protoJson0_3Caller : protoJson1_0Caller;
    this.#routes = legacy ? ROUTES_0_3 : ROUTES_1_0;
  }

  /** The route's URL (path parameters filled from the wire params, the rest in the body or query). */
  #request(operation: OperationName, params: unknown) {
    const route = this.#routes.get(operation);
    if (route === undefined) throw unsupported(operation, this.endpoint);
    const wire = { ...(this.#codec.encodeParams(operation, params as never) as Json) };
    const used = new Set<string>();
    let path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      used.add(name);
      return encodeURIComponent(String(wire[name] ?? ''));
    });
    // §11.4: a tenant is the first path segment.
    if (this.endpoint.tenant !== undefined) path = `/${encodeURIComponent(this.endpoint.tenant)}${path}`;
    const rest = Object.fromEntries(Object.entries(wire).filter(([key]) => !used.has(key)));
    let url = `${this.endpoint.url.replace(/\/+$/, '')}${path}`;
    let body: string | undefined;
    if (route.method === 'GET') {
      const query = new URLSearchParams();
      for (const [key, value] of Object.entries(rest)) if (value !== undefined) query.set(key, String(value));
      if ([...query].length > 0) url += `?${query}`;
    } else if (route.method === 'POST') {
      body = JSON.stringify(rest);
    }
    return { method: route.method, url, body };
  }

  #headers(accept: string, lastEventId?: string): Record<string, string> {
    const headers: Record<string, string> = { accept, 'a2a-version': this.endpoint.version };
    headers['content-type'] = 'application/json';
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    return headers;
  }

  async call<K extends UnaryOperation>(operation: K, params: OperationParams<K>, scope: CallScope) {
    const request = this.#request(operation, params);
    const response = await this.#http.send({ ...request, headers: this.#headers('application/json') }, scope);
    if ((response.status === 401 || response.status === 403) && response.text === '')
      throw authError(response.status, undefined);
    if ((response.status === 404 || response.status === 405) && !looksLikeJson(response.text)) {
      // No such route (a web framework's own 404 page): the agent does not serve this operation.
      throw new A2AClientError(
        'protocol',
        `${request.method} ${request.url} does not exist (HTTP ${response.status}): the agent does not serve ${operation} over HTTP+JSON ${this.endpoint.version}.`,
        { a2aCode: 'UNSUPPORTED_OPERATION', status: response.status },
      );
    }
    const json = response.text === '' ? {} : parseJson(response, request.url);
    if (response.status < 200 || response.status >= 300) throw restError(json, response.status);
    return this.#codec.decodeResult(operation, json) as OperationResult<K>;
  }

  async stream(
    operation: StreamOperation,
    params: OperationParams<StreamOperation>,
    scope: CallScope,
    lastEventId?: string,
  ) {
    const request = this.#request(operation, params);
    const response = await this.#http.send(
      { ...request, headers: this.#headers('text/event-stream', lastEventId), stream: true },
      scope,
    );
    if (response.body === undefined) {
      const json = response.text === '' ? {} : parseJson(response, request.url);
      throw response.status >= 200 && response.status < 300
        ? new A2AClientError('invalid-response', `${request.url} answered a stream request with no stream.`)
        : restError(json, response.status);
    }
    const maxEventBytes = this.#maxEventBytes;
    const codec = this.#codec;
    async function* items(): AsyncGenerator<StreamItem> {
      for await (const event of readSse(response.body as AsyncIterable<Uint8Array>, maxEventBytes)) {
        let json: unknown;
        try {
          json = JSON.parse(event.data);
        } catch {
          throw new A2AClientError('invalid-response', `${request.url} sent a stream event that is not JSON.`);
        }
        if (event.event === 'error') throw restError(json, 200);
        yield { id: event.id, result: codec.decodeStreamItem(json) };
      }
    }
    return { items: items(), close: response.close };
  }
}

export function createTransport(endpoint: AgentEndpoint, options: TransportOptions): Transport {
  if (endpoint.binding === 'HTTP+JSON') return new RestTransport(endpoint, options);
  return new JsonRpcTransport(endpoint, options);
}
