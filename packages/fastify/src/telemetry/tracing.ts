/**
 * OpenTelemetry spans of the A2A server, following the OpenTelemetry semantic conventions for A2A
 * (semantic-conventions-genai `docs/gen-ai/a2a.md`, "Server"): one SERVER span per operation,
 * named by its A2A method (`SendMessage`, `GetTask`, …), with the `a2a.*` attributes and
 * `gen_ai.conversation.id` (the contextId). Only `@opentelemetry/api` is used: without an SDK
 * installed by the application every call here is a no-op.
 */

import type { A2AError, CallContext, OperationName, Task, TaskState } from '@fastify-a2a/core';
import { jsonRpcCodeFor } from '@fastify-a2a/core';
import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  ProxyTracerProvider,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { RequestContext } from '../context.js';

/**
 * Whether the application registered an OpenTelemetry SDK (a global tracer provider): without one
 * the plugin does not trace at all, and pays nothing for it.
 */
export function tracerProviderRegistered(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegateTracer('fastify-a2a') !== undefined;
}

/** The `a2a.method.name` of each operation (the conventions' well-known values, A2A 1.0 names). */
export const A2A_METHOD_NAMES: Readonly<Record<OperationName, string>> = {
  sendMessage: 'SendMessage',
  sendStreamingMessage: 'SendStreamingMessage',
  getTask: 'GetTask',
  listTasks: 'ListTasks',
  cancelTask: 'CancelTask',
  subscribeToTask: 'SubscribeToTask',
  setTaskPushNotificationConfig: 'CreateTaskPushNotificationConfig',
  getTaskPushNotificationConfig: 'GetTaskPushNotificationConfig',
  listTaskPushNotificationConfig: 'ListTaskPushNotificationConfigs',
  deleteTaskPushNotificationConfig: 'DeleteTaskPushNotificationConfig',
  getExtendedAgentCard: 'GetExtendedAgentCard',
};

/** The conventions' `a2a.task.state` values (A2A 1.0 enum names) for the internal (0.3) states. */
export function taskStateAttribute(state: TaskState): string {
  return state === 'unknown' ? 'TASK_STATE_UNSPECIFIED' : `TASK_STATE_${state.toUpperCase().replace('-', '_')}`;
}

/** Header getter for W3C trace context extraction from a Fastify request's headers. */
const headerGetter = {
  keys: (carrier: Record<string, unknown>) => Object.keys(carrier),
  get: (carrier: Record<string, unknown>, key: string) => {
    const value = carrier[key];
    return typeof value === 'string' || Array.isArray(value) ? (value as string | string[]) : undefined;
  },
};

/** A traced request: its span and the context its work runs in. */
export interface TracedRequest {
  readonly span: Span;
  readonly context: Context;
}

