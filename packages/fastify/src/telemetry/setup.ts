/** Builds the plugin's telemetry from its `metrics` and `tracing` options; none when both are off. */

import type { A2ARuntime } from '@fastify-a2a/core';
import { A2AMetrics } from './metrics.js';
import {
  type MetricsOptions,
  metricsOptionsOf,
  type ResolvedMetricsOptions,
  type TracingOptions,
  tracingOptionsOf,
} from './options.js';
import { PluginTelemetry } from './telemetry.js';
import { A2ATracing, tracerProviderRegistered } from './tracing.js';

/** The plugin's version, as the tracer's instrumentation scope version. */
const SCOPE_VERSION = '0.1.0';

export interface Observability {
  /** Undefined when neither metrics nor tracing is on: the runtime then reports to nothing. */
  telemetry: PluginTelemetry | undefined;
  metrics: { registry: A2AMetrics; options: ResolvedMetricsOptions } | undefined;
}

/**
 * The telemetry of one agent. `runtime` is read lazily (at scrape time): the runtime is built with
 * this telemetry, so it does not exist yet.
 */
export function observabilityOf(
  options: { metrics: boolean | MetricsOptions; tracing: boolean | TracingOptions; workerId?: string | undefined },
  runtime: () => A2ARuntime,
): Observability {
  const metricsOptions = metricsOptionsOf(options.metrics);
  const metrics =
    metricsOptions === undefined
      ? undefined
      : new A2AMetrics({
          workerId: () => runtime().workerId,
          runningTurns: () => runtime().runningTurns,
          defaultMetrics: metricsOptions.defaultMetrics,
        });
  const tracingOptions = tracingOptionsOf(options.tracing);
  const tracing =
    tracingOptions !== undefined && tracerProviderRegistered() ? new A2ATracing(SCOPE_VERSION) : undefined;
  if (metrics === undefined && tracing === undefined) return { telemetry: undefined, metrics: undefined };
  return {
    telemetry: new PluginTelemetry(metrics, tracing, tracingOptions?.activeContext ?? true),
    metrics:
      metrics === undefined || metricsOptions === undefined
        ? undefined
        : { registry: metrics, options: metricsOptions },
  };
}
