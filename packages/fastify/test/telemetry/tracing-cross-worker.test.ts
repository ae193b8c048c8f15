/**
 * One trace across two real worker processes, on Postgres and on SQLite: a message sent to worker A
 * under a caller's traceparent runs there; its push notification is delivered by worker B (A's
 * delivery job polls once an hour), which finds the trace context in the store with the task
 * (CommitRequest.traceContext) and POSTs in the same trace. Each worker installs the OpenTelemetry
 * SDK as an application would and writes its finished spans to a file the test reads.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SpanKind } from '@opentelemetry/api';
import { afterAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../../test-support/postgres.js';
import { rpcBody, userMessage } from '../helpers.js';
import { startWebhookReceiver, type WebhookReceiver } from '../push/receiver.js';
import type { Wire } from '../rest-helpers.js';
import type { SpanRecord } from './otel.js';

const workerEntry = fileURLToPath(new URL('./traced-worker.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'a2a-tracing-'));
const pg = withPostgres('tracing');
const children: ChildProcess[] = [];
const receivers: WebhookReceiver[] = [];

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await Promise.all(receivers.map((r) => r.close()));
  rmSync(dir, { recursive: true, force: true });
});

interface Worker {
  url: string;
  spanFile: string;
  stop(): Promise<void>;
}

async function startWorker(
  id: string,
  storeUrl: string,
  pushPollIntervalMs: number,
  activeContext: boolean,
): Promise<Worker> {
  const spanFile = join(dir, `${id}-${Date.now()}.jsonl`);
  const child = spawn(process.execPath, ['--conditions=@fastify-a2a/source', '--import', 'tsx', workerEntry], {
    env: {
      ...process.env,
      STORE_URL: storeUrl,
      WORKER_ID: id,
      SPAN_FILE: spanFile,
      PUSH_POLL_INTERVAL_MS: String(pushPollIntervalMs),
      TRACING_ACTIVE_CONTEXT: String(activeContext),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (d) => {
    output += d;
  });
  child.stderr?.on('data', (d) => {
    output += d;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker ${id} did not start in 30 s:\n${output}`)), 30_000);
    child.stdout?.on('data', () => {
      const match = /READY (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    void exited.then(() => reject(new Error(`worker ${id} exited before it was ready:\n${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    spanFile,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function spansOf(worker: Worker): SpanRecord[] {
  if (!existsSync(worker.spanFile)) return [];
  return readFileSync(worker.spanFile, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as SpanRecord);
}

async function until<T>(read: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

async function oneTraceAcrossWorkers(storeUrl: string, activeContext = true): Promise<void> {
  const receiver = await startWebhookReceiver();
  receivers.push(receiver);
  // A never delivers (its job polls hourly); B delivers every 50 ms.
  const [a, b] = await Promise.all([
    startWorker('wA', storeUrl, 3_600_000, activeContext),
    startWorker('wB', storeUrl, 50, activeContext),
  ]);
  try {
    const message = userMessage('across workers');
    const res = await fetch(`${a.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
      body: JSON.stringify(
        rpcBody('message/send', { message, configuration: { pushNotificationConfig: { url: receiver.url } } }),
      ),
    });
    const task = ((await res.json()) as Wire).result;
    expect(task.status.state).toBe('completed');

    const notification = await until(
      () => receiver.received.find((n) => (n.body as Wire).status?.state === 'completed'),
      'the completed notification',
    );
    expect(String(notification.headers.traceparent)).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));

    // On A: the request's SERVER span and the agent's span, in the caller's trace.
    const send = await until(() => spansOf(a).find((s) => s.name === 'SendMessage'), 'the SendMessage span on A');
    expect(send).toMatchObject({
      kind: SpanKind.SERVER,
      traceId: TRACE_ID,
      parentSpanId: CALLER_SPAN,
      worker: 'wA',
      attributes: {
        'a2a.method.name': 'SendMessage',
        'a2a.message.id': message.messageId,
        'a2a.task.id': task.id,
        'a2a.task.state': 'TASK_STATE_COMPLETED',
        'gen_ai.conversation.id': task.contextId,
        'a2a.protocol.version': '0.3',
      },
    });
    const agent = spansOf(a).find((s) => s.name === 'agent work');
    expect(agent).toMatchObject({ traceId: TRACE_ID, parentSpanId: send.spanId });
    // On B: the push POST, in the same trace, its parent the span that made the task's last commit.
    const post = await until(
      () => spansOf(b).find((s) => s.name === 'POST' && s.attributes['a2a.task.state'] === 'TASK_STATE_COMPLETED'),
      'the push span on B',
    );
    expect(post).toMatchObject({
      kind: SpanKind.CLIENT,
      traceId: TRACE_ID,
      parentSpanId: send.spanId,
      worker: 'wB',
      attributes: {
        'a2a.task.id': task.id,
        'gen_ai.conversation.id': task.contextId,
        'http.response.status_code': 200,
      },
    });
    expect(String(notification.headers.traceparent).split('-')[2]).toBe(post.spanId);
    // A sent nothing.
    expect(spansOf(a).some((s) => s.name === 'POST')).toBe(false);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
}

describe('one trace across two worker processes', () => {
  it('on Postgres', async () => {
    await oneTraceAcrossWorkers(`${pg.url}${pg.url.includes('?') ? '&' : '?'}schema=${pg.schema}`);
  }, 90_000);

  it('on SQLite', async () => {
    await oneTraceAcrossWorkers(`sqlite:${join(dir, 'tracing.db')}`);
  }, 90_000);

  it('on Postgres, with tracing.activeContext false: the commits carry the trace without an active context', async () => {
    await oneTraceAcrossWorkers(`${pg.url}${pg.url.includes('?') ? '&' : '?'}schema=${pg.schema}`, false);
  }, 90_000);
});
