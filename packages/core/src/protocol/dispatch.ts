/**
 * The one place every call goes through, whatever its binding and version:
 * validate and decode (the version's codec) → authorize (the application's hook) → capability gate
 * (what the card declares) → call the service. Bindings only parse their envelope and write the
 * answer.
 */

import { A2AError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { MessageSendParams } from '../model/types.js';
import { noTelemetry, type RequestTelemetry, type Telemetry } from '../telemetry.js';
import type { ProtocolCodec } from './codec.js';
import type { CallContext } from './context.js';
import {
  type A2AService,
  type Capability,
  OPERATIONS,
  type OperationName,
  type OperationParams,
  type OperationSpec,
  type StreamFrame,
} from './operations.js';
import { MAX_PARAMS_DEPTH, tooDeep } from './validation.js';

/**
 * Decides whether the caller may run the operation, after its parameters were validated. Return
 * `false` (or throw an A2AError) to refuse; refusals answer PERMISSION_DENIED (HTTP 403).
 */
export type AuthorizeHook = (
  ctx: CallContext,
  operation: OperationName,
  params: OperationParams<OperationName>,
) => boolean | undefined | Promise<boolean | undefined>;

/** What the agent's card declares, read by the capability gate on every call. */
export type DeclaredCapabilities = Readonly<Record<Capability, boolean>>;

/**
 * Checks a message a client sends (sendMessage, sendStreamingMessage) after its parameters were
 * decoded, before authorization: throw an A2AError to refuse it (the plugin refuses media types
 * the card does not accept with CONTENT_TYPE_NOT_SUPPORTED). `wireParams` are the parameters as
 * the client sent them, for what the internal model does not keep.
 */
export type MessageCheck = (params: MessageSendParams, wireParams: unknown, ctx: CallContext) => void;

export interface DispatcherOptions {
  service: A2AService;
  capabilities: DeclaredCapabilities | (() => DeclaredCapabilities);
  authorize?: AuthorizeHook;
  checkMessage?: MessageCheck;
  logger?: Logger;
  /** Where each call is reported (metrics, traces). @default noTelemetry */
  telemetry?: Telemetry;
}

export type Dispatched =
  | { readonly kind: 'result'; readonly result: unknown }
  | { readonly kind: 'stream'; readonly frames: AsyncGenerator<StreamFrame> }
  | {
      readonly kind: 'error';
      /** The error as the client may see it ({@link publicError}). */
      readonly error: A2AError;
      /**
       * The parameters were valid, so the operation itself refused or failed (rather than the
       * request being malformed). A streaming call answers these as an event of its stream.
       */
      readonly validated: boolean;
    };

const CAPABILITY_ERRORS: Record<Capability, (operation: OperationName) => A2AError> = {
  streaming: (operation) =>
    new A2AError('UNSUPPORTED_OPERATION', `${operation} needs streaming, which this agent's card does not declare.`),
  // §8.2 -32003: the card says capabilities.pushNotifications: false.
  pushNotifications: () =>
    new A2AError(
      'PUSH_NOTIFICATION_NOT_SUPPORTED',
      'Push notifications are not supported by this agent (its card declares capabilities.pushNotifications: false); use message/stream or tasks/resubscribe instead.',
    ),
  extendedAgentCard: () =>
    new A2AError(
      'EXTENDED_CARD_NOT_CONFIGURED',
      'This agent has no authenticated extended card (its card declares supportsAuthenticatedExtendedCard: false).',
    ),
};

export class Dispatcher {
  readonly #service: A2AService;
  readonly #capabilities: () => DeclaredCapabilities;
  readonly #authorize: AuthorizeHook | undefined;
  readonly #checkMessage: MessageCheck | undefined;
  readonly #log: Logger | undefined;
  readonly #telemetry: Telemetry;

  constructor(options: DispatcherOptions) {
    this.#telemetry = options.telemetry ?? noTelemetry;
    this.#service = options.service;
    const { capabilities } = options;
    this.#capabilities = typeof capabilities === 'function' ? capabilities : () => capabilities;
    this.#authorize = options.authorize;
    this.#checkMessage = options.checkMessage;
    this.#log = options.logger;
  }

  /**
   * Runs `operation` with its wire parameters in `codec`'s shapes: the result as wire JSON, the
   * frames of a stream (the binding encodes each with the codec), or the error to answer with.
   * Never throws.
   */
  dispatch(
    codec: ProtocolCodec,
    operation: OperationName,
    wireParams: unknown,
    ctx: CallContext,
    root = 'params',
  ): Promise<Dispatched> {
    // Not async itself: without telemetry a call costs no promise more than before it existed.
    if (!this.#telemetry.enabled) return this.#dispatch(codec, operation, wireParams, ctx, root, undefined);
    return this.#dispatchReported(codec, operation, wireParams, ctx, root);
  }

  /** dispatch() with telemetry on: the request reported around the call, its work in the request's scope. */
  async #dispatchReported(
    codec: ProtocolCodec,
    operation: OperationName,
    wireParams: unknown,
    ctx: CallContext,
    root: string,
  ): Promise<Dispatched> {
    const telemetry = this.#telemetry;
    const request = telemetry.requestStarted(operation, ctx);
    const report: Report = { params: undefined, result: undefined };
    const dispatched = await telemetry.runInRequest(request, () =>
      this.#dispatch(codec, operation, wireParams, ctx, root, report),
    );
    if (dispatched.kind === 'stream') {
      return { kind: 'stream', frames: reportedStream(dispatched.frames, telemetry, request, report) };
    }
    telemetry.requestEnded(
      request,
      dispatched.kind === 'error' ? dispatched.error : undefined,
      report.params,
      report.result,
    );
    return dispatched;
  }

  /** dispatch() itself; `report` (telemetry on) receives the decoded params and the result. */
  async #dispatch(
    codec: ProtocolCodec,
    operation: OperationName,
    wireParams: unknown,
    ctx: CallContext,
    root: string,
    report: Report | undefined,
  ): Promise<Dispatched> {
    let params: OperationParams<OperationName>;
    try {
      const deep = tooDeep(wireParams, MAX_PARAMS_DEPTH, root);
      if (deep !== undefined) {
        throw new A2AError(
          'INVALID_PARAMS',
          `Invalid params: ${root} nest deeper than ${MAX_PARAMS_DEPTH} levels (at ${deep.length > 120 ? `${deep.slice(0, 120)}…` : deep}); flatten the data.`,
          { data: { maxDepth: MAX_PARAMS_DEPTH } },
        );
      }
      params = codec.decode(operation, wireParams, root);
      if (this.#checkMessage !== undefined && (operation === 'sendMessage' || operation === 'sendStreamingMessage')) {
        this.#checkMessage(params as MessageSendParams, wireParams, ctx);
      }
      if (report !== undefined) report.params = params;
    } catch (error) {
      return { kind: 'error', error: publicError(error, this.#log, operation), validated: false };
    }
    try {
      if (this.#authorize !== undefined) await this.#checkAuthorized(ctx, operation, params);
      const spec = OPERATIONS[operation] as OperationSpec;
      if (spec.requires !== undefined && !this.#capabilities()[spec.requires]) {
        throw CAPABILITY_ERRORS[spec.requires](operation);
      }
      // One call site for every operation: each service method takes its own params type.
      const call = this.#service[operation] as (p: unknown, c: CallContext) => Promise<unknown>;
      const result = await call.call(this.#service, params, ctx);
      if (report !== undefined) report.result = result;
      return spec.streaming
        ? { kind: 'stream', frames: result as AsyncGenerator<StreamFrame> }
        : { kind: 'result', result: codec.encodeResult(operation, result as never) };
    } catch (error) {
      return { kind: 'error', error: publicError(error, this.#log, operation), validated: true };
    }
  }

  async #checkAuthorized(
    ctx: CallContext,
    operation: OperationName,
    params: OperationParams<OperationName>,
  ): Promise<void> {
    let allowed: boolean | undefined;
    try {
      allowed = await (this.#authorize as AuthorizeHook)(ctx, operation, params);
    } catch (error) {
      if (A2AError.is(error) && error.code === 'PERMISSION_DENIED') {
        this.#log?.warn(
          { operation, principal: ctx.principal?.id, reason: error.message },
          'a2a: call refused by authorize',
        );
      }
      throw error;
    }
    if (allowed === false) {
      // §4: a refusal is logged (who, what), so an operator sees a misconfigured rule or a probe.
      this.#log?.warn({ operation, principal: ctx.principal?.id }, 'a2a: call refused by authorize');
      const who = ctx.principal === undefined ? 'an anonymous caller' : `principal "${ctx.principal.id}"`;
      throw new A2AError('PERMISSION_DENIED', `Permission denied: ${who} may not call ${operation}.`, {
        data: { operation },
      });
    }
  }
}

/** What a reported call hands its telemetry when it ends. */
interface Report {
  params: unknown;
  result: unknown;
}

/**
 * The stream's frames, reporting the request's end when the stream ends (A2A's server span covers
 * producing the whole stream), with the last item sent as the result.
 */
async function* reportedStream(
  frames: AsyncGenerator<StreamFrame>,
  telemetry: Telemetry,
  request: RequestTelemetry,
  report: Report,
): AsyncGenerator<StreamFrame> {
  let error: A2AError | undefined;
  try {
    for await (const frame of frames) {
      report.result = frame.result;
      yield frame;
    }
  } catch (thrown) {
    error = A2AError.is(thrown) ? thrown : new A2AError('INTERNAL', 'The stream failed.');
    throw thrown;
  } finally {
    telemetry.requestEnded(request, error, report.params, report.result);
  }
}

/**
 * The error as the client may see it. A2AErrors written for clients pass as they are; anything
 * else (a store failure naming a host or user, a bug) is logged with its stack and replaced by a
 * generic internal error, so no detail of the deployment leaks.
 */
export function publicError(error: unknown, log: Logger | undefined, operation?: string): A2AError {
  if (A2AError.is(error) && error.exposed) return error;
  log?.error({ err: error, ...(operation === undefined ? {} : { operation }) }, 'a2a: internal error');
  if (A2AError.is(error) && error.code === 'STORE_UNAVAILABLE') {
    return new A2AError('UNAVAILABLE', "Service unavailable: the agent's storage did not answer; retry shortly.");
  }
  return new A2AError('INTERNAL', 'Internal error: the server failed to handle the request; see the server log.', {
    expose: true,
  });
}
