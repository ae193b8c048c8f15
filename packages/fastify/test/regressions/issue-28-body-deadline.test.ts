/**
 * Issue 28, item 7: a refused request's body deadline outlived it. The deadline was armed in
 * `onRequest` and cleared in `preValidation`, which a refusal (authentication's 401, an
 * application's preParsing 429) never reaches; at the deadline `body-deadline.ts` wrote a raw
 * `HTTP/1.1 408` onto the connection, inside whatever the next, authorised request on it was
 * receiving: a stream was corrupted and cut, a plain answer was replaced by the 408. Now the
 * deadline ends with the request's answer, whatever answered it, and never writes onto a socket
 * whose answer has begun or that an earlier pipelined answer still holds.
 *
 * Real sockets (node:net) against a listening server with authentication on: both bindings, both
 * versions, keep-alive and pipelined, a streaming and a plain answer after each kind of refusal.
 */

import { MemoryStore } from '@fastify-a2a/store-memory';
import type { FastifyInstance } from 'fastify';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2aPlugin, bearerTokens } from '../../src/index.js';
import { listen, nextId, parseSse, testCard, userMessage, waitFor } from '../helpers.js';
import { RawConnection, rawRequest } from '../raw-http.js';

const TOKEN = 'issue-28-token-0123456789';
/** The body deadline, short so the test takes seconds. */
const DEADLINE_MS = 300;
/** How long each turn runs: past the deadline, so a stray 408 would land inside its answer. */
const TURN_MS = 3 * DEADLINE_MS;

let app: FastifyInstance;
let port: number;

beforeAll(async () => {
  app = Fastify({ logger: false });
  // An application's own refusal after the body deadline is armed (a rate limiter on preParsing).
  app.addHook('preParsing', (request, reply, _payload, done) => {
    if (request.headers['x-over-limit'] === undefined) return done();
    reply.code(429).send({ error: 'rate limited' });
  });
  await app.register(a2aPlugin, {
    agentCard: testCard,
    store: new MemoryStore(),
    retention: false,
    drainTimeoutMs: 200,
    bodyTimeoutMs: DEADLINE_MS,
    authenticate: bearerTokens({ [TOKEN]: 'alice' }),
    executor: async (turn) => {
      await turn.working();
      await new Promise((resolve) => setTimeout(resolve, TURN_MS));
      await turn.complete(`done: ${turn.text}`);
    },
  });
  port = Number(new URL(await listen(app)).port);
});
afterAll(() => app.close());

type Binding = 'JSON-RPC' | 'HTTP+JSON';
type Version = '0.3' | '1.0';

/** The path and body of a send (`stream` or not) in `binding` and `version`. */
function send(binding: Binding, version: Version, stream: boolean, text: string): { path: string; body: string } {
  const message =
    version === '0.3'
      ? binding === 'JSON-RPC'
        ? userMessage(text)
        : { messageId: nextId('msg'), role: 'ROLE_USER', content: [{ text }] }
      : { messageId: nextId('msg'), role: 'ROLE_USER', parts: [{ text }] };
  // 0.3's send returns at once unless told to block; 1.0's blocks by default.
  const params = stream || version === '1.0' ? { message } : { message, configuration: { blocking: true } };
  if (binding === 'HTTP+JSON') {
    const operation = stream ? 'message:stream' : 'message:send';
    return { path: version === '0.3' ? `/v1/${operation}` : `/${operation}`, body: JSON.stringify(params) };
  }
  const method =
    version === '0.3' ? (stream ? 'message/stream' : 'message/send') : stream ? 'SendStreamingMessage' : 'SendMessage';
  return { path: '/a2a', body: JSON.stringify({ jsonrpc: '2.0', id: nextId('rpc'), method, params }) };
}

function headersOf(version: Version, stream: boolean, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'a2a-version': version,
    ...(stream ? { accept: 'text/event-stream' } : {}),
    ...extra,
  };
}

