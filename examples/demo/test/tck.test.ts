/**
 * What the official A2A TCK (0.3.x line: mandatory, capabilities, quality, features and
 * transport-equivalence) asks of a system under test, replayed against the demo's `tck` agent the
 * way the TCK sends it: its raw JSON-RPC bodies, its REST client's shapes (snake_case keys, no
 * `role`, parts without `kind`), its checks. The TCK itself needs Python packages this machine
 * cannot install; these are its requests and assertions, written down here.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { a2aPlugin } from 'fastify-a2a';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTckAgent, demoCard, demoOptions } from '../src/agents.js';

let app: FastifyInstance;
let base: string;
let rpcUrl: string;

beforeAll(async () => {
  app = Fastify({ logger: false });
  await app.register(a2aPlugin, {
    agentCard: demoCard('tck'),
    ...demoOptions('tck'),
    executor: createTckAgent({ resubscribeHoldMs: 3000 }),
    store: 'memory:',
    retention: false,
    drainTimeoutMs: 100,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  base = `http://127.0.0.1:${address.port}`;
  rpcUrl = `${base}/a2a`;
});
afterAll(async () => {
  await app.close();
});

let counter = 0;
const uid = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++counter}`;

function message(text: string, extra: Record<string, unknown> = {}) {
  return {
    kind: 'message',
    messageId: uid('test-message-id'),
    role: 'user',
    parts: [{ kind: 'text', text }],
    ...extra,
  };
}

/** A raw POST to the JSON-RPC endpoint with only `Content-Type: application/json`, as the TCK's raw tests send. */
async function raw(body: string | object, headers: Record<string, string> = {}) {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, type: response.headers.get('content-type') ?? '', response };
}

type RpcAnswer = {
  jsonrpc: string;
  id: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
};

async function call(method: string, params: unknown, id: string | number = uid('req')): Promise<RpcAnswer> {
  const { status, response } = await raw({ jsonrpc: '2.0', id, method, params });
  expect(status).toBe(200);
  return (await response.json()) as RpcAnswer;
}

async function newTask(text = 'Task for the TCK'): Promise<Record<string, unknown>> {
  const answer = await call('message/send', { message: message(text) });
  expect(answer.error).toBeUndefined();
  return answer.result as Record<string, unknown>;
}

const stateOf = (task: Record<string, unknown> | undefined) => (task?.status as { state?: string } | undefined)?.state;

/** SSE events of a whole (ended) response: each `data:` payload parsed; the raw lines kept to check framing. */
async function sseEvents(response: Response): Promise<{ data: unknown[]; dataLines: string[] }> {
  const text = await response.text();
  const dataLines = text.split('\n').filter((line) => line.startsWith('data:'));
  return { data: dataLines.map((line) => JSON.parse(line.slice('data:'.length))), dataLines };
}

/** Reads the first SSE event of a stream, then drops the connection (as the TCK's resubscribe tests do). */
async function firstEvent(response: Response): Promise<unknown> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended before an event: ${buffer}`);
      buffer += new TextDecoder().decode(value);
      const line = buffer.split('\n').find((l) => l.startsWith('data:') && buffer.includes(`${l}\n\n`));
      if (line !== undefined) return JSON.parse(line.slice('data:'.length));
    }
  } finally {
    await reader.cancel();
  }
}

describe('card discovery', () => {
  it('serves the card at the host root, listing both transports in additionalInterfaces (the TCK reads endpoints only there)', async () => {
    const card = (await (await fetch(`${base}/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
    for (const field of [
      'capabilities',
      'defaultInputModes',
      'defaultOutputModes',
      'description',
      'name',
      'skills',
      'url',
      'version',
      'protocolVersion',
    ]) {
      expect(card, field).toHaveProperty(field);
    }
    expect(card.url).toBe(rpcUrl);
    expect(card.additionalInterfaces).toEqual([
      { url: rpcUrl, transport: 'JSONRPC' },
      { url: base, transport: 'HTTP+JSON' },
    ]);
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: false });
    expect(card.defaultInputModes).toEqual(expect.arrayContaining(['file', 'data']));
    const skills = card.skills as Record<string, unknown>[];
    expect(skills.length).toBeGreaterThan(0);
    for (const skill of skills)
      expect(Object.keys(skill)).toEqual(expect.arrayContaining(['id', 'name', 'description', 'tags']));
  });
});

