/**
 * Property-based fuzzing of the JSON-RPC endpoint (fast-check): thousands of generated requests —
 * well-formed and not, both protocol versions, every method and random ones, random ids, params
 * near and far from valid, odd Content-Types, broken JSON — each answered with a JSON-RPC response
 * that echoes the id when the id is valid, with an error code the specifications define, never an
 * HTTP 5xx, a hang or a stack trace; and the server still serves afterwards.
 */
import fc from 'fast-check';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2aPlugin } from '../src/index.js';
import { parseSse, rpcBody, testCard, userMessage } from './helpers.js';

let app: FastifyInstance;
const errorLogs: string[] = [];

beforeAll(async () => {
  app = Fastify({
    logger: {
      level: 'error',
      stream: { write: (line: string) => errorLogs.push(line) },
    },
  });
  await app.register(a2aPlugin, {
    agentCard: testCard,
    // Finishes at once, so a valid streaming call is a short stream that inject can read whole.
    executor: async (turn) => {
      if (turn.text === 'ask') await turn.requireInput('more?');
      else await turn.complete('ok');
    },
    retention: false,
    drainTimeoutMs: 100,
  });
  await app.ready();
});
afterAll(async () => {
  await app.close();
});

const METHODS_0_3 = [
  'message/send',
  'message/stream',
  'tasks/get',
  'tasks/cancel',
  'tasks/resubscribe',
  'tasks/pushNotificationConfig/set',
  'tasks/pushNotificationConfig/get',
  'tasks/pushNotificationConfig/list',
  'tasks/pushNotificationConfig/delete',
  'agent/getAuthenticatedExtendedCard',
];
const METHODS_1_0 = [
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard',
];

/** JSON-RPC 2.0 and A2A (0.3 and 1.0) error codes: every error must be one of these. */
const KNOWN_CODES = new Set([
  -32700, -32600, -32601, -32602, -32603, -32001, -32002, -32003, -32004, -32005, -32006, -32007, -32008, -32009,
]);

const jsonValue = fc.jsonValue({ maxDepth: 4 });
/** Mostly what the field should be, sometimes anything: requests near valid reach past validation. */
const mostly = <T>(valid: fc.Arbitrary<T>, weight = 6) =>
  fc.oneof({ weight, arbitrary: valid }, { weight: 1, arbitrary: jsonValue as fc.Arbitrary<unknown> });

