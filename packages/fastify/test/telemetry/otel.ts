/**
 * The OpenTelemetry SDK as an application installs it, for the tracing tests: a tracer provider
 * with a span processor, the AsyncLocalStorage context manager and the W3C trace-context
 * propagator, registered globally (what the plugin's `@opentelemetry/api` calls then reach).
 */
import { appendFileSync } from 'node:fs';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { type ExportResult, ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';

/** A finished span as the tests read it (also the JSON line a worker process writes). */
export interface SpanRecord {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
  worker?: string;
}

export function recordOf(span: ReadableSpan, worker?: string): SpanRecord {
  const { traceId, spanId } = span.spanContext();
  return {
    name: span.name,
    kind: span.kind,
    traceId,
    spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    attributes: { ...span.attributes },
    status: { code: span.status.code, ...(span.status.message === undefined ? {} : { message: span.status.message }) },
    ...(worker === undefined ? {} : { worker }),
  };
}

/** Writes each finished span as one JSON line to `file`: how a worker process hands its spans to the test. */
export class FileSpanExporter implements SpanExporter {
  constructor(
    readonly file: string,
    readonly worker: string,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    for (const span of spans) appendFileSync(this.file, `${JSON.stringify(recordOf(span, this.worker))}\n`);
    done({ code: ExportResultCode.SUCCESS });
  }

  async shutdown(): Promise<void> {}
}

/** Installs the SDK globally with `exporter`; call before registering the plugin. */
export function installTracing<T extends SpanExporter>(exporter: T): T {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return exporter;
}

export { InMemorySpanExporter };
