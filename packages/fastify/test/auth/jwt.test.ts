/**
 * jwtBearer against real tokens: keys served by a local JWKS HTTP server (rotated, taken down),
 * tokens signed with jose, every refusal's reason, and the principal the agent sees.
 */

import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AgentExecutor, Task } from '@fastify-a2a/core';
import Fastify from 'fastify';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { a2aPlugin, type JwtOptions, jwtBearer } from '../../src/index.js';
import { buildApp, capturedLogger, rpcBody, type TestApp, testCard, userMessage } from '../helpers.js';

const ISSUER = 'https://idp.test.example';
const AUDIENCE = 'urn:a2a:test-agent';

const whoAmI: AgentExecutor = {
  async execute(turn) {
    const p = turn.caller.principal;
    await turn.complete(
      `${p?.id}|roles=${(p?.roles ?? []).join(',')}|scopes=${(p?.scopes ?? []).join(',')}|email=${String(p?.claims?.email)}`,
    );
  },
};

interface KeyPair {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function keyPair(kid: string, alg: 'RS256' | 'ES256' = 'ES256'): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** A JWKS endpoint whose keys and health the test controls, counting its fetches. */
class JwksServer {
  keys: JWK[] = [];
  failing = false;
  fetches = 0;
  #server: Server | undefined;

