/**
 * The demo's authentication switches, on the real process: A2A_AUTH_TOKENS, A2A_JWKS_URL, and the
 * start-up line (and warning) of an open demo.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../src/auth.js';
import { spawnDemo, startDemo } from './demo-process.js';

async function rpc(base: string, method: string, params: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON, read field by field by the assertions
  const body: any = await res.json();
  return { status: res.status, challenge: res.headers.get('www-authenticate'), body };
}

const whoami = (messageId: string) => ({
  message: { kind: 'message', role: 'user', messageId, parts: [{ kind: 'text', text: 'whoami' }] },
});

describe('A2A_AUTH_TOKENS', () => {
  it('turns on bearer authentication for those principals, with an extended card one skill longer', async () => {
    const demo = await startDemo('memory:', { A2A_AUTH_TOKENS: 'alice:tok-a-0123456789, bob:tok-b-0123456789' });
    expect(demo.readyLine).toContain('authentication: bearer tokens for alice, bob');
    const anonymous = await rpc(demo.baseUrl, 'message/send', whoami('m1'));
    expect(anonymous.status).toBe(401);
    expect(anonymous.challenge).toBe('Bearer realm="a2a"');
    const bob = await rpc(demo.baseUrl, 'message/send', whoami('m2'), { authorization: 'Bearer tok-b-0123456789' });
    expect(bob.body.result.status.message.parts[0].text).toBe('You are bob.');
    // biome-ignore lint/suspicious/noExplicitAny: wire JSON
    const card: any = await (await fetch(demo.cardUrl)).json();
    expect(card.supportsAuthenticatedExtendedCard).toBe(true);
    expect(card.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const extended = await rpc(demo.baseUrl, 'agent/getAuthenticatedExtendedCard', undefined, {
      authorization: 'Bearer tok-a-0123456789',
    });
    expect(extended.body.result.skills.map((s: { id: string }) => s.id)).toEqual([
      ...card.skills.map((s: { id: string }) => s.id),
      'whoami',
    ]);
    await demo.stop();
  });

  it.each([
    ['alice', /entry 1 is not "principal:token"/],
    ['alice:s3cr3t-x,bob:s3cr3t-x', /entry 2 reuses the token of principal "alice"/],
    [' , ', /A2A_AUTH_TOKENS is set but empty/],
  ])('A2A_AUTH_TOKENS=%j is refused at start-up in one line, without the token', async (value, says) => {
    const demo = await spawnDemo({ A2A_STORE: 'memory:', A2A_AUTH_TOKENS: value });
    const exit = await demo.exited;
    expect(exit.code).toBe(1);
    const stderr = demo.stderr().trim();
    expect(stderr.split('\n')).toHaveLength(1);
    expect(stderr).toMatch(says);
    expect(stderr).not.toContain('s3cr3t');
  });

  it('parses pairs, trimming spaces', () => {
    expect(parseTokens(' alice : a1 ,bob:b1,')).toEqual({ a1: 'alice', b1: 'bob' });
  });
});

describe('A2A_JWKS_URL', () => {
  let jwks: Server;
  let jwksUrl: string;
  let privateKey: CryptoKey;

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'demo-key', alg: 'ES256' };
    jwks = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
  });
  afterAll(() => new Promise<void>((resolve) => jwks.close(() => resolve())));

  it('turns on JWT authentication with that issuer and audience', async () => {
    const demo = await startDemo('memory:', {
      A2A_JWKS_URL: jwksUrl,
      A2A_JWT_ISSUER: 'https://idp.example',
      A2A_JWT_AUDIENCE: 'demo-agent',
    });
    expect(demo.readyLine).toContain(`authentication: JWTs signed by the keys at ${jwksUrl}`);
    const token = await new SignJWT({ sub: 'carol' })
      .setProtectedHeader({ alg: 'ES256', kid: 'demo-key' })
      .setIssuer('https://idp.example')
      .setAudience('demo-agent')
      .setExpirationTime('5m')
      .sign(privateKey);
    const carol = await rpc(demo.baseUrl, 'message/send', whoami('j1'), { authorization: `Bearer ${token}` });
    expect(carol.body.result.status.message.parts[0].text).toBe('You are carol.');
    const otherAudience = await new SignJWT({ sub: 'mallory' })
      .setProtectedHeader({ alg: 'ES256', kid: 'demo-key' })
      .setIssuer('https://idp.example')
      .setAudience('another-service')
      .setExpirationTime('5m')
      .sign(privateKey);
    const refused = await rpc(demo.baseUrl, 'message/send', whoami('j2'), { authorization: `Bearer ${otherAudience}` });
    expect(refused.status).toBe(401);
    await demo.stop();
  });
});

describe('an open demo', () => {
  it('says authentication is off in its ready line, and warns only when it listens beyond loopback', async () => {
    const local = await startDemo('memory:');
    expect(local.readyLine).toContain('authentication off (set A2A_AUTH_TOKENS or A2A_JWKS_URL to turn it on)');
    expect(local.stderr()).not.toMatch(/without authentication/);
    await local.stop();
    const exposed = await startDemo('memory:', { HOST: '0.0.0.0' });
    await new Promise((r) => setTimeout(r, 100));
    expect(exposed.stderr()).toMatch(/Warning: listening on 0\.0\.0\.0 without authentication/);
    await exposed.stop();
  });
});
