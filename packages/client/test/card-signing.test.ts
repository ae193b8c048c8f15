/**
 * Signed agent cards (A2A 1.0 §8.4), over the wire: the plugin's `agentCardSigning` signs every
 * card shape it serves (combined, 1.0, 0.3, and the extended card in each version's form), the
 * client's `verifyCard` accepts them and refuses a card changed after signing, and both interoperate
 * with the official @a2a-js/sdk 1.x signer and verifier, in both directions.
 */

import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { generateAgentCardSignature, type AgentCard as SdkAgentCard, verifyAgentCardSignature } from '@a2a-js/sdk-1';
import { bearerTokens } from 'fastify-a2a';
import { decodeProtectedHeader, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { A2AClientError, clearCardCache, connect, verifyCardSignatures } from '../src/index.js';
import { a2a, ensureBuilt } from './cli-process.js';
import { type Served, serve, tempDir } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: cards read member by member in assertions.
type Json = Record<string, any>;

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ed = generateKeyPairSync('ed25519');
/** A key no card is signed with, published under a kid a card uses. */
const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' });

const publicJwk = (key: KeyObject, kid: string): JWK => ({ ...(key.export({ format: 'jwk' }) as JWK), kid });
const pkcs8 = (key: KeyObject): string => key.export({ format: 'pem', type: 'pkcs8' }) as string;

const ecPublic = publicJwk(ec.publicKey, 'ec-1');
const edPublic = publicJwk(ed.publicKey, 'ed-1');
const bothKeys = { keys: [ecPublic, edPublic] };

/** The SDK verifier, with keys looked up by kid in a key set. */
const sdkVerify = (jwks: { keys: JWK[] }) =>
  verifyAgentCardSignature(async (kid) => {
    const key = jwks.keys.find((k) => k.kid === kid);
    if (key === undefined) throw new Error(`no key ${kid}`);
    return key;
  });

async function fetchCard(url: string, headers: Record<string, string> = {}): Promise<Json> {
  const response = await fetch(`${url}/.well-known/agent-card.json`, { headers });
  expect(response.status).toBe(200);
  return (await response.json()) as Json;
}

async function refusal(promise: Promise<unknown>): Promise<A2AClientError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(A2AClientError.is(error), `expected a refusal, got ${String(error)}`).toBe(true);
  return error as A2AClientError;
}

let signed: Served;
let only0_3: Served;
let withJwks: Served;
let cardServer: Server;
let cardBase: string;
const externalCards = new Map<string, unknown>();

beforeAll(async () => {
  const dir = await tempDir();
  // One key as a PEM file, one as a private JWK file: both ways the option reads a key.
  const pemFile = join(dir.dir, 'ec.pem');
  const jwkFile = join(dir.dir, 'ed.jwk.json');
  await writeFile(pemFile, pkcs8(ec.privateKey));
  await writeFile(jwkFile, JSON.stringify({ ...(ed.privateKey.export({ format: 'jwk' }) as JWK), kid: 'ed-1' }));
  const agentCardSigning = { keys: [{ file: pemFile, kid: 'ec-1' }, { file: jwkFile }] };
  signed = await serve('memory:', {
    agentCardSigning,
    // The card then declares `security: [{ bearer: [] }]`, 1.0's `{ schemes: { bearer: { list: [] } } }`:
    // the empty repeated field the canonical form must leave out as the SDK does.
    authenticate: bearerTokens({ 'token-a': { id: 'alice' } }),
    extendedAgentCard: { description: 'The extended card, for authenticated callers.' },
  });
  only0_3 = await serve('memory:', { agentCardSigning, agentCardVersions: ['0.3'] });
  withJwks = await serve('memory:', {
    agentCardSigning: { keys: { key: pkcs8(ec.privateKey), kid: 'ec-1' }, jwks: true },
  });
  await dir.remove();
  cardServer = createServer((req, res) => {
    const name = req.url?.split('/')[1] ?? '';
    if (!externalCards.has(name)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(externalCards.get(name)));
  });
  await new Promise<void>((resolve) => cardServer.listen(0, '127.0.0.1', resolve));
  cardBase = `http://127.0.0.1:${(cardServer.address() as AddressInfo).port}`;
});

