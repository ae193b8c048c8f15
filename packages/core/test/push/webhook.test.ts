import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { A2AError } from '../../src/errors.js';
import {
  BODY_SNIPPET_BYTES,
  type CheckedDestination,
  type ConnectTarget,
  checkDestination,
  defaultConnector,
  deliverJson,
  postJson,
  type WebhookFailure,
  type WebhookResponse,
  type WebhookResult,
} from '../../src/push/webhook.js';
import {
  loopbackConnector,
  noResolver,
  type Receiver,
  refusedError,
  startReceiver,
  TLS_CERT,
  tableResolver,
} from './helpers.js';

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

/** `hooks.test` resolves to 127.0.0.1 only, which the policy allows: the one place tests deliver to. */
const loopbackPolicy = {
  resolver: tableResolver({ 'hooks.test': ['127.0.0.1'], 'other.test': ['127.0.0.1'] }),
  allowCidrs: ['127.0.0.1/32'],
};

const local = (
  port: number,
  path = '/a2a/push?tenant=7',
  host = 'hooks.test',
  scheme = 'http',
): Promise<CheckedDestination> => checkDestination(`${scheme}://${host}:${port}${path}`, loopbackPolicy);

function response(result: WebhookResult): WebhookResponse {
  if (result.type !== 'response') throw new Error(`expected a response, got ${result.kind}: ${result.error.message}`);
  return result;
}

function failure(result: WebhookResult): WebhookFailure {
  if (result.type !== 'failure') throw new Error(`expected a failure, got status ${result.status}`);
  return result;
}

const BODY = JSON.stringify({ statusUpdate: { taskId: 't1', status: { state: 'working' } } });