/** W3C traceparent: version 00, trace id, parent span id, flags (www.w3.org/TR/trace-context §3.2). */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The `traceparent` value of the span active in `ctx`, or undefined when there is none (or it is invalid). */
export function traceparentOf(ctx: Context): string | undefined {
  const span = trace.getSpan(ctx);
  if (span === undefined) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (!isSpanContextValid(span.spanContext())) return undefined;
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A context whose (remote) parent is the span `traceparent` names; ROOT_CONTEXT for an invalid one. */
export function contextOfTraceparent(traceparent: string | undefined): Context {
  const match = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (match === null) return ROOT_CONTEXT;
  const spanContext = {
    traceId: match[1] as string,
    spanId: match[2] as string,
    traceFlags: Number.parseInt(match[3] as string, 16),
    isRemote: true,
  };
  return isSpanContextValid(spanContext) ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : ROOT_CONTEXT;
}

/**
 * The OpenTelemetry context to parent an agent's spans on: the operation span of the request that
 * started the turn (`turn.traceContext`), e.g. `tracer.startSpan('plan', {}, parentContextOf(turn))`;
 * the root context (a trace of its own) when the turn is untraced. Needed with
 * `tracing: { activeContext: false }`, where that span is not the active context.
 */
export function parentContextOf(turn: { readonly traceContext: string | undefined }): Context {
  return contextOfTraceparent(turn.traceContext);
}

export class A2ATracing {
  readonly #tracer: Tracer;

  constructor(version: string) {
    this.#tracer = trace.getTracer('fastify-a2a', version);
  }

  /**
   * Starts the operation's span, as a child of the caller's trace when the request carries W3C
   * `traceparent` (through the application's registered propagator).
   */
  start(operation: OperationName, ctx: CallContext): TracedRequest {
    const parent =
      ctx instanceof RequestContext
        ? propagation.extract(ROOT_CONTEXT, ctx.request.headers, headerGetter)
        : context.active();
    const method = A2A_METHOD_NAMES[operation];
    const attributes: Attributes = { 'a2a.method.name': method, 'a2a.protocol.version': ctx.version };
    // Set rather than spread from a fresh object: no throwaway object per request.
    if (ctx.tenant !== undefined) attributes['a2a.tenant'] = ctx.tenant;
    const span = this.#tracer.startSpan(method, { kind: SpanKind.SERVER, attributes }, parent);
    return { span, context: trace.setSpan(parent, span) };
  }

  /** Ends the span with what the call named and answered: ids, state, the error's code. */
  end(request: TracedRequest, error: A2AError | undefined, params: unknown, result: unknown): void {
    const { span } = request;
    // A span the sampler dropped records nothing: its attributes would be read out of the params
    // and result only to be thrown away (with a ratio sampler, most requests).
    if (!span.isRecording()) {
      span.end();
      return;
    }
    const message = (params as { message?: { messageId?: unknown; contextId?: unknown; taskId?: unknown } } | undefined)
      ?.message;
    if (message !== undefined) {
      setString(span, 'a2a.message.id', message.messageId);
      setString(span, 'a2a.task.id', message.taskId);
      setString(span, 'gen_ai.conversation.id', message.contextId);
    } else {
      setString(span, 'a2a.task.id', (params as { id?: unknown } | undefined)?.id);
    }
    this.#describeResult(span, result);
    if (error !== undefined) {
      // error.type: the JSON-RPC error code, as the conventions ask ("Recording Errors").
      span.setAttribute('error.type', String(jsonRpcCodeFor[error.code]));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
    span.end();
  }

  /**
   * A CLIENT span for a push notification POST (OpenTelemetry's HTTP client conventions: named by
   * the method), child of the trace the task's last change was committed in, on whichever worker
   * that was. The URL itself is not recorded: receivers put tokens in query strings.
   */
  startPush(task: Task, traceContext: string | undefined, url: string): TracedRequest {
    const parent = contextOfTraceparent(traceContext);
    let target: URL | undefined;
    try {
      target = new URL(url);
    } catch {
      target = undefined;
    }
    const span = this.#tracer.startSpan(
      'POST',
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': 'POST',
          'a2a.task.id': task.id,
          'a2a.task.state': taskStateAttribute(task.status.state),
          'gen_ai.conversation.id': task.contextId,
          ...(target === undefined
            ? {}
            : {
                'server.address': target.hostname,
                'server.port': Number(target.port || (target.protocol === 'https:' ? 443 : 80)),
                'url.scheme': target.protocol.replace(':', ''),
              }),
        },
      },
      parent,
    );
    return { span, context: trace.setSpan(parent, span) };
  }

  /** The headers that carry the push span's trace to the receiver (the application's propagator: W3C by default). */
  pushHeaders(push: TracedRequest): Record<string, string> | undefined {
    const headers: Record<string, string> = {};
    propagation.inject(push.context, headers);
    return Object.keys(headers).length === 0 ? undefined : headers;
  }

  endPush(push: TracedRequest, outcome: string, status: number | undefined): void {
    const { span } = push;
    if (!span.isRecording()) {
      span.end();
      return;
    }
    if (status !== undefined) span.setAttribute('http.response.status_code', status);
    if (outcome !== 'sent' && outcome !== 'skipped') {
      span.setAttribute('error.type', status === undefined ? outcome : String(status));
      span.setStatus({ code: SpanStatusCode.ERROR, message: `push delivery ${outcome}` });
    }
    span.end();
  }

  /** Sets the task attributes of a result (a Task, a Message, a stream's event); its task id. */
  #describeResult(span: Span, result: unknown): string | undefined {
    if (result === null || typeof result !== 'object') return undefined;
    const item = result as {
      kind?: unknown;
      id?: unknown;
      taskId?: unknown;
      contextId?: unknown;
      status?: { state?: TaskState };
    };
    const taskId = item.kind === 'task' ? item.id : item.taskId;
    setString(span, 'a2a.task.id', taskId);
    setString(span, 'gen_ai.conversation.id', item.contextId);
    const state = item.status?.state;
    if (typeof state === 'string') span.setAttribute('a2a.task.state', taskStateAttribute(state));
    return typeof taskId === 'string' ? taskId : undefined;
  }
}

function setString(span: Span, name: string, value: unknown): void {
  if (typeof value === 'string' && value !== '') span.setAttribute(name, value);
}
