/**
 * A2A 0.3's gRPC service (`a2a.v1.A2AService`) as a raw grpc-js client sees it, on the listener that
 * serves 1.0's `lf.a2a.v1.A2AService` too: each rpc with its resource names (`tasks/{id}`), the
 * ProtoJSON conversions through the core's 0.3 codec (enums, `content`, `json_name` fields, bytes,
 * Struct), errors with the status 0.3 clients read, the version check per service, and one store
 * for both versions and every binding: a task started over 0.3 gRPC is read, canceled and continued
 * over 1.0 gRPC and JSON-RPC, and the other way round.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentExecutorLike, TurnContext } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import { credentials, Client as GrpcClient, status } from '@grpc/grpc-js';
import { bearerTokens } from 'fastify-a2a';
import { afterEach, describe, expect, it } from 'vitest';
import { echoAgent } from '../../../test-support/agents.js';
import { GRPC_0_3, GRPC_1_0 } from '../src/index.js';
import { nextId, type Served, serve, waitFor } from './helpers.js';
import { collect, failureOf, type RawClient, rawClient, statusDetails } from './raw-client.js';

type Json = Record<string, unknown>;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Started {
  served: Served;
  /** A client of `a2a.v1.A2AService` (A2A 0.3). */
  v03: RawClient;
  /** A client of `lf.a2a.v1.A2AService` (A2A 1.0), on the same port. */
  v10: RawClient;
}

async function start(executor: AgentExecutorLike = echoAgent, pluginOptions: Parameters<typeof serve>[2] = {}) {
  const served = await serve(new MemoryStore(), executor, pluginOptions);
  cleanups.push(() => served.close());
  const v03 = rawClient(served.grpc.url, { version: GRPC_0_3 });
  const v10 = rawClient(served.grpc.url, { version: GRPC_1_0 });
  cleanups.push(
    () => v03.close(),
    () => v10.close(),
  );
  return { served, v03, v10 } satisfies Started;
}

/** A 0.3 SendMessageRequest in ProtoJSON: parts are `content`, the role a `ROLE_*` name. */
const send03 = (text: string, extra: Json = {}, configuration: Json = { blocking: true }): Json => ({
  message: { messageId: nextId('v03'), role: 'ROLE_USER', content: [{ text }], ...extra },
  configuration,
});

