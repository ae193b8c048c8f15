/**
 * The gRPC binding: each method of A2A 1.0's `lf.a2a.v1.A2AService` (§10), and of A2A 0.3's
 * `a2a.v1.A2AService`, is an operation of the one dispatch every binding calls, with the core's
 * ProtoJSON codec of its version (versions.ts). This file only frames: protobuf ↔ ProtoJSON at the
 * edge (proto.ts), gRPC metadata → the CallContext (version, credentials, tenant), results and
 * stream items written as the method's response messages, errors as gRPC statuses (errors.ts).
 */

import {
  A2AError,
  type CallContext,
  type Dispatcher,
  type JsonObject,
  type Logger,
  type OperationName,
  type Principal,
  type ProtocolVersion,
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
import { decodeToJson, encodeFromJson } from './proto.js';
import { GRPC_1_0, type GrpcServiceVersion } from './versions.js';

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

const lowerCamel = (name: string): string => `${name.charAt(0).toLowerCase()}${name.slice(1)}`;

/**
 * The service of a version (A2A 1.0's unless told) as grpc-js registers it: paths, streaming kinds
 * and (de)serializers. A request's bytes that are not its message decode to `{ malformed }` rather
 * than throwing, so the handler answers INVALID_ARGUMENT (grpc-js would answer INTERNAL for a
 * throwing deserializer).
 */
export function a2aServiceDefinition(version: GrpcServiceVersion = GRPC_1_0): ServiceDefinition {
  const definition: Record<string, ServiceDefinition[string]> = {};
  for (const method of version.service.methodsArray) {
    method.resolve();
    const requestType = method.resolvedRequestType as protobuf.Type;
    const responseType = method.resolvedResponseType as protobuf.Type;
    definition[method.name] = {
      path: `/${version.serviceName}/${method.name}`,
      requestStream: false,
      responseStream: method.responseStream === true,
      requestSerialize: (json: JsonObject) => Buffer.from(encodeFromJson(requestType, json)),
      requestDeserialize: (bytes: Buffer): DecodedRequest => {
        try {
          return { json: decodeToJson(requestType, bytes) };
        } catch (error) {
          return { malformed: malformedRequest(method.name, version.protoPackage, error) };
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

/** The service a call reaches when it speaks the other version. */
const OTHER_SERVICE: Readonly<Record<ProtocolVersion, string>> = {
  '1.0': 'A2A 0.3 is a2a.v1.A2AService, on this port too',
  '0.3': 'A2A 1.0 is lf.a2a.v1.A2AService, on this port too',
};

/**
 * 1.0 §3.6 / §10.2: the `a2a-version` metadata entry. The service a call reaches decides its
 * version (its path names it): without the entry a call speaks that version (0.3 clients send
 * none); another major.minor is refused, naming the version served and where the other one is.
 */
function checkVersion(headers: Readonly<Record<string, string | undefined>>, version: GrpcServiceVersion): void {
  const text = headers['a2a-version']?.trim() ?? '';
  if (text === '') return;
  const match = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(text);
  if (match !== null && `${Number(match[1])}.${Number(match[2])}` === version.version) return;
  throw new A2AError(
    'VERSION_NOT_SUPPORTED',
    `Version not supported: a2a-version "${text}"; this gRPC service (${version.serviceName}) speaks A2A ${version.version} (send a2a-version: ${version.version}, or no entry). ${OTHER_SERVICE[version.version]}.`,
    { data: { requested: text, supported: version.version } },
  );
}

/** A call's context: what the other bindings build from an HTTP request, from gRPC metadata and the request. */
class GrpcCallContext implements CallContext {
  readonly binding = 'GRPC';
  readonly lastEventId = undefined;
  #controller: AbortController | undefined;

  constructor(
    readonly version: ProtocolVersion,
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

  /** The handlers grpc-js calls, one per rpc of {@link a2aServiceDefinition} of the same version. */
  implementation(version: GrpcServiceVersion = GRPC_1_0): UntypedServiceImplementation {
    const handlers: UntypedServiceImplementation = {};
    for (const method of version.service.methodsArray) {
      const operation = version.operations.get(method.name);
      if (operation === undefined) continue; // grpc-js answers UNIMPLEMENTED
      handlers[method.name] =
        method.responseStream === true
          ? (call: ServerWritableStream<DecodedRequest, JsonObject>) => {
              void this.#stream(version, operation, call);
            }
          : (call: ServerUnaryCall<DecodedRequest, JsonObject>, callback: sendUnaryData<JsonObject>) => {
              this.#unary(version, operation, call).then(
                (result) => callback(null, result),
                (error: unknown) => callback(grpcStatusOf(publicError(error, this.#log, operation), version.version)),
              );
            };
    }
    return handlers;
  }

  /** Streams being written. */
  get openStreams(): number {
    return this.#open.size;
  }

  /**
   * The operation's wire parameters and the call's context, or the refusal of the call. The call
   * is authenticated before its resource names are read: a caller without credentials learns
   * nothing of the request's shape.
   */
  async #prepare(
    version: GrpcServiceVersion,
    operation: OperationName,
    request: DecodedRequest,
    metadata: Metadata,
  ): Promise<{ params: unknown; ctx: GrpcCallContext }> {
    if ('malformed' in request) throw request.malformed;
    const headers = headersOf(metadata);
    checkVersion(headers, version);
    const id = `grpc-${++this.#calls}`;
    const principal = await this.#authenticate(headers, id);
    return {
      params: version.params(operation, request.json),
      ctx: new GrpcCallContext(version.version, principal, version.tenantOf(request.json), {
        id,
        headers,
        log: this.#log,
      }),
    };
  }

  async #unary(
    version: GrpcServiceVersion,
    operation: OperationName,
    call: ServerUnaryCall<DecodedRequest, JsonObject>,
  ): Promise<JsonObject> {
    const { params, ctx } = await this.#prepare(version, operation, call.request, call.metadata);
    const dispatched = await this.#dispatcher.dispatch(version.codec, operation, params, ctx, 'request');
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
  async #stream(
    version: GrpcServiceVersion,
    operation: OperationName,
    call: ServerWritableStream<DecodedRequest, JsonObject>,
  ): Promise<void> {
    let ctx: GrpcCallContext;
    let frames: AsyncGenerator<StreamFrame>;
    try {
      if (this.#closing) {
        // Draining: the server would otherwise wait on a stream that began after the drain did.
        throw new A2AError('UNAVAILABLE', 'This worker is shutting down; call again (another worker will take it).');
      }
      const prepared = await this.#prepare(version, operation, call.request, call.metadata);
      ctx = prepared.ctx;
      const dispatched = await this.#dispatcher.dispatch(version.codec, operation, prepared.params, ctx, 'request');
      if (dispatched.kind === 'error') throw dispatched.error;
      if (dispatched.kind === 'result') throw new A2AError('INTERNAL', `${operation} answered one result to a stream.`);
      frames = dispatched.frames;
    } catch (error) {
      if (!call.cancelled) call.emit('error', grpcStatusOf(publicError(error, this.#log, operation), version.version));
      return;
    }
    const end = (): void => ctx.abort();
    call.on('cancelled', end);
    if (call.cancelled) end();
    this.#open.add(ctx);
    try {
      for (let next = await frames.next(); next.done !== true; next = await frames.next()) {
        if (call.cancelled || ctx.signal.aborted) break;
        if (!call.write(version.codec.encodeStreamItem(next.value.result) as JsonObject))
          await drained(call, ctx.signal);
      }
      if (call.cancelled) return;
      if (ctx.signal.aborted && this.#closing) {
        // The server is closing before the task's final event: the client resubscribes elsewhere.
        call.emit(
          'error',
          grpcStatusOf(
            new A2AError(
              'UNAVAILABLE',
              `This worker is shutting down; call ${version.version === '0.3' ? 'TaskSubscription' : 'SubscribeToTask'} again to follow the task.`,
            ),
            version.version,
          ),
        );
      } else {
        call.end();
      }
    } catch (error) {
      this.#log.warn({ err: error, operation }, 'a2a: gRPC stream failed');
      if (!call.cancelled) call.emit('error', grpcStatusOf(publicError(error, this.#log, operation), version.version));
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
