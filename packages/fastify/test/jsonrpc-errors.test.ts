import { afterEach, describe, expect, it } from 'vitest';
import { buildApp, rpcBody, type TestApp, userMessage } from './helpers.js';

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

  it('rejects a wrong Content-Type with -32600 naming the expected one', async () => {
    t = await buildApp(idle);
    const res = await post(rpcBody('tasks/get', { id: 'x' }), { 'content-type': 'text/plain' });
    expect(res.status).toBe(200);
    expect(res.body.error.code).toBe(-32600);
    expect(res.body.error.message).toMatch(/application\/json/);
  });

  it.each([
    ['a missing jsonrpc version', { id: 1, method: 'tasks/get', params: { id: 'x' } }, /jsonrpc/],
    ['a wrong jsonrpc version', { jsonrpc: '1.0', id: 1, method: 'tasks/get' }, /jsonrpc/],
    ['a missing method', { jsonrpc: '2.0', id: 1 }, /method/],
    ['a non-string method', { jsonrpc: '2.0', id: 1, method: 42 }, /method/],
    ['a missing id', { jsonrpc: '2.0', method: 'tasks/get', params: { id: 'x' } }, /id/],
    ['an object id', { jsonrpc: '2.0', id: { a: 1 }, method: 'tasks/get' }, /id/],
    ['a JSON scalar', 42, /request/i],
  ])('rejects %s with -32600', async (_name, payload, pattern) => {
    t = await buildApp(idle);
    const res = await post(payload as object);
    expect(res.body.error.code).toBe(-32600);
    expect(res.body.error.message).toMatch(pattern);
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
      'data part with an array',
      { message: { messageId: 'm', role: 'user', parts: [{ kind: 'data', data: [1] }] } },
      /params\.message\.parts\[0\]\.data must be object/,
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

  it('message/send with a contextId that does not match the task is -32602', async () => {
    t = await buildApp(async (turn) => turn.requireInput('more?'));
    const first = await t.call<{ id: string; contextId: string }>('message/send', { message: userMessage('hi') });
    if (!('result' in first)) throw new Error(JSON.stringify(first));
    const body = await t.call('message/send', {
      message: userMessage('again', { taskId: first.result.id, contextId: 'other' }),
    });
    if (!('error' in body)) throw new Error('expected an error');
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toMatch(/does not match/);
  });

  it('message/send to a terminal task is -32602', async () => {
    t = await buildApp(async (turn) => turn.complete('done'));
    const first = await t.call<{ id: string }>('message/send', { message: userMessage('hi') });
    if (!('result' in first)) throw new Error(JSON.stringify(first));
    const body = await t.call('message/send', { message: userMessage('again', { taskId: first.result.id }) });
    if (!('error' in body)) throw new Error('expected an error');
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toMatch(/terminal state/);
  });
});

describe('A2A errors', () => {
  it('-32001 for tasks/get, tasks/cancel, tasks/resubscribe and message/send on an unknown task', async () => {
    t = await buildApp(idle);
    for (const [method, params] of [
      ['tasks/get', { id: 'nope' }],
      ['tasks/cancel', { id: 'nope' }],
      ['tasks/resubscribe', { id: 'nope' }],
      ['message/send', { message: userMessage('hi', { taskId: 'nope' }) }],
    ] as const) {
      const body = await t.call(method, params);
      if (!('error' in body)) throw new Error(`${method}: expected an error`);
      expect(body.error.code, method).toBe(-32001);
      expect(body.error.message).toContain('nope');
    }
  });

  it('-32002 when canceling a terminal task, including a second cancel', async () => {
    t = await buildApp(async (turn) => {
      await turn.working();
      if (!turn.signal.aborted)
        await new Promise((_r, reject) => turn.signal.addEventListener('abort', () => reject(turn.signal.reason)));
    });
    const sent = await t.call<{ id: string }>('message/send', {
      message: userMessage('x'),
      configuration: { blocking: false },
    });
    if (!('result' in sent)) throw new Error(JSON.stringify(sent));
    const first = await t.call<{ status: { state: string } }>('tasks/cancel', { id: sent.result.id });
    if (!('result' in first)) throw new Error(JSON.stringify(first));
    expect(first.result.status.state).toBe('canceled');
    const second = await t.call('tasks/cancel', { id: sent.result.id });
    if (!('error' in second)) throw new Error('expected an error');
    expect(second.error.code).toBe(-32002);
    expect(second.error.message).toMatch(/canceled/);

    const completed = await buildApp(async (turn) => turn.complete());
    try {
      const done = await completed.call<{ id: string }>('message/send', { message: userMessage('x') });
      if (!('result' in done)) throw new Error(JSON.stringify(done));
      const res = await completed.call('tasks/cancel', { id: done.result.id });
      expect(res).toMatchObject({ error: { code: -32002 } });
    } finally {
      await completed.app.close();
    }
  });

  it.each([
    ['tasks/pushNotificationConfig/set', { taskId: 't', pushNotificationConfig: { url: 'https://example.com/hook' } }],
    ['tasks/pushNotificationConfig/get', { id: 't' }],
    ['tasks/pushNotificationConfig/list', { id: 't' }],
    ['tasks/pushNotificationConfig/delete', { id: 't', pushNotificationConfigId: 'c' }],
  ])('%s answers -32003 (push notifications not supported), never -32601', async (method, params) => {
    t = await buildApp(idle);
    const body = await t.call(method, params);
    expect(body).toMatchObject({ error: { code: -32003 } });
  });

  it('push config methods still validate their params first (-32602)', async () => {
    t = await buildApp(idle);
    const body = await t.call('tasks/pushNotificationConfig/set', { taskId: 't' });
    expect(body).toMatchObject({ error: { code: -32602 } });
  });

  it('agent/getAuthenticatedExtendedCard answers -32007', async () => {
    t = await buildApp(idle);
    const body = await t.call('agent/getAuthenticatedExtendedCard');
    expect(body).toMatchObject({ error: { code: -32007 } });
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
