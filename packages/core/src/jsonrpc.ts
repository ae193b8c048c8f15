/**
 * JSON-RPC 2.0 dispatch for A2A (§6.11, §7), independent of any HTTP framework:
 * parse → envelope check → params validation (ajv, compiled once at construction) → method →
 * result or error. Streaming methods return frames for the transport to write as SSE.
 */

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { A2AError, JsonRpcErrorCode } from './errors.js';
import type { A2ARuntime, RuntimeLogger, StreamFrame, StreamSignal } from './runtime.js';
import * as schemas from './schemas.js';
import type {
  AgentCard,
  JsonRpcErrorResponse,
  JsonRpcId,
  JsonRpcResponse,
  MessageSendParams,
  TaskIdParams,
  TaskQueryParams,
} from './types.js';

export type RpcOutcome =
  | { type: 'response'; response: JsonRpcResponse }
  | { type: 'stream'; id: JsonRpcId; frames: AsyncGenerator<StreamFrame> };

export interface RpcCallOptions {
  /** SSE Last-Event-ID of a reconnecting stream: resume after that event sequence. */
  lastEventId?: number;
  /** Aborted when the client goes away; ends streams. Read only for streaming methods (it may be a getter). */
  signal?: StreamSignal;
}

export interface JsonRpcHandlerOptions {
  runtime: A2ARuntime;
  /** The card's capabilities decide which optional methods are served (§5.5). */
  agentCard: () => AgentCard;
  logger?: RuntimeLogger;
}

type Validator = ValidateFunction<unknown>;

