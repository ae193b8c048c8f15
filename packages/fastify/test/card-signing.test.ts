/**
 * The `agentCardSigning` option (A2A 1.0 §8.4) at `register` and on the card route: a key that
 * cannot sign fails the start with the key named; a signed card is signed once per shape and base
 * and then served as it is (same bytes, same ETag, 304 on revalidation); the signature is over the
 * served shape's canonical payload, checked here with jose alone. The client's verifier and the
 * SDK interop are in packages/client/test/card-signing.test.ts.
 */

import { generateKeyPairSync } from 'node:crypto';
import { canonicalCardPayload } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import Fastify from 'fastify';
import { base64url, decodeProtectedHeader, flattenedVerify, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { a2aPlugin } from '../src/index.js';
import { buildApp, testCard } from './helpers.js';

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = ec.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
const executor = () => undefined;

async function registerError(agentCardSigning: unknown): Promise<string> {
  const app = Fastify({ logger: false });
  try {
    await app.register(a2aPlugin, {
      agentCard: testCard,
      executor,
      store: new MemoryStore(),
      // biome-ignore lint/suspicious/noExplicitAny: wrong values on purpose.
      agentCardSigning: agentCardSigning as any,
    });
    await app.ready();
  } catch (error) {
    expect((error as { code?: string }).code).toBe('INVALID_OPTIONS');
    return (error as Error).message;
  } finally {
    await app.close();
  }
  throw new Error('register succeeded');
}

describe('agentCardSigning at register', () => {
  it('refuses a public key, naming the key', async () => {
    const publicPem = ec.publicKey.export({ format: 'pem', type: 'spki' }) as string;
    const publicJwk = ec.publicKey.export({ format: 'jwk' }) as JWK;
    expect(await registerError({ keys: { key: publicJwk } })).toMatch(/"agentCardSigning"\.keys is a public key/);
    expect(await registerError({ keys: [{ key: pem }, { key: publicPem }] })).toMatch(
      /"agentCardSigning"\.keys\[1\] is a public key; card signing needs the private key/,
    );
  });

  it('refuses a file that cannot be read, and text that is no key', async () => {
    expect(await registerError({ keys: { file: '/nonexistent/card-key.pem' } })).toMatch(
      /key file \/nonexistent\/card-key\.pem could not be read \(ENOENT\)/,
    );
    expect(await registerError({ keys: { key: 'not a key' } })).toMatch(/is not a private key this server can read/);
  });

  it('refuses an algorithm that does not fit the key, two keys with one kid, and no keys', async () => {
    expect(await registerError({ keys: { key: pem, alg: 'RS256' } })).toMatch(/cannot sign with RS256/);
    expect(
      await registerError({
        keys: [
          { key: pem, kid: 'k' },
          { key: rsa.privateKey, kid: 'k' },
        ],
      }),
    ).toMatch(/kid "k" is used twice/);
    expect(await registerError({ keys: [] })).toMatch(/at least one key/);
    expect(await registerError({ keys: { key: pem }, jwks: 'keys.json' })).toMatch(
      /jwks must be true, false or a path/,
    );
  });

  it('refuses a card JCS cannot represent (a lone surrogate) at register, not at the first request', async () => {
    const app = Fastify({ logger: false });
    try {
      await expect(
        app.register(a2aPlugin, {
          agentCard: { ...testCard, description: 'broken \ud800 text' },
          executor,
          store: new MemoryStore(),
          agentCardSigning: { keys: { key: pem } },
        }),
      ).rejects.toThrow(/"agentCard" cannot be signed: .*Lone surrogate/);
    } finally {
      await app.close().catch(() => undefined);
    }
  });
});

describe('the signed card on the card route', () => {
  it('is signed once, then served as it is: same bytes, same ETag, 304 for If-None-Match', async () => {
    const { app } = await buildApp(executor, {
      agentCardSigning: { keys: [{ key: pem, kid: 'ec' }, { key: rsa.privateKey }] },
      baseUrl: 'https://agents.example.com',
    });
    try {
      const first = await app.inject({ url: '/.well-known/agent-card.json' });
      const second = await app.inject({ url: '/.well-known/agent-card.json' });
      expect(first.statusCode).toBe(200);
      // ECDSA signatures differ each time they are made: equal bytes mean the card was signed once.
      expect(second.body).toBe(first.body);
      expect(second.headers.etag).toBe(first.headers.etag);
      const revalidated = await app.inject({
        url: '/.well-known/agent-card.json',
        headers: { 'if-none-match': first.headers.etag as string },
      });
      expect(revalidated.statusCode).toBe(304);

      const card = first.json() as Record<string, unknown> & { signatures: { protected: string; signature: string }[] };
      const [ecSignature, rsaSignature] = card.signatures;
      expect(decodeProtectedHeader(ecSignature as { protected: string })).toEqual({
        alg: 'ES256',
        typ: 'JOSE',
        kid: 'ec',
      });
      // No kid given, no JWK: the RFC 7638 thumbprint of the public key.
      const rsaHeader = decodeProtectedHeader(rsaSignature as { protected: string });
      expect(rsaHeader.alg).toBe('RS256');
      expect(rsaHeader.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
      // The payload is the served combined card's canonical form, signatures left out.
      const payload = base64url.encode(canonicalCardPayload(card, 'json'));
      await flattenedVerify({ payload, ...(ecSignature as { protected: string; signature: string }) }, ec.publicKey);
      await flattenedVerify({ payload, ...(rsaSignature as { protected: string; signature: string }) }, rsa.publicKey);
      await expect(
        flattenedVerify(
          {
            payload: base64url.encode(canonicalCardPayload({ ...card, version: '9' }, 'json')),
            ...(ecSignature as { protected: string; signature: string }),
          },
          ec.publicKey,
        ),
      ).rejects.toThrow(/signature verification failed/);

      // The 1.0 shape is signed over its own form, with its own signature.
      const pure = (
        await app.inject({ url: '/.well-known/agent-card.json', headers: { 'a2a-version': '1.0' } })
      ).json() as Record<string, unknown> & { signatures: { protected: string; signature: string }[] };
      expect(pure.url).toBeUndefined();
      await flattenedVerify(
        {
          payload: base64url.encode(canonicalCardPayload(pure, '1.0')),
          ...(pure.signatures[0] as { protected: string; signature: string }),
        },
        ec.publicKey,
      );
    } finally {
      await app.close();
    }
  });

  it('replaces signatures the application put in its card, and publishes no key set unless asked', async () => {
    const { app } = await buildApp(executor, {
      agentCard: { ...testCard, signatures: [{ protected: 'stale', signature: 'stale' }] },
      agentCardSigning: { keys: { key: ec.privateKey.export({ format: 'jwk' }) as JWK, kid: 'jwk-key' } },
    });
    try {
      const card = (await app.inject({ url: '/.well-known/agent-card.json' })).json() as {
        signatures: { protected: string }[];
      };
      expect(card.signatures).toHaveLength(1);
      expect(decodeProtectedHeader(card.signatures[0] as { protected: string }).kid).toBe('jwk-key');
      expect((await app.inject({ url: '/.well-known/jwks.json' })).statusCode).toBe(404);
    } finally {
      await app.close();
    }
  });
});
