/**
 * The demo's signed cards as a real process: with `A2A_CARD_SIGNING_KEY` (a PKCS#8 PEM file, its
 * kid from `A2A_CARD_SIGNING_KID`; or a JWK file carrying its own kid) every card shape it serves
 * is signed, verifies with the operator's public key, and names the published key set in `jku`;
 * a key file that cannot be read stops the start with one line naming it.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyCardSignatures } from '@fastify-a2a/client';
import { decodeProtectedHeader, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnDemo, startDemo } from './demo-process.js';

const key = generateKeyPairSync('ec', { namedCurve: 'P-256' });
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'demo-card-signing-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function cardOf(baseUrl: string, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  return (await (await fetch(`${baseUrl}/.well-known/agent-card.json`, { headers })).json()) as Record<string, unknown>;
}

describe('the demo with A2A_CARD_SIGNING_KEY', () => {
  it('signs every card shape with a PEM key and the kid A2A_CARD_SIGNING_KID names', async () => {
    const file = join(dir, 'card-key.pem');
    await writeFile(file, key.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string);
    const demo = await startDemo('memory:', { A2A_CARD_SIGNING_KEY: file, A2A_CARD_SIGNING_KID: 'demo-key' });
    expect(demo.readyLine).toContain('card signed (keys at /.well-known/jwks.json)');
    const jwks = { keys: [{ ...(key.publicKey.export({ format: 'jwk' }) as JWK), kid: 'demo-key' }] };
    for (const card of [await cardOf(demo.baseUrl), await cardOf(demo.baseUrl, { 'a2a-version': '1.0' })]) {
      const signatures = card.signatures as { protected: string }[];
      expect(decodeProtectedHeader(signatures[0] as { protected: string })).toEqual({
        alg: 'ES256',
        typ: 'JOSE',
        kid: 'demo-key',
        jku: `${demo.baseUrl}/.well-known/jwks.json`,
      });
      await expect(verifyCardSignatures(card, { jwks })).resolves.toEqual({ kid: 'demo-key', alg: 'ES256' });
      await expect(verifyCardSignatures({ ...card, name: 'Impostor' }, { jwks })).rejects.toThrow(/does not match/);
    }
    const published = (await (await fetch(`${demo.baseUrl}/.well-known/jwks.json`)).json()) as { keys: JWK[] };
    expect(published.keys.map((k) => k.kid)).toEqual(['demo-key']);
    await demo.stop();
  });

  it('takes the kid from a JWK file', async () => {
    const file = join(dir, 'card-key.jwk.json');
    await writeFile(file, JSON.stringify({ ...(key.privateKey.export({ format: 'jwk' }) as JWK), kid: 'from-jwk' }));
    const demo = await startDemo('memory:', { A2A_CARD_SIGNING_KEY: file });
    const card = await cardOf(demo.baseUrl);
    expect(decodeProtectedHeader((card.signatures as { protected: string }[])[0] as { protected: string }).kid).toBe(
      'from-jwk',
    );
    await demo.stop();
  });

  it('stops the start, in one line naming the file, when the key cannot be read', async () => {
    const demo = await spawnDemo({ A2A_STORE: 'memory:', A2A_CARD_SIGNING_KEY: join(dir, 'missing.pem') });
    const exit = await demo.exited;
    expect(exit.code).toBe(1);
    const stderr = demo.stderr().trim();
    expect(stderr.split('\n')).toHaveLength(1);
    expect(stderr).toMatch(
      /^Could not start the demo: fastify-a2a: "agentCardSigning"\.keys: the key file .*missing\.pem could not be read \(ENOENT\)/,
    );
  });
});
