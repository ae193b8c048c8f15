/**
 * A2A 1.0 beside 0.3 on the JSON-RPC endpoint: the `A2A-Version` header (or query parameter) picks
 * the version, one store serves both, and each version gets its own names and shapes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp, parseSse, type TestApp, userMessage } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

let counter = 0;
const v1Message = (text: string, extra: Record<string, unknown> = {}) => ({
  messageId: `v1-${Date.now()}-${++counter}`,
  role: 'ROLE_USER',
  parts: [{ text }],
  ...extra,
});

async function rpc(
  method: string,
  params: unknown,
  headers: Record<string, string> = { 'a2a-version': '1.0' },
  url = '/a2a',
) {
  const res = await (t as TestApp).app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: { jsonrpc: '2.0', id: 1, method, params },
  });
  return res;
}

describe('A2A-Version on JSON-RPC', () => {
  it('1.0: SendMessage answers {task} in ProtoJSON, and the response names the version that answered', async () => {
    t = await buildApp(async (turn) => {
      await turn.artifact({ name: 'echo', text: turn.text, metadata: { caller: turn.caller.version } });
      await turn.complete();
    });
    const res = await rpc('SendMessage', { message: v1Message('hello') });
    expect(res.statusCode).toBe(200);
    expect(res.headers['a2a-version']).toBe('1.0');
    const { result } = res.json();
    expect(result.task).toMatchObject({
      status: { state: 'TASK_STATE_COMPLETED' },
      artifacts: [{ name: 'echo', parts: [{ text: 'hello' }], metadata: { caller: '1.0' } }],
      history: [{ role: 'ROLE_USER', parts: [{ text: 'hello' }] }],
    });
    expect(JSON.stringify(result)).not.toContain('"kind"');
  });

  it('a task created over 0.3 is read, continued and canceled over 1.0, and the other way round', async () => {
    t = await buildApp(async (turn) => {
      await turn.requireInput(`Got ${turn.text}; more?`);
    });
    const created = (await rpc('message/send', { message: userMessage('from 0.3') }, {})).json().result;
    expect(created.status.state).toBe('input-required');
    const got = (await rpc('GetTask', { id: created.id, historyLength: 1 })).json().result;
    expect(got).toMatchObject({ id: created.id, status: { state: 'TASK_STATE_INPUT_REQUIRED' } });
    expect(got.history).toHaveLength(1);
    const continued = (await rpc('SendMessage', { message: v1Message('from 1.0', { taskId: created.id }) })).json()
      .result;
    expect(continued.task).toMatchObject({ id: created.id, status: { state: 'TASK_STATE_INPUT_REQUIRED' } });
    const canceled = (await rpc('CancelTask', { id: created.id })).json().result;
    expect(canceled.status.state).toBe('TASK_STATE_CANCELED');
    const seen03 = (await rpc('tasks/get', { id: created.id }, {})).json().result;
    expect(seen03.status.state).toBe('canceled');
    expect(seen03.history.map((m: { role: string }) => m.role)).toEqual(['user', 'agent', 'user', 'agent']);
  });

  it('1.0 SendStreamingMessage: StreamResponse items in JSON-RPC envelopes, status updates without `final`', async () => {
    t = await buildApp(async (turn) => {
      await turn.working('thinking');
      await turn.complete('done');
    });
    const res = await rpc(
      'SendStreamingMessage',
      { message: v1Message('stream me') },
      { 'a2a-version': '1.0', accept: 'text/event-stream' },
    );
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseSse(res.body).map((e) => (e.data as { result: Record<string, unknown> }).result);
    expect(Object.keys(events[0] ?? {})).toEqual(['task']);
    const last = events.at(-1) as { statusUpdate: Record<string, unknown> };
    expect(last.statusUpdate).toMatchObject({ status: { state: 'TASK_STATE_COMPLETED' } });
    expect(last.statusUpdate).not.toHaveProperty('final');
  });

  it('the version may come as a query parameter; absent or empty means 0.3; a patch number is ignored', async () => {
    t = await buildApp(async (turn) => turn.complete());
    expect(
      (await rpc('SendMessage', { message: v1Message('q') }, {}, '/a2a?A2A-Version=1.0')).json().result.task,
    ).toBeDefined();
    for (const headers of [{}, { 'a2a-version': '' }, { 'a2a-version': '0.3' }] as Record<string, string>[]) {
      const res = await rpc('message/send', { message: userMessage('x') }, headers);
      expect(res.headers['a2a-version']).toBe('0.3');
      expect(res.json().result.kind).toBe('task');
    }
    expect(
      (await rpc('SendMessage', { message: v1Message('p') }, { 'a2a-version': '1.0.1' })).json().result.task,
    ).toBeDefined();
  });

  it('an unsupported version is -32009 with a google.rpc.ErrorInfo naming what is served', async () => {
    t = await buildApp(async (turn) => turn.complete());
    const body = (await rpc('SendMessage', { message: v1Message('x') }, { 'a2a-version': '2.0' })).json();
    expect(body.error).toMatchObject({
      code: -32009,
      data: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'VERSION_NOT_SUPPORTED',
          domain: 'a2a-protocol.org',
          metadata: { requested: '2.0', supported: '0.3, 1.0' },
        },
      ],
    });
    expect(body.error.message).toMatch(/serves 0\.3 and 1\.0/);
  });

  it('0.3 has no JSON-RPC method to list tasks (its HTTP+JSON binding has GET /v1/tasks); 1.0 has ListTasks', async () => {
    t = await buildApp(async (turn) => turn.complete());
    expect((await rpc('tasks/list', {}, {})).json().error.code).toBe(-32601);
    const listed = (await rpc('ListTasks', { pageSize: 5 })).json().result;
    expect(listed).toEqual({ tasks: [], nextPageToken: '', pageSize: 5, totalSize: 0 });
  });

  it('a method of the other version is -32601 saying which header it needs', async () => {
    t = await buildApp(async (turn) => turn.complete());
    const v1Without = (await rpc('SendMessage', { message: v1Message('x') }, {})).json();
    expect(v1Without.error.code).toBe(-32601);
    expect(v1Without.error.message).toMatch(/A2A 1\.0 method: send it with the header "A2A-Version: 1\.0"/);
    const v03With = (await rpc('message/send', { message: userMessage('x') })).json();
    expect(v03With.error.code).toBe(-32601);
    expect(v03With.error.message).toMatch(/A2A 0\.3\.0 method/);
  });

  it('1.0 errors carry ErrorInfo; validation errors a BadRequest naming each field in 1.0 terms', async () => {
    t = await buildApp(async (turn) => turn.complete());
    const missing = (await rpc('GetTask', { id: 'nope' })).json();
    expect(missing.error).toMatchObject({
      code: -32001,
      data: [{ reason: 'TASK_NOT_FOUND', metadata: { taskId: 'nope' } }],
    });
    const invalid = (await rpc('SendMessage', { message: { messageId: 'm', parts: [{ text: 'no role' }] } })).json();
    expect(invalid.error.code).toBe(-32602);
    expect(invalid.error.data).toContainEqual({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field: 'params.message.role', description: 'is required' }],
    });
  });
});

describe('version-specific behaviour', () => {
  it('SubscribeToTask on a terminal task is UnsupportedOperationError in 1.0 (§3.1.6), as a plain JSON-RPC answer; one snapshot event in 0.3', async () => {
    t = await buildApp(async (turn) => turn.complete());
    const task = (await rpc('SendMessage', { message: v1Message('done soon') })).json().result.task;
    const v1 = await rpc('SubscribeToTask', { id: task.id }, { 'a2a-version': '1.0', accept: 'text/event-stream' });
    // 1.0 clients (the official SDK among them) read a refused stream from a plain answer.
    expect(v1.headers['content-type']).toMatch(/application\/json/);
    expect(v1.json()).toMatchObject({ error: { code: -32004, data: [{ reason: 'UNSUPPORTED_OPERATION' }] } });
    const v03 = await rpc('tasks/resubscribe', { id: task.id }, { accept: 'text/event-stream' });
    const events = parseSse(v03.body);
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toMatchObject({ result: { kind: 'task', status: { state: 'completed' } } });
  });
});

describe('one card for both versions', () => {
  it('lists every (binding, version) in supportedInterfaces beside the 0.3 fields', async () => {
    t = await buildApp(async (turn) => turn.complete());
    const card = (await t.app.inject({ method: 'GET', url: '/.well-known/agent-card.json' })).json();
    expect(card).toMatchObject({
      protocolVersion: '0.3.0',
      url: 'http://localhost/a2a',
      preferredTransport: 'JSONRPC',
      supportsAuthenticatedExtendedCard: false,
      capabilities: { streaming: true, extendedAgentCard: false },
      supportedInterfaces: [
        { url: 'http://localhost/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: 'http://localhost', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
        { url: 'http://localhost/a2a', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
        { url: 'http://localhost', protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
      ],
    });
  });
});