describe('postJson: delivery to a local receiver', () => {
  it('POSTs the body with the caller headers, the URL host as Host, and reads the answer', async () => {
    const r = await receiver((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks'));
    const result = response(
      await postJson(await local(r.port), BODY, {
        headers: { Authorization: 'Bearer abc', 'X-A2A-Notification-Token': 'tok-1' },
      }),
    );
    expect(result).toEqual({ type: 'response', status: 200, bodySnippet: 'thanks', address: '127.0.0.1' });
    expect(r.received).toHaveLength(1);
    const [request] = r.received;
    expect(request).toMatchObject({ method: 'POST', url: '/a2a/push?tenant=7', body: BODY });
    expect(request!.headers).toMatchObject({
      host: `hooks.test:${r.port}`,
      authorization: 'Bearer abc',
      'x-a2a-notification-token': 'tok-1',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(BODY)),
      connection: 'close',
    });
  });

  it('sends the content type the caller gives, and a Uint8Array body as is', async () => {
    const r = await receiver((_req, res) => res.writeHead(204).end());
    const bytes = new TextEncoder().encode('{"é":1}');
    const result = response(
      await postJson(await local(r.port), bytes, { headers: { 'content-type': 'application/a2a+json' } }),
    );
    expect(result.status).toBe(204);
    expect(r.received[0]!.headers['content-type']).toBe('application/a2a+json');
    expect(r.received[0]!.body).toBe('{"é":1}');
  });

  it.each([200, 202, 400, 401, 404, 410, 500, 503])('answers with the status %i, whatever it is', async (status) => {
    const r = await receiver((_req, res) => res.writeHead(status).end(`status ${status}`));
    const result = response(await postJson(await local(r.port), BODY));
    expect(result.status).toBe(status);
    expect(result.bodySnippet).toBe(`status ${status}`);
    expect(result.retryAfterMs).toBeUndefined();
  });

  it('reads Retry-After as seconds or as an HTTP date', async () => {
    const now = Date.UTC(2026, 10, 23, 12, 0, 0);
    const answers = ['120', 'Mon, 23 Nov 2026 12:00:30 GMT', 'Sun, 22 Nov 2026 12:00:00 GMT', 'later please'];
    const r = await receiver((_req, res) => res.writeHead(503, { 'retry-after': answers.shift()! }).end());
    const results: (number | undefined)[] = [];
    for (let i = 0; i < 4; i++) {
      results.push(response(await postJson(await local(r.port), BODY, { now: () => now })).retryAfterMs);
    }
    expect(results).toEqual([120_000, 30_000, 0, undefined]);
  });

  it('does not follow a redirect: a 302 is the result', async () => {
    const r = await receiver((req, res) => {
      if (req.url === '/elsewhere') res.writeHead(200).end('followed');
      else res.writeHead(302, { location: '/elsewhere' }).end();
    });
    const result = response(await postJson(await local(r.port), BODY));
    expect(result.status).toBe(302);
    expect(r.received.map((q) => q.url)).toEqual(['/a2a/push?tenant=7']);
  });

  it('gives up on a receiver that does not answer within timeoutMs', async () => {
    const r = await receiver(() => {
      // never answers
    });
    const started = Date.now();
    const result = failure(await postJson(await local(r.port), BODY, { timeoutMs: 300 }));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result).toMatchObject({ kind: 'timeout', phase: 'response', address: '127.0.0.1' });
    expect(result.status).toBeUndefined();
    expect(result.error.code).toBe('PUSH_DELIVERY_FAILED');
    expect(result.error.message).toContain('within 300 ms (no status yet)');
    expect(result.error.message).toContain('raise timeoutMs');
  });

  it('gives up on a body that stalls after the status line, keeping the status', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    });
    const result = failure(await postJson(await local(r.port), BODY, { timeoutMs: 300 }));
    expect(result).toMatchObject({ kind: 'timeout', phase: 'response', status: 200, bodySnippet: 'partial' });
  });

  it('cuts a huge body at maxResponseBytes and closes the connection', async () => {
    let serverSawClose = false;
    const chunk = Buffer.alloc(16 * 1024, 'x');
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.on('close', () => {
        serverSawClose = true;
      });
      // An endless body: only the client stopping ends it.
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const result = failure(await postJson(await local(r.port), BODY, { maxResponseBytes: 10_000, timeoutMs: 5_000 }));
    expect(result).toMatchObject({ kind: 'too-large', status: 200 });
    expect(result.bodySnippet).toBe('x'.repeat(BODY_SNIPPET_BYTES));
    expect(result.error.message).toContain('longer than 10000 bytes');
    await expect.poll(() => serverSawClose).toBe(true);
  });

  it('refuses a declared Content-Length over the limit without reading it', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-length': '5000000' });
      res.write('x');
    });
    const result = failure(await postJson(await local(r.port), BODY, { maxResponseBytes: 1000 }));
    expect(result).toMatchObject({ kind: 'too-large', status: 200 });
  });

  it('accepts a body of exactly maxResponseBytes', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end('y'.repeat(2000)));
    const result = response(await postJson(await local(r.port), BODY, { maxResponseBytes: 2000 }));
    expect(result.bodySnippet).toBe('y'.repeat(BODY_SNIPPET_BYTES));
  });

  it('reports a refused connection', async () => {
    const r = await startReceiver(() => {});
    const port = r.port;
    await r.close();
    const result = failure(await postJson(await local(port), BODY));
    expect(result).toMatchObject({ kind: 'connection-refused', phase: 'connect', address: '127.0.0.1' });
    expect(result.error.message).toContain(`127.0.0.1 port ${port} refused the connection`);
  });

  it('stops when the caller aborts', async () => {
    const r = await receiver(() => {});
    const controller = new AbortController();
    const pending = postJson(await local(r.port), BODY, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(failure(await pending)).toMatchObject({ kind: 'aborted' });
    const already = failure(await postJson(await local(r.port), BODY, { signal: AbortSignal.abort() }));
    expect(already.kind).toBe('aborted');
  });
});

