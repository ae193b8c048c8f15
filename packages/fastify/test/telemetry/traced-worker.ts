/**
 * One worker process of the cross-worker tracing tests: the OpenTelemetry SDK installed as an
 * application would (spans written to SPAN_FILE, one JSON line each), then the plugin on STORE_URL
 * with push notifications on. PUSH_POLL_INTERVAL_MS sets how often this worker delivers: the test
 * gives one worker an hour, so the other one delivers. TRACING_ACTIVE_CONTEXT=false runs the plugin
 * with `tracing: { activeContext: false }`, the agent parenting its span explicitly. Prints
 * `READY <port>`; closes on SIGTERM.
 */
import { trace } from '@opentelemetry/api';
import Fastify from 'fastify';
import { serveAsChildProcess } from '../../../../test-support/child-server.js';
import { a2aPlugin, parentContextOf } from '../../src/index.js';
import { FileSpanExporter, installTracing } from './otel.js';

const workerId = process.env.WORKER_ID ?? `worker-${process.pid}`;
installTracing(new FileSpanExporter(process.env.SPAN_FILE ?? '/dev/null', workerId));
const activeContext = process.env.TRACING_ACTIVE_CONTEXT !== 'false';

const app = Fastify({ logger: { level: 'warn' } });
await app.register(a2aPlugin, {
  agentCard: { name: 'Traced agent', description: 'Cross-worker tracing tests.', version: '1.0.0' },
  async executor(turn) {
    const tracer = trace.getTracer('test-agent');
    if (activeContext) {
      // The agent's own span: a child of the request's, through the active context.
      await tracer.startActiveSpan('agent work', async (span) => {
        span.end();
      });
    } else {
      // No active context to nest in: parented explicitly on the request's span.
      tracer.startSpan('agent work', {}, parentContextOf(turn)).end();
    }
    await turn.complete(`done on ${workerId}`);
  },
  tracing: { activeContext },
  store: process.env.STORE_URL ?? 'memory:',
  workerId,
  retention: false,
  pushNotifications: true,
  pushAllowedCidrs: ['127.0.0.1/32'],
  pushPollIntervalMs: Number(process.env.PUSH_POLL_INTERVAL_MS ?? 50),
  pushThrottleMs: 0,
});
await serveAsChildProcess(app);
