import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { a2aPlugin } from '../src/index.js';
import { buildApp, parseSse, rpcBody, type TestApp, testCard, userMessage } from './helpers.js';

let t: TestApp;
afterEach(async () => {
  await t?.app.close();
});

const idle = async () => {};

async function post(
  payload: string | object,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/a2a',
    headers,
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  return { status: res.statusCode, type: res.headers['content-type'], body: res.json() };
}

describe('JSON-RPC envelope errors', () => {
  it('answers a body that is not JSON with -32700 and id null, HTTP 200 (not Fastify 400)', async () => {
    t = await buildApp(idle);
    const res = await post('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/application\/json/);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    expect(res.body.error.message).toMatch(/not valid JSON/);
  });

  it('answers an empty body with -32700', async () => {
    t = await buildApp(idle);
    const res = await post('');
    expect(res.body.error.code).toBe(-32700);
  });

  it('refuses a wrong Content-Type with HTTP 415 and -32005 naming the expected one (issue 31)', async () => {
    t = await buildApp(idle);
    const res = await post(rpcBody('tasks/get', { id: 'x' }), { 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe(-32005);
    expect(res.body.error.message).toMatch(/application\/json/);
  });

  it.each([
    ['a missing jsonrpc version', { id: 1, method: 'tasks/get', params: { id: 'x' } }, /jsonrpc/],
    ['a wrong jsonrpc version', { jsonrpc: '1.0', id: 1, method: 'tasks/get' }, /jsonrpc/],
    ['a missing method', { jsonrpc: '2.0', id: 1 }, /method/],
    ['a non-string method', { jsonrpc: '2.0', id: 1, method: 42 }, /method/],
    ['an object id', { jsonrpc: '2.0', id: { a: 1 }, method: 'tasks/get' }, /id/],
    ['a JSON scalar', 42, /request/i],
  ])('rejects %s with -32600', async (_name, payload, pattern) => {
    t = await buildApp(idle);
    const res = await post(payload as object);
    expect(res.body.error.code).toBe(-32600);
    expect(res.body.error.message).toMatch(pattern);
  });

  // A2A TCK mandatory test_rejects_invalid_json_rpc_requests: requests without `id` (notifications)
  // still get an answer, and it says what is wrong with them, in the usual order of checks.
  it.each([
    ['a bad jsonrpc version', { jsonrpc: 'aaa', method: 'message/send', params: {} }, -32600],
    ['no method', { jsonrpc: '2.0', params: {} }, -32600],
    ['an unknown method', { jsonrpc: '2.0', method: 'message/ssend', params: {} }, -32601],
    ['invalid params', { jsonrpc: '2.0', method: 'message/send', params: { '': 'not_a_dict' } }, -32602],
    ['a task that does not exist', { jsonrpc: '2.0', method: 'tasks/get', params: { id: 'x' } }, -32001],
  ])('answers a request without id (%s) with %i and id null, HTTP 200', async (_name, payload, code) => {
    t = await buildApp(idle);
    const res = await post(payload);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code } });
  });

  it('names the offending envelope field under request. in error.data', async () => {
    t = await buildApp(idle);
    const res = await post({ jsonrpc: '2.0', id: { bad: 'type' }, method: 'tasks/get', params: { id: 'x' } });
    expect(res.body.error.code).toBe(-32600);
    expect(res.body.error.data.errors).toEqual([expect.objectContaining({ path: 'request.id' })]);
    const version = await post({ jsonrpc: '1.0', id: 3, method: 'tasks/get' });
    expect(version.body.error.data.errors).toEqual([expect.objectContaining({ path: 'request.jsonrpc' })]);
  });

  it('keeps the request id in -32600 answers when the id itself is valid', async () => {
    t = await buildApp(idle);
    const res = await post({ jsonrpc: '1.0', id: 'abc', method: 'tasks/get' });
    expect(res.body.id).toBe('abc');
  });

  it('rejects a batch with -32600', async () => {
    t = await buildApp(idle);
    const res = await post([rpcBody('tasks/get', { id: 'x' })]);
    expect(res.body).toMatchObject({ id: null, error: { code: -32600 } });
    expect(res.body.error.message).toMatch(/batch/);
  });

  it('answers an unknown method with -32601 and echoes the id', async () => {
    t = await buildApp(idle);
    const res = await post(rpcBody('tasks/explode', {}, 7));
    expect(res.body).toMatchObject({ id: 7, error: { code: -32601 } });
    expect(res.body.error.message).toContain('tasks/explode');
  });
});

