/**
 * The OpenTelemetry SDK as an application installs it, minus the exporter: spans are sampled,
 * recorded and ended, and then dropped. What tracing costs a server before any export.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';

/** The SDK's context manager alone: what AsyncLocalStorage costs (promise hooks on Node 20). */
export function installContextManagerOnly(): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}

/**
 * The SDK with no exporter. `sampler` undefined: the SDK's default (ParentBased(AlwaysOn): every
 * span sampled and recorded); a production setup samples a share of the traces instead.
 */
export function installTracingWithoutExporter(sampler?: Sampler): void {
  trace.setGlobalTracerProvider(new BasicTracerProvider(sampler === undefined ? {} : { sampler }));
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}

/** A typical production sampler: a caller's sampling decision kept, 10 % of new traces sampled. */
export function productionSampler(): Sampler {
  return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.1) });
}