// The SDK's verifier logs each signature it could not verify with console.debug: expected here.
beforeAll(() => {
  vi.spyOn(console, 'debug').mockImplementation(() => undefined);
});

afterAll(async () => {
  vi.restoreAllMocks();
  await signed?.close();
  await only0_3?.close();
  await withJwks?.close();
  await new Promise((resolve) => cardServer?.close(resolve));
});

/** Serves a card under a path of its own and returns its base URL. */
function external(name: string, card: unknown): string {
  externalCards.set(name, card);
  clearCardCache();
  return `${cardBase}/${name}`;
}

describe('the plugin signs every card shape it serves', () => {
  const shapes: [string, () => Promise<Json>][] = [
    ['combined (no A2A-Version)', () => fetchCard(signed.url)],
    ['1.0 (A2A-Version: 1.0)', () => fetchCard(signed.url, { 'a2a-version': '1.0' })],
    ['0.3 (agentCardVersions: [0.3])', () => fetchCard(only0_3.url)],
  ];

  for (const [shape, read] of shapes) {
    it(`${shape}: one JWS per key, protected alg, typ JOSE and kid, verified by the client`, async () => {
      const card = await read();
      expect(card.signatures).toHaveLength(2);
      const headers = (card.signatures as Json[]).map((s) => decodeProtectedHeader(s as { protected: string }));
      expect(headers).toEqual([
        { alg: 'ES256', typ: 'JOSE', kid: 'ec-1' },
        { alg: 'EdDSA', typ: 'JOSE', kid: 'ed-1' },
      ]);
      await expect(verifyCardSignatures(card, { jwks: bothKeys })).resolves.toEqual({ kid: 'ec-1', alg: 'ES256' });
    });

    it(`${shape}: one field changed after signing is refused`, async () => {
      const card = await read();
      const error = await refusal(verifyCardSignatures({ ...card, description: 'Trust me.' }, { jwks: bothKeys }));
      expect(error.kind).toBe('card-unverified');
      expect(error.message).toMatch(/signature 1 \(kid "ec-1", ES256\): does not match the card/);
      expect(error.message).toMatch(/signature 2 \(kid "ed-1", EdDSA\): does not match the card/);
    });
  }

  it('the combined card is signed over its 0.3 members too: a changed url is refused', async () => {
    const card = await fetchCard(signed.url);
    expect(typeof card.url).toBe('string');
    await verifyCardSignatures(card, { jwks: bothKeys });
    const error = await refusal(verifyCardSignatures({ ...card, url: 'http://evil.example/a2a' }, { jwks: bothKeys }));
    expect(error.kind).toBe('card-unverified');
    // Dropping `url` (to be read as a 1.0 card, whose form leaves 0.3's members out) fails as well.
    const { url: _url, ...without } = card;
    await refusal(verifyCardSignatures(without, { jwks: bothKeys }));
  });

  it('the 1.0 card, with an empty `list`, verifies with the official SDK’s verifier; changed, it does not', async () => {
    const card = await fetchCard(signed.url, { 'a2a-version': '1.0' });
    expect(JSON.stringify(card.securityRequirements)).toContain('"list":[]');
    await expect(sdkVerify(bothKeys)(card as SdkAgentCard)).resolves.toBeUndefined();
    await expect(sdkVerify({ keys: [edPublic] })(card as SdkAgentCard)).resolves.toBeUndefined();
    await expect(sdkVerify(bothKeys)({ ...card, name: 'Someone else' } as SdkAgentCard)).rejects.toThrow(
      /No valid signatures/,
    );
  });

  it('rotation: either key alone verifies; a different key under the same kid does not', async () => {
    const card = await fetchCard(signed.url);
    await expect(verifyCardSignatures(card, { jwks: { keys: [ecPublic] } })).resolves.toEqual({
      kid: 'ec-1',
      alg: 'ES256',
    });
    await expect(verifyCardSignatures(card, { jwks: { keys: [edPublic] } })).resolves.toEqual({
      kid: 'ed-1',
      alg: 'EdDSA',
    });
    await expect(verifyCardSignatures(card, { keys: [ed.publicKey] })).resolves.toMatchObject({ kid: 'ed-1' });
    const error = await refusal(
      verifyCardSignatures(card, { jwks: { keys: [publicJwk(stranger.publicKey, 'ec-1')] } }),
    );
    expect(error.message).toMatch(/signature 1 .*does not match/);
    expect(error.message).toMatch(/signature 2 \(kid "ed-1", EdDSA\): no trusted key has this kid/);
  });

  it('keys that cannot be read, or none at all, are a usage error, not a refusal of the card', async () => {
    const card = await fetchCard(signed.url);
    const unreadable = await refusal(verifyCardSignatures(card, { keys: ['not a PEM'] }));
    expect(unreadable.kind).toBe('usage');
    expect(unreadable.message).toMatch(/the keys given cannot be read/);
    const none = await refusal(verifyCardSignatures(card, {}));
    expect(none.kind).toBe('usage');
    expect(none.message).toMatch(/needs keys to trust/);
  });

  it('the extended card is signed in the form each version and binding answers with', async () => {
    const forms = [
      { versions: ['1.0' as const], preferences: [{ binding: 'JSONRPC' as const }] },
      { versions: ['1.0' as const], preferences: [{ binding: 'HTTP+JSON' as const }] },
      { versions: ['0.3' as const], preferences: [{ binding: 'JSONRPC' as const }] },
      { versions: ['0.3' as const], preferences: [{ binding: 'HTTP+JSON' as const }] },
    ];
    for (const form of forms) {
      const agent = await connect(signed.url, { ...form, bearer: 'token-a', verifyCard: { jwks: bothKeys } });
      const extended = await agent.getExtendedCard();
      expect(extended.description).toBe('The extended card, for authenticated callers.');
      expect(extended.signatures).toHaveLength(2);
      await expect(verifyCardSignatures(extended, { jwks: bothKeys })).resolves.toMatchObject({ kid: 'ec-1' });
      await refusal(verifyCardSignatures({ ...extended, name: 'Changed' }, { jwks: bothKeys }));
      if (form.versions[0] === '1.0') await sdkVerify(bothKeys)(extended as unknown as SdkAgentCard);
    }
  });

  it('jwks: true publishes the key set and names it in jku, which the client fetches only when trusted', async () => {
    const card = await fetchCard(withJwks.url);
    const jku = `${withJwks.url}/.well-known/jwks.json`;
    expect(decodeProtectedHeader(card.signatures[0])).toEqual({ alg: 'ES256', typ: 'JOSE', kid: 'ec-1', jku });
    const published = await fetch(jku);
    expect(published.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
    const jwks = (await published.json()) as { keys: JWK[] };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kid: 'ec-1', alg: 'ES256', x: ecPublic.x, y: ecPublic.y });
    expect(jwks.keys[0]).not.toHaveProperty('d');
    clearCardCache();
    const agent = await connect(withJwks.url, { verifyCard: { trustedJku: [jku] } });
    expect(agent.card.name).toBe(card.name);
    clearCardCache();
    const error = await refusal(
      connect(withJwks.url, { verifyCard: { trustedJku: ['https://keys.example/jwks.json'] } }),
    );
    expect(error.kind).toBe('card-unverified');
    expect(error.message).toContain(`its jku ${jku} is not trusted`);
  });
});

