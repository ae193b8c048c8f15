/**
 * The gRPC binding of A2A 1.0 (§10): each method of `lf.a2a.v1.A2AService` is an operation of the
 * one dispatch every binding calls, with the core's 1.0 ProtoJSON codec. This file only frames:
 * protobuf ↔ ProtoJSON at the edge (proto.ts), gRPC metadata → the CallContext (version,
 * credentials, tenant), results and stream items written as the method's response messages, errors
 * as gRPC statuses (errors.ts).
 */

import {
  A2AError,
  type CallContext,
  type Dispatcher,
  type JsonObject,
  type Logger,
  METHOD_NAMES_1_0,
  type OperationName,
  type Principal,
  protoJson1_0,
  publicError,
  type StreamFrame,
} from '@fastify-a2a/core';
import type {
  Metadata,
  ServerUnaryCall,
  ServerWritableStream,
  ServiceDefinition,
  sendUnaryData,
  UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type protobuf from 'protobufjs';
import { grpcStatusOf, malformedRequest } from './errors.js';
import { decodeToJson, encodeFromJson, SERVICE_NAME, service } from './proto.js';

/** What a request's bytes decoded to: its ProtoJSON, or why they are not the method's message. */
export type DecodedRequest = { readonly json: JsonObject } | { readonly malformed: A2AError };

/** Authenticates a call from its credentials (metadata keys are lowercase header names). */
export type GrpcAuthenticate = (
  headers: Readonly<Record<string, string | undefined>>,
  callId: string,
) => Promise<Principal | undefined>;

export interface GrpcBindingOptions {
  dispatcher: Dispatcher;
  /** The agent's authentication; resolves undefined when the agent is open. */
  authenticate: GrpcAuthenticate;
  logger: Logger;
}

/** Each rpc of the service and the operation it runs (the 1.0 method names are the rpc names). */
const OPERATION_OF_METHOD: ReadonlyMap<string, OperationName> = new Map(
  Object.entries(METHOD_NAMES_1_0).map(([operation, method]) => [method, operation as OperationName]),
);

const lowerCamel = (name: string): string => `${name.charAt(0).toLowerCase()}${name.slice(1)}`;

/**
 * The service as grpc-js registers it: paths, streaming kinds and (de)serializers. A request's
 * bytes that are not its message decode to `{ malformed }` rather than throwing, so the handler
 * answers INVALID_ARGUMENT (grpc-js would answer INTERNAL for a throwing deserializer).
 */
export function a2aServiceDefinition(): ServiceDefinition {
  const definition: Record<string, ServiceDefinition[string]> = {};
  for (const method of service.methodsArray) {
    method.resolve();
    const requestType = method.resolvedRequestType as protobuf.Type;
    const responseType = method.resolvedResponseType as protobuf.Type;
    definition[method.name] = {
      path: `/${SERVICE_NAME}/${method.name}`,
      requestStream: false,
      responseStream: method.responseStream === true,
      requestSerialize: (json: JsonObject) => Buffer.from(encodeFromJson(requestType, json)),
      requestDeserialize: (bytes: Buffer): DecodedRequest => {
        try {
          return { json: decodeToJson(requestType, bytes) };
        } catch (error) {
          return { malformed: malformedRequest(method.name, error) };
        }
      },
      responseSerialize: (json: JsonObject) => Buffer.from(encodeFromJson(responseType, json)),
      responseDeserialize: (bytes: Buffer) => decodeToJson(responseType, bytes),
      originalName: lowerCamel(method.name),
    };
  }
  return definition as ServiceDefinition;
}

/** The metadata as HTTP headers: the first value of each text key (binary `-bin` keys are not credentials). */
function headersOf(metadata: Metadata): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(metadata.getMap())) {
    if (typeof value === 'string') headers[key] = value;
  }
  return headers;
}

/**
 * §3.6 / §10.2: the `a2a-version` metadata entry. This service is A2A 1.0's (`lf.a2a.v1`): without
 * the entry a call speaks 1.0; another major.minor is refused, naming the version served.
 */
