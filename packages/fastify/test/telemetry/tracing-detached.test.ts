/**
 * `tracing: { activeContext: false }`: the plugin traces without ever making a span the active
 * OpenTelemetry context (no `context.with`, so on Node 20 AsyncLocalStorage's promise hooks stay
 * off). The operation span, its attributes, the trace stored with the commits and carried to the
 * push receiver are those of the default; the agent gets the span explicitly (`turn.traceContext`,
 * `parentContextOf(turn)`), and what relies on the active context no longer nests.
 */
import type { TurnContext } from '@fastify-a2a/core';
import { type Context, context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { a2aPlugin, parentContextOf } from '../../src/index.js';
import { rpcBody, testCard, userMessage } from '../helpers.js';
import type { Wire } from '../rest-helpers.js';
import { InMemorySpanExporter, installTracing, type SpanRecord } from './otel.js';
import { completedPush, finishedSpans, tracedServer } from './traced-server.js';

const exporter = installTracing(new InMemorySpanExporter());
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const traceparent = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

/** What the agent saw of its turn, by the text of the message that started it. */
const seen = new Map<string, { traceContext: string | undefined; active: Context }>();

async function tracedAgent(turn: TurnContext): Promise<void> {
  seen.set(turn.text, { traceContext: turn.traceContext, active: context.active() });
  const tracer = trace.getTracer('test-agent');
  // Parented explicitly: nests under the operation span.
  tracer.startSpan('agent work', { attributes: { 'agent.text': turn.text } }, parentContextOf(turn)).end();
  // Parented on the active context, as auto-instrumented libraries do: with the option off it
  // finds no span there.
  tracer.startActiveSpan('library call', (span) => span.end());
  await turn.complete('done');
}

const server = tracedServer(exporter, {
  executor: tracedAgent,
  tracing: { activeContext: false },
});

const spans = (): SpanRecord[] => finishedSpans(exporter);

async function send(text: string, configuration?: unknown): Promise<Wire> {
  const res = await fetch(`${server.base}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent },
    body: JSON.stringify(rpcBody('message/send', { message: userMessage(text), configuration })),
  });
  return ((await res.json()) as Wire).result;
}

describe('tracing with activeContext: false', () => {
  it('the operation span as by default, the agent’s explicitly parented span under it, and the push POST in the trace', async () => {
    const task = await send('detached', { pushNotificationConfig: { url: server.receiver.url } });
    expect(task.status.state).toBe('completed');

    const operation = spans().find((s) => s.name === 'SendMessage');
    expect(operation).toMatchObject({
      kind: SpanKind.SERVER,
      traceId: TRACE_ID,
      parentSpanId: CALLER_SPAN,
      attributes: {
        'a2a.method.name': 'SendMessage',
        'a2a.protocol.version': '0.3',
        'a2a.task.id': task.id,
        'a2a.task.state': 'TASK_STATE_COMPLETED',
        'gen_ai.conversation.id': task.contextId,
      },
      status: { code: SpanStatusCode.UNSET },
    });
    const operationSpan = operation?.spanId;
    expect(seen.get('detached')?.traceContext).toBe(`00-${TRACE_ID}-${operationSpan}-01`);
    expect(spans().find((s) => s.name === 'agent work')).toMatchObject({
      traceId: TRACE_ID,
      parentSpanId: operationSpan,
      attributes: { 'agent.text': 'detached' },
    });

    // The commits carried the operation's trace to the push job, which read it from the store.
    const { traceparent: header, post } = await completedPush(server.receiver, exporter, task.id);
    expect(post).toMatchObject({ kind: SpanKind.CLIENT, traceId: TRACE_ID, parentSpanId: operationSpan });
    expect(header).toBe(`00-${TRACE_ID}-${post.spanId}-01`);
  });

  it('the executor runs outside the span’s context: the active context holds no span, and active-context spans start traces of their own', async () => {
    await send('where am I');
    const { active } = seen.get('where am I') ?? {};
    expect(active).toBe(ROOT_CONTEXT);
    expect(trace.getSpan(active ?? ROOT_CONTEXT)).toBeUndefined();
    const library = spans().find((s) => s.name === 'library call');
    expect(library?.parentSpanId).toBeUndefined();
    expect(library?.traceId).not.toBe(TRACE_ID);
  });

  it('by default (activeContext: true) the turn gets the same trace context, and the span is the active one', async () => {
    const nested = Fastify({ logger: false });
    try {
      await nested.register(a2aPlugin, { agentCard: testCard, executor: tracedAgent, retention: false });
      const res = await nested.inject({
        method: 'POST',
        url: '/a2a',
        headers: { 'content-type': 'application/json', traceparent },
        payload: rpcBody('message/send', { message: userMessage('nested') }),
      });
      expect(res.json().result.status.state).toBe('completed');
      const operation = spans().find((s) => s.name === 'SendMessage');
      expect(seen.get('nested')?.traceContext).toBe(`00-${TRACE_ID}-${operation?.spanId}-01`);
      expect(trace.getSpan(seen.get('nested')?.active ?? ROOT_CONTEXT)?.spanContext().spanId).toBe(operation?.spanId);
      expect(spans().find((s) => s.name === 'library call')?.parentSpanId).toBe(operation?.spanId);
    } finally {
      await nested.close();
    }
  });

  it('an untraced turn: no trace context, and parentContextOf gives the root context', async () => {
    const quiet = Fastify({ logger: false });
    try {
      await quiet.register(a2aPlugin, { agentCard: testCard, executor: tracedAgent, retention: false, tracing: false });
      await quiet.inject({
        method: 'POST',
        url: '/a2a',
        headers: { 'content-type': 'application/json', traceparent },
        payload: rpcBody('message/send', { message: userMessage('untraced') }),
      });
      expect(seen.get('untraced')?.traceContext).toBeUndefined();
      expect(parentContextOf({ traceContext: undefined })).toBe(ROOT_CONTEXT);
      expect(spans().filter((s) => s.name === 'SendMessage')).toEqual([]);
    } finally {
      await quiet.close();
    }
  });

  it.each([
    ['a string', 'yes', /"tracing" must be true, false or \{ activeContext\? \}/],
    ['activeContext that is not a boolean', { activeContext: 'no' }, /"tracing\.activeContext" must be true or false/],
    ['an unknown field', { active: false }, /"tracing\.active" is not an option of tracing \(activeContext\)/],
  ])('refuses a tracing option with %s', async (_what, tracing, message) => {
    const other = Fastify({ logger: false });
    try {
      await expect(
        other.register(a2aPlugin, {
          agentCard: testCard,
          executor: async (turn) => turn.complete('x'),
          tracing: tracing as never,
        }),
      ).rejects.toThrow(message);
    } finally {
      await other.close();
    }
  });
});