describe('interop with the official SDK’s signer', () => {
  /** A 1.0 card as the SDK's users write it, with empty repeated fields it must leave out. */
  const sdkCard = (): SdkAgentCard =>
    ({
      name: 'SDK-signed agent',
      description: 'Signed by @a2a-js/sdk.',
      version: '1.0.0',
      supportedInterfaces: [{ url: `${cardBase}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
      capabilities: { streaming: true, pushNotifications: false, extensions: [] },
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'bearer' } } },
      securityRequirements: [{ schemes: { bearer: { list: [] } } }],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'echo', name: 'Echo', description: 'Echoes.', tags: ['test'], examples: [] }],
      signatures: [],
    }) as unknown as SdkAgentCard;

  it('a card the SDK signed verifies with connect({ verifyCard }); changed, it is refused', async () => {
    const sign = generateAgentCardSignature(ec.privateKey.export({ format: 'jwk' }) as JWK, {
      alg: 'ES256',
      kid: 'sdk-key',
      typ: 'JOSE',
    });
    const card = (await sign(sdkCard())) as unknown as Json;
    const keys = { keys: [publicJwk(ec.publicKey, 'sdk-key')] };
    const agent = await connect(external('sdk-signed', card), { verifyCard: { jwks: keys } });
    expect(agent.card.name).toBe('SDK-signed agent');
    const tampered = { ...card, skills: [{ ...card.skills[0], description: 'Does anything.' }] };
    const error = await refusal(connect(external('sdk-tampered', tampered), { verifyCard: { jwks: keys } }));
    expect(error.kind).toBe('card-unverified');
    expect(error.message).toContain('does not match the card');
  });

  it('an unsigned card is refused when verification is asked for, and read when it is not', async () => {
    const reference = external('unsigned', sdkCard());
    const error = await refusal(connect(reference, { verifyCard: { jwks: bothKeys } }));
    expect(error.kind).toBe('card-unverified');
    expect(error.message).toMatch(/is not signed/);
    await expect(connect(reference)).resolves.toBeDefined();
  });
});

describe('the a2a CLI: card get --verify, send --verify-card', () => {
  let jwksFile: string;
  let wrongJwksFile: string;
  let dir: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    ensureBuilt();
    dir = await tempDir();
    jwksFile = join(dir.dir, 'jwks.json');
    wrongJwksFile = join(dir.dir, 'wrong.json');
    await writeFile(jwksFile, JSON.stringify(bothKeys));
    await writeFile(wrongJwksFile, JSON.stringify({ keys: [publicJwk(stranger.publicKey, 'ec-1')] }));
  }, 120_000);

  afterAll(() => dir?.remove());

  it('card get --verify prints a card that verifies; a changed one fails with exit 1 and one line', async () => {
    const ok = await a2a(['card', 'get', signed.url, '--verify', '--jwks', jwksFile, '-o', 'json']);
    expect(ok.code).toBe(0);
    expect((ok.json() as Json).signatures).toHaveLength(2);
    const card = await fetchCard(signed.url);
    const tampered = external('cli-tampered', { ...card, description: 'Changed.' });
    const json = await a2a(['card', 'get', tampered, '--verify', '--jwks', jwksFile, '-o', 'json']);
    expect(json.code).toBe(1);
    expect((json.json() as Json).error.code).toBe('A2ACLI_ERR_CARD_UNVERIFIED');
    const text = await a2a(['card', 'get', tampered, '--verify', '--jwks', jwksFile]);
    expect(text.code).toBe(1);
    expect(text.stderr.trim().split('\n')).toHaveLength(1);
    expect(text.stderr).toContain('[A2ACLI_ERR_CARD_UNVERIFIED]');
    expect(text.stderr).toContain('does not match the card');
  });

  it('card get --verify without keys is a usage error (exit 2)', async () => {
    const run = await a2a(['card', 'get', signed.url, '--verify']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--jwks');
  });

  it('send --verify-card sends only after the card verifies', async () => {
    const before = signed.agent.runs.size;
    const refused = await a2a([
      'send',
      '-a',
      signed.url,
      '--bearer',
      'token-a',
      '--verify-card',
      '--jwks',
      wrongJwksFile,
      'hi',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('[A2ACLI_ERR_CARD_UNVERIFIED]');
    expect(signed.agent.runs.size).toBe(before);
    const sent = await a2a([
      'send',
      '-a',
      signed.url,
      '--bearer',
      'token-a',
      '--verify-card',
      '--jwks',
      jwksFile,
      'hi',
      '-o',
      'json',
    ]);
    expect(sent.code).toBe(0);
    expect(signed.agent.runs.size).toBe(before + 1);
  });
});
