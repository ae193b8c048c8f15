/**
 * The `a2a` binary against our plugin over HTTPS with a self-signed certificate (--insecure,
 * a2a-cli A2ACLI_AUTH_003) and through a card whose 1.0 interfaces declare a tenant
 * (A2ACLI_TX_003): the task sent lands in that tenant, on JSON-RPC and on HTTP+JSON.
 */

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { a2aPlugin } from 'fastify-a2a';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2a, ensureBuilt } from './cli-process.js';
import { type Served, serve, tempDir, testAgent, testCard } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON output, read member by member in assertions.
type Json = Record<string, any>;

let tmp: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  ensureBuilt();
  tmp = await tempDir();
}, 120_000);

afterAll(async () => {
  await tmp?.remove();
});

describe('a2a --insecure: an agent with a self-signed certificate', () => {
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    const key = join(tmp.dir, 'key.pem');
    const cert = join(tmp.dir, 'cert.pem');
    execFileSync(
      '/usr/bin/openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    app = Fastify({ logger: false, https: { key: readFileSync(key), cert: readFileSync(cert) } });
    await app.register(a2aPlugin, { agentCard: testCard, executor: testAgent(), store: 'memory:', retention: false });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  }, 60_000);
  afterAll(() => app?.close());

  it('without --insecure: exit 3, one line naming the certificate failure', async () => {
    const run = await a2a(['card', 'get', url, '--retries', '1']);
    expect(url.startsWith('https://')).toBe(true);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('A2ACLI_ERR_UNREACHABLE');
    expect(run.stderr).toMatch(/SELF_SIGNED|certificate/i);
    // The hint names the cause, read from the TLS error code.
    expect(run.stderr).toContain("Hint: The agent's certificate is self-signed.");
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('with --insecure: the card is read and a message sent, with a warning on stderr', async () => {
    const card = await a2a(['card', 'get', url, '--insecure', '-o', 'json']);
    expect(card.code).toBe(0);
    expect((card.json() as Json).name).toBe('Client test agent');
    expect(card.stderr).toContain('WARNING: --insecure');
    // Verification is off for this client only, not process-wide: Node prints no warning of its own.
    expect(card.stderr).not.toContain('NODE_TLS_REJECT_UNAUTHORIZED');
    expect(card.stderr.trim().split('\n')).toHaveLength(1);
    const sent = await a2a(['send', '-a', url, 'over tls', '--insecure', '-o', 'json']);
    expect(sent.code).toBe(0);
    expect((sent.json() as Json).task.status.state).toBe('TASK_STATE_COMPLETED');
  });
});

describe('a2a: a certificate failure names its cause', () => {
  const apps: FastifyInstance[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  /**
   * Serves an HTTPS agent on `cert`, trusted by the CLI as a CA (so only the failure under test
   * remains), and checks `card get` fails with `tlsCode` in the message and `hint` in the hint.
   */
  async function expectRefused(key: string, cert: string, tlsCode: string, hint: string): Promise<void> {
    const app = Fastify({ logger: false, https: { key: readFileSync(key), cert: readFileSync(cert) } });
    apps.push(app);
    await app.register(a2aPlugin, { agentCard: testCard, executor: testAgent(), store: 'memory:', retention: false });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const run = await a2a(['card', 'get', url, '--retries', '1', '-o', 'json'], { env: { NODE_EXTRA_CA_CERTS: cert } });
    expect(run.code).toBe(3);
    const { error } = run.json() as Json;
    expect(error.code).toBe('A2ACLI_ERR_UNREACHABLE');
    expect(error.message).toContain(tlsCode);
    expect(error.hint).toContain(hint);
  }

  const openssl = (args: string[]) => execFileSync('/usr/bin/openssl', args, { stdio: 'ignore' });

  it('a certificate for another host name: the hint says so', async () => {
    const key = join(tmp.dir, 'other-key.pem');
    const cert = join(tmp.dir, 'other-cert.pem');
    openssl(
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1'].concat([
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost',
      ]),
    );
    await expectRefused(key, cert, 'ERR_TLS_CERT_ALTNAME_INVALID', 'for another host name than the one in the URL');
  });

  it('an expired certificate: the hint says so', async () => {
    const key = join(tmp.dir, 'expired-key.pem');
    const request = join(tmp.dir, 'expired.csr');
    const cert = join(tmp.dir, 'expired-cert.pem');
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', request, '-subj', '/CN=127.0.0.1']);
    // Valid until a day before it was made.
    openssl(['x509', '-req', '-in', request, '-signkey', key, '-days', '-1', '-out', cert]);
    await expectRefused(key, cert, 'CERT_HAS_EXPIRED', 'has expired');
  });
});

describe('a2a: a card whose interfaces declare a tenant', () => {
  let served: Served;
  let cardServer: Server;
  let cardUrl: string;
  beforeAll(async () => {
    served = await serve('memory:');
    const original = (await (await fetch(`${served.url}/.well-known/agent-card.json`)).json()) as Json;
    const card = {
      ...original,
      supportedInterfaces: (original.supportedInterfaces as Json[]).map((entry) => ({ ...entry, tenant: 'acme' })),
    };
    cardServer = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(card));
    });
    await new Promise<void>((resolve) => cardServer.listen(0, '127.0.0.1', resolve));
    cardUrl = `http://127.0.0.1:${(cardServer.address() as AddressInfo).port}/card.json`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => cardServer?.close(() => resolve()));
    await served?.close();
  });

  const getTask = (path: string) =>
    fetch(`${served.url}${path}`, { headers: { 'A2A-Version': '1.0' } }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as Json,
    }));

  for (const transport of ['JSONRPC', 'HTTP+JSON']) {
    it(`send over ${transport}: the task lives in tenant acme only`, async () => {
      const sent = await a2a(['send', '-a', cardUrl, '--transport', transport, 'hello tenant', '-o', 'json']);
      expect(sent.code).toBe(0);
      const id = (sent.json() as Json).task.id as string;
      const inTenant = await getTask(`/acme/tasks/${encodeURIComponent(id)}`);
      expect(inTenant.status).toBe(200);
      expect(inTenant.body.id).toBe(id);
      expect(inTenant.body.status.state).toBe('TASK_STATE_COMPLETED');
      const untenanted = await getTask(`/tasks/${encodeURIComponent(id)}`);
      expect(untenanted.status).toBe(404);
      const otherTenant = await getTask(`/globex/tasks/${encodeURIComponent(id)}`);
      expect(otherTenant.status).toBe(404);
      // The CLI reads it back through the same card (the tenant again in the request).
      const got = await a2a(['task', 'get', '-a', cardUrl, '--transport', transport, id, '-o', 'json']);
      expect(got.code).toBe(0);
      expect((got.json() as Json).id).toBe(id);
    });
  }
});
