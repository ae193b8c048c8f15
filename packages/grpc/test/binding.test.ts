/**
 * The gRPC binding as a raw grpc-js client sees it: malformed input, error statuses and their
 * `google.rpc` details, the version and tenant from metadata and the request, the conversion of
 * Struct / Value / Timestamp / bytes fields, deadlines and cancelled streams, limits, and the close.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentExecutor, TurnContext } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import { status } from '@grpc/grpc-js';
import { apiKeys, bearerTokens } from 'fastify-a2a';
import { afterEach, describe, expect, it } from 'vitest';
import { echoAgent } from '../../../test-support/agents.js';
import { a2aServiceDefinition } from '../src/index.js';
import { nextId, type Served, serve, testCard, waitFor } from './helpers.js';
import { collect, failureOf, type RawClient, rawClient, statusDetails } from './raw-client.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(
  executor: AgentExecutor = echoAgent,
  grpcOptions: Parameters<typeof serve>[3] = {},
  pluginOptions: Parameters<typeof serve>[2] = {},
): Promise<{ served: Served; client: RawClient }> {
  const served = await serve(new MemoryStore(), executor, pluginOptions, grpcOptions);
  cleanups.push(() => served.close());
  const client = rawClient(served.grpc.url);
  cleanups.push(() => client.close());
  return { served, client };
}

const send = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { messageId: nextId('raw'), role: 'ROLE_USER', parts: [{ text }], ...extra },
});

describe('gRPC binding: errors', () => {
  it('answers bytes that are not the request message with INVALID_ARGUMENT, and goes on serving', async () => {
    const { served } = await start();
    const raw = rawClient(served.grpc.url, { rawRequests: true });
    cleanups.push(() => raw.close());
    // Field 2 (message) as a length-delimited field whose length runs past the end.
    const error = await failureOf(raw.unary('SendMessage', Buffer.from([0x12, 0x7f, 0x01])));
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toMatch(/SendMessage request is not a valid lf\.a2a\.v1 protobuf message/);
    expect(statusDetails(error).details[0]).toMatchObject({ reason: 'INVALID_PARAMS', domain: 'a2a-protocol.org' });
    const client = rawClient(served.grpc.url);
    cleanups.push(() => client.close());
    const ok = await client.unary('SendMessage', send('still here'));
    expect(ok).toMatchObject({ task: { status: { state: 'TASK_STATE_COMPLETED' } } });
  });

  it('answers invalid params with INVALID_ARGUMENT, an ErrorInfo and a BadRequest naming the field', async () => {
    const { client } = await start();
    const error = await failureOf(
      client.unary('SendMessage', { message: { messageId: nextId('raw'), role: 'ROLE_USER', parts: [] } }),
    );
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    const details = statusDetails(error);
    expect(details.code).toBe(status.INVALID_ARGUMENT);
    expect(details.message).toBe(error.details);
    expect(details.details[0]).toMatchObject({
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'INVALID_PARAMS',
      domain: 'a2a-protocol.org',
    });
    expect(details.details[1]).toMatchObject({ '@type': 'type.googleapis.com/google.rpc.BadRequest' });
    expect(JSON.stringify(details.details[1])).toMatch(/parts/);
  });

  it('maps A2A errors to the 1.0 table: TaskNotFound is NOT_FOUND with the task id in the ErrorInfo metadata', async () => {
    const { client } = await start();
    const id = nextId('missing');
    const error = await failureOf(client.unary('GetTask', { id }));
    expect(error.code).toBe(status.NOT_FOUND);
    expect(statusDetails(error).details[0]).toMatchObject({ reason: 'TASK_NOT_FOUND', metadata: { taskId: id } });
    const stream = await collect(client.stream('SubscribeToTask', { id }));
    expect(stream.items).toEqual([]);
    expect(stream.error?.code).toBe(status.NOT_FOUND);
  });

  it('refuses an a2a-version other than 1.0 with FAILED_PRECONDITION / VERSION_NOT_SUPPORTED; 1.0.1 and none are 1.0', async () => {
    const { client } = await start();
    const error = await failureOf(client.unary('SendMessage', send('hi'), { 'a2a-version': '0.3' }));
    expect(error.code).toBe(status.FAILED_PRECONDITION);
    expect(error.details).toMatch(/speaks A2A 1\.0/);
    expect(statusDetails(error).details[0]).toMatchObject({ reason: 'VERSION_NOT_SUPPORTED' });
    for (const version of [{ 'a2a-version': '1.0.1' }, {}] as Record<string, string>[]) {
      expect(await client.unary('SendMessage', send('hi'), version)).toHaveProperty('task');
    }
  });

  it('answers a method the service does not have with UNIMPLEMENTED', async () => {
    const { served } = await start();
    const { Client, credentials } = await import('@grpc/grpc-js');
    const client = new Client(served.grpc.url, credentials.createInsecure());
    cleanups.push(() => client.close());
    const error = await failureOf(
      new Promise((resolve, reject) =>
        client.makeUnaryRequest(
          '/lf.a2a.v1.A2AService/QuerySkill',
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.alloc(0),
          (e, v) => (e ? reject(e) : resolve(v)),
        ),
      ),
    );
    expect(error.code).toBe(status.UNIMPLEMENTED);
  });
});

describe('gRPC binding: the edge conversion', () => {
  /** Echoes the first data part and the message metadata back as an artifact; names the caller's tenant. */
  const dataEcho: AgentExecutor = {
    async execute(turn: TurnContext) {
      const data = turn.message.parts.find((p) => p.kind === 'data');
      await turn.artifact({
        name: 'echo',
        parts: [
          data ?? { kind: 'text', text: 'no data' },
          { kind: 'file', file: { bytes: 'AAEC/w==', mimeType: 'application/octet-stream' } },
        ],
        metadata: { seen: turn.message.metadata ?? null },
      });
      await turn.complete(`tenant:${turn.caller.tenant ?? 'none'}`);
    },
  };

  it('carries Struct metadata, Value data, bytes and Timestamps both ways', async () => {
    // The card accepts the JSON data part (1.0 refuses parts outside its input modes: validateInputModes).
    const { client } = await start(
      dataEcho,
      {},
      {
        agentCard: { ...testCard, defaultInputModes: ['text/plain', 'application/json'] },
      },
    );
    const value = { list: [1, 'two', null, { deep: true }], n: 1.5 };
    const answer = (await client.unary('SendMessage', {
      message: {
        messageId: nextId('raw'),
        role: 'ROLE_USER',
        parts: [{ data: value, mediaType: 'application/json' }],
        metadata: { trace: 'abc', nested: { a: [1] } },
      },
    })) as {
      task: { status: { timestamp: string }; artifacts: { parts: Record<string, unknown>[]; metadata: unknown }[] };
    };
    const artifact = answer.task.artifacts[0];
    expect(artifact?.parts[0]).toMatchObject({ data: value });
    expect(artifact?.parts[1]).toMatchObject({ raw: 'AAEC/w==', mediaType: 'application/octet-stream' });
    expect(artifact?.metadata).toEqual({ seen: { trace: 'abc', nested: { a: [1] } } });
    expect(answer.task.status.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    // A Timestamp in a request: ListTasks' statusTimestampAfter.
    const later = (await client.unary('ListTasks', { statusTimestampAfter: '2999-01-01T00:00:00Z' })) as {
      tasks?: unknown[];
    };
    expect(later.tasks ?? []).toEqual([]);
    const earlier = (await client.unary('ListTasks', { statusTimestampAfter: '2000-01-01T00:00:00.5Z' })) as {
      tasks: unknown[];
    };
    expect(earlier.tasks).toHaveLength(1);
  });

  it('reads the tenant from the request message (§10) into the caller', async () => {
    const { client } = await start(dataEcho);
    const answer = (await client.unary('SendMessage', { tenant: 'acme', ...send('hi') })) as {
      task: { status: { message: { parts: { text: string }[] } } };
    };
    expect(answer.task.status.message.parts[0]?.text).toBe('tenant:acme');
    const none = (await client.unary('SendMessage', send('hi'))) as typeof answer;
    expect(none.task.status.message.parts[0]?.text).toBe('tenant:none');
  });
});

