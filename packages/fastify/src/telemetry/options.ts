/**
 * The `metrics` and `tracing` plugin options: their types, checks and what they resolve to. Kept
 * apart from options.ts, which only lists them.
 */

import type { FastifyRequest } from 'fastify';

/** Decides whether a request may read `/metrics`: true to allow. */
export type MetricsAuthorize = (request: FastifyRequest) => boolean | Promise<boolean>;

export interface MetricsOptions {
  /** Where the exposition is served, under the agent's `prefix`. @default '/metrics' */
  path?: string;
  /**
   * A bearer token the scraper must send (`Authorization: Bearer <token>`); compared in constant
   * time. Without it and without `authorize`, `/metrics` is open to anyone who reaches it.
   */
  bearerToken?: string;
  /** Your own check of the scrape request (after `bearerToken`, when both are given). */
  authorize?: MetricsAuthorize;
  /** Also export prom-client's process and Node.js metrics (`process_*`, `nodejs_*`). @default true */
  defaultMetrics?: boolean;
}

export interface ResolvedMetricsOptions {
  path: string;
  bearerToken: string | undefined;
  authorize: MetricsAuthorize | undefined;
  defaultMetrics: boolean;
}

/** The `metrics` option's problem ("must be …"), or undefined. */
export function checkMetrics(value: unknown): string | undefined {
  if (typeof value === 'boolean') return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return 'must be true, false or { path?, bearerToken?, authorize?, defaultMetrics? }';
  }
  const { path, bearerToken, authorize, defaultMetrics, ...rest } = value as MetricsOptions;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined)
    return `.${unknown} is not an option of metrics (path, bearerToken, authorize, defaultMetrics)`;
  if (path !== undefined && (typeof path !== 'string' || !path.startsWith('/'))) {
    return '.path must start with "/" (e.g. "/metrics")';
  }
  if (bearerToken !== undefined && (typeof bearerToken !== 'string' || bearerToken === '')) {
    return '.bearerToken must be a non-empty string';
  }
  if (authorize !== undefined && typeof authorize !== 'function')
    return '.authorize must be a function (request) => boolean';
  if (defaultMetrics !== undefined && typeof defaultMetrics !== 'boolean')
    return '.defaultMetrics must be true or false';
  return undefined;
}

/** The `metrics` option resolved; undefined when metrics are off. */
export function metricsOptionsOf(value: boolean | MetricsOptions | undefined): ResolvedMetricsOptions | undefined {
  if (value === undefined || value === false) return undefined;
  const given = value === true ? {} : value;
  return {
    path: given.path ?? '/metrics',
    bearerToken: given.bearerToken,
    authorize: given.authorize,
    defaultMetrics: given.defaultMetrics ?? true,
  };
}

export interface TracingOptions {
  /**
   * Make each operation's span the active OpenTelemetry context while the operation and the
   * agent's turn run (`context.with`), so spans started inside — the agent's own with
   * `startActiveSpan`, and those of auto-instrumented libraries it calls (HTTP clients, database
   * drivers) — nest under it by themselves.
   *
   * `false` never touches the active context: the operation span, the trace stored with each
   * commit, push deliveries and the trace across workers are the same, and the agent gets the span
   * explicitly (`turn.traceContext`; `parentContextOf(turn)` as the parent of its spans). What is
   * lost: spans that rely on the active context (auto-instrumented libraries inside the agent,
   * `startActiveSpan` without a parent) start traces of their own unless the agent wraps its work
   * in `context.with(parentContextOf(turn), …)` itself. What is won: on Node 20, the first
   * `context.with` turns on AsyncLocalStorage's promise hooks, which then tax every promise of the
   * process; without it, tracing costs about half as much CPU (bench/TELEMETRY.md).
   * @default true
   */
  activeContext?: boolean;
}

export interface ResolvedTracingOptions {
  activeContext: boolean;
}

/** The `tracing` option's problem ("must be …"), or undefined. */
export function checkTracing(value: unknown): string | undefined {
  if (typeof value === 'boolean') return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return 'must be true, false or { activeContext? }';
  }
  const { activeContext, ...rest } = value as TracingOptions;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) return `.${unknown} is not an option of tracing (activeContext)`;
  if (activeContext !== undefined && typeof activeContext !== 'boolean') return '.activeContext must be true or false';
  return undefined;
}

/** The `tracing` option resolved; undefined when tracing is off. */
export function tracingOptionsOf(value: boolean | TracingOptions | undefined): ResolvedTracingOptions | undefined {
  if (value === false) return undefined;
  const given = value === undefined || value === true ? {} : value;
  return { activeContext: given.activeContext ?? true };
}