describe('mandatory: JSON-RPC compliance', () => {
  it('malformed JSON → -32700, id null', async () => {
    const { status, response } = await raw('{"jsonrpc": "2.0", "method": "message/send", "params": {"foo": "bar"}');
    expect(status).toBe(200);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  it.each([
    ['"jsonrpc": "aaa"', { jsonrpc: 'aaa', method: 'message/send', params: {} }, -32600],
    ['no method', { jsonrpc: '2.0', params: {} }, -32600],
    ['an unknown method', { jsonrpc: '2.0', method: 'message/ssend', params: {} }, -32601],
    ['an object id', { jsonrpc: '2.0', method: 'message/send', params: {}, id: { bad: 'type' } }, -32600],
    ['invalid params', { jsonrpc: '2.0', method: 'message/send', params: { '': 'not_a_dict' } }, -32602],
  ])('%s → HTTP 200 with %i', async (_name, body, code) => {
    const { status, type, response } = await raw(body);
    expect(status).toBe(200);
    expect(type).toMatch(/application\/json/);
    expect(((await response.json()) as RpcAnswer).error?.code).toBe(code);
  });

  it('an unknown method with an id → -32601 echoing the id; a wrong version or no method → -32600 echoing the id', async () => {
    const unknown = await call('nonexistent/method', {}, 'x-1');
    expect(unknown).toMatchObject({ jsonrpc: '2.0', id: 'x-1', error: { code: -32601 } });
    expect(unknown.error?.message).toMatch(/nonexistent\/method/);
    for (const body of [
      { jsonrpc: '1.0', id: 'x-2', method: 'message/send', params: { message: message('hi') } },
      { jsonrpc: '2.0', id: 'x-3', params: { message: message('hi') } },
    ]) {
      const answer = (await (await raw(body)).response.json()) as RpcAnswer;
      expect(answer).toMatchObject({ id: body.id, error: { code: -32600 } });
    }
  });

  it.each([
    [{ message: { parts: 'invalid' } }],
    [{ message: { kind: 'message' } }],
    [{ message: { invalid: 'structure' } }],
    [{ message: { ...message('x'), parts: [] } }],
    [{ message: { messageId: 'm', parts: [{ kind: 'text', text: 'no role' }] } }],
    [{ message: { role: 'user', parts: [{ kind: 'text', text: 'no id' }] } }],
    [{ message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ type: 'unsupported_type', text: 'x' }] } }],
    [{ message: { ...message('x'), taskId: null } }],
    [{ message: { ...message('x'), contextId: null } }],
  ])('message/send with %j → -32602', async (params) => {
    expect((await call('message/send', params)).error?.code).toBe(-32602);
  });
});