describe('gRPC binding: the caller', () => {
  it('serves the function form of extendedAgentCard with the principal and the metadata as headers', async () => {
    const served = await serve(new MemoryStore(), echoAgent, {
      authenticate: apiKeys({ 'key-a': 'alice' }),
      extendedAgentCard: (principal, request) => ({
        description: `For ${principal.id}, via ${request.headers['user-agent']?.split(' ')[0] ?? 'nothing'}.`,
      }),
    });
    cleanups.push(() => served.close());
    const client = rawClient(served.grpc.url);
    cleanups.push(() => client.close());
    const card = (await client.unary('GetExtendedAgentCard', {}, { 'x-api-key': 'key-a' })) as {
      description: string;
      supportedInterfaces: { protocolBinding: string }[];
    };
    expect(card.description).toMatch(/^For alice, via grpc-node-js\//);
    expect(card.supportedInterfaces.map((i) => i.protocolBinding)).toContain('GRPC');
    const refused = await failureOf(client.unary('GetExtendedAgentCard', {}, { 'x-api-key': 'wrong' }));
    expect(refused.code).toBe(status.UNAUTHENTICATED);
    expect(refused.details).toMatch(/X-API-Key header is not a key this agent accepts/);
    expect(statusDetails(refused).details[0]).toMatchObject({ reason: 'UNAUTHENTICATED' });
  });
});

describe('gRPC binding: authorization', () => {
  it('runs the authorize hook with the caller and the operation: a refusal is PERMISSION_DENIED', async () => {
    const seen: string[] = [];
    const served = await serve(new MemoryStore(), echoAgent, {
      authenticate: bearerTokens({ 'tok-a': 'alice', 'tok-b': 'bob' }),
      authorize: (ctx, operation) => {
        seen.push(`${ctx.binding} ${ctx.version} ${ctx.principal?.id} ${operation}`);
        return !(operation === 'cancelTask' && ctx.principal?.id === 'bob');
      },
    });
    cleanups.push(() => served.close());
    const client = rawClient(served.grpc.url);
    cleanups.push(() => client.close());
    const sent = (await client.unary(
      'SendMessage',
      { ...send('sleep:2000'), configuration: { returnImmediately: true } },
      { authorization: 'Bearer tok-b' },
    )) as { task: { id: string } };
    const refused = await failureOf(
      client.unary('CancelTask', { id: sent.task.id }, { authorization: 'Bearer tok-b' }),
    );
    expect(refused.code).toBe(status.PERMISSION_DENIED);
    expect(refused.details).toBe('Permission denied: principal "bob" may not call cancelTask.');
    expect(statusDetails(refused).details[0]).toMatchObject({
      reason: 'PERMISSION_DENIED',
      metadata: { operation: 'cancelTask' },
    });
    expect(seen).toEqual(['GRPC 1.0 bob sendMessage', 'GRPC 1.0 bob cancelTask']);
  });
});

describe('gRPC binding: streams', () => {
  it('a deadline ends a SubscribeToTask with DEADLINE_EXCEEDED; the follow stops, the task runs on', async () => {
    const { served, client } = await start();
    const sent = (await client.unary('SendMessage', {
      ...send('sleep:1500'),
      configuration: { returnImmediately: true },
    })) as { task: { id: string } };
    const stream = await collect(client.stream('SubscribeToTask', { id: sent.task.id }, {}, 300));
    expect(stream.error?.code).toBe(status.DEADLINE_EXCEEDED);
    expect(stream.items[0]).toMatchObject({ task: { id: sent.task.id } });
    await waitFor(() => served.grpc.openStreams === 0, 2000, 'the server to end the stream');
    await waitFor(
      async () =>
        ((await client.unary('GetTask', { id: sent.task.id })) as { status: { state: string } }).status.state ===
        'TASK_STATE_COMPLETED',
      5000,
      'the task to complete',
    );
  });

  it('a client that cancels its stream ends the follow on the server, and the task is not canceled', async () => {
    const { served, client } = await start();
    const stream = client.stream('SendStreamingMessage', send('sleep:800'));
    const first = await new Promise((resolve) => stream.once('data', resolve));
    expect(first).toHaveProperty('task');
    const taskId = (first as { task: { id: string } }).task.id;
    expect(served.grpc.openStreams).toBe(1);
    stream.on('error', () => undefined); // CANCELLED, as asked
    stream.cancel();
    await waitFor(() => served.grpc.openStreams === 0, 2000, 'the server to end the stream');
    await waitFor(
      async () =>
        ((await client.unary('GetTask', { id: taskId })) as { status: { state: string } }).status.state ===
        'TASK_STATE_COMPLETED',
      5000,
      'the task to complete',
    );
  });

  it('closing the app lets a stream of a turn running here end with its final event', async () => {
    const { served, client } = await start();
    const stream = client.stream('SendStreamingMessage', send('sleep:300'));
    const done = collect(stream);
    await waitFor(() => served.grpc.openStreams === 1, 2000, 'the stream to open');
    await served.app.close();
    const { items, error } = await done;
    expect(error).toBeUndefined();
    expect(items.at(-1)).toMatchObject({ statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } });
  });
});