function checkVersion(headers: Readonly<Record<string, string | undefined>>): void {
  const text = headers['a2a-version']?.trim() ?? '';
  if (text === '') return;
  const match = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(text);
  if (match !== null && Number(match[1]) === 1 && Number(match[2]) === 0) return;
  throw new A2AError(
    'VERSION_NOT_SUPPORTED',
    `Version not supported: a2a-version "${text}"; this gRPC service (lf.a2a.v1.A2AService) speaks A2A 1.0 (send a2a-version: 1.0, or no entry). A2A 0.3 is served over JSON-RPC and HTTP+JSON.`,
    { data: { requested: text, supported: '1.0' } },
  );
}

/** A call's context: what the other bindings build from an HTTP request, from gRPC metadata and the request. */
class GrpcCallContext implements CallContext {
  readonly version = '1.0';
  readonly binding = 'GRPC';
  readonly lastEventId = undefined;
  #controller: AbortController | undefined;

  constructor(
    readonly principal: Principal | undefined,
    /** §10: the tenant is the request message's `tenant` field. */
    readonly tenant: string | undefined,
    /**
     * What the application's callbacks get for the HTTP request they take (the extended card's
     * function form): the metadata as `headers`, the call's `id`, the logger.
     */
    readonly request: {
      readonly id: string;
      readonly headers: Readonly<Record<string, string | undefined>>;
      readonly log: Logger;
    },
  ) {}

  /** Made on first read: only streaming operations read it. */
  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }

  abort(): void {
    this.#controller?.abort();
  }
}

export class GrpcBinding {
  readonly #dispatcher: Dispatcher;
  readonly #authenticate: GrpcAuthenticate;
  readonly #log: Logger;
  /** Open streams, each ended by its context's abort. */
  readonly #open = new Set<GrpcCallContext>();
  #onEmpty: (() => void)[] = [];
  #closing = false;
  #calls = 0;

  constructor(options: GrpcBindingOptions) {
    this.#dispatcher = options.dispatcher;
    this.#authenticate = options.authenticate;
    this.#log = options.logger;
  }

  /** The handlers grpc-js calls, one per rpc of {@link a2aServiceDefinition}. */
  implementation(): UntypedServiceImplementation {
    const handlers: UntypedServiceImplementation = {};
    for (const method of service.methodsArray) {
      const operation = OPERATION_OF_METHOD.get(method.name);
      if (operation === undefined) continue; // grpc-js answers UNIMPLEMENTED
      handlers[method.name] =
        method.responseStream === true
          ? (call: ServerWritableStream<DecodedRequest, JsonObject>) => {
              void this.#stream(operation, call);
            }
          : (call: ServerUnaryCall<DecodedRequest, JsonObject>, callback: sendUnaryData<JsonObject>) => {
              this.#unary(operation, call).then(
                (result) => callback(null, result),
                (error: unknown) => callback(grpcStatusOf(publicError(error, this.#log, operation))),
              );
            };
    }
    return handlers;
  }

  /** Streams being written. */
  get openStreams(): number {
    return this.#open.size;
  }

  /** The request's ProtoJSON and its call context, or the refusal of the call. */
  async #prepare(request: DecodedRequest, metadata: Metadata): Promise<{ json: JsonObject; ctx: GrpcCallContext }> {
    if ('malformed' in request) throw request.malformed;
    const headers = headersOf(metadata);
    checkVersion(headers);
    const id = `grpc-${++this.#calls}`;
    const principal = await this.#authenticate(headers, id);
    const { tenant } = request.json;
    return {
      json: request.json,
      ctx: new GrpcCallContext(principal, typeof tenant === 'string' && tenant !== '' ? tenant : undefined, {
        id,
        headers,
        log: this.#log,
      }),
    };
  }

  async #unary(operation: OperationName, call: ServerUnaryCall<DecodedRequest, JsonObject>): Promise<JsonObject> {
    const { json, ctx } = await this.#prepare(call.request, call.metadata);
    const dispatched = await this.#dispatcher.dispatch(protoJson1_0, operation, json, ctx, 'request');
    if (dispatched.kind === 'error') throw dispatched.error;
    if (dispatched.kind === 'stream') throw new A2AError('INTERNAL', `${operation} answered a stream to a unary call.`);
    return dispatched.result as JsonObject;
  }