/** Turns ajv errors into one sentence naming each offending field, e.g. `params.message.parts[0].kind`. */
export function describeValidationErrors(errors: ErrorObject[] | null | undefined): {
  message: string;
  details: { path: string; problem: string }[];
} {
  const details = (errors ?? [])
    // oneOf/discriminator errors repeat what the branch errors already say
    .filter((e) => e.keyword !== 'if')
    .map((e) => {
      let path = `params${e.instancePath.replace(/\/(\d+)(?=\/|$)/g, '[$1]').replace(/\//g, '.')}`;
      let problem = e.message ?? 'is invalid';
      if (e.keyword === 'required') {
        path = `${path}.${(e.params as { missingProperty: string }).missingProperty}`;
        problem = 'is required';
      } else if (e.keyword === 'const') {
        problem = `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
      } else if (e.keyword === 'enum') {
        problem = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
      } else if (e.keyword === 'discriminator') {
        const tag = (e.params as { tag: string }).tag;
        path = `${path}.${tag}`;
        problem = 'must be one of "text", "file", "data"';
      } else if (e.keyword === 'oneOf' && path.endsWith('.file')) {
        problem = 'must have exactly one of "bytes" or "uri"';
      } else if (e.keyword === 'minItems') {
        problem = `must not have fewer than ${(e.params as { limit: number }).limit} item(s)`;
      }
      return { path, problem };
    });
  const unique = details.filter((d, i) => details.findIndex((o) => o.path === d.path && o.problem === d.problem) === i);
  const message =
    unique.length === 0
      ? 'Invalid params.'
      : `Invalid params: ${unique
          .slice(0, 3)
          .map((d) => `${d.path} ${d.problem}`)
          .join('; ')}${unique.length > 3 ? ` (and ${unique.length - 3} more)` : ''}.`;
  return { message, details: unique };
}

export class JsonRpcHandler {
  readonly #runtime: A2ARuntime;
  readonly #card: () => AgentCard;
  readonly #log: RuntimeLogger | undefined;
  readonly #validateEnvelope: Validator;
  readonly #validators: Record<string, Validator>;

  constructor(options: JsonRpcHandlerOptions) {
    this.#runtime = options.runtime;
    this.#card = options.agentCard;
    this.#log = options.logger;
    const ajv = new Ajv({
      allErrors: true,
      discriminator: true,
      strict: true,
      strictRequired: false,
      allowUnionTypes: true,
    });
    this.#validateEnvelope = ajv.compile(schemas.jsonRpcRequestSchema);
    const message = ajv.compile(schemas.messageSendParamsSchema);
    const taskId = ajv.compile(schemas.taskIdParamsSchema);
    const getPush = ajv.compile(schemas.getPushConfigParamsSchema);
    this.#validators = {
      'message/send': message,
      'message/stream': message,
      'tasks/get': ajv.compile(schemas.taskQueryParamsSchema),
      'tasks/cancel': taskId,
      'tasks/resubscribe': taskId,
      'tasks/pushNotificationConfig/set': ajv.compile(schemas.setPushConfigParamsSchema),
      'tasks/pushNotificationConfig/get': getPush,
      'tasks/pushNotificationConfig/list': getPush,
      'tasks/pushNotificationConfig/delete': ajv.compile(schemas.deletePushConfigParamsSchema),
    };
  }

  /**
   * Handles one HTTP request body: a string to parse, or an already-parsed value. Never throws:
   * every failure becomes a JSON-RPC error response.
   */
  async handle(body: unknown, options: RpcCallOptions = {}): Promise<RpcOutcome> {
    let request: unknown = body;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      try {
        request = JSON.parse(body.toString());
      } catch (error) {
        return errorOutcome(
          null,
          JsonRpcErrorCode.ParseError,
          `Parse error: the request body is not valid JSON (${(error as Error).message}).`,
        );
      }
    }
    if (Array.isArray(request)) {
      return errorOutcome(
        null,
        JsonRpcErrorCode.InvalidRequest,
        'Invalid Request: batch requests are not supported; send one JSON-RPC request object per HTTP request.',
      );
    }
    const idOf = (value: unknown): JsonRpcId => {
      const id = (value as { id?: unknown } | null)?.id;
      return typeof id === 'string' || typeof id === 'number' ? id : null;
    };
    if (!this.#validateEnvelope(request)) {
      const { details } = describeValidationErrors(this.#validateEnvelope.errors);
      const problems = details.map((d) => `${d.path.replace(/^params/, 'request')} ${d.problem}`).join('; ');
      return errorOutcome(
        idOf(request),
        JsonRpcErrorCode.InvalidRequest,
        `Invalid Request: ${problems || 'expected a JSON-RPC 2.0 request object'}.`,
        {
          errors: details,
        },
      );
    }
    const { id, method, params } = request as { id: JsonRpcId; method: string; params?: unknown };
    try {
      return await this.#dispatch(id, method, params, options);
    } catch (error) {
      return this.#errorFor(id, method, error);
    }
  }

  #errorFor(id: JsonRpcId, method: string, error: unknown): RpcOutcome {
    if (A2AError.is(error) && error.jsonRpcCode !== JsonRpcErrorCode.InternalError) {
      return { type: 'response', response: errorResponse(id, error) };
    }
    // Internal errors are logged with their stack; the client gets a message without one.
    this.#log?.error({ err: error, method }, 'a2a: internal error');
    const message = A2AError.is(error)
      ? error.message
      : 'Internal error: the server failed to handle the request; see the server log.';
    return errorOutcome(id, JsonRpcErrorCode.InternalError, message);
  }

  #params<T>(method: string, params: unknown): T {
    const validate = this.#validators[method] as Validator;
    if (params === undefined)
      throw new A2AError('INVALID_PARAMS', `Invalid params: "${method}" requires a params object.`);
    if (!validate(params)) {
      const { message, details } = describeValidationErrors(validate.errors);
      throw new A2AError('INVALID_PARAMS', message, { data: { errors: details } });
    }
    return params as T;
  }

  async #dispatch(id: JsonRpcId, method: string, params: unknown, options: RpcCallOptions): Promise<RpcOutcome> {
    const runtime = this.#runtime;
    switch (method) {
      case 'message/send': {
        const p = this.#params<MessageSendParams>(method, params);
        return ok(id, await runtime.sendMessage(p));
      }
      case 'message/stream': {
        const p = this.#params<MessageSendParams>(method, params);
        this.#requireStreaming(method);
        if (options.lastEventId !== undefined) {
          const resumed = await runtime.resumeMessageStream(p, options.lastEventId, streamOptions(options));
          if (resumed) return { type: 'stream', id, frames: resumed };
        }
        return { type: 'stream', id, frames: await runtime.streamMessage(p, streamOptions(options)) };
      }
      case 'tasks/get':
        return ok(id, await runtime.getTask(this.#params<TaskQueryParams>(method, params)));
      case 'tasks/cancel':
        return ok(id, await runtime.cancelTask(this.#params<TaskIdParams>(method, params)));
      case 'tasks/resubscribe': {
        const p = this.#params<TaskIdParams>(method, params);
        this.#requireStreaming(method);
        const frames = await runtime.resubscribe(
          p,
          options.lastEventId === undefined
            ? streamOptions(options)
            : { ...streamOptions(options), afterSeq: options.lastEventId },
        );
        return { type: 'stream', id, frames };
      }
      case 'tasks/pushNotificationConfig/set':
      case 'tasks/pushNotificationConfig/get':
      case 'tasks/pushNotificationConfig/list':
      case 'tasks/pushNotificationConfig/delete':
        this.#params(method, params);
        // §8.2 -32003: the card says capabilities.pushNotifications: false.
        throw new A2AError(
          'PUSH_NOTIFICATION_NOT_SUPPORTED',
          `Push notifications are not supported by this agent (its card declares capabilities.pushNotifications: false); use message/stream or tasks/resubscribe instead.`,
        );
      case 'agent/getAuthenticatedExtendedCard':
        throw new A2AError(
          'EXTENDED_CARD_NOT_CONFIGURED',
          'This agent has no authenticated extended card (its card declares supportsAuthenticatedExtendedCard: false).',
        );
      default:
        throw new A2AError('METHOD_NOT_FOUND', `Method not found: "${method}" is not an A2A v0.3.0 method.`, {
          data: { method },
        });
    }
  }

  #requireStreaming(method: string): void {
    if (this.#card().capabilities.streaming !== true) {
      throw new A2AError(
        'UNSUPPORTED_OPERATION',
        `${method} needs streaming, which this agent's card does not declare.`,
      );
    }
  }
}