describe('postJson: only checked addresses are dialled', () => {
  it('DNS rebinding: the check resolves once, and the connection goes to the address it checked', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end('ok'));
    let answer = 0;
    const rebinding = async () => {
      answer++;
      return [{ address: answer === 1 ? '93.184.216.34' : '10.0.0.5' }];
    };
    const checked = await checkDestination('http://rebind.example.com/hook', { resolver: rebinding });
    const connector = loopbackConnector(r.port);
    const result = response(await postJson(checked, BODY, { connector }));
    expect(result.address).toBe('93.184.216.34');
    expect(connector.dialled.map((t) => t.address)).toEqual(['93.184.216.34']);
    expect(r.received[0]!.headers.host).toBe('rebind.example.com');
    // postJson never calls the resolver: the second answer (private) is not seen until the next check ...
    expect(answer).toBe(1);
    // ... which refuses it: deliverJson checks again before every delivery.
    const again = failure(
      await deliverJson('http://rebind.example.com/hook', { resolver: rebinding }, BODY, { connector }),
    );
    expect(again.kind).toBe('refused');
    expect(again.error.code).toBe('PUSH_URL_REFUSED');
    expect(again.error.message).toContain('resolves to 10.0.0.5, a private address (RFC 1918)');
    expect(connector.dialled).toHaveLength(1);
  });

  it('hands the connector the IP, the port, and the URL host as TLS server name', async () => {
    // The root-dot name is resolved as written, and sent as server name without the dot (RFC 6066 §3).
    const resolver = tableResolver({ 'hooks.example.com.': ['2606:2800:220:1:248:1893:25c8:1946'] });
    const checked = await checkDestination('https://hooks.example.com.:8443/x', { resolver });
    const connector = loopbackConnector(1, () => refusedError());
    await postJson(checked, BODY, { connector, ca: TLS_CERT });
    expect(connector.dialled).toHaveLength(1);
    const target: ConnectTarget = connector.dialled[0]!;
    expect(target).toMatchObject({
      address: '2606:2800:220:1:248:1893:25c8:1946',
      family: 6,
      port: 8443,
      tls: true,
      servername: 'hooks.example.com',
      ca: TLS_CERT,
    });
    const literal = await checkDestination('https://93.184.216.34/x', { resolver: noResolver });
    await postJson(literal, BODY, { connector });
    expect(connector.dialled[1]).toMatchObject({
      address: '93.184.216.34',
      family: 4,
      port: 443,
      servername: undefined,
    });
  });

  it('tries the checked addresses in order until one connects', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end());
    const resolver = tableResolver({
      'dual.example.com': ['2606:2800:220:1:248:1893:25c8:1946', '93.184.216.34'],
    });
    const connector = loopbackConnector(r.port, (t) => (t.family === 6 ? refusedError() : undefined));
    const result = response(
      await postJson(await checkDestination('http://dual.example.com/', { resolver }), BODY, { connector }),
    );
    expect(connector.dialled.map((t) => t.address)).toEqual(['2606:2800:220:1:248:1893:25c8:1946', '93.184.216.34']);
    expect(result.address).toBe('93.184.216.34');
  });

  it('reports the last failure when no address connects', async () => {
    const resolver = tableResolver({ 'dual.example.com': ['93.184.216.34', '93.184.216.35'] });
    const connector = loopbackConnector(1, () => refusedError());
    const result = failure(
      await postJson(await checkDestination('http://dual.example.com/', { resolver }), BODY, { connector }),
    );
    expect(result).toMatchObject({ kind: 'connection-refused', address: '93.184.216.35' });
    expect(connector.dialled).toHaveLength(2);
  });

  it('times out a connection attempt after connectTimeoutMs, and aborts the connector', async () => {
    const targets: ConnectTarget[] = [];
    const hanging = (target: ConnectTarget) =>
      new Promise<Socket>((_resolve, reject) => {
        targets.push(target);
        target.signal.addEventListener('abort', () => reject(target.signal.reason));
      });
    const checked = await checkDestination('http://93.184.216.34/', { resolver: noResolver });
    const result = failure(await postJson(checked, BODY, { connector: hanging, connectTimeoutMs: 100 }));
    expect(result).toMatchObject({ kind: 'timeout', phase: 'connect', address: '93.184.216.34' });
    expect(result.error.message).toContain('no connection to 93.184.216.34 port 80 within 100 ms');
    expect(targets[0]!.signal.aborted).toBe(true);
  });

  it('destroys a socket that a connector hands over after its attempt timed out', async () => {
    const r = await receiver(() => {});
    let late: Socket | undefined;
    const slow = loopbackConnector(r.port);
    const ignoresSignal = async (target: ConnectTarget) => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      late = await slow(target);
      return late;
    };
    const checked = await checkDestination('http://93.184.216.34/', { resolver: noResolver });
    const result = failure(await postJson(checked, BODY, { connector: ignoresSignal, connectTimeoutMs: 50 }));
    expect(result).toMatchObject({ kind: 'timeout', phase: 'connect' });
    await expect.poll(() => late?.destroyed).toBe(true);
  });

  it('the default connector never resolves a name', async () => {
    const error = await defaultConnector({
      address: 'localhost',
      family: 4,
      port: 80,
      tls: false,
      servername: undefined,
      ca: undefined,
      signal: new AbortController().signal,
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toContain('never resolves names');
  });
});

