/**
 * One worker process of the cross-worker tracing tests: the OpenTelemetry SDK installed as an
 * application would (spans written to SPAN_FILE, one JSON line each), then the plugin on STORE_URL
 * with push notifications on. PUSH_POLL_INTERVAL_MS sets how often this worker delivers: the test
 * gives one worker an hour, so the other one delivers. Prints `READY <port>`; closes on SIGTERM.
 */
import { trace } from '@opentelemetry/api';
import Fastify from 'fastify';
import { serveAsChildProcess } from '../../../../test-support/child-server.js';
import { a2aPlugin } from '../../src/index.js';
import { FileSpanExporter, installTracing } from './otel.js';

const workerId = process.env.WORKER_ID ?? `worker-${process.pid}`;
installTracing(new FileSpanExporter(process.env.SPAN_FILE ?? '/dev/null', workerId));

const app = Fastify({ logger: { level: 'warn' } });
await app.register(a2aPlugin, {
  agentCard: { name: 'Traced agent', description: 'Cross-worker tracing tests.', version: '1.0.0' },
  async executor(turn) {
    // The agent's own span: a child of the request's, through the active context.
    await trace.getTracer('test-agent').startActiveSpan('agent work', async (span) => {
      span.end();
    });
    await turn.complete(`done on ${workerId}`);
  },
  store: process.env.STORE_URL ?? 'memory:',
  workerId,
  retention: false,
  pushNotifications: true,
  pushAllowedCidrs: ['127.0.0.1/32'],
  pushPollIntervalMs: Number(process.env.PUSH_POLL_INTERVAL_MS ?? 50),
  pushThrottleMs: 0,
});
await serveAsChildProcess(app);