const text = fc.oneof(fc.constantFrom('ask', 'hi', ''), fc.string({ maxLength: 30 }));
const part03 = mostly(
  fc.oneof(
    fc.record({ kind: fc.constant('text'), text }),
    fc.record({ kind: fc.constant('data'), data: jsonValue }),
    fc.record({ kind: fc.constant('file'), file: fc.record({ uri: fc.webUrl(), mimeType: fc.string() }) }),
    fc.record({ kind: fc.constant('file'), file: fc.record({ bytes: fc.base64String() }) }),
  ),
);
const part10 = mostly(
  fc.oneof(
    fc.record({ text }),
    fc.record({ data: jsonValue }),
    fc.record({ url: fc.webUrl(), mediaType: fc.string() }),
    fc.record({ raw: fc.base64String(), filename: fc.string() }),
  ),
);
const message03 = fc.record(
  {
    kind: fc.constantFrom('message', 'message', undefined, 'task'),
    messageId: mostly(fc.uuid()),
    role: mostly(fc.constantFrom('user', 'agent')),
    parts: mostly(fc.array(part03, { minLength: 1, maxLength: 3 })),
    contextId: fc.option(mostly(fc.uuid(), 3)),
    taskId: fc.option(fc.oneof(fc.uuid(), fc.constant(null))),
  },
  { requiredKeys: ['messageId', 'role', 'parts'] },
);
const message10 = fc.record(
  {
    messageId: mostly(fc.uuid()),
    role: mostly(fc.constantFrom('ROLE_USER', 'ROLE_AGENT', 1)),
    parts: mostly(fc.array(part10, { minLength: 1, maxLength: 3 })),
    contextId: fc.option(mostly(fc.uuid(), 3)),
  },
  { requiredKeys: ['messageId', 'role', 'parts'] },
);
const taskId = fc.oneof(fc.uuid(), fc.string(), fc.integer(), fc.constant(null));
const params = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record(
      {
        message: message03,
        configuration: fc.option(
          fc.record({ blocking: mostly(fc.boolean()), historyLength: mostly(fc.nat(5)) }, { requiredKeys: [] }),
        ),
      },
      { requiredKeys: ['message'] },
    ),
  },
  {
    weight: 4,
    arbitrary: fc.record(
      {
        message: message10,
        configuration: fc.option(
          fc.record(
            { returnImmediately: mostly(fc.boolean()), historyLength: mostly(fc.nat(5)) },
            { requiredKeys: [] },
          ),
        ),
      },
      { requiredKeys: ['message'] },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      { id: taskId, historyLength: fc.option(fc.integer({ min: -2, max: 5 })) },
      { requiredKeys: ['id'] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record(
      { pageSize: fc.integer({ min: -1, max: 120 }), pageToken: fc.string(), status: fc.string() },
      { requiredKeys: [] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record(
      { taskId, pushNotificationConfig: jsonValue, url: fc.webUrl(), id: fc.string() },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: jsonValue },
  { weight: 1, arbitrary: fc.constant(undefined) },
);
const id = fc.oneof(
  { weight: 6, arbitrary: fc.oneof(fc.string(), fc.integer()) },
  { weight: 1, arbitrary: fc.oneof(fc.constant(null), fc.object(), fc.double()) },
);

type Request = { headers: Record<string, string>; payload: string };

const contentType = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.constantFrom('application/json', 'application/a2a+json', 'application/json; charset=utf-8'),
  },
  { weight: 1, arbitrary: fc.constantFrom('text/plain', 'json', '', ';') },
);
const accept = fc.constantFrom('application/json', 'text/event-stream', '*/*');

/** A request that mostly makes sense: a version, one of its methods, params of that method's shape. */
const coherent: fc.Arbitrary<Request> = fc
  .record({
    version: fc.constantFrom('0.3', '1.0'),
    method: fc.nat(20),
    id,
    message03,
    message10,
    taskId,
    configuration: fc.option(
      fc.record(
        { blocking: fc.boolean(), returnImmediately: fc.boolean(), historyLength: fc.integer({ min: -1, max: 5 }) },
        { requiredKeys: [] },
      ),
    ),
    listParams: fc.record(
      {
        pageSize: fc.integer({ min: -1, max: 120 }),
        pageToken: fc.string(),
        status: fc.constantFrom('TASK_STATE_WORKING', 'working', 'x'),
      },
      { requiredKeys: [] },
    ),
    pushParams: fc.record({ taskId, url: fc.webUrl(), id: fc.string() }, { requiredKeys: [] }),
    contentType,
    accept,
    versionHeader: fc.oneof(
      { weight: 10, arbitrary: fc.constant('') },
      { weight: 1, arbitrary: fc.constantFrom('1.0.1', '2.0', 'x') },
    ),
  })
  .map((r) => {
    const methods = r.version === '0.3' ? METHODS_0_3 : METHODS_1_0;
    const method = methods[r.method % methods.length] as string;
    const send = /send|stream|SendMessage|SendStreamingMessage/i.test(method) && !/resubscribe|Subscribe/.test(method);
    const list = method === 'ListTasks';
    const push = /[Pp]ushNotificationConfig/.test(method);
    const params = send
      ? {
          message: r.version === '0.3' ? r.message03 : r.message10,
          ...(r.configuration ? { configuration: r.configuration } : {}),
        }
      : list
        ? r.listParams
        : push
          ? r.pushParams
          : { id: r.taskId };
    const version = r.versionHeader === '' ? (r.version === '0.3' ? '' : '1.0') : r.versionHeader;
    return {
      headers: { 'content-type': r.contentType, accept: r.accept, 'a2a-version': version },
      payload: JSON.stringify({ jsonrpc: '2.0', id: r.id, method, params }),
    };
  });

/** Anything: envelopes with members missing or wrong, other versions' methods, batches, broken JSON. */
const envelope = fc.record(
  {
    jsonrpc: fc.constantFrom('2.0', '1.0', undefined, 2),
    id: fc.oneof(id, fc.constant(undefined)),
    method: fc.oneof(fc.constantFrom(...METHODS_0_3, ...METHODS_1_0), fc.string(), fc.integer()),
    params,
  },
  { requiredKeys: [] },
);
const chaotic: fc.Arbitrary<Request> = fc.record({
  payload: fc.oneof(
    { weight: 6, arbitrary: envelope.map((e) => JSON.stringify(e)) },
    { weight: 1, arbitrary: fc.string() },
    { weight: 1, arbitrary: fc.array(envelope, { maxLength: 2 }).map((e) => JSON.stringify(e)) },
    { weight: 1, arbitrary: envelope.map((e) => JSON.stringify(e).slice(0, -1)) },
  ),
  headers: fc.record({ 'content-type': contentType, accept, 'a2a-version': fc.constantFrom('', '0.3', '1.0', '2.0') }),
});

const requests = fc.oneof({ weight: 3, arbitrary: coherent }, { weight: 1, arbitrary: chaotic });

function validId(value: unknown): boolean {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

describe('fuzzing POST /a2a', () => {
  it('answers every generated request with a well-formed JSON-RPC response (or stream), never a 5xx or a stack trace', async () => {
    await fc.assert(
      fc.asyncProperty(requests, async ({ headers, payload }) => {
        const res = await app.inject({ method: 'POST', url: '/a2a', headers, payload });
        expect(res.statusCode).toBeLessThan(500);
        expect(res.body).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/); // no stack frames
        let sent: { id?: unknown } | undefined;
        try {
          sent = JSON.parse(payload) as { id?: unknown };
        } catch {
          sent = undefined;
        }
        const expectedId = sent !== undefined && !Array.isArray(sent) && validId(sent?.id) ? sent?.id : null;
        const type = String(res.headers['content-type'] ?? '');
        const answers = type.startsWith('text/event-stream')
          ? parseSse(res.body).map((e) => e.data as Record<string, unknown>)
          : [res.json() as Record<string, unknown>];
        expect(answers.length).toBeGreaterThan(0);
        for (const answer of answers) {
          expect(answer.jsonrpc).toBe('2.0');
          // The id is echoed when the request's was valid; an answer to a request whose envelope
          // could not be read has id null.
          if (answer.error === undefined || expectedId !== null) expect([expectedId, null]).toContain(answer.id);
          if (answer.error !== undefined) {
            const error = answer.error as { code: unknown; message: unknown };
            expect(KNOWN_CODES.has(error.code as number), JSON.stringify(answer)).toBe(true);
            expect(typeof error.message).toBe('string');
            expect('result' in answer).toBe(false);
          } else {
            expect('result' in answer).toBe(true);
          }
        }
      }),
      { numRuns: 2000, seed: Number(process.env.FUZZ_SEED ?? 20261124) },
    );
    // Nothing a client sent was the server's fault.
    expect(errorLogs.filter((line) => line.includes('"level":50'))).toEqual([]);
  }, 120_000);

  it('still serves normally afterwards', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/a2a',
      payload: rpcBody('message/send', { message: userMessage('hi') }),
    });
    expect(res.json().result.status.state).toBe('completed');
  });
});
