/**
 * The JSON-RPC 2.0 binding (A2A §3.5.1 / §6.11), independent of any HTTP framework: parse the body,
 * check the envelope, find the operation in the version's method table, and hand it to dispatch.
 * There is no method switch here: methods are rows of each version's mapping.
 */

import { A2AError, type A2AErrorCode, ERROR_TABLE } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { JsonRpcErrorObject, JsonRpcMapping } from '../codec.js';

export type { JsonRpcErrorObject } from '../codec.js';

import type { CallContext, ProtocolVersion } from '../context.js';
import { type Dispatcher, publicError } from '../dispatch.js';
import { OPERATIONS, type StreamFrame } from '../operations.js';
import { createAjv, describeValidationErrors, type Validator } from '../validation.js';

export type JsonRpcId = string | number | null;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id?: JsonRpcId;
  method: string;
  params?: unknown;
}

export interface JsonRpcSuccessResponse<T = unknown> {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: T;
}

export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: JsonRpcId;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse<T = unknown> = JsonRpcSuccessResponse<T> | JsonRpcErrorResponse;

/** §6.11: the request envelope. `id` may be absent (a notification), yet A2A clients expect an answer to every POST. */
const envelopeSchema = {
  type: 'object',
  required: ['jsonrpc', 'method'],
  properties: {
    jsonrpc: { const: '2.0' },
    method: { type: 'string', minLength: 1 },
    id: { type: ['string', 'number', 'null'] },
  },
} as const;

/** An answer that is one JSON-RPC response. */
export interface JsonRpcReply {
  readonly type: 'response';
  readonly response: JsonRpcResponse;
  /**
   * Send the response as a stream's one event: a streaming method refused after its params were
   * validated (an unknown task, say). Streaming clients (the official Python one, the A2A TCK)
   * read a streaming call's answer as SSE, errors included; invalid params stay a plain answer.
   */
  readonly asEvent: boolean;
  /**
   * The HTTP status to answer with, when not 200: a refusal of the caller (401 unauthenticated,
   * 403 permission denied, A2A §4) keeps the status HTTP clients and proxies act on, with the
   * JSON-RPC error in the body (clients read it on any status).
   */
  readonly status?: number;
}

/** An answer that is a stream: each frame becomes one SSE event whose data {@link JsonRpcStream.data} gives. */
export class JsonRpcStream {
  readonly type = 'stream';

  constructor(
    readonly id: JsonRpcId,
    readonly frames: AsyncGenerator<StreamFrame>,
    readonly mapping: JsonRpcMapping,
    readonly log: Logger | undefined,
  ) {}

  /** §7.2: each event's data is a JSON-RPC response carrying the request id. */
  data(frame: StreamFrame): string {
    return JSON.stringify({ jsonrpc: '2.0', id: this.id, result: this.mapping.codec.encodeStreamItem(frame.result) });
  }

  /** The event that reports a failure after the stream started: a JSON-RPC error response. */
  error(error: unknown): { event?: string; data: string } {
    return { data: JSON.stringify(errorResponse(this.id, publicError(error, this.log), this.mapping)) };
  }
}

export type JsonRpcOutcome = JsonRpcReply | JsonRpcStream;

export interface JsonRpcBindingOptions {
  dispatcher: Dispatcher;
  /** Each protocol version served, as JSON-RPC. */
  mappings: Readonly<Partial<Record<ProtocolVersion, JsonRpcMapping>>>;
  logger?: Logger;
}

export class JsonRpcBinding {
  readonly #dispatcher: Dispatcher;
  readonly #mappings: Readonly<Partial<Record<ProtocolVersion, JsonRpcMapping>>>;
  readonly #log: Logger | undefined;
  readonly #validateEnvelope: Validator;

  constructor(options: JsonRpcBindingOptions) {
    this.#dispatcher = options.dispatcher;
    this.#mappings = options.mappings;
    this.#log = options.logger;
    this.#validateEnvelope = createAjv().compile(envelopeSchema);
  }