describe("errors from the application's hooks", () => {
  it.each([
    [401, 'Unauthorized: send a bearer token', -32600],
    [429, 'Too many requests', -32600],
    [503, 'Overloaded, db.internal:5432 is slow', -32603],
  ])(
    'keep their HTTP status %i, answered as a JSON-RPC error (internals of a 5xx stay in the log)',
    async (status, message, code) => {
      const app = Fastify({ logger: false });
      app.addHook('onRequest', async (request) => {
        if (request.url === '/a2a') throw Object.assign(new Error(message), { statusCode: status });
      });
      await app.register(a2aPlugin, { agentCard: testCard, executor: idle, retention: false });
      const res = await app.inject({ method: 'POST', url: '/a2a', payload: rpcBody('tasks/get', { id: 'x' }) });
      await app.close();
      expect(res.statusCode).toBe(status);
      expect(res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code } });
      if (status < 500) expect(res.json().error.message).toContain(message);
      else expect(res.body).not.toContain('db.internal');
    },
  );
});

describe('params validation (-32602)', () => {
  const cases: [string, unknown, RegExp][] = [
    ['missing params', undefined, /requires a params object/],
    ['missing message', {}, /params\.message is required/],
    [
      'missing messageId',
      { message: { role: 'user', parts: [{ kind: 'text', text: 'hi' }] } },
      /params\.message\.messageId is required/,
    ],
    [
      'empty messageId',
      { message: { role: 'user', messageId: '', parts: [{ kind: 'text', text: 'hi' }] } },
      /messageId/,
    ],
    [
      'missing role',
      { message: { messageId: 'm', parts: [{ kind: 'text', text: 'hi' }] } },
      /params\.message\.role is required/,
    ],
    [
      'invalid role',
      { message: { messageId: 'm', role: 'robot', parts: [{ kind: 'text', text: 'hi' }] } },
      /params\.message\.role must be one of "user", "agent"/,
    ],
    ['missing parts', { message: { messageId: 'm', role: 'user' } }, /params\.message\.parts is required/],
    [
      'empty parts',
      { message: { messageId: 'm', role: 'user', parts: [] } },
      /params\.message\.parts must not have fewer than 1/,
    ],
    [
      'unknown part kind',
      { message: { messageId: 'm', role: 'user', parts: [{ kind: 'video', url: 'x' }] } },
      /params\.message\.parts\[0\]\.kind must be one of "text", "file", "data"/,
    ],
    [
      'part without kind',
      { message: { messageId: 'm', role: 'user', parts: [{ text: 'hi' }] } },
      /params\.message\.parts\[0\]\.kind/,
    ],
    [
      'text part without text',
      { message: { messageId: 'm', role: 'user', parts: [{ kind: 'text' }] } },
      /params\.message\.parts\[0\]\.text is required/,
    ],
    [
      'file with bytes and uri',
      {
        message: { messageId: 'm', role: 'user', parts: [{ kind: 'file', file: { bytes: 'aGk=', uri: 'https://x' } }] },
      },
      /exactly one of "bytes" or "uri"/,
    ],
    [
      'data part without data',
      { message: { messageId: 'm', role: 'user', parts: [{ kind: 'data' }] } },
      /params\.message\.parts\[0\]\.data is required/,
    ],
    [
      'wrong message kind',
      { message: { kind: 'task', messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'hi' }] } },
      /params\.message\.kind must be "message"/,
    ],
    [
      'non-boolean blocking',
      {
        message: { messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'hi' }] },
        configuration: { blocking: 'yes' },
      },
      /blocking must be boolean/,
    ],
  ];
  it.each(cases)('message/send with %s', async (_name, params, pattern) => {
    t = await buildApp(idle);
    const body = await t.call('message/send', params);
    expect(body).toMatchObject({ error: { code: -32602 } });
    if (!('error' in body)) throw new Error('expected an error');
    expect(body.error.message).toMatch(pattern);
    if (params !== undefined) expect((body.error.data as { errors: unknown[] }).errors.length).toBeGreaterThan(0);
  });

  it('message/stream validates the same way before any stream starts', async () => {
    t = await buildApp(idle);
    const res = await t.app.inject({
      method: 'POST',
      url: '/a2a',
      headers: { accept: 'text/event-stream' },
      payload: rpcBody('message/stream', { message: { messageId: 'm', role: 'user', parts: [] } }),
    });
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.json().error.code).toBe(-32602);
  });

  it.each([
    ['tasks/get', { id: 'x', historyLength: -1 }, /historyLength must be >= 0/],
    ['tasks/get', { id: 'x', historyLength: 1.5 }, /historyLength must be integer/],
    ['tasks/get', {}, /params\.id is required/],
    ['tasks/get', { id: '' }, /params\.id/],
    ['tasks/cancel', { id: 5 }, /params\.id must be string/],
    ['tasks/resubscribe', {}, /params\.id is required/],
  ])('%s with %j', async (method, params, pattern) => {
    t = await buildApp(idle);
    const body = await t.call(method, params);
    if (!('error' in body)) throw new Error('expected an error');
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toMatch(pattern);
  });
});

