/**
 * What the client does with servers that misbehave, each a real HTTP server on a real port: an
 * invalid card, an HTML answer, an oversized SSE event, a stream that never ends or keeps ending
 * without its final event, 502/503 with Retry-After, a 401 cured by a rotated credential, and the
 * card cache's freshness and revalidation.
 */

import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { A2AClientError, clearCardCache, connect, connectEndpoint } from '../src/index.js';
import { tempDir } from './helpers.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

// A full garbage collection on demand, without starting vitest with --expose-gc.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const servers: Server[] = [];
afterEach(async () => {
  clearCardCache();
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeAllConnections();
        }),
    ),
  );
});

/** A server answering the card at the well-known path (1.0 JSON-RPC at /a2a) and `rpc` for the rest. */
async function fakeAgent(rpc: Handler, card?: (base: string) => unknown, cardHeaders: Record<string, string> = {}) {
  let base = '';
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') {
        res.writeHead(200, { 'content-type': 'application/json', ...cardHeaders });
        res.end(
          JSON.stringify(
            card?.(base) ?? {
              name: 'Fake',
              description: 'A misbehaving agent.',
              version: '1',
              capabilities: { streaming: true },
              supportedInterfaces: [{ url: `${base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
              skills: [],
            },
          ),
        );
        return;
      }
      rpc(req, res, Buffer.concat(chunks).toString());
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return base;
}

const task = (state = 'TASK_STATE_WORKING') => ({ id: 't1', contextId: 'c1', status: { state } });
const rpcResult = (body: string, result: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id: JSON.parse(body).id, result });
const sse = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' });
const event = (body: string, id: number, result: unknown) => `id: ${id}\ndata: ${rpcResult(body, result)}\n\n`;

describe('cards', () => {
  it('a card without a name or interfaces is refused, saying what is missing', async () => {
    const url = await fakeAgent(
      () => {},
      () => ({ description: 'no name' }),
    );
    const error = await connect(url).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'card-invalid' });
    expect((error as Error).message).toMatch(/no "name", neither "supportedInterfaces" \(1\.0\) nor "url" \(0\.3\)/);
  });

  it('an HTML page where the card should be: card-invalid, naming the content type', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Hi</title>');
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const error = await connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'card-invalid' });
    expect((error as Error).message).toContain('a text/html document that is not JSON');
  });

  it('an agent that answers a call with HTML: invalid-response', async () => {
    const url = await fakeAgent((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Login</body></html>');
    });
    const client = await connect(url);
    const error = await client.getTask('t1').catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'invalid-response' });
    expect((error as Error).message).toContain('an HTML page');
  });

  it('honours max-age (no request while fresh) and revalidates with If-None-Match', async () => {
    let cardRequests = 0;
    let notModified = 0;
    const server = createServer((req, res) => {
      cardRequests++;
      if (req.headers['if-none-match'] === '"v1"') {
        notModified++;
        res.writeHead(304, { etag: '"v1"', 'cache-control': 'max-age=0' });
        res.end();
        return;
      }
      res.writeHead(200, {
        'content-type': 'application/json',
        etag: '"v1"',
        'cache-control': req.url?.includes('fresh') ? 'max-age=60' : 'max-age=0',
      });
      res.end(
        JSON.stringify({
          name: 'Cached',
          supportedInterfaces: [{ url: 'http://127.0.0.1:1/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
        }),
      );
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await connect(`${base}/fresh/card.json`);
    await connect(`${base}/fresh/card.json`);
    expect(cardRequests).toBe(1);
    await connect(`${base}/stale/card.json`);
    const again = await connect(`${base}/stale/card.json`);
    expect(again.card.name).toBe('Cached');
    expect(cardRequests).toBe(3);
    expect(notModified).toBe(1);
  });
});

describe('streams', () => {
  it('an SSE event over maxEventBytes ends the stream with a clear error, not unbounded memory', async () => {
    const url = await fakeAgent((_req, res, body) => {
      sse(res);
      res.write(event(body, 1, { task: task() }));
      res.write(`id: 2\ndata: ${'x'.repeat(300_000)}`);
      res.write('x'.repeat(300_000));
    });
    const client = await connect(url, { maxEventBytes: 256 * 1024, timeoutMs: 10_000 });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const { result } of client.stream({ text: 'go' })) seen.push(result.kind);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['task']);
    expect(error).toMatchObject({ kind: 'invalid-response' });
    expect((error as Error).message).toContain(`over ${256 * 1024} bytes`);
  });

  it('a stream that never sends its final event ends at the timeout', async () => {
    const url = await fakeAgent((_req, res, body) => {
      sse(res);
      res.write(event(body, 1, { task: task() }));
      const beat = setInterval(() => res.write(': heartbeat\n\n'), 100);
      res.once('close', () => clearInterval(beat));
    });
    // The stream's own timeout: on a loaded machine reading the card may take longer than 800 ms.
    const client = await connect(url);
    const started = Date.now();
    const error = await (async () => {
      for await (const _ of client.stream({ text: 'go' }, { timeoutMs: 800 })) {
        // the task, then nothing
      }
    })().catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'timeout' });
    // At the deadline, not at the test's limit (a busy machine may run its timer late).
    expect(Date.now() - started).toBeGreaterThanOrEqual(790);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('a stream that never sends its final event ends at the timeout, garbage collections during it included', async () => {
    // The deadline once hung on a loaded machine: it was an AbortSignal.timeout() held only weakly
    // by AbortSignal.any(), and a collection dropped it with its timer. A collection on every
    // heartbeat makes that certain rather than rare.
    const url = await fakeAgent((_req, res, body) => {
      sse(res);
      res.write(event(body, 1, { task: task() }));
      const beat = setInterval(() => {
        res.write(': heartbeat\n\n');
        collectGarbage();
      }, 100);
      res.once('close', () => clearInterval(beat));
    });
    // The stream's own timeout: on a loaded machine reading the card may take longer than 800 ms.
    const client = await connect(url);
    const started = Date.now();
    const error = await (async () => {
      for await (const _ of client.stream({ text: 'go' }, { timeoutMs: 800 })) {
        // the task, then nothing
      }
    })().catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'timeout' });
    // At the deadline, not at the test's limit (a busy machine may run its timer late).
    expect(Date.now() - started).toBeGreaterThanOrEqual(790);
    expect(Date.now() - started).toBeLessThan(4000);
  }, 5000);

  it('events without their own id: are delivered, the final one included (the previous id is not theirs)', async () => {
    let requests = 0;
    const url = await fakeAgent((_req, res, body) => {
      requests++;
      sse(res);
      res.write(event(body, 1, { task: task() }));
      const artifact = { taskId: 't1', contextId: 'c1', artifact: { artifactId: 'a', parts: [{ text: 'hi' }] } };
      res.write(`data: ${rpcResult(body, { artifactUpdate: artifact })}\n\n`);
      const status = { taskId: 't1', contextId: 'c1', status: { state: 'TASK_STATE_COMPLETED' } };
      res.end(`data: ${rpcResult(body, { statusUpdate: status })}\n\n`);
    });
    const client = await connect(url, { retry: { attempts: 3, baseDelayMs: 10, maxDelayMs: 20 }, timeoutMs: 10_000 });
    const seen: [string | undefined, string][] = [];
    for await (const { id, result } of client.stream({ text: 'go' })) seen.push([id, result.kind]);
    expect(seen).toEqual([
      ['1', 'task'],
      [undefined, 'artifact-update'],
      [undefined, 'status-update'],
    ]);
    expect(requests).toBe(1);
  });

  it('a stream resumed after its task finished, on a server that refuses that: the task read, its final state delivered', async () => {
    const methods: string[] = [];
    const url = await fakeAgent((_req, res, body) => {
      const { method } = JSON.parse(body);
      methods.push(method);
      if (method === 'SendStreamingMessage') {
        sse(res);
        res.end(event(body, 1, { task: task() }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      if (method === 'SubscribeToTask') {
        const error = { code: -32004, message: 'Task t1 is in a terminal state.' };
        res.end(JSON.stringify({ jsonrpc: '2.0', id: JSON.parse(body).id, error }));
        return;
      }
      res.end(rpcResult(body, task('TASK_STATE_COMPLETED')));
    });
    const client = await connect(url, { retry: { attempts: 3, baseDelayMs: 10, maxDelayMs: 20 }, timeoutMs: 10_000 });
    const states: (string | undefined)[] = [];
    for await (const { result } of client.stream({ text: 'go' })) {
      states.push(result.kind === 'task' ? result.status.state : result.kind);
    }
    expect(states).toEqual(['working', 'completed']);
    expect(methods).toEqual(['SendStreamingMessage', 'SubscribeToTask', 'GetTask']);
  });

  it('a stream that keeps ending without its final event: resumes with Last-Event-ID, then gives up', async () => {
    const lastEventIds: (string | undefined)[] = [];
    const url = await fakeAgent((req, res, body) => {
      lastEventIds.push(req.headers['last-event-id'] as string | undefined);
      sse(res);
      // Replays event 1 whatever the client asked for (a broken server): the client must not repeat it.
      res.end(event(body, 1, { task: task() }));
    });
    const client = await connect(url, { retry: { attempts: 3, baseDelayMs: 10, maxDelayMs: 20 }, timeoutMs: 10_000 });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const { id } of client.stream({ text: 'go' })) seen.push(id as string);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['1']);
    expect(lastEventIds).toEqual([undefined, '1', '1', '1']);
    expect(A2AClientError.is(error) && error.kind).toBe('unreachable');
  });
});

describe('retries and credentials', () => {
  it('503 with Retry-After is retried after that long, with the same messageId', async () => {
    const tries: { at: number; messageId: string }[] = [];
    const url = await fakeAgent((_req, res, body) => {
      tries.push({ at: Date.now(), messageId: JSON.parse(body).params.message.messageId });
      if (tries.length === 1) {
        res.writeHead(503, { 'retry-after': '1' });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(rpcResult(body, { task: task('TASK_STATE_COMPLETED') }));
    });
    const client = await connect(url);
    const sent = await client.send({ text: 'go' });
    expect(sent.done).toBe(true);
    expect(tries).toHaveLength(2);
    expect(tries[1]?.messageId).toBe(tries[0]?.messageId);
    expect(sent.messageId).toBe(tries[0]?.messageId);
    expect((tries[1]?.at ?? 0) - (tries[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('503 asking for a Retry-After longer than maxRetryAfterMs fails at once instead of sleeping that long', async () => {
    let tries = 0;
    const url = await fakeAgent((_req, res) => {
      tries++;
      res.writeHead(503, { 'retry-after': '3600' });
      res.end();
    });
    const client = await connect(url);
    const started = Date.now();
    const error = await client.getTask('t1').catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(tries).toBe(1);
    expect(error).toMatchObject({ kind: 'unreachable', status: 503 });
    expect((error as Error).message).toContain('retried in 3600 s');
  });

  it("a blocking send past fetch's response-head limit is not sent again: a timeout saying how to follow the task", async () => {
    let tries = 0;
    const url = await fakeAgent((_req, res, body) => {
      tries++;
      // The agent works longer than fetch waits for a response head.
      const timer = setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(rpcResult(body, { task: task('TASK_STATE_COMPLETED') }));
      }, 1500);
      res.once('close', () => clearTimeout(timer));
    });
    // Node's own fetch with its own dispatcher class (undici's Agent), its 300 s headersTimeout
    // shortened to 300 ms so that the real undici error happens within the test.
    await fetch(`${url}/.well-known/agent-card.json`).then((r) => r.body?.cancel());
    const Agent = (globalThis as Record<symbol, { constructor: new (o: object) => unknown }>)[
      Symbol.for('undici.globalDispatcher.1')
    ]?.constructor as new (
      o: object,
    ) => unknown;
    const dispatcher = new Agent({ headersTimeout: 300 });
    const shortFetch = ((input: string, init: RequestInit) =>
      fetch(input, { ...init, dispatcher } as RequestInit)) as typeof fetch;
    const client = await connect(url, { fetch: shortFetch, retry: { attempts: 4, baseDelayMs: 10, maxDelayMs: 20 } });
    const error = await client.send({ text: 'go' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'timeout' });
    expect((error as Error).message).toContain('getTask');
    expect(tries).toBe(1);
  });

  it('502 on every try: bounded attempts, then an unreachable error', async () => {
    let tries = 0;
    const url = await fakeAgent((_req, res) => {
      tries++;
      res.writeHead(502);
      res.end();
    });
    const client = await connect(url, { retry: { attempts: 3, baseDelayMs: 10, maxDelayMs: 20 } });
    const error = await client.getTask('t1').catch((e: unknown) => e);
    expect(tries).toBe(3);
    expect(error).toMatchObject({ kind: 'unreachable', status: 502 });
  });

  it('a redirect to another origin does not carry the API key or service parameters; one to the same origin does', async () => {
    const seen: Record<string, string | undefined>[] = [];
    const other = createServer((req, res) => {
      seen.push({ key: req.headers['x-api-key'] as string, svc: req.headers['x-svc'] as string });
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(rpcResult(Buffer.concat(chunks).toString(), task('TASK_STATE_COMPLETED')));
      });
    });
    servers.push(other);
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.2', resolve));
    const elsewhere = `http://127.0.0.2:${(other.address() as AddressInfo).port}/a2a`;
    const url = await fakeAgent((req, res, body) => {
      if (req.url === '/moved') {
        res.writeHead(307, { location: '/a2a' });
        res.end();
        return;
      }
      if (req.url === '/away') {
        res.writeHead(307, { location: elsewhere });
        res.end();
        return;
      }
      seen.push({ key: req.headers['x-api-key'] as string, svc: req.headers['x-svc'] as string });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(rpcResult(body, task('TASK_STATE_COMPLETED')));
    });
    const credentials = { apiKey: 'key-secret-1', headers: { 'x-svc': 'svc-secret-2' } };
    const away = connectEndpoint({ url: `${url}/away`, binding: 'JSONRPC', version: '1.0' }, credentials);
    expect((await away.getTask('t1')).status.state).toBe('completed');
    const moved = connectEndpoint({ url: `${url}/moved`, binding: 'JSONRPC', version: '1.0' }, credentials);
    expect((await moved.getTask('t1')).status.state).toBe('completed');
    expect(seen).toEqual([
      { key: undefined, svc: undefined },
      { key: 'key-secret-1', svc: 'svc-secret-2' },
    ]);
  });

  it('a 401 reads a file: credential again and retries once; the token never appears in errors', async () => {
    const tmp = await tempDir();
    const file = join(tmp.dir, 'token');
    await writeFile(file, 'old-token-1234');
    const seen: string[] = [];
    let rotate = true;
    const url = await fakeAgent((req, res, body) => {
      seen.push(req.headers.authorization ?? '');
      if (req.headers.authorization !== 'Bearer new-token-5678') {
        // The token rotates on the server's side; the next read of the file gets the new one.
        void (rotate ? writeFile(file, 'new-token-5678') : Promise.resolve()).then(() => {
          res.writeHead(401, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'bad token' } }));
        });
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(rpcResult(body, task('TASK_STATE_COMPLETED')));
    });
    const client = await connect(url, { bearer: `file:${file}` });
    expect((await client.getTask('t1')).status.state).toBe('completed');
    expect(seen).toEqual(['Bearer old-token-1234', 'Bearer new-token-5678']);
    // A wrong credential that stays wrong: one refresh, then an auth error without the token in it.
    rotate = false;
    await writeFile(file, 'always-wrong-999');
    const denied = await connect(url, { bearer: `file:${file}` });
    const error = await denied.getTask('t1').catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'auth', status: 401 });
    expect(denied.redact(`${(error as Error).message} always-wrong-999`)).not.toContain('always-wrong-999');
    await tmp.remove();
  });
});