describe('mandatory and quality: tasks', () => {
  it('a fresh send is a working Task; it can be canceled at once; a second cancel is -32002', async () => {
    const task = await newTask();
    expect(task.kind).toBe('task');
    expect(['submitted', 'working']).toContain(stateOf(task));
    const got = await call('tasks/get', { id: task.id });
    expect(got.result).toMatchObject({ id: task.id, status: { state: 'working' } });
    const canceled = await call('tasks/cancel', { id: task.id });
    expect(canceled.result).toMatchObject({ id: task.id, status: { state: 'canceled' } });
    expect((await call('tasks/cancel', { id: task.id })).error?.code).toBe(-32002);
  });

  it('five follow-ups to one task all succeed and leave it working; historyLength limits what tasks/get returns', async () => {
    const task = await newTask('Initial message for history test');
    const limitedAtStart = await call('tasks/get', { id: task.id, historyLength: 1 });
    expect(limitedAtStart.result?.history).toHaveLength(1);
    for (let i = 1; i <= 5; i++) {
      const followUp = await call('message/send', { message: message(`Follow-up ${i}`, { taskId: task.id }) });
      expect(followUp.error).toBeUndefined();
      expect(followUp.result).toMatchObject({ id: task.id, status: { state: 'working' } });
    }
    const full = (await call('tasks/get', { id: task.id })).result?.history as unknown[];
    const limited = (await call('tasks/get', { id: task.id, historyLength: 2 })).result?.history as unknown[];
    expect(limited.length).toBeLessThanOrEqual(2);
    expect(full.length).toBeGreaterThan(limited.length);
    expect((await call('tasks/get', { id: task.id, historyLength: 0 })).result?.history).toEqual([]);
    expect((await call('tasks/get', { id: task.id, historyLength: 9999 })).error).toBeUndefined();
    expect((await call('tasks/get', { id: task.id, historyLength: -1 })).error?.code).toBe(-32602);
  });

  it('a follow-up carrying the task’s own contextId succeeds', async () => {
    const task = await newTask();
    const followUp = await call('message/send', {
      message: message('Follow-up with contextId', { taskId: task.id, contextId: task.contextId }),
    });
    expect(followUp.result).toMatchObject({ id: task.id, status: { state: 'working' } });
  });

  it('unknown tasks are -32001 with "not found" for get and cancel', async () => {
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const answer = await call(method, { id: 'nonexistent-task-id' });
      expect(answer.error?.code, method).toBe(-32001);
      expect(answer.error?.message.toLowerCase()).toContain('not found');
    }
  });

  it('one messageId sent again, sequentially and concurrently, always answers with the original task', async () => {
    const messageId = uid('test-duplicate');
    const first = await call('message/send', { message: { ...message('Rapid request 0'), messageId } });
    const id = first.result?.id;
    for (let i = 1; i < 10; i++) {
      const again = await call('message/send', { message: { ...message(`Rapid request ${i}`), messageId } });
      expect(again.result?.id).toBe(id);
    }
    const concurrentId = uid('test-parallel');
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map((i) =>
        call('message/send', { message: { ...message(`Parallel ${i}`), messageId: concurrentId } }),
      ),
    );
    expect(answers.every((a) => a.error === undefined)).toBe(true);
    expect(new Set(answers.map((a) => a.result?.id)).size).toBe(1);
  });

  it('concurrent get, follow-up and cancel on one task each get a well-formed answer with their own id', async () => {
    const task = await newTask();
    const [got, followed, canceled] = await Promise.all([
      call('tasks/get', { id: task.id }, 'c-get'),
      call(
        'message/send',
        { message: { messageId: uid('m'), role: 'user', parts: [{ kind: 'text', text: 'more' }], taskId: task.id } },
        'c-send',
      ),
      new Promise((r) => setTimeout(r, 100)).then(() => call('tasks/cancel', { id: task.id }, 'c-cancel')),
    ]);
    for (const [answer, id] of [
      [got, 'c-get'],
      [followed, 'c-send'],
      [canceled, 'c-cancel'],
    ] as const) {
      expect(answer).toMatchObject({ jsonrpc: '2.0', id });
      expect('result' in answer || 'error' in answer).toBe(true);
    }
  });

  it('unicode and control characters round-trip; a 1 MiB text is answered', async () => {
    const text = 'Hello 你好 Привет مرحبا \t\b\f\r\n end';
    const task = await newTask(text);
    const got = await call('tasks/get', { id: task.id });
    const history = got.result?.history as { parts: { text: string }[] }[];
    expect(history[0]?.parts[0]?.text).toBe(text);
    const big = await call('message/send', { message: message('x'.repeat(1024 * 1024)) });
    expect(big.result?.kind).toBe('task');
  });

  it('file parts as the TCK sends them (by `url`) are accepted, since the card declares "file"', async () => {
    const answer = await call('message/send', {
      message: {
        kind: 'message',
        messageId: uid('test-file-message-id'),
        role: 'user',
        parts: [
          {
            kind: 'file',
            file: { name: 'test.txt', mimeType: 'text/plain', url: 'https://example.com/test.txt', sizeInBytes: 1024 },
          },
        ],
      },
    });
    expect(answer.error).toBeUndefined();
    const got = await call('tasks/get', { id: answer.result?.id });
    const history = got.result?.history as { parts: { file: Record<string, unknown> }[] }[];
    expect(history[0]?.parts[0]?.file).toMatchObject({ uri: 'https://example.com/test.txt', mimeType: 'text/plain' });
  });

  it('data parts as the TCK sends them are accepted, an object and an array (kept as 1.0 clients would see it)', async () => {
    const object = await call('message/send', {
      message: {
        ...message('x'),
        parts: [{ kind: 'data', data: { key: 'value', number: 123, nested: { array: [1, 2, 3] } } }],
      },
    });
    expect(object.error).toBeUndefined();
    const rows = [
      { name: 'Alice', age: 30 },
      { name: 'Bob', age: 25 },
    ];
    const array = await call('message/send', {
      message: { ...message('x'), messageId: uid('test-data-array-message-id'), parts: [{ kind: 'data', data: rows }] },
    });
    expect(array.error).toBeUndefined();
    expect(['submitted', 'working', 'input-required', 'completed']).toContain(stateOf(array.result));
    const history = (await call('tasks/get', { id: array.result?.id })).result?.history as { parts: unknown[] }[];
    // A 0.3 data part holds an object: the array is wrapped, and marked so that a 1.0 client gets it back as sent.
    expect(history[0]?.parts[0]).toEqual({ kind: 'data', data: { value: rows }, metadata: { data_part_compat: true } });
  });

  it('push notification methods answer -32003 naming push notifications as not supported; the extended card -32007', async () => {
    const push = await call('tasks/pushNotificationConfig/set', {
      taskId: 'x',
      pushNotificationConfig: { url: 'https://example.com/hook' },
    });
    expect(push.error?.code).toBe(-32003);
    for (const word of ['push', 'notification', 'not', 'supported'])
      expect(push.error?.message.toLowerCase()).toContain(word);
    expect((await call('agent/getAuthenticatedExtendedCard', {})).error?.code).toBe(-32007);
  });
});

