/**
 * OpenTelemetry spans of the A2A server, following the OpenTelemetry semantic conventions for A2A
 * (semantic-conventions-genai `docs/gen-ai/a2a.md`, "Server"): one SERVER span per operation,
 * named by its A2A method (`SendMessage`, `GetTask`, …), with the `a2a.*` attributes and
 * `gen_ai.conversation.id` (the contextId). Only `@opentelemetry/api` is used: without an SDK
 * installed by the application every call here is a no-op.
 */

import type { A2AError, CallContext, OperationName, TaskState } from '@fastify-a2a/core';
import { jsonRpcCodeFor, OPERATIONS } from '@fastify-a2a/core';
import {
  type Context,
  context,
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

/** How many tasks' trace contexts are kept for their push notifications (oldest dropped first). */
const TRACED_TASKS = 10_000;

/** A traced request: its span and the context its work runs in. */
export interface TracedRequest {
  readonly span: Span;
  readonly context: Context;
  /** The operation changes the task (a message, a cancel): its push notifications join this trace. */
  readonly writes: boolean;
}

export class A2ATracing {
  readonly #tracer: Tracer;
  /** The trace context of the request that last changed each task, for its push notifications. */
  readonly #byTask = new Map<string, Context>();

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
    const span = this.#tracer.startSpan(
      method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'a2a.method.name': method,
          'a2a.protocol.version': ctx.version,
          ...(ctx.tenant === undefined ? {} : { 'a2a.tenant': ctx.tenant }),
        },
      },
      parent,
    );
    return { span, context: trace.setSpan(parent, span), writes: OPERATIONS[operation].access === 'write' };
  }

  /** Ends the span with what the call named and answered: ids, state, the error's code. */
  end(request: TracedRequest, error: A2AError | undefined, params: unknown, result: unknown): void {
    const { span } = request;
    const message = (params as { message?: { messageId?: unknown; contextId?: unknown; taskId?: unknown } } | undefined)
      ?.message;
    if (message !== undefined) {
      setString(span, 'a2a.message.id', message.messageId);
      setString(span, 'a2a.task.id', message.taskId);
      setString(span, 'gen_ai.conversation.id', message.contextId);
    } else {
      setString(span, 'a2a.task.id', (params as { id?: unknown } | undefined)?.id);
    }
    const taskId = this.#describeResult(span, result);
    if (taskId !== undefined && request.writes) this.#remember(taskId, request.context);
    if (error !== undefined) {
      // error.type: the JSON-RPC error code, as the conventions ask ("Recording Errors").
      span.setAttribute('error.type', String(jsonRpcCodeFor[error.code]));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
    span.end();
  }

  /** The W3C trace headers for a push notification of `taskId`, when a traced request changed it here. */
  headersFor(taskId: string): Record<string, string> | undefined {
    const traced = this.#byTask.get(taskId);
    if (traced === undefined) return undefined;
    const headers: Record<string, string> = {};
    propagation.inject(traced, headers);
    return Object.keys(headers).length === 0 ? undefined : headers;
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

  #remember(taskId: string, traced: Context): void {
    this.#byTask.delete(taskId);
    this.#byTask.set(taskId, traced);
    if (this.#byTask.size > TRACED_TASKS) {
      const oldest = this.#byTask.keys().next().value;
      if (oldest !== undefined) this.#byTask.delete(oldest);
    }
  }
}

function setString(span: Span, name: string, value: unknown): void {
  if (typeof value === 'string' && value !== '') span.setAttribute(name, value);
}