  async start(): Promise<string> {
    this.#server = createServer((_req, res) => {
      this.fetches++;
      if (this.failing) {
        res.writeHead(500).end('down');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: this.keys }));
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/.well-known/jwks.json`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()));
  }
}

function sign(key: KeyPair, claims: Record<string, unknown> = {}, expiresIn: string | number = '5m', alg = 'ES256') {
  const jwt = new SignJWT({
    sub: 'alice',
    iss: ISSUER,
    aud: AUDIENCE,
    iat: Math.floor(Date.now() / 1000),
    roles: ['analyst'],
    scope: 'a2a:read a2a:write',
    email: 'alice@example.com',
    ...claims,
  }).setProtectedHeader({ alg, kid: key.kid });
  if (expiresIn !== 'none') jwt.setExpirationTime(expiresIn);
  return jwt.sign(key.privateKey);
}

let jwks: JwksServer;
let jwksUrl: string;
let key1: KeyPair;
let key2: KeyPair;
let t: TestApp | undefined;

beforeAll(async () => {
  key1 = await keyPair('key-1');
  key2 = await keyPair('key-2');
  jwks = new JwksServer();
  jwksUrl = await jwks.start();
});
afterAll(() => jwks.stop());
afterEach(async () => {
  await t?.app.close();
  t = undefined;
  jwks.keys = [key1.publicJwk];
  jwks.failing = false;
  jwks.fetches = 0;
});

function jwtApp(options: Partial<JwtOptions> = {}) {
  return buildApp(whoAmI, {
    authenticate: jwtBearer({ jwksUrl, issuer: ISSUER, audience: AUDIENCE, jwksCooldownMs: 0, ...options }),
  });
}

async function send(token: string) {
  const res = await t?.app.inject({
    method: 'POST',
    url: '/a2a',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    payload: JSON.stringify(rpcBody('message/send', { message: userMessage('hi') })),
  });
  if (res === undefined) throw new Error('no app');
  return res;
}

function refusal(res: Awaited<ReturnType<typeof send>>): string {
  expect(res.statusCode, res.body).toBe(401);
  expect(res.headers['www-authenticate']).toBe('Bearer realm="a2a", error="invalid_token"');
  return res.json().error.message;
}

describe('jwtBearer with a JWKS URL', () => {
  it('accepts a valid token: the principal is its sub, with roles, scopes and claims; the card says JWT', async () => {
    jwks.keys = [key1.publicJwk];
    t = await jwtApp();
    const res = await send(await sign(key1));
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json().result as Task).status.message?.parts[0]).toMatchObject({
      text: 'alice|roles=analyst|scopes=a2a:read,a2a:write|email=alice@example.com',
    });
    const card = (await t.app.inject({ method: 'GET', url: '/.well-known/agent-card.json' })).json();
    expect(card.securitySchemes.jwt).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      httpAuthSecurityScheme: { scheme: 'bearer', bearerFormat: 'JWT' },
    });
  });

  it('refuses an expired token, saying when it expired; accepts one expired within the clock tolerance', async () => {
    jwks.keys = [key1.publicJwk];
    t = await jwtApp({ clockToleranceSeconds: 30 });
    const now = Math.floor(Date.now() / 1000);
    expect(refusal(await send(await sign(key1, {}, now - 120)))).toBe(
      `Authentication failed: the JWT expired at ${new Date((now - 120) * 1000).toISOString()}.`,
    );
    expect((await send(await sign(key1, {}, now - 10))).statusCode).toBe(200);
  });

  it('refuses the wrong audience, the wrong issuer, a token not valid yet, and one without exp', async () => {
    jwks.keys = [key1.publicJwk];
    t = await jwtApp();
    expect(refusal(await send(await sign(key1, { aud: 'urn:other-service' })))).toMatch(
      /the JWT's "aud" claim is not accepted/,
    );
    expect(refusal(await send(await sign(key1, { iss: 'https://evil.example' })))).toMatch(
      /the JWT's "iss" claim is not accepted/,
    );
    expect(refusal(await send(await sign(key1, { nbf: Math.floor(Date.now() / 1000) + 3600 })))).toBe(
      'Authentication failed: the JWT is not valid yet (its "nbf" is in the future).',
    );
    expect(refusal(await send(await sign(key1, {}, 'none')))).toBe(
      'Authentication failed: the JWT has no "exp" claim, which this agent requires.',
    );
  });

  it('refuses a forged signature, an unsigned token, a non-JWT, and a token without sub', async () => {
    jwks.keys = [key1.publicJwk];
    t = await jwtApp();
    // Signed by key 2 but claiming key 1's id.
    const forged = await sign({ ...key2, kid: 'key-1' });
    expect(refusal(await send(forged))).toBe(
      "Authentication failed: the JWT's signature does not verify with this agent's keys.",
    );
    const unsigned = new UnsecuredJWT({ sub: 'alice' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .encode();
    expect(refusal(await send(unsigned))).toMatch(/^Authentication failed: the JWT/);
    expect(refusal(await send('opaque-token'))).toBe(
      'Authentication failed: the bearer token is not a well-formed signed JWT.',
    );
    const noSub = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'key-1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .sign(key1.privateKey);
    expect(refusal(await send(noSub))).toBe('Authentication failed: the JWT has no "sub" claim naming the caller.');
  });

  it('follows a key rotation: a token signed by a new key is accepted once the JWKS serves it; a retired key is refused', async () => {
    jwks.keys = [key1.publicJwk];
    t = await jwtApp();
    expect((await send(await sign(key1))).statusCode).toBe(200);
    expect(jwks.fetches).toBe(1);
    // The issuer rotates: key 2 in, key 1 out.
    jwks.keys = [key2.publicJwk];
    expect((await send(await sign(key2))).statusCode).toBe(200);
    expect(jwks.fetches).toBe(2);
    // Fetched keys are cached: the next call makes no fetch.
    expect((await send(await sign(key2))).statusCode).toBe(200);
    expect(jwks.fetches).toBe(2);
    expect(refusal(await send(await sign(key1)))).toBe(
      "Authentication failed: no key of the issuer's key set matches the JWT's key id.",
    );
  });

  it('keeps verifying with the keys it has while the JWKS endpoint is down', async () => {
    jwks.keys = [key1.publicJwk];
    t = await jwtApp({ jwksCacheMaxAgeMs: 1 });
    expect((await send(await sign(key1))).statusCode).toBe(200);
    jwks.failing = true;
    await new Promise((r) => setTimeout(r, 5));
    const res = await send(await sign(key1));
    expect(res.statusCode, res.body).toBe(200);
    expect(jwks.fetches).toBeGreaterThan(1);
  });

  it('answers 503 with Retry-After when the keys were never loaded, not 401: the token may be fine', async () => {
    jwks.failing = true;
    t = await jwtApp();
    const res = await send(await sign(key1));
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json().error.message).toBe(
      "Service unavailable: the issuer's signing keys could not be loaded; retry shortly.",
    );
  });
});

describe('jwtBearer with a key or a secret', () => {
  it('verifies with a PEM public key (RS256)', async () => {
    const rsa = await keyPair('rsa', 'RS256');
    // The SPKI PEM of the public half, as an operator would paste it.
    const publicKey = createPublicKey({ key: rsa.publicJwk as JsonWebKey, format: 'jwk' }).export({
      type: 'spki',
      format: 'pem',
    }) as string;
    t = await buildApp(whoAmI, { authenticate: jwtBearer({ publicKey, issuer: ISSUER, audience: AUDIENCE }) });
    expect((await send(await sign(rsa, {}, '5m', 'RS256'))).statusCode).toBe(200);
    expect(refusal(await send(await sign(key1)))).toMatch(/^Authentication failed: the JWT/);
  });

  it('verifies HS256 with a shared secret, and refuses an RS-signed token there (no algorithm confusion)', async () => {
    const secret = 'a-shared-secret-of-at-least-32-bytes!!';
    t = await buildApp(whoAmI, { authenticate: jwtBearer({ secret, issuer: ISSUER, audience: AUDIENCE }) });
    const hs = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('svc')
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(secret));
    expect((await send(hs)).statusCode).toBe(200);
    expect(refusal(await send(await sign(key1)))).toBe(
      "Authentication failed: the JWT's signing algorithm is not one this agent accepts.",
    );
  });

  it('refuses bad configurations at registration, naming the problem', () => {
    expect(() => jwtBearer({})).toThrow('give exactly one of jwksUrl, jwks, publicKey or secret (none given)');
    expect(() => jwtBearer({ jwksUrl, secret: 'x'.repeat(40) })).toThrow('got jwksUrl and secret');
    expect(() => jwtBearer({ secret: 'short' })).toThrow('at least 32 bytes');
    expect(() => jwtBearer({ jwksUrl: 'ftp://idp/jwks' })).toThrow('jwksUrl must be http(s)');
    expect(() => jwtBearer({ publicKey: 'not a pem' })).toThrow('publicKey is not a public key');
    expect(() => jwtBearer({ jwks: { keys: [] }, clockToleranceSeconds: -1 })).toThrow('clockToleranceSeconds');
  });

  it('warns at start-up when no audience is checked', async () => {
    const { logger, lines } = capturedLogger('warn');
    const app = Fastify({ logger });
    await app.register(a2aPlugin, {
      agentCard: testCard,
      executor: whoAmI,
      retention: false,
      authenticate: jwtBearer({ jwks: { keys: [key1.publicJwk] }, issuer: ISSUER }),
    });
    await app.ready();
    await app.close();
    expect(lines.join('')).toContain('jwtBearer has no \\"audience\\"');
  });
});