describe('capabilities: streaming', () => {
  it('message/stream answers SSE whatever Accept says, one single-line data event per item with the request id, Task first, and ends with the turn', async () => {
    const { status, type, response } = await raw({
      jsonrpc: '2.0',
      id: 's-1',
      method: 'message/stream',
      params: { message: message('Stream test message') },
    });
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/event-stream/);
    const cacheControl = response.headers.get('cache-control');
    if (cacheControl !== null) expect(cacheControl).toContain('no-cache');
    expect(response.headers.get('connection') ?? '').not.toMatch(/close/);
    const { data } = await sseEvents(response);
    expect(data.length).toBeGreaterThanOrEqual(2);
    for (const event of data) expect(event).toMatchObject({ jsonrpc: '2.0', id: 's-1', result: expect.any(Object) });
    expect((data[0] as { result: { kind: string } }).result).toMatchObject({
      kind: 'task',
      status: expect.any(Object),
    });
    for (const event of data.slice(1)) {
      expect(['status-update', 'artifact-update']).toContain((event as { result: { kind: string } }).result.kind);
    }
  });

  it('message/stream with invalid params is a plain JSON -32602', async () => {
    const { type, response } = await raw({
      jsonrpc: '2.0',
      id: 's-2',
      method: 'message/stream',
      params: { invalid: 'params' },
    });
    expect(type).toMatch(/application\/json/);
    expect(await response.json()).toMatchObject({ id: 's-2', error: { code: -32602 } });
  });

  it('tasks/resubscribe to an unknown task is one SSE event carrying -32001, with or without Accept: text/event-stream', async () => {
    for (const headers of [{}, { accept: 'text/event-stream' }] as Record<string, string>[]) {
      const { status, type, response } = await raw(
        { jsonrpc: '2.0', id: 'r-1', method: 'tasks/resubscribe', params: { id: `non-existent-task-id-${uid('x')}` } },
        headers,
      );
      expect(status).toBe(200);
      expect(type).toMatch(/^text\/event-stream/);
      const { data } = await sseEvents(response);
      expect(data).toHaveLength(1);
      expect(data[0]).toMatchObject({
        id: 'r-1',
        error: { code: -32001, message: expect.stringMatching(/not found/i) },
      });
    }
  });

  it('a test-resubscribe-message-id stream, dropped after its first event, can be resubscribed at once; the task stays live meanwhile', async () => {
    const stream = await raw({
      jsonrpc: '2.0',
      id: 'r-2',
      method: 'message/stream',
      params: { message: { ...message('resubscribe me'), messageId: uid('test-resubscribe-message-id') } },
    });
    const first = (await firstEvent(stream.response)) as { result: { id: string; status: unknown } };
    expect(first.result).toMatchObject({ kind: 'task', id: expect.any(String), status: expect.any(Object) });
    const started = Date.now();
    const resubscribed = await raw(
      { jsonrpc: '2.0', id: 'r-3', method: 'tasks/resubscribe', params: { id: first.result.id } },
      { accept: 'text/event-stream' },
    );
    expect(resubscribed.type).toMatch(/^text\/event-stream/);
    const { data } = await sseEvents(resubscribed.response);
    expect(data[0]).toMatchObject({ id: 'r-3', result: { kind: 'task', id: first.result.id } });
    expect(data.at(-1)).toMatchObject({
      result: { kind: 'status-update', status: { state: 'completed' }, final: true },
    });
    // It stayed non-terminal while the TCK's streaming checks ran (it completes after the hold).
    expect(Date.now() - started).toBeGreaterThan(1000);
  });

  it('resubscribing to a working task with no turn running sends its snapshot at once', async () => {
    const task = await newTask();
    const controller = new AbortController();
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'r-4', method: 'tasks/resubscribe', params: { id: task.id } }),
      signal: controller.signal,
    });
    expect(await firstEvent(response)).toMatchObject({ id: 'r-4', result: { kind: 'task', id: task.id } });
    controller.abort();
  });
});

