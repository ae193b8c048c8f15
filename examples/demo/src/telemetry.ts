/**
 * The demo's operator view. `A2A_MONITOR_TOKEN` (the operators' bearer token) turns on the
 * Prometheus metrics at `/metrics`, readable only with that token; unset, they are off.
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (the standard OpenTelemetry variable, e.g. http://collector:4318)
 * installs the OpenTelemetry SDK with an OTLP/HTTP exporter before the plugin registers, so every
 * A2A operation is traced (see docs/operating.md); `OTEL_SERVICE_NAME` names the service
 * (default fastify-a2a-demo). The SDK is a dependency of the demo only: the plugin itself depends
 * on `@opentelemetry/api` alone.
 */

import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { A2APluginOptions } from 'fastify-a2a';

type Env = Record<string, string | undefined>;

/** The plugin's `metrics` option: on, behind the bearer token, when A2A_MONITOR_TOKEN is set. */
export function demoMetrics(env: Env): Pick<A2APluginOptions, 'metrics'> {
  const token = env.A2A_MONITOR_TOKEN?.trim();
  return token ? { metrics: { bearerToken: token } } : {};
}

export interface DemoTracing {
  /** Flushes the spans still buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Installs the OpenTelemetry SDK globally when OTEL_EXPORTER_OTLP_ENDPOINT is set (the exporter
 * reads it, and the other OTEL_EXPORTER_OTLP_* variables, itself); undefined otherwise.
 */
export function startDemoTracing(env: Env): DemoTracing | undefined {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'fastify-a2a-demo' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return { shutdown: () => provider.shutdown() };
}

/** The ready line's summary of both. */
export function telemetrySummary(env: Env, tracing: DemoTracing | undefined): string {
  const metrics = env.A2A_MONITOR_TOKEN?.trim() ? 'metrics at /metrics (bearer token)' : 'metrics off';
  return `${metrics}; ${tracing === undefined ? 'tracing off' : 'tracing to OTLP'}`;
}