describe('gRPC binding: closing behind a client that stopped reading', () => {
  it('app.close() ends within a bound although a stream waits on a full write buffer', async () => {
    // A turn that writes far more than HTTP/2's flow-control window (64 KiB) to a client that
    // reads nothing, then waits: the server's writes stay buffered and never drain.
    const chunk = 'x'.repeat(32 * 1024);
    const { served } = await start(
      {
        execute: async (turn: TurnContext) => {
          for (let i = 0; i < 20; i++) await turn.artifact({ parts: [{ kind: 'text', text: chunk }] });
          await new Promise((resolve) => setTimeout(resolve, 60_000).unref());
          await turn.complete('late');
        },
      },
      { drainGraceMs: 100 },
      { drainTimeoutMs: 100 },
    );
    const session = connect(`http://${served.grpc.url}`);
    cleanups.push(() => {
      session.destroy();
    });
    const method = a2aServiceDefinition().SendStreamingMessage;
    const body = method?.requestSerialize(send('big')) as Buffer;
    const frame = Buffer.alloc(5 + body.length);
    frame.writeUInt32BE(body.length, 1);
    body.copy(frame, 5);
    const request = session.request({
      ':method': 'POST',
      ':path': '/lf.a2a.v1.A2AService/SendStreamingMessage',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    request.pause(); // and no 'data' listener: nothing is read
    request.end(frame);
    await waitFor(() => served.grpc.openStreams === 1, 5000, 'the stream to open');
    await new Promise((resolve) => setTimeout(resolve, 300)); // the turn fills the window
    // The bound: the drain's grace and wait for aborted streams, then the server's 5-s shutdown
    // that cuts the connection; before the fix the close never resolved.
    const closed = await Promise.race([
      served.app.close().then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 15_000).unref()),
    ]);
    expect(closed).toBe(true);
  });
});