describe('transport equivalence: the REST client of the TCK', () => {
  /** The TCK REST client's request shape: snake_case keys, no role, parts tagged by their member. */
  const tckRestMessage = (text: string, extra: Record<string, unknown> = {}) => ({
    message: { message_id: uid('test-rest'), parts: [{ text }], ...extra },
  });

  async function rest(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${base}/${path}`, {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) };
  }

  it('sends, gets and cancels with the TCK REST shapes, and sees the same task and states as JSON-RPC', async () => {
    const sent = await rest('POST', 'v1/message:send', tckRestMessage('Hello over REST'));
    expect(sent.status).toBe(200);
    const task = sent.body?.task as Record<string, unknown>;
    expect(task).toMatchObject({
      id: expect.any(String),
      status: { state: expect.stringMatching(/^TASK_STATE_(SUBMITTED|WORKING)$/) },
    });
    const viaRpc = await call('tasks/get', { id: task.id });
    expect(viaRpc.result?.id).toBe(task.id);
    const got = await rest('GET', `v1/tasks/${task.id}?history_length=1`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_WORKING' } });
    expect(got.body?.history as unknown[]).toHaveLength(1);
    expect(stateOf(viaRpc.result)).toBe('working');
    // :cancel is a bodiless POST with Content-Type: application/json
    const canceled = await rest('POST', `v1/tasks/${task.id}:cancel`);
    expect(canceled).toMatchObject({ status: 200, body: { id: task.id, status: { state: 'TASK_STATE_CANCELLED' } } });
    const again = await rest('POST', `v1/tasks/${task.id}:cancel`);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: 'TaskNotCancelableError', code: -32002 });
    expect((await call('tasks/cancel', { id: task.id })).error?.code).toBe(-32002);
  });

  it('maps errors as the TCK reads them: name in `error`, a status it maps to the same code as JSON-RPC', async () => {
    const missing = await rest('GET', 'v1/tasks/definitely-does-not-exist-task-id');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({
      error: 'TaskNotFoundError',
      code: -32001,
      message: expect.stringMatching(/not found/i),
    });
    const invalid = await rest('POST', 'v1/message:send', { message: {} });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ error: 'InvalidParamsError', code: -32602 });
    expect((await call('message/send', { kind: 'message' })).error?.code).toBe(-32602);
    const subscribe = await rest('POST', 'v1/tasks/no-such-task:subscribe', undefined, { accept: 'text/event-stream' });
    expect(subscribe.status).toBe(404);
  });

  it('a follow-up over REST continues a task created over JSON-RPC', async () => {
    const task = await newTask();
    const followed = await rest('POST', 'v1/message:send', tckRestMessage('continued over REST', { task_id: task.id }));
    expect(followed.status).toBe(200);
    expect(followed.body?.task).toMatchObject({ id: task.id });
    const history = (await call('tasks/get', { id: task.id })).result?.history as { role: string }[];
    expect(history.map((m) => m.role)).toContain('user');
    expect(history.length).toBeGreaterThanOrEqual(2);
  });
});
