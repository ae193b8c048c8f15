/**
 * The one port through which the dispatcher and the runtime report what happens (requests, turns,
 * commits, streams, push deliveries, the worker lease), so metrics and traces are an
 * implementation of this interface (the Fastify plugin's uses prom-client and
 * @opentelemetry/api) rather than calls scattered through the runtime.
 *
 * Cost when off: every part holds {@link noTelemetry} unless given another, and reports either
 * with primitive arguments (no object built per call) or behind `telemetry.enabled`, so a server
 * without telemetry pays an empty call at most, and allocates nothing for it.
 */

import type { A2AError } from './errors.js';
import type { Task, TaskState } from './model/types.js';
import type { CallContext } from './protocol/context.js';
import type { OperationName } from './protocol/operations.js';

/** What a push delivery attempt led to (the delivery job's `DeliveryOutcome`). */
export type PushAttemptOutcome = 'sent' | 'skipped' | 'retry' | 'failed' | 'released' | 'lost';

/** A request being handled, as {@link Telemetry.requestStarted} returned it; opaque to the caller. */
export type RequestTelemetry = object | undefined;

/** A push delivery attempt, as {@link Telemetry.pushStarted} returned it; opaque to the caller. */
export type PushTelemetry = object | undefined;

export interface Telemetry {
  /**
   * Whether anything listens. Callers check it before work done only to report (reading a clock,
   * wrapping a stream); the methods of a disabled telemetry are never required to do anything.
   */
  readonly enabled: boolean;

  /** A call passed its envelope and is about to be decoded and run (before validation). */
  requestStarted(operation: OperationName, ctx: CallContext): RequestTelemetry;
  /**
   * Runs the operation inside the request's scope: a trace's context, so that the agent's turn
   * (started from within) and anything it calls are children of the request. A telemetry that
   * does not follow the active context (the plugin's `tracing: { activeContext: false }`) just
   * runs it: the runtime then carries the call's trace explicitly ({@link callTraceContext}).
   */
  runInRequest<T>(request: RequestTelemetry, run: () => T): T;
  /**
   * The call ended: `error` when it failed (as the client sees it). `params` are the decoded
   * parameters (undefined when they were invalid) and `result` the operation's result, both in the
   * internal model; for a stream, which ends here when the stream does, the last frame's item.
   */
  requestEnded(request: RequestTelemetry, error: A2AError | undefined, params: unknown, result: unknown): void;

  /** A turn got its context's slot and starts, after waiting `queueWaitSeconds` since it was accepted. */
  turnStarted(queueWaitSeconds: number): void;
  /** A turn ended, its task in `state`, `durationSeconds` after it started. */
  turnEnded(state: TaskState, durationSeconds: number): void;
  /**
   * The W3C trace context (a `traceparent` value) of the work running now, stored with each commit
   * (CommitRequest.traceContext) so that later work for the task on any worker (its push
   * notifications) joins the trace; undefined when untraced, or when the telemetry does not
   * follow the active context (then the commit carries its turn's {@link callTraceContext}).
   * Called only when `enabled`.
   */
  traceContext(): string | undefined;
  /**
   * The W3C trace context (a `traceparent` value) of the call `ctx`'s own operation span, whether
   * or not that span was made the active context; undefined when the call is untraced. The runtime
   * asks once per message it accepts and keeps it with the turn: the agent reads it
   * (TurnContext.traceContext) and commits with no active trace carry it. Called only when `enabled`.
   */
  callTraceContext(ctx: CallContext): string | undefined;
  /** A commit of `events` events took `seconds`; `failed` when the store refused or failed it. */
  commitEnded(seconds: number, events: number, failed: boolean): void;
  /** A stream (message/stream, tasks/resubscribe) began, or ended. */
  streamOpened(): void;
  streamClosed(): void;
  /**
   * An event committed on any worker reached a stream on this one after a notification,
   * `seconds` after the store recorded it.
   */
  notificationLag(seconds: number): void;

  /**
   * A push notification of `task` is about to be POSTed to `url`; `traceContext` is the one its
   * last change was committed with (TaskRecord.traceContext), whichever worker made it. Returns
   * the attempt as {@link pushHeaders} and {@link pushAttempted} take it.
   */
  pushStarted(task: Task, traceContext: string | undefined, url: string): PushTelemetry;
  /** Headers to add to the attempt's POST (W3C `traceparent`: the receiver joins the trace); undefined for none. */
  pushHeaders(push: PushTelemetry): Record<string, string> | undefined;
  /**
   * A push delivery attempt ended: the attempt, when one was started (undefined when nothing was
   * POSTed), its outcome, how long it took, how late it ran (seconds since it was due), and the
   * receiver's HTTP status when it answered.
   */
  pushAttempted(
    push: PushTelemetry,
    outcome: PushAttemptOutcome,
    seconds: number,
    backlogAgeSeconds: number,
    status: number | undefined,
  ): void;

  /** This worker's lease renewal succeeded, or failed. */
  leaseRenewed(ok: boolean): void;
  /** This worker reaped a dead one, failing `turns` turns it left running. */
  workerReaped(turns: number): void;
}

const run = <T>(_request: RequestTelemetry, fn: () => T): T => fn();
const nothing = (): void => {};

/** The telemetry of a server that reports nothing: every method does nothing. */
export const noTelemetry: Telemetry = Object.freeze({
  enabled: false,
  requestStarted: () => undefined,
  runInRequest: run,
  requestEnded: nothing,
  turnStarted: nothing,
  turnEnded: nothing,
  traceContext: () => undefined,
  callTraceContext: () => undefined,
  commitEnded: nothing,
  streamOpened: nothing,
  streamClosed: nothing,
  notificationLag: nothing,
  pushStarted: () => undefined,
  pushHeaders: () => undefined,
  pushAttempted: nothing,
  leaseRenewed: nothing,
  workerReaped: nothing,
});

/** Seconds on a monotonic clock, for durations reported to {@link Telemetry}. */
export function monotonicSeconds(): number {
  return performance.now() / 1000;
}