describe('A2A errors', () => {
  // A2A TCK capabilities test_tasks_resubscribe_nonexistent: a streaming method refused after its
  // params were checked answers as SSE, one event carrying the JSON-RPC error, whatever Accept says.
  it.each([
    ['tasks/resubscribe', { id: 'nope' }],
    ['message/stream', { message: userMessage('hi', { taskId: 'nope' }) }],
  ])('%s on an unknown task answers one SSE event with -32001 and closes', async (method, params) => {
    t = await buildApp(idle);
    for (const accept of ['text/event-stream', '*/*']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/a2a',
        headers: { 'content-type': 'application/json', accept },
        payload: rpcBody(method, params, 'req-9'),
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
      const events = parseSse(res.body);
      const [event] = events;
      expect(events).toHaveLength(1);
      expect(event?.data).toMatchObject({ jsonrpc: '2.0', id: 'req-9', error: { code: -32001 } });
      expect(JSON.stringify(event?.data)).toMatch(/not found/);
    }
  });

  it('an internal failure is -32603 without a stack trace', async () => {
    t = await buildApp(idle);
    const store = t.store as unknown as { getTask: () => Promise<never> };
    store.getTask = async () => {
      throw new Error('disk on fire\n    at secret (/srv/app.js:1:1)');
    };
    const body = await t.call('tasks/get', { id: 'x' });
    if (!('error' in body)) throw new Error('expected an error');
    expect(body.error.code).toBe(-32603);
    expect(JSON.stringify(body)).not.toMatch(/disk on fire|secret|app\.js/);
  });

  it('an agent that throws fails its task with the error message (not -32603)', async () => {
    t = await buildApp(async () => {
      throw new Error('model unavailable');
    });
    const body = await t.call<{ status: { state: string; message?: { parts: { text: string }[] } } }>('message/send', {
      message: userMessage('hi'),
    });
    if (!('result' in body)) throw new Error(JSON.stringify(body));
    expect(body.result.status.state).toBe('failed');
    expect(body.result.status.message?.parts[0]?.text).toBe('model unavailable');
  });
});