function ok(id: JsonRpcId, result: unknown): RpcOutcome {
  return { type: 'response', response: { jsonrpc: '2.0', id, result } };
}

function errorOutcome(id: JsonRpcId, code: number, message: string, data?: unknown): RpcOutcome {
  const response: JsonRpcErrorResponse = { jsonrpc: '2.0', id, error: { code, message } };
  if (data !== undefined) response.error.data = data;
  return { type: 'response', response };
}

/** The JSON-RPC error response for an error raised outside dispatch (e.g. while streaming). */
export function errorResponse(id: JsonRpcId, error: unknown): JsonRpcErrorResponse {
  if (A2AError.is(error)) {
    const response: JsonRpcErrorResponse = {
      jsonrpc: '2.0',
      id,
      error: { code: error.jsonRpcCode, message: error.message },
    };
    if (error.data !== undefined) response.error.data = error.data;
    return response;
  }
  return {
    jsonrpc: '2.0',
    id,
    error: { code: JsonRpcErrorCode.InternalError, message: 'Internal error while streaming; see the server log.' },
  };
}

/**
 * The stream options of a call. Read only by the streaming methods: a caller may create the signal
 * lazily (a getter), so a plain request costs no AbortController.
 */
function streamOptions(options: RpcCallOptions): { signal?: StreamSignal } {
  const { signal } = options;
  return signal ? { signal } : {};
}