describe('gRPC binding: closing beside another worker', () => {
  it('ends a stream following a task of another worker with UNAVAILABLE, and refuses new streams meanwhile', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'a2a-grpc-close-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'a2a.db');
    // Worker A runs the task; worker B only follows it.
    const a = await serve(new SqliteStore({ filename: file }), echoAgent, { drainTimeoutMs: 200 });
    cleanups.push(() => a.close());
    const b = await serve(new SqliteStore({ filename: file }), echoAgent, {}, { drainGraceMs: 100 });
    cleanups.push(() => b.close());
    const clientA = rawClient(a.grpc.url);
    const clientB = rawClient(b.grpc.url);
    cleanups.push(() => clientA.close());
    cleanups.push(() => clientB.close());
    const sent = (await clientA.unary('SendMessage', {
      ...send('sleep:5000'),
      configuration: { returnImmediately: true },
    })) as { task: { id: string } };
    const stream = collect(clientB.stream('SubscribeToTask', { id: sent.task.id }));
    await waitFor(() => b.grpc.openStreams === 1, 5000, 'the stream to open on worker B');
    const closing = b.app.close();
    const late = await collect(clientB.stream('SubscribeToTask', { id: sent.task.id }));
    await closing;
    const { items, error } = await stream;
    expect(items[0]).toMatchObject({ task: { id: sent.task.id } });
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(error?.details).toMatch(/call SubscribeToTask again/);
    // A call made while B drains is refused (or finds the listener gone): never left hanging.
    expect(late.error?.code).toBe(status.UNAVAILABLE);
    // The task is A's, untouched by B's close.
    const task = (await clientA.unary('GetTask', { id: sent.task.id })) as { status: { state: string } };
    expect(task.status.state).toBe('TASK_STATE_WORKING');
  });
});

describe('gRPC binding: limits', () => {
  it('refuses a request over maxReceiveMessageBytes with RESOURCE_EXHAUSTED', async () => {
    const { client } = await start(echoAgent, { maxReceiveMessageBytes: 1024 });
    const error = await failureOf(client.unary('SendMessage', send('x'.repeat(4096))));
    expect(error.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(await client.unary('SendMessage', send('small'))).toHaveProperty('task');
  });

  it('maxConcurrentStreams holds a connection’s further calls until one ends', async () => {
    const { client } = await start(echoAgent, { maxConcurrentStreams: 1 });
    const ended: string[] = [];
    const held = collect(client.stream('SendStreamingMessage', send('sleep:400'))).then((r) => {
      ended.push('held');
      return r;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const quick = client.unary('GetTask', { id: nextId('none') }).catch(() => {
      ended.push('quick');
    });
    await Promise.all([held, quick]);
    expect(ended).toEqual(['held', 'quick']);
  });

  it('refuses bad options with a coded error that names the option', async () => {
    const { serveGrpc } = await import('../src/index.js');
    const served = await serve(new MemoryStore(), echoAgent);
    cleanups.push(() => served.close());
    await expect(serveGrpc(served.app, { port: -1 })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
      message: expect.stringMatching(/"port"/),
    });
    await expect(serveGrpc(served.app, { port: served.grpc.port })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
      message: expect.stringMatching(/cannot listen on 127\.0\.0\.1:\d+ \(is the port in use\?\)/),
    });
    await expect(serveGrpc(served.app, { port: 0 })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
      message: expect.stringMatching(/before app\.listen\(\) or app\.ready\(\)/),
    });
    await expect(serveGrpc(served.app, { port: 0, maxConcurrentStreams: 0 })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
      message: expect.stringMatching(/"maxConcurrentStreams"/),
    });
  });
});
