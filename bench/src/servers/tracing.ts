/**
 * The OpenTelemetry SDK as an application installs it, minus the exporter: spans are sampled,
 * recorded and ended, and then dropped. What tracing costs a server before any export.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';

/** The SDK's context manager alone: what AsyncLocalStorage costs (promise hooks on Node 20). */
export function installContextManagerOnly(): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}

export function installTracingWithoutExporter(): void {
  trace.setGlobalTracerProvider(new BasicTracerProvider());
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}