  /**
   * Handles one HTTP request body: a string or Buffer to parse, or an already-parsed value.
   * Never throws: every failure becomes a JSON-RPC error response.
   */
  async handle(body: unknown, ctx: CallContext): Promise<JsonRpcOutcome> {
    const mapping = this.#mappings[ctx.version];
    if (mapping === undefined) {
      // The edge only builds contexts for versions it serves; this is a wiring mistake.
      return reply(null, new A2AError('INTERNAL', `No codec for A2A version ${ctx.version}.`), undefined, false);
    }
    let request: unknown = body;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      try {
        request = JSON.parse(body.toString());
      } catch (error) {
        return reply(
          null,
          new A2AError('PARSE_ERROR', `Parse error: the request body is not valid JSON (${(error as Error).message}).`),
          mapping,
          false,
        );
      }
    }
    if (Array.isArray(request)) {
      return reply(
        null,
        new A2AError(
          'INVALID_REQUEST',
          'Invalid Request: batch requests are not supported; send one JSON-RPC request object per HTTP request.',
        ),
        mapping,
        false,
      );
    }
    if (!this.#validateEnvelope(request)) {
      const { details } = describeValidationErrors(this.#validateEnvelope.errors, 'request');
      const problems = details.map((d) => `${d.path} ${d.problem}`).join('; ');
      return reply(
        idOf(request),
        new A2AError('INVALID_REQUEST', `Invalid Request: ${problems || 'expected a JSON-RPC 2.0 request object'}.`, {
          data: { errors: details },
        }),
        mapping,
        false,
      );
    }
    const { method, params } = request as JsonRpcRequest;
    const id = idOf(request);
    const operation = mapping.methods.get(method);
    if (operation === undefined) {
      return reply(id, this.#methodNotFound(method, ctx.version), mapping, false);
    }
    const dispatched = await this.#dispatcher.dispatch(mapping.codec, operation, params, ctx);
    switch (dispatched.kind) {
      case 'result':
        return { type: 'response', response: { jsonrpc: '2.0', id, result: dispatched.result }, asEvent: false };
      case 'stream':
        return new JsonRpcStream(id, dispatched.frames, mapping, this.#log);
      case 'error': {
        const { error } = dispatched;
        if (CALLER_REFUSALS.has(error.code)) {
          return { ...reply(id, error, mapping, false), status: ERROR_TABLE[error.code].http };
        }
        return reply(
          id,
          error,
          mapping,
          mapping.refusedStreamAsEvent && OPERATIONS[operation].streaming && dispatched.validated,
        );
      }
    }
  }
  /** -32601, saying which version has the method when another one does (A2A 1.0 §3.6: the header picks it). */
  #methodNotFound(method: string, version: ProtocolVersion): A2AError {
    const mapping = this.#mappings[version] as JsonRpcMapping;
    const other = (Object.values(this.#mappings) as JsonRpcMapping[]).find((m) => m.methods.has(method));
    const hint =
      other === undefined
        ? ''
        : ` It is an A2A ${other.versionString} method: send it with the header "A2A-Version: ${other.versionString}"${other.versionString.startsWith('0.') ? ' (or without the header)' : ''}.`;
    return new A2AError(
      'METHOD_NOT_FOUND',
      `Method not found: "${method}" is not an A2A ${mapping.versionString} method.${hint}`,
      { data: { method } },
    );
  }
}

/** Errors that refuse the caller rather than the call: answered with their HTTP status. */
const CALLER_REFUSALS: ReadonlySet<A2AErrorCode> = new Set<A2AErrorCode>(['UNAUTHENTICATED', 'PERMISSION_DENIED']);

function idOf(value: unknown): JsonRpcId {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function reply(id: JsonRpcId, error: A2AError, mapping: JsonRpcMapping | undefined, asEvent: boolean): JsonRpcReply {
  return { type: 'response', response: errorResponse(id, error, mapping), asEvent };
}

/** The JSON-RPC error response for `error`, in `mapping`'s version (0.3's codes when none is given). */
export function errorResponse(id: JsonRpcId, error: A2AError, mapping?: JsonRpcMapping): JsonRpcErrorResponse {
  if (mapping !== undefined) return { jsonrpc: '2.0', id, error: mapping.error(error) };
  const object: JsonRpcErrorObject = { code: error.jsonRpcCode, message: error.message };
  if (error.data !== undefined) object.data = error.data;
  return { jsonrpc: '2.0', id, error: object };
}
