/**
 * What the single-worker tracing tests share: a traced server with push notifications delivered at
 * once to a loopback receiver, and the wait for a task's `completed` notification with the POST
 * span that delivered it.
 */
import type { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type A2APluginOptions, a2aPlugin } from '../../src/index.js';
import { listen, testCard, waitFor } from '../helpers.js';
import { startWebhookReceiver, type WebhookReceiver } from '../push/receiver.js';
import type { Wire } from '../rest-helpers.js';
import { recordOf, type SpanRecord } from './otel.js';

export interface TracedServer {
  /** The server's base URL, once `beforeAll` has run. */
  readonly base: string;
  readonly receiver: WebhookReceiver;
}

/**
 * Starts the plugin with `options` (the test card, push to the loopback receiver delivered at once)
 * before the file's tests and closes it after them; empties the exporter before each test.
 */
export function tracedServer(
  exporter: InMemorySpanExporter,
  options: Pick<A2APluginOptions, 'executor'> & Partial<A2APluginOptions>,
): TracedServer {
  let app: FastifyInstance | undefined;
  const server = { base: '', receiver: undefined as unknown as WebhookReceiver };
  beforeAll(async () => {
    server.receiver = await startWebhookReceiver();
    app = Fastify({ logger: false });
    await app.register(a2aPlugin, {
      agentCard: testCard,
      retention: false,
      drainTimeoutMs: 200,
      pushNotifications: true,
      pushAllowedCidrs: ['127.0.0.1/32'],
      pushPollIntervalMs: 20,
      pushThrottleMs: 0,
      ...options,
    });
    server.base = await listen(app);
  });
  afterAll(async () => {
    await app?.close();
    await server.receiver?.close();
  });
  beforeEach(() => exporter.reset());
  return server;
}

/** The finished spans the exporter holds. */
export function finishedSpans(exporter: InMemorySpanExporter): SpanRecord[] {
  return exporter.getFinishedSpans().map((span) => recordOf(span));
}

/**
 * Waits for the receiver to get `taskId`'s `completed` notification and for the POST span that
 * sent it: its `traceparent` header and that span.
 */
export async function completedPush(
  receiver: WebhookReceiver,
  exporter: InMemorySpanExporter,
  taskId: string,
): Promise<{ traceparent: string; post: SpanRecord }> {
  const notification = await waitFor(
    () =>
      receiver.received.find((n) => (n.body as Wire).id === taskId && (n.body as Wire).status.state === 'completed'),
    10_000,
    'the completed notification',
  );
  const post = await waitFor(
    () =>
      finishedSpans(exporter).find(
        (s) =>
          s.name === 'POST' &&
          s.attributes['a2a.task.id'] === taskId &&
          s.attributes['a2a.task.state'] === 'TASK_STATE_COMPLETED',
      ),
    10_000,
    'the push span',
  );
  return { traceparent: String(notification.headers.traceparent), post };
}
