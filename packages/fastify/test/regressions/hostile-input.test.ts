/**
 * Regressions from trying the server as a hostile client would: deeply nested input, malformed
 * Content-Types, a body trickled one byte at a time, a client that goes away mid-body.
 */
import { connect } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { a2aPlugin } from '../../src/index.js';
import { listen, rpcBody, testCard, userMessage } from '../helpers.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** An app whose log lines are kept, to check what is logged at which level. */
async function serve(
  options: Record<string, unknown> = {},
): Promise<{ app: FastifyInstance; logs: { level: number; msg: string }[] }> {
  const logs: { level: number; msg: string }[] = [];
  app = Fastify({
    logger: {
      level: 'info',
      stream: { write: (line: string) => logs.push(JSON.parse(line) as { level: number; msg: string }) },
    },
  });
  await app.register(a2aPlugin, {
    agentCard: testCard,
    executor: async (turn) => turn.complete(`echo: ${turn.text}`),
    retention: false,
    ...options,
  });
  await app.ready();
  return { app, logs };
}

const errorLogs = (logs: { level: number; msg: string }[]) => logs.filter((l) => l.level >= 50);

/** `{"a": {"a": … "x" …}}`, `depth` objects deep, as text (JSON.stringify would recurse). */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}`;
}

describe('deeply nested input (issue: a data part ~1,000 levels deep made its task unreadable for good)', () => {
  it.each([150, 1000, 4500])(
    'a data part %i levels deep is -32602 naming the depth, with the request id, and leaves the server serving',
    async (depth) => {
      const { app } = await serve();
      const message = JSON.stringify(userMessage('deep'));
      const deepMessage = `${message.slice(0, -1)},"parts":[{"kind":"data","data":${nested(depth)}}]}`;
      const payload = `{"jsonrpc":"2.0","id":"deep-1","method":"message/send","params":{"message":${deepMessage}}}`;
      const res = await app.inject({
        method: 'POST',
        url: '/a2a',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({ id: 'deep-1', error: { code: -32602 } });
      expect(body.error.message).toMatch(/nest deeper than 100 levels/);
      // Nothing was stored, and the server goes on.
      const next = await app.inject({
        method: 'POST',
        url: '/a2a',
        payload: rpcBody('message/send', { message: userMessage('next') }),
      });
      expect(next.json().result.status.state).toBe('completed');
    },
  );

  it('the same over HTTP+JSON (400), and 100 levels are fine', async () => {
    const { app } = await serve();
    const deep = await app.inject({
      method: 'POST',
      url: '/v1/message:send',
      headers: { 'content-type': 'application/json' },
      payload: `{"message":{"messageId":"m-deep","role":"ROLE_USER","content":[{"data":{"data":${nested(200)}}}]}}`,
    });
    expect(deep.statusCode).toBe(400);
    expect(deep.json()).toMatchObject({ code: -32602, error: 'InvalidParamsError' });
    const fine = await app.inject({
      method: 'POST',
      url: '/a2a',
      payload: rpcBody('message/send', {
        message: { ...userMessage('ok'), parts: [{ kind: 'data', data: JSON.parse(nested(90)) }] },
      }),
    });
    const task = fine.json().result;
    expect(task.status.state).toBe('completed');
    const got = await app.inject({ method: 'POST', url: '/a2a', payload: rpcBody('tasks/get', { id: task.id }) });
    expect(got.json().result.id).toBe(task.id);
  });
});

describe('malformed Content-Type (issue: answered -32603 and logged an error)', () => {
  it.each(['json', 'application/', ';', ''])(
    '%j is 415 -32005 naming it (issue 31), logged below error',
    async (contentType) => {
      const { app, logs } = await serve();
      const res = await app.inject({
        method: 'POST',
        url: '/a2a',
        headers: { 'content-type': contentType },
        payload: JSON.stringify(rpcBody('tasks/get', { id: 'x' })),
      });
      expect(res.statusCode).toBe(415);
      expect(res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32005 } });
      expect(res.json().error.message).toMatch(/must be application\/json/);
      expect(errorLogs(logs)).toEqual([]);
    },
  );
});

/** A raw HTTP/1.1 client: sends `head`, then `chunks` one by one `everyMs` apart; the whole response, and when it ended. */
function trickle(
  base: string,
  head: string,
  chunks: string[],
  everyMs: number,
): Promise<{ response: string; endedAfterMs: number }> {
  const { hostname, port } = new URL(base);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(head);
      let i = 0;
      const timer = setInterval(() => {
        if (i >= chunks.length || socket.destroyed) return clearInterval(timer);
        socket.write(chunks[i++] as string);
      }, everyMs);
      socket.once('close', () => clearInterval(timer));
    });
    let response = '';
    socket.on('data', (data) => {
      response += data.toString();
    });
    socket.on('close', () => resolve({ response, endedAfterMs: Date.now() - started }));
    socket.on('error', reject);
  });
}

describe('a slow body (issue: one byte per 10 s was still open after 149 s)', () => {
  it('is cut off at bodyTimeoutMs with 408 and a JSON-RPC error, and the connection closes', async () => {
    const { app, logs } = await serve({ bodyTimeoutMs: 300 });
    const base = await listen(app);
    const body = JSON.stringify(rpcBody('tasks/get', { id: 'x' }));
    const { response, endedAfterMs } = await trickle(
      base,
      `POST /a2a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      body.split(''),
      100,
    );
    expect(response).toMatch(/^HTTP\/1\.1 408 Request Timeout/);
    expect(response).toContain('"code":-32600');
    expect(response).toMatch(/did not arrive within 300 ms/);
    expect(endedAfterMs).toBeLessThan(5000);
    expect(errorLogs(logs)).toEqual([]);
  });

  it('a body that arrives in time is served, and HTTP+JSON has the same deadline', async () => {
    const { app } = await serve({ bodyTimeoutMs: 2000 });
    const base = await listen(app);
    const body = JSON.stringify(rpcBody('tasks/get', { id: 'x' }));
    const inTime = await trickle(
      base,
      `POST /a2a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      [body.slice(0, 10), body.slice(10)],
      100,
    );
    expect(inTime.response).toMatch(/^HTTP\/1\.1 200/);
    expect(inTime.response).toContain('"code":-32001');
    const rest = await trickle(
      base,
      'POST /v1/message:send HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n',
      ['{'],
      100,
    );
    expect(rest.response).toMatch(/^HTTP\/1\.1 408/);
  }, 10_000);

  it('a client that goes away mid-body is logged below error level', async () => {
    const { app, logs } = await serve();
    const base = await listen(app);
    const { hostname, port } = new URL(base);
    await new Promise<void>((resolve) => {
      const socket = connect(Number(port), hostname, () => {
        socket.write(
          'POST /a2a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc"',
        );
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 100);
      });
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(errorLogs(logs)).toEqual([]);
  });
});
