/**
 * The OpenTelemetry SDK as an application installs it, minus the exporter: spans are sampled,
 * recorded and ended, and then dropped. What tracing costs a server before any export.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';

export function installTracingWithoutExporter(): void {
  trace.setGlobalTracerProvider(new BasicTracerProvider());
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}