/** Asserts the authorised answer is whole: 200, its framing intact, and the turn's final state in it. */
function expectWhole(
  answer: { status: number; headers: Record<string, string>; body: string },
  stream: boolean,
  text: string,
) {
  expect(answer.status, answer.body).toBe(200);
  if (stream) {
    expect(answer.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseSse(answer.body);
    const last = JSON.stringify(events.at(-1)?.data);
    expect(last).toMatch(/"(completed|TASK_STATE_COMPLETED)"/);
    expect(last).toContain(`done: ${text}`);
  } else {
    const body = JSON.stringify(JSON.parse(answer.body));
    expect(body).toMatch(/"(completed|TASK_STATE_COMPLETED)"/);
    expect(body).toContain(`done: ${text}`);
  }
}

const REFUSALS = [
  { name: 'authentication (401)', status: 401, headers: {} as Record<string, string> },
  {
    name: "an application's preParsing hook (429)",
    status: 429,
    headers: { authorization: `Bearer ${TOKEN}`, 'x-over-limit': '1' },
  },
];

describe.concurrent('a refused request leaves no body deadline behind on its connection', () => {
  for (const binding of ['JSON-RPC', 'HTTP+JSON'] as const) {
    for (const version of ['0.3', '1.0'] as const) {
      for (const mode of ['keep-alive', 'pipelined'] as const) {
        for (const stream of [true, false]) {
          for (const refusal of REFUSALS) {
            it(`${binding} ${version}, ${mode}: refused by ${refusal.name}, then a ${stream ? 'streaming' : 'plain'} answer arrives whole`, async () => {
              const connection = await RawConnection.open(port);
              try {
                const refusedSend = send(binding, version, stream, 'refused');
                const refused = rawRequest(
                  'POST',
                  refusedSend.path,
                  headersOf(version, stream, refusal.headers),
                  refusedSend.body,
                );
                const text = nextId('authorised');
                const authorisedSend = send(binding, version, stream, text);
                const authorised = rawRequest(
                  'POST',
                  authorisedSend.path,
                  headersOf(version, stream, { authorization: `Bearer ${TOKEN}` }),
                  authorisedSend.body,
                );
                const refusedAt = Date.now();
                if (mode === 'pipelined') connection.write(refused + authorised);
                else connection.write(refused);
                const refusal1 = await connection.response();
                expect(refusal1.status, refusal1.body).toBe(refusal.status);
                if (mode === 'keep-alive') connection.write(authorised);
                expectWhole(await connection.response(), stream, text);
                // Past any deadline the refused request could have left: nothing more on the connection.
                const after = await connection.idle(Math.max(200, refusedAt + 2 * DEADLINE_MS + 100 - Date.now()));
                expect(after).toBe('');
                expect(connection.closed).toBe(false);
              } finally {
                connection.close();
              }
            });
          }
        }
      }
    }
  }
});

describe.concurrent('the deadline still bounds a body that does not come, without writing into another answer', () => {
  for (const binding of ['JSON-RPC', 'HTTP+JSON'] as const) {
    it(`${binding}: a refused request whose body never comes: the connection closes at the deadline, after the 401 and nothing else`, async () => {
      const connection = await RawConnection.open(port);
      try {
        const { path } = send(binding, '1.0', false, 'never');
        connection.write(
          rawRequest('POST', path, {
            'a2a-version': '1.0',
            'content-type': 'application/json',
            'content-length': '100',
          }),
        );
        const refused = await connection.response();
        expect(refused.status).toBe(401);
        await waitFor(() => connection.closed, 5000, 'the connection to close at the deadline');
        expect(connection.unread).toBe('');
      } finally {
        connection.close();
      }
    });

    it(`${binding}: a pipelined request whose body is late gets its 408 after the stream before it, not inside it`, async () => {
      const connection = await RawConnection.open(port);
      try {
        const text = nextId('streamed');
        const streamed = send(binding, '1.0', true, text);
        const late = send(binding, '1.0', false, 'late');
        connection.write(
          rawRequest(
            'POST',
            streamed.path,
            headersOf('1.0', true, { authorization: `Bearer ${TOKEN}` }),
            streamed.body,
          ) +
            // Headers and half a body: the rest never comes.
            rawRequest(
              'POST',
              late.path,
              headersOf('1.0', false, { authorization: `Bearer ${TOKEN}` }),
              late.body,
            ).slice(0, -10),
        );
        expectWhole(await connection.response(), true, text);
        const timedOut = await connection.response();
        expect(timedOut.status).toBe(408);
        expect(timedOut.headers.connection).toBe('close');
        expect(timedOut.body).toContain(`the body did not arrive within ${DEADLINE_MS} ms`);
        await connection.idle(100);
        expect(connection.unread).toBe('');
        expect(connection.closed).toBe(true);
      } finally {
        connection.close();
      }
    });
  }
});