  /**
   * A server-streaming call: every frame the operation yields is one StreamResponse. It ends when
   * the operation's stream ends (§3.1.2: after the final event), when the client cancels or its
   * deadline passes (grpc-js emits `cancelled`: the follow of the task stops), or when the server
   * drains.
   */
  async #stream(operation: OperationName, call: ServerWritableStream<DecodedRequest, JsonObject>): Promise<void> {
    let ctx: GrpcCallContext;
    let frames: AsyncGenerator<StreamFrame>;
    try {
      if (this.#closing) {
        // Draining: the server would otherwise wait on a stream that began after the drain did.
        throw new A2AError('UNAVAILABLE', 'This worker is shutting down; call again (another worker will take it).');
      }
      const prepared = await this.#prepare(call.request, call.metadata);
      ctx = prepared.ctx;
      const dispatched = await this.#dispatcher.dispatch(protoJson1_0, operation, prepared.json, ctx, 'request');
      if (dispatched.kind === 'error') throw dispatched.error;
      if (dispatched.kind === 'result') throw new A2AError('INTERNAL', `${operation} answered one result to a stream.`);
      frames = dispatched.frames;
    } catch (error) {
      if (!call.cancelled) call.emit('error', grpcStatusOf(publicError(error, this.#log, operation)));
      return;
    }
    const end = (): void => ctx.abort();
    call.on('cancelled', end);
    if (call.cancelled) end();
    this.#open.add(ctx);
    try {
      for (let next = await frames.next(); next.done !== true; next = await frames.next()) {
        if (call.cancelled || ctx.signal.aborted) break;
        if (!call.write(protoJson1_0.encodeStreamItem(next.value.result) as JsonObject))
          await drained(call, ctx.signal);
      }
      if (call.cancelled) return;
      if (ctx.signal.aborted && this.#closing) {
        // The server is closing before the task's final event: the client resubscribes elsewhere.
        call.emit(
          'error',
          grpcStatusOf(
            new A2AError('UNAVAILABLE', 'This worker is shutting down; call SubscribeToTask again to follow the task.'),
          ),
        );
      } else {
        call.end();
      }
    } catch (error) {
      this.#log.warn({ err: error, operation }, 'a2a: gRPC stream failed');
      if (!call.cancelled) call.emit('error', grpcStatusOf(publicError(error, this.#log, operation)));
    } finally {
      call.off('cancelled', end);
      ctx.abort();
      await frames.return(undefined).catch((error: unknown) => {
        this.#log.warn({ err: error, operation }, 'a2a: a gRPC stream failed to end');
      });
      this.#open.delete(ctx);
      if (this.#open.size === 0) for (const resolve of this.#onEmpty.splice(0)) resolve();
    }
  }

  /**
   * Server closing, after the runtime drained its turns: streams of turns that ran here got their
   * final event and end by themselves; give them `graceMs`, then end the rest (streams following
   * tasks on other workers) with UNAVAILABLE. Resolves with how many had to be ended.
   */
  async drain(graceMs: number): Promise<number> {
    this.#closing = true;
    if (this.#open.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.#empty(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, graceMs);
        }),
      ]);
      clearTimeout(timer);
    }
    const cut = this.#open.size;
    for (const ctx of this.#open) ctx.abort();
    // An aborted stream ends at once, bar one stuck in a store call or its frames' return: bound
    // the wait, so the server's shutdown (which cuts what is left) always follows.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#empty(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ABORTED_STREAMS_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    return cut;
  }

  #empty(): Promise<void> {
    return this.#open.size === 0 ? Promise.resolve() : new Promise((resolve) => this.#onEmpty.push(resolve));
  }
}

/** How long drain() waits for the streams it aborted to end before the server is shut down anyway. */
const ABORTED_STREAMS_WAIT_MS = 1000;

/**
 * Waits for the call's write buffer to drain, for the call to end (a cancelled call never drains),
 * or for the stream to be aborted: a client that stopped reading never drains, and the server's
 * close aborts its stream rather than wait for it.
 */
function drained(call: ServerWritableStream<DecodedRequest, JsonObject>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      call.off('drain', done);
      call.off('cancelled', done);
      call.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    if (signal.aborted) return resolve();
    call.on('drain', done);
    call.on('cancelled', done);
    call.on('close', done);
    signal.addEventListener('abort', done);
  });
}
