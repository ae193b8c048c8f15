/**
 * The plugin's implementation of core's Telemetry port: Prometheus metrics (when `metrics` is on)
 * and OpenTelemetry spans (when `tracing` is on), each optional; plus what readiness reports of
 * push delivery. The runtime and the dispatcher report through it; nothing else calls them.
 */

import {
  type A2AError,
  type CallContext,
  monotonicSeconds,
  type OperationName,
  type PushAttemptOutcome,
  type PushTelemetry,
  type RequestTelemetry,
  type Task,
  type TaskState,
  type Telemetry,
} from '@fastify-a2a/core';
import { context } from '@opentelemetry/api';
import { type A2AMetrics, outcomeOf } from './metrics.js';
import { A2A_METHOD_NAMES, type A2ATracing, type TracedRequest, traceparentOf } from './tracing.js';

/** One request as this telemetry follows it. */
interface Request {
  readonly method: string;
  readonly ctx: CallContext;
  readonly started: number;
  readonly traced: TracedRequest | undefined;
}

export class PluginTelemetry implements Telemetry {
  readonly enabled = true;
  readonly #metrics: A2AMetrics | undefined;
  readonly #tracing: A2ATracing | undefined;
  /** Operations run in their span's context (`tracing.activeContext`); otherwise it is never touched. */
  readonly #activeContext: boolean;
  /**
   * Each traced call's span, for {@link callTraceContext}: the runtime names the call by its
   * context, the request telemetry stays with the dispatcher. Weak: a call's entry goes with it.
   */
  readonly #spans = new WeakMap<CallContext, TracedRequest>();
  /** The last push attempt: how late it ran, and when (epoch ms); for readiness. */
  #lastPush: { backlogAgeSeconds: number; at: number } | undefined;

  constructor(metrics: A2AMetrics | undefined, tracing: A2ATracing | undefined, activeContext: boolean) {
    this.#metrics = metrics;
    this.#tracing = tracing;
    this.#activeContext = activeContext;
  }

  requestStarted(operation: OperationName, ctx: CallContext): RequestTelemetry {
    const traced = this.#tracing?.start(operation, ctx);
    const request: Request = { method: A2A_METHOD_NAMES[operation], ctx, started: monotonicSeconds(), traced };
    if (traced !== undefined) this.#spans.set(ctx, traced);
    return request;
  }

  runInRequest<T>(request: RequestTelemetry, run: () => T): T {
    const traced = (request as Request).traced;
    return traced === undefined || !this.#activeContext ? run() : context.with(traced.context, run);
  }

  requestEnded(request: RequestTelemetry, error: A2AError | undefined, params: unknown, result: unknown): void {
    const { method, ctx, started, traced } = request as Request;
    this.#metrics?.request(method, ctx.binding, ctx.version, outcomeOf(error), monotonicSeconds() - started);
    if (traced !== undefined) this.#tracing?.end(traced, error, params, result);
  }

  turnStarted(queueWaitSeconds: number): void {
    this.#metrics?.turnStarted(queueWaitSeconds);
  }

  turnEnded(state: TaskState, durationSeconds: number): void {
    this.#metrics?.turnEnded(state, durationSeconds);
  }

  traceContext(): string | undefined {
    return this.#tracing === undefined || !this.#activeContext ? undefined : traceparentOf(context.active());
  }

  callTraceContext(ctx: CallContext): string | undefined {
    const traced = this.#spans.get(ctx);
    return traced === undefined ? undefined : traceparentOf(traced.context);
  }

  commitEnded(seconds: number, events: number, failed: boolean): void {
    this.#metrics?.commitEnded(seconds, events, failed);
  }

  streamOpened(): void {
    this.#metrics?.streamOpened();
  }

  streamClosed(): void {
    this.#metrics?.streamClosed();
  }

  notificationLag(seconds: number): void {
    this.#metrics?.notificationLag(seconds);
  }

  pushStarted(task: Task, traceContext: string | undefined, url: string): PushTelemetry {
    return this.#tracing?.startPush(task, traceContext, url);
  }

  pushHeaders(push: PushTelemetry): Record<string, string> | undefined {
    return push === undefined ? undefined : this.#tracing?.pushHeaders(push as TracedRequest);
  }

  pushAttempted(
    push: PushTelemetry,
    outcome: PushAttemptOutcome,
    seconds: number,
    backlogAgeSeconds: number,
    status: number | undefined,
  ): void {
    this.#lastPush = { backlogAgeSeconds, at: Date.now() };
    this.#metrics?.pushAttempted(outcome, seconds, backlogAgeSeconds);
    if (push !== undefined) this.#tracing?.endPush(push as TracedRequest, outcome, status);
  }

  leaseRenewed(ok: boolean): void {
    this.#metrics?.leaseRenewed(ok);
  }

  workerReaped(turns: number): void {
    this.#metrics?.workerReaped(turns);
  }

  /** How late this worker's last push delivery attempt ran, and when it ran; undefined before any. */
  get lastPush(): { backlogAgeSeconds: number; at: number } | undefined {
    return this.#lastPush;
  }
}