/** One JSON-RPC call on the plugin's endpoint, as 0.3 (no header) or 1.0. */
async function jsonRpc(base: string, method: string, params: unknown, version?: '1.0'): Promise<Json> {
  const response = await fetch(`${base}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(version === undefined ? {} : { 'A2A-Version': version }) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await response.json()) as Json;
}

describe('A2A 0.3 gRPC: the rpcs of a2a.v1.A2AService', () => {
  it('serves both services on one port, each call speaking the version of the service its path names', async () => {
    const { served, v03, v10 } = await start();
    const old = (await v03.unary('SendMessage', send03('hello 0.3'))).task as Json;
    expect(old).toMatchObject({
      status: { state: 'TASK_STATE_COMPLETED' },
      // The snapshot holds the streamed chunks' text as one part (the log keeps each chunk).
      artifacts: [{ parts: [{ text: 'hello 0.3' }] }],
      history: [{ role: 'ROLE_USER', content: [{ text: 'hello 0.3' }] }],
    });
    const current = await v10.unary('SendMessage', {
      message: { messageId: nextId('v10'), role: 'ROLE_USER', parts: [{ text: 'hello 1.0' }] },
    });
    expect(current).toMatchObject({ task: { status: { state: 'TASK_STATE_COMPLETED' } } });
    expect(served.grpc.url).toBe(`127.0.0.1:${served.grpc.port}`);
  });

  it('a send without blocking: true answers at once with the submitted task (proto3: blocking defaults to false)', async () => {
    const { v03 } = await start();
    const sent = (await v03.unary('SendMessage', send03('sleep:200', {}, {}))).task as Json;
    expect(sent).toMatchObject({ status: { state: 'TASK_STATE_SUBMITTED' } });
    await waitFor(
      async () =>
        ((await v03.unary('GetTask', { name: `tasks/${sent.id}` })).status as Json).state === 'TASK_STATE_COMPLETED',
    );
  });

  it('an agent that replies with a Message answers SendMessage with msg, named `message` in ProtoJSON', async () => {
    const { v03 } = await start(async (turn: TurnContext) => turn.reply(`pong: ${turn.text}`));
    const answer = await v03.unary('SendMessage', send03('ping'));
    expect(answer).not.toHaveProperty('task');
    expect(answer.message).toMatchObject({ role: 'ROLE_AGENT', content: [{ text: 'pong: ping' }] });
  });

  it('streams SendStreamingMessage: the task, the status and artifact updates, the final status with final: true', async () => {
    const { v03 } = await start();
    const { items, error } = await collect(v03.stream('SendStreamingMessage', send03('x y')));
    expect(error).toBeUndefined();
    expect(Object.keys(items[0] as Json)).toEqual(['task']);
    const artifacts = items.filter((item) => 'artifactUpdate' in item).map((item) => item.artifactUpdate as Json);
    expect(artifacts.map((a) => ((a.artifact as Json).parts as Json[])[0]?.text)).toEqual(['x', ' ', 'y']);
    expect(artifacts.at(-1)).toMatchObject({ lastChunk: true });
    expect(items.at(-1)).toMatchObject({ statusUpdate: { final: true, status: { state: 'TASK_STATE_COMPLETED' } } });
  });

  it('gets a task by its resource name, history_length limiting its history (0 is unset: all of it)', async () => {
    const { v03 } = await start();
    const asked = (await v03.unary('SendMessage', send03('ask:Name?'))).task as Json;
    const name = `tasks/${asked.id}`;
    const full = await v03.unary('GetTask', { name });
    expect(full).toMatchObject({ id: asked.id, status: { state: 'TASK_STATE_INPUT_REQUIRED' } });
    // TaskStatus.update is written `message` (its json_name) and arrives in the update field.
    expect((full.status as Json).message).toMatchObject({ role: 'ROLE_AGENT', content: [{ text: 'Name?' }] });
    expect(full.history).toHaveLength(2);
    expect((await v03.unary('GetTask', { name, historyLength: 1 })).history).toHaveLength(1);
    expect((await v03.unary('GetTask', { name, historyLength: 0 })).history).toHaveLength(2);
  });

  it('cancels by resource name: TASK_STATE_CANCELLED (two Ls); again is FAILED_PRECONDITION', async () => {
    const { v03 } = await start();
    const sent = (await v03.unary('SendMessage', send03('sleep:5000', {}, {}))).task as Json;
    const name = `tasks/${sent.id}`;
    await waitFor(async () => ((await v03.unary('GetTask', { name })).status as Json).state === 'TASK_STATE_WORKING');
    expect(await v03.unary('CancelTask', { name })).toMatchObject({ status: { state: 'TASK_STATE_CANCELLED' } });
    const again = await failureOf(v03.unary('CancelTask', { name }));
    expect(again.code).toBe(status.FAILED_PRECONDITION);
    expect(statusDetails(again).details[0]).toMatchObject({ reason: 'TASK_NOT_CANCELABLE' });
  });

  it('TaskSubscription follows a running task; on a finished one it answers the task alone and ends (0.3)', async () => {
    const { v03, v10 } = await start();
    const sent = (await v03.unary('SendMessage', send03('sleep:300', {}, {}))).task as Json;
    const name = `tasks/${sent.id}`;
    const live = await collect(v03.stream('TaskSubscription', { name }));
    expect(live.error).toBeUndefined();
    expect(live.items[0]).toMatchObject({ task: { id: sent.id } });
    expect(live.items.at(-1)).toMatchObject({
      statusUpdate: { final: true, status: { state: 'TASK_STATE_COMPLETED' } },
    });
    const done = await collect(v03.stream('TaskSubscription', { name }));
    expect(done.error).toBeUndefined();
    expect(done.items).toEqual([expect.objectContaining({ task: expect.objectContaining({ id: sent.id }) })]);
    // The same task over 1.0's service: 1.0 §3.1.6 refuses a terminal task's subscription.
    const refused = await collect(v10.stream('SubscribeToTask', { id: sent.id }));
    expect(refused.error?.code).toBe(status.FAILED_PRECONDITION);
  });

  it('creates, gets, lists and deletes push configs by resource name', async () => {
    const { v03 } = await start(echoAgent, { pushNotifications: true, pushAllowedHosts: ['127.0.0.1'] });
    const task = (await v03.unary('SendMessage', send03('ask:push?'))).task as Json;
    const parent = `tasks/${task.id}`;
    const configName = `${parent}/pushNotificationConfigs/hook-1`;
    const pushNotificationConfig = {
      id: 'hook-1',
      url: 'http://127.0.0.1:9/hook',
      token: 'tok',
      authentication: { schemes: ['Bearer'], credentials: 'cred' },
    };
    const created = await v03.unary('CreateTaskPushNotificationConfig', {
      parent,
      configId: 'hook-1',
      config: { name: configName, pushNotificationConfig },
    });
    expect(created).toEqual({ name: configName, pushNotificationConfig });
    expect(await v03.unary('GetTaskPushNotificationConfig', { name: configName })).toEqual(created);
    // The config id may come as configId alone, beside a config without one.
    await v03.unary('CreateTaskPushNotificationConfig', {
      parent,
      configId: 'hook-2',
      config: { pushNotificationConfig: { url: 'http://127.0.0.1:9/other' } },
    });
    const listed = await v03.unary('ListTaskPushNotificationConfig', { parent });
    expect((listed.configs as Json[]).map((c) => c.name).sort()).toEqual([
      configName,
      `${parent}/pushNotificationConfigs/hook-2`,
    ]);
    expect(await v03.unary('DeleteTaskPushNotificationConfig', { name: configName })).toEqual({});
    const after = await v03.unary('ListTaskPushNotificationConfig', { parent });
    expect((after.configs as Json[]).map((c) => c.name)).toEqual([`${parent}/pushNotificationConfigs/hook-2`]);
  });

  it('GetAgentCard answers the extended card in 0.3’s shape, with the gRPC interface', async () => {
    const { served, v03 } = await start(echoAgent, {
      authenticate: bearerTokens({ 'alice-token': 'alice' }),
      extendedAgentCard: { description: 'extended' },
    });
    const refused = await failureOf(v03.unary('GetAgentCard', {}));
    expect(refused.code).toBe(status.UNAUTHENTICATED);
    const card = await v03.unary('GetAgentCard', {}, { authorization: 'Bearer alice-token' });
    expect(card).toMatchObject({ protocolVersion: '0.3.0', description: 'extended', preferredTransport: 'JSONRPC' });
    expect(card.additionalInterfaces).toContainEqual({ url: served.grpc.url, transport: 'GRPC' });
  });

  it('carries bytes, a Struct and metadata through the 0.3 proto, read back over JSON-RPC as 0.3 JSON', async () => {
    const { served, v03 } = await start(async (turn: TurnContext) => turn.requireInput('more?'));
    const bytes = Buffer.from([0, 1, 2, 250, 255]).toString('base64');
    const data = { n: 1.5, flag: true, list: [1, 'two', null], nested: { deep: 'yes' } };
    const sent = (
      await v03.unary(
        'SendMessage',
        send03('ignored', {
          content: [
            { file: { fileWithBytes: bytes, mimeType: 'application/octet-stream' } },
            { file: { fileWithUri: 'https://example.com/a.pdf', mimeType: 'application/pdf' } },
            { data: { data } },
          ],
          metadata: { source: 'grpc-0.3', count: 2 },
        }),
      )
    ).task as Json;
    const got = await v03.unary('GetTask', { name: `tasks/${sent.id}` });
    expect((got.history as Json[])[0]).toMatchObject({
      content: [
        { file: { fileWithBytes: bytes, mimeType: 'application/octet-stream' } },
        { file: { fileWithUri: 'https://example.com/a.pdf', mimeType: 'application/pdf' } },
        { data: { data } },
      ],
      metadata: { source: 'grpc-0.3', count: 2 },
    });
    const overJsonRpc = await jsonRpc(served.base, 'tasks/get', { id: sent.id });
    expect((overJsonRpc.result as { history: Json[] }).history[0]).toMatchObject({
      kind: 'message',
      role: 'user',
      parts: [
        { kind: 'file', file: { bytes, mimeType: 'application/octet-stream' } },
        { kind: 'file', file: { uri: 'https://example.com/a.pdf', mimeType: 'application/pdf' } },
        { kind: 'data', data },
      ],
      metadata: { source: 'grpc-0.3', count: 2 },
    });
  });
});

describe('A2A 0.3 gRPC: errors', () => {
  it('a resource name that names no task is INVALID_ARGUMENT, with a BadRequest naming the field', async () => {
    const { v03 } = await start();
    const cases: [string, Json, string][] = [
      ['GetTask', { name: 'task-1' }, 'request.name'],
      ['GetTask', {}, 'request.name'],
      ['CancelTask', { name: 'tasks/a/b' }, 'request.name'],
      ['ListTaskPushNotificationConfig', { parent: 'contexts/x' }, 'request.parent'],
      ['GetTaskPushNotificationConfig', { name: 'tasks/t1' }, 'request.name'],
      ['DeleteTaskPushNotificationConfig', { name: 'tasks/t1/pushNotificationConfigs/' }, 'request.name'],
      ['CreateTaskPushNotificationConfig', { parent: '', config: {} }, 'request.parent'],
    ];
    for (const [method, request, field] of cases) {
      const error = await failureOf(v03.unary(method, request));
      expect(error.code, method).toBe(status.INVALID_ARGUMENT);
      expect(error.details).toContain(`${field} must be a resource name of the form "tasks/{id}`);
      const details = statusDetails(error).details;
      expect(details[0]).toMatchObject({ reason: 'INVALID_PARAMS' });
      expect(details[1]).toMatchObject({ fieldViolations: [expect.objectContaining({ field })] });
    }
    const stream = await collect(v03.stream('TaskSubscription', { name: 'nope' }));
    expect(stream.error?.code).toBe(status.INVALID_ARGUMENT);
  });

  it('an unknown task is NOT_FOUND with the TASK_NOT_FOUND ErrorInfo, unary and streaming', async () => {
    const { v03 } = await start();
    const name = `tasks/${nextId('missing')}`;
    const error = await failureOf(v03.unary('GetTask', { name }));
    expect(error.code).toBe(status.NOT_FOUND);
    expect(statusDetails(error).details[0]).toMatchObject({ reason: 'TASK_NOT_FOUND' });
    expect((await collect(v03.stream('TaskSubscription', { name }))).error?.code).toBe(status.NOT_FOUND);
  });

  it('invalid params (no message parts) are INVALID_ARGUMENT naming the field as 0.3’s proto calls it', async () => {
    const { v03 } = await start();
    const error = await failureOf(
      v03.unary('SendMessage', { message: { messageId: nextId('v03'), role: 'ROLE_USER', content: [] } }),
    );
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toMatch(/request\.message\.content/);
  });

  it('push methods without pushNotifications are UNIMPLEMENTED, the code 0.3 clients read (1.0: FAILED_PRECONDITION)', async () => {
    const { v03, v10 } = await start();
    const task = (await v03.unary('SendMessage', send03('hi'))).task as Json;
    const error = await failureOf(v03.unary('ListTaskPushNotificationConfig', { parent: `tasks/${task.id}` }));
    expect(error.code).toBe(status.UNIMPLEMENTED);
    expect(statusDetails(error).details[0]).toMatchObject({ reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED' });
    const current = await failureOf(v10.unary('ListTaskPushNotificationConfigs', { taskId: task.id }));
    expect(current.code).toBe(status.FAILED_PRECONDITION);
  });

  it('GetAgentCard without an extended card is FAILED_PRECONDITION', async () => {
    const { v03 } = await start();
    const error = await failureOf(v03.unary('GetAgentCard', {}));
    expect(error.code).toBe(status.FAILED_PRECONDITION);
    expect(statusDetails(error).details[0]).toMatchObject({ reason: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED' });
  });

  it('each service checks a2a-version against its own version, naming where the other one is', async () => {
    const { v03, v10 } = await start();
    const error = await failureOf(v03.unary('SendMessage', send03('hi'), { 'a2a-version': '1.0' }));
    expect(error.code).toBe(status.FAILED_PRECONDITION);
    expect(error.details).toMatch(/a2a\.v1\.A2AService\) speaks A2A 0\.3.*A2A 1\.0 is lf\.a2a\.v1\.A2AService/);
    expect(statusDetails(error).details[0]).toMatchObject({ reason: 'VERSION_NOT_SUPPORTED' });
    for (const version of [{ 'a2a-version': '0.3' }, { 'a2a-version': '0.3.0' }, {}] as Record<string, string>[]) {
      expect(await v03.unary('SendMessage', send03('hi'), version)).toHaveProperty('task');
    }
    const other = await failureOf(
      v10.unary(
        'SendMessage',
        { message: { messageId: nextId('v10'), role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
        { 'a2a-version': '0.3' },
      ),
    );
    expect(other.details).toMatch(/A2A 0\.3 is a2a\.v1\.A2AService, on this port too/);
  });

  it('bytes that are not the request message are INVALID_ARGUMENT naming a2a.v1, and the service goes on', async () => {
    const { served, v03 } = await start();
    const raw = rawClient(served.grpc.url, { rawRequests: true, version: GRPC_0_3 });
    cleanups.push(() => raw.close());
    const error = await failureOf(raw.unary('SendMessage', Buffer.from([0x0a, 0x7f, 0x01])));
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toMatch(/SendMessage request is not a valid a2a\.v1 protobuf message/);
    expect(await v03.unary('SendMessage', send03('still here'))).toHaveProperty('task');
  });

  it('1.0’s ListTasks is not an rpc of the 0.3 service: UNIMPLEMENTED', async () => {
    const { served } = await start();
    const client = new GrpcClient(served.grpc.url, credentials.createInsecure());
    cleanups.push(() => client.close());
    const error = await failureOf(
      new Promise((resolve, reject) =>
        client.makeUnaryRequest(
          '/a2a.v1.A2AService/ListTasks',
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

describe('A2A 0.3 gRPC: one store for every version and binding', () => {
  it('a task started over 0.3 gRPC is read over 1.0 gRPC and JSON-RPC (both versions), and canceled over 0.3', async () => {
    const { served, v03, v10 } = await start();
    const sent = (await v03.unary('SendMessage', send03('sleep:5000', {}, {}))).task as Json;
    const id = sent.id as string;
    await waitFor(
      async () => ((await v03.unary('GetTask', { name: `tasks/${id}` })).status as Json).state === 'TASK_STATE_WORKING',
    );
    expect(await v10.unary('GetTask', { id })).toMatchObject({
      id,
      contextId: sent.contextId,
      status: { state: 'TASK_STATE_WORKING' },
    });
    expect((await v10.unary('GetTask', { id })).history).toContainEqual(
      expect.objectContaining({ messageId: (sent.history as Json[])[0]?.messageId, parts: [{ text: 'sleep:5000' }] }),
    );
    expect((await jsonRpc(served.base, 'tasks/get', { id })).result).toMatchObject({
      kind: 'task',
      id,
      status: { state: 'working' },
    });
    expect((await jsonRpc(served.base, 'GetTask', { id }, '1.0')).result).toMatchObject({
      id,
      status: { state: 'TASK_STATE_WORKING' },
    });
    await v03.unary('CancelTask', { name: `tasks/${id}` });
    // One L in 1.0's enum, two in 0.3's: the same state.
    expect(await v10.unary('GetTask', { id })).toMatchObject({ status: { state: 'TASK_STATE_CANCELED' } });
    expect((await jsonRpc(served.base, 'tasks/get', { id })).result).toMatchObject({ status: { state: 'canceled' } });
  });

  it('a task started over 1.0 gRPC is continued over 0.3 gRPC, and read back over 1.0', async () => {
    const { v03, v10 } = await start();
    const asked = (
      await v10.unary('SendMessage', {
        message: { messageId: nextId('v10'), role: 'ROLE_USER', parts: [{ text: 'ask:Your name?' }] },
      })
    ).task as Json;
    expect(asked).toMatchObject({ status: { state: 'TASK_STATE_INPUT_REQUIRED' } });
    const answered = (await v03.unary('SendMessage', send03('Ada', { taskId: asked.id, contextId: asked.contextId })))
      .task as Json;
    expect(answered).toMatchObject({
      id: asked.id,
      status: { state: 'TASK_STATE_COMPLETED' },
      artifacts: [{ parts: [{ text: 'You answered: Ada' }] }],
    });
    expect(await v10.unary('GetTask', { id: asked.id })).toMatchObject({
      status: { state: 'TASK_STATE_COMPLETED' },
      artifacts: [{ parts: [{ text: 'You answered: Ada' }] }],
    });
  });

  it('a 0.3 stream following a task of another worker is ended at close with UNAVAILABLE, naming TaskSubscription', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'a2a-grpc03-close-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'a2a.db');
    // Worker A runs the task; worker B only follows it, over 0.3.
    const a = await serve(new SqliteStore({ filename: file }), echoAgent, { drainTimeoutMs: 200 });
    cleanups.push(() => a.close());
    const b = await serve(new SqliteStore({ filename: file }), echoAgent, {}, { drainGraceMs: 100 });
    cleanups.push(() => b.close());
    const clientA = rawClient(a.grpc.url, { version: GRPC_0_3 });
    const clientB = rawClient(b.grpc.url, { version: GRPC_0_3 });
    cleanups.push(
      () => clientA.close(),
      () => clientB.close(),
    );
    const sent = (await clientA.unary('SendMessage', send03('sleep:5000', {}, {}))).task as Json;
    const name = `tasks/${sent.id}`;
    const stream = collect(clientB.stream('TaskSubscription', { name }));
    await waitFor(() => b.grpc.openStreams === 1, 5000, 'the stream to open on worker B');
    await b.app.close();
    const { items, error } = await stream;
    expect(items[0]).toMatchObject({ task: { id: sent.id } });
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(error?.details).toMatch(/call TaskSubscription again/);
    expect(await clientA.unary('GetTask', { name })).toMatchObject({ status: { state: 'TASK_STATE_WORKING' } });
  });
});
