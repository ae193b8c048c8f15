/**
 * What a protocol version is at the edge: its wire names and shapes, per binding. A codec turns
 * wire requests into the internal model's operation parameters, and the model's results, stream
 * items and card into wire JSON. A binding's mapping of a version adds its names (JSON-RPC methods,
 * HTTP+JSON routes) and its error format. Bindings and dispatch are version-agnostic: a new
 * version is a new codec and its mappings.
 *
 * One version may use different shapes per binding: A2A 0.3's JSON-RPC speaks the JSON of its
 * JSON Schema (`kind` discriminators, `input-required`), while its HTTP+JSON binding speaks the
 * ProtoJSON of its proto (`TASK_STATE_INPUT_REQUIRED`, message parts under `content`).
 */

import type { A2AError } from '../errors.js';
import type { AgentCard, StreamResult } from '../model/types.js';
import type { ProtocolVersion } from './context.js';
import type { OperationName, OperationParams, OperationResult } from './operations.js';

/** A JSON-RPC `error` member (each version's mapping builds it; the JSON-RPC binding sends it). */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface ProtocolCodec {
  readonly version: ProtocolVersion;
  /**
   * Checks an operation's wire parameters against this version's schema and converts them to the
   * internal model. `root` names the parameters in error messages (`params`).
   * @throws {A2AError} INVALID_PARAMS naming every offending field.
   */
  decode<K extends OperationName>(operation: K, params: unknown, root: string): OperationParams<K>;
  /** A non-streaming operation's result as wire JSON. */
  encodeResult<K extends OperationName>(operation: K, result: OperationResult<K>): unknown;
  /** One stream item as wire JSON. */
  encodeStreamItem(item: StreamResult): unknown;
  /** The agent card as wire JSON. */
  encodeCard(card: AgentCard): unknown;
}

/**
 * The caller's direction of a codec, kept beside the server's so a wire change is made in one
 * place: the model's operation parameters as this version's wire JSON, and the wire's results and
 * stream items back into the model. Streaming operations' results are stream items
 * ({@link decodeStreamItem}).
 */
export interface CallerCodec {
  readonly version: ProtocolVersion;
  encodeParams<K extends OperationName>(operation: K, params: OperationParams<K>): unknown;
  /**
   * A non-streaming operation's wire result in the model (`getExtendedAgentCard`: the card as sent).
   * @throws {A2AError} INVALID_AGENT_RESPONSE naming what is missing.
   */
  decodeResult<K extends Exclude<OperationName, 'sendStreamingMessage' | 'subscribeToTask'>>(
    operation: K,
    wire: unknown,
  ): OperationResult<K>;
  /** One wire stream item in the model. */
  decodeStreamItem(wire: unknown): StreamResult;
}

/** A version's JSON-RPC binding: its method names and its error member. */
export interface JsonRpcMapping {
  readonly codec: ProtocolCodec;
  /** The version as cards and headers spell it, e.g. `0.3.0`. */
  readonly versionString: string;
  /** Each JSON-RPC method name and the operation it calls. */
  readonly methods: ReadonlyMap<string, OperationName>;
  /** An error as the response's `error` member. */
  error(error: A2AError): JsonRpcErrorObject;
  /**
   * A streaming method refused after its params were checked (an unknown task) is answered as a
   * stream's one event (0.3: what its streaming clients and the TCK read), rather than as a plain
   * JSON-RPC answer (1.0: what its clients read; the 1.0 TCK went back to plain answers).
   */
  readonly refusedStreamAsEvent: boolean;
}

/** The parts of an HTTP request the HTTP+JSON binding reads. */
export interface RestRequest {
  /** Path parameters named in the route's path, URL-decoded. */
  readonly path: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, unknown>>;
  /** The parsed JSON body, or undefined when there is none. */
  readonly body: unknown;
}

export interface RestRoute {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /**
   * Relative to the binding's base path. `{name}` is a path parameter (one segment); a segment may
   * continue after it with a literal suffix, e.g. `/v1/tasks/{id}:cancel` (the `:verb` custom
   * method form of Google's API design, which A2A's HTTP+JSON binding uses).
   */
  readonly path: string;
  readonly operation: OperationName;
  /** Builds the operation's wire parameters from the request, for the codec to decode. */
  readonly params: (request: RestRequest) => unknown;
}

export interface RestErrorResponse {
  status: number;
  body: unknown;
}

/** A version's HTTP+JSON binding: its routes, media type and error format. */
export interface RestMapping {
  readonly codec: ProtocolCodec;
  readonly routes: readonly RestRoute[];
  /** The media type of request and response bodies. */
  readonly mediaType: string;
  /** An error as an HTTP answer. */
  error(error: A2AError): RestErrorResponse;
  /** A failure after a stream started, as an SSE event (`event` names its type when not `message`). */
  streamError(error: A2AError): { event?: string; data: unknown };
}