describe('postJson: TLS', () => {
  it('verifies the certificate against the URL host name, with the CA given', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end('secure'), true);
    const result = response(await postJson(await local(r.port, '/tls', 'hooks.test', 'https'), BODY, { ca: TLS_CERT }));
    expect(result).toMatchObject({ status: 200, bodySnippet: 'secure', address: '127.0.0.1' });
    expect(r.received[0]!.servername).toBe('hooks.test');
    expect(r.received[0]!.headers.host).toBe(`hooks.test:${r.port}`);
  });

  it('refuses a certificate no trusted CA signed (the default store)', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end(), true);
    const result = failure(await postJson(await local(r.port, '/tls', 'hooks.test', 'https'), BODY));
    expect(result).toMatchObject({ kind: 'tls', phase: 'connect' });
    expect(result.error.message).toContain('SELF_SIGNED');
    expect(r.received).toHaveLength(0);
  });

  it('refuses a certificate for another name, although the address is the same', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end(), true);
    const result = failure(await postJson(await local(r.port, '/tls', 'other.test', 'https'), BODY, { ca: TLS_CERT }));
    expect(result).toMatchObject({ kind: 'tls' });
    expect(result.error.message).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
    expect(result.error.message).toContain('certificate valid for other.test');
    expect(r.received).toHaveLength(0);
  });

  it('checks an IP-literal URL against the IP: a certificate for a name does not do', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end(), true);
    const checked = await checkDestination(`https://127.0.0.1:${r.port}/`, { allowCidrs: ['127.0.0.1/32'] });
    const result = failure(await postJson(checked, BODY, { ca: TLS_CERT }));
    expect(result).toMatchObject({ kind: 'tls' });
    expect(r.received).toHaveLength(0);
  });
});

describe('postJson: misuse', () => {
  it('refuses a destination checkDestination did not make', async () => {
    const checked = await checkDestination('http://93.184.216.34/', { resolver: noResolver });
    const forged = {
      ...checked,
      addresses: [{ address: '10.0.0.5', family: 4 as const, allowedBy: 'public' as const }],
    };
    const error = await postJson(forged, BODY).catch((e: unknown) => e as A2AError);
    expect(A2AError.is(error) && error.code).toBe('INVALID_OPTIONS');
    expect((error as A2AError).message).toContain('call it first');
  });

  it.each([
    [{ headers: { Host: 'evil.example' } }, 'leave out the "Host" header'],
    [{ headers: { 'Content-Length': '1' } }, 'leave out'],
    [{ headers: { 'Transfer-Encoding': 'chunked' } }, 'leave out'],
    [{ headers: { 'x-token': 'a\r\nInjected: 1' } }, 'not a valid HTTP header'],
    [{ headers: { 'bad header': 'x' } }, 'not a valid HTTP header'],
    [{ timeoutMs: 0 }, 'timeoutMs must be a whole number'],
    [{ connectTimeoutMs: 1.5 }, 'connectTimeoutMs must be a whole number'],
    [{ maxResponseBytes: -1 }, 'maxResponseBytes must be a whole number'],
  ] as const)('refuses the options %j', async (options, words) => {
    const checked = await checkDestination('http://93.184.216.34/', { resolver: noResolver });
    const connector = loopbackConnector(1, () => refusedError());
    const error = await postJson(checked, BODY, { ...options, connector }).catch((e: unknown) => e as A2AError);
    expect(A2AError.is(error) && error.code).toBe('INVALID_OPTIONS');
    expect((error as A2AError).message).toContain(words);
    expect(connector.dialled).toHaveLength(0);
  });
});

describe('deliverJson', () => {
  it('checks, then posts', async () => {
    const r = await receiver((_req, res) => res.writeHead(202).end());
    const result = response(await deliverJson(`http://hooks.test:${r.port}/`, loopbackPolicy, BODY));
    expect(result.status).toBe(202);
  });

  it('returns a refusal as a failure, and an unresolvable host as its own kind', async () => {
    const refused = failure(await deliverJson('http://127.0.0.1/', {}, BODY));
    expect(refused).toMatchObject({ kind: 'refused' });
    expect(refused.error.code).toBe('PUSH_URL_REFUSED');
    const unresolvable = failure(await deliverJson('http://nowhere.test/', { resolver: tableResolver({}) }, BODY));
    expect(unresolvable).toMatchObject({ kind: 'unresolvable' });
  });
});
