/**
 * OpenTelemetry spans of one worker, with the SDK's in-memory exporter: one SERVER span per A2A
 * operation named by its method, the conventions' attribute names (semantic-conventions-genai
 * docs/gen-ai/a2a.md), the caller's W3C traceparent as parent, the agent's own spans as children,
 * and the push notification POST in the same trace, carrying it in its `traceparent` header.
 */
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { a2aPlugin } from '../../src/index.js';
import { nextId, rpcBody, testCard, userMessage } from '../helpers.js';
import type { Wire } from '../rest-helpers.js';
import { InMemorySpanExporter, installTracing, type SpanRecord } from './otel.js';
import { completedPush, finishedSpans, tracedServer } from './traced-server.js';

const exporter = installTracing(new InMemorySpanExporter());
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const traceparent = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

const server = tracedServer(exporter, {
  async executor(turn) {
    await trace.getTracer('test-agent').startActiveSpan('agent work', async (span) => {
      span.setAttribute('agent.text', turn.text);
      span.end();
    });
    await turn.complete('done');
  },
});

const spans = (): SpanRecord[] => finishedSpans(exporter);

async function rpc(method: string, params: unknown, headers: Record<string, string> = {}): Promise<Wire> {
  const res = await fetch(`${server.base}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(rpcBody(method, params)),
  });
  return res.json();
}

async function until<T>(read: () => T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('tracing', () => {
  it('SendMessage: a SERVER span under the caller’s traceparent, the agent’s span under it, and the push POST in the trace', async () => {
    const message = userMessage('trace me');
    const answer = await rpc(
      'message/send',
      { message, configuration: { pushNotificationConfig: { url: `${server.receiver.url}?token=secret` } } },
      { traceparent },
    );
    const task = answer.result;
    expect(task.status.state).toBe('completed');

    const send = spans().find((s) => s.name === 'SendMessage');
    expect(send).toMatchObject({
      kind: SpanKind.SERVER,
      traceId: TRACE_ID,
      parentSpanId: CALLER_SPAN,
      attributes: {
        'a2a.method.name': 'SendMessage',
        'a2a.protocol.version': '0.3',
        'a2a.message.id': message.messageId,
        'a2a.task.id': task.id,
        'a2a.task.state': 'TASK_STATE_COMPLETED',
        'gen_ai.conversation.id': task.contextId,
      },
      status: { code: SpanStatusCode.UNSET },
    });
    const agent = spans().find((s) => s.name === 'agent work');
    expect(agent).toMatchObject({
      traceId: TRACE_ID,
      parentSpanId: send?.spanId,
      attributes: { 'agent.text': 'trace me' },
    });

    // The notification of the final state carries the trace to the receiver.
    const { traceparent: header, post } = await completedPush(server.receiver, exporter, task.id);
    expect(header).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
    expect(post).toMatchObject({
      kind: SpanKind.CLIENT,
      traceId: TRACE_ID,
      attributes: {
        'http.request.method': 'POST',
        'a2a.task.id': task.id,
        'gen_ai.conversation.id': task.contextId,
        'server.address': '127.0.0.1',
        'http.response.status_code': 200,
      },
    });
    // The receiver's parent is the POST span itself; the URL (and its token) is not recorded.
    expect(header.split('-')[2]).toBe(post.spanId);
    expect(JSON.stringify(post.attributes)).not.toContain('secret');
  });

  it("a caller's trace it did not sample: nothing recorded, the same trace and decision carried to the push receiver", async () => {
    // The SDK's default sampler keeps the parent's decision (ParentBased): flags 00, not sampled.
    const unsampledTrace = '0af7651916cd43dd8448eb211c80319c';
    const answer = await rpc(
      'message/send',
      {
        message: userMessage('do not record me'),
        configuration: { pushNotificationConfig: { url: server.receiver.url } },
      },
      { traceparent: `00-${unsampledTrace}-b7ad6b7169203331-00` },
    );
    const task = answer.result;
    expect(task.status.state).toBe('completed');
    const notification = await until(
      () =>
        server.receiver.received.find(
          (n) => (n.body as Wire).id === task.id && (n.body as Wire).status.state === 'completed',
        ),
      'the completed notification',
    );
    expect(String(notification.headers.traceparent)).toMatch(new RegExp(`^00-${unsampledTrace}-[0-9a-f]{16}-00$`));
    // Neither the operation's span, the agent's nor the push POST's was recorded.
    expect(spans().filter((s) => s.traceId === unsampledTrace)).toEqual([]);
  });

  it('an operation that fails: status ERROR with error.type the JSON-RPC code; A2A 1.0 names its version', async () => {
    const id = nextId('missing');
    const answer = await rpc('GetTask', { id }, { 'a2a-version': '1.0' });
    expect(answer.error.code).toBe(-32001);
    const get = spans().find((s) => s.name === 'GetTask');
    expect(get).toMatchObject({
      kind: SpanKind.SERVER,
      attributes: {
        'a2a.method.name': 'GetTask',
        'a2a.protocol.version': '1.0',
        'a2a.task.id': id,
        'error.type': '-32001',
      },
      status: { code: SpanStatusCode.ERROR },
    });
    // No traceparent sent: a trace of its own (a root span).
    expect(get?.parentSpanId).toBeUndefined();
  });

  it('tracing: false traces nothing, even with an SDK installed', async () => {
    const quiet = Fastify({ logger: false });
    try {
      await quiet.register(a2aPlugin, {
        agentCard: testCard,
        executor: async (turn) => turn.complete('quiet'),
        retention: false,
        tracing: false,
      });
      const res = await quiet.inject({
        method: 'POST',
        url: '/a2a',
        headers: { 'content-type': 'application/json', traceparent },
        payload: rpcBody('message/send', { message: userMessage('untraced') }),
      });
      expect(res.json().result.status.state).toBe('completed');
      expect(spans()).toEqual([]);
    } finally {
      await quiet.close();
    }
  });

  it('a stream: SendStreamingMessage ends with the stream, with the final state', async () => {
    const res = await fetch(`${server.base}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', traceparent },
      body: JSON.stringify(rpcBody('message/stream', { message: userMessage('stream me') })),
    });
    await res.text();
    const stream = await until(() => spans().find((s) => s.name === 'SendStreamingMessage'), 'the stream span');
    expect(stream).toMatchObject({
      kind: SpanKind.SERVER,
      traceId: TRACE_ID,
      parentSpanId: CALLER_SPAN,
      attributes: { 'a2a.method.name': 'SendStreamingMessage', 'a2a.task.state': 'TASK_STATE_COMPLETED' },
    });
  });
});
