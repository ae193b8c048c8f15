/**
 * Signed agent cards (A2A 1.0 §8.4; 0.3's `AgentCard.signatures`): every card shape the plugin
 * serves carries one JWS (RFC 7515) per signing key, computed over that shape's canonical payload
 * (`canonicalCardPayload` in @fastify-a2a/core: defaults and `signatures` left out, then JCS,
 * RFC 8785). Keys are read and tried once at `register`, so a wrong key fails the start.
 */

import { createPrivateKey, createPublicKey, KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  type AgentCard,
  type AgentCardSignature,
  type CallContext,
  canonicalCardPayload,
  type JsonObject,
  jsonRpc0_3,
  jsonRpc1_0,
  rest0_3,
} from '@fastify-a2a/core';
import { calculateJwkThumbprint, FlattenedSign, type JWK } from 'jose';

/** One signing key: the private key itself, or a file holding it. */
export interface CardSigningKey {
  /** The private key: PKCS#8 PEM text, a private JWK (with `d`), or a Node KeyObject. */
  key?: string | JWK | KeyObject;
  /** Or the path of a file holding it (PKCS#8 PEM, or a JWK as JSON), read at `register`. */
  file?: string;
  /**
   * The key id put in each signature's protected header (`kid`), which verifiers look the public
   * key up by. @default the JWK's `kid`, else its RFC 7638 thumbprint
   */
  kid?: string;
  /**
   * The JWS algorithm. @default the JWK's `alg`, else the key's: ES256 / ES384 / ES512 for EC
   * P-256 / P-384 / P-521, EdDSA for Ed25519, RS256 for RSA
   */
  alg?: string;
}

/** The `agentCardSigning` option. */
export interface AgentCardSigningOptions {
  /** One key, or several (key rotation, 1.0 §8.4.3): the card then carries one signature per key. */
  keys: CardSigningKey | readonly CardSigningKey[];
  /**
   * Publish the public keys as a JWK Set (RFC 7517 §5) at this path under the agent's prefix, and
   * name its URL in every signature's `jku`; `true` is `/.well-known/jwks.json`. @default false
   */
  jwks?: boolean | string;
}

interface LoadedKey {
  privateKey: KeyObject;
  kid: string;
  alg: string;
  publicJwk: JWK;
}

/** The JWS algorithm a key signs with when none is named. */
function defaultAlg(key: KeyObject): string | undefined {
  switch (key.asymmetricKeyType) {
    case 'ec':
      return { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' }[
        key.asymmetricKeyDetails?.namedCurve ?? ''
      ];
    case 'ed25519':
      return 'EdDSA';
    case 'rsa':
      return 'RS256';
    default:
      return undefined;
  }
}

/** The private key of one entry, and what its JWK says of itself (`kid`, `alg`). */
function privateKeyOf(entry: CardSigningKey, where: string): { key: KeyObject; jwk?: JWK } {
  let material: string | JWK | KeyObject | undefined = entry.key;
  if (entry.file !== undefined) {
    if (material !== undefined) throw new Error(`${where} has both "key" and "file"; give one`);
    const path = resolve(entry.file);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new Error(
        `${where}: the key file ${path} could not be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
    }
    const trimmed = text.trim();
    if (trimmed.startsWith('{')) {
      try {
        material = JSON.parse(trimmed) as JWK;
      } catch (error) {
        throw new Error(`${where}: the key file ${path} is neither PEM nor a JWK (${(error as Error).message})`);
      }
    } else {
      material = trimmed;
    }
  }
  if (material === undefined) throw new Error(`${where} needs "key" (PEM or JWK) or "file" (its path)`);
  const isPublic =
    typeof material === 'string'
      ? /-----BEGIN (?:RSA )?PUBLIC KEY-----/.test(material)
      : !isKeyObject(material) && (material as JWK).d === undefined;
  if (isPublic) {
    throw new Error(
      `${where} is a public key; card signing needs the private key (publish the public one to verifiers)`,
    );
  }
  let key: KeyObject;
  try {
    if (typeof material === 'string') key = createPrivateKey(material);
    else if (isKeyObject(material)) key = material;
    else key = createPrivateKey({ key: material, format: 'jwk' });
  } catch (error) {
    throw new Error(
      `${where} is not a private key this server can read (PKCS#8 PEM or a private JWK with "d"): ${(error as Error).message}`,
    );
  }
  if (key.type !== 'private') {
    throw new Error(`${where} is a ${key.type} key; card signing needs the private key (the public one verifies)`);
  }
  const jwk = typeof material === 'object' && !isKeyObject(material) ? material : undefined;
  return jwk === undefined ? { key } : { key, jwk };
}

const isKeyObject = (value: unknown): value is KeyObject => value instanceof KeyObject;

async function loadKey(entry: CardSigningKey, where: string): Promise<LoadedKey> {
  const { key, jwk } = privateKeyOf(entry, where);
  const alg = entry.alg ?? (jwk as { alg?: string } | undefined)?.alg ?? defaultAlg(key);
  if (alg === undefined) {
    throw new Error(`${where}: no JWS algorithm for a ${key.asymmetricKeyType} key; name one with "alg"`);
  }
  const publicJwk = createPublicKey(key).export({ format: 'jwk' }) as JWK;
  const kid = entry.kid ?? (jwk as { kid?: string } | undefined)?.kid ?? (await calculateJwkThumbprint(publicJwk));
  if (typeof kid !== 'string' || kid === '') throw new Error(`${where}: "kid" must be a non-empty string`);
  // One signature now, so an algorithm that does not fit the key fails the start, not a request.
  try {
    await new FlattenedSign(new Uint8Array(0)).setProtectedHeader({ alg, typ: 'JOSE', kid }).sign(key);
  } catch (error) {
    throw new Error(`${where} cannot sign with ${alg}: ${(error as Error).message}`);
  }
  return { privateKey: key, kid, alg, publicJwk: { ...publicJwk, kid, alg, use: 'sig' } };
}

/** Signs card JSON with every configured key. */
export class CardSigner {
  /** The public keys as a JWK Set, served at {@link jwksPath} when published. */
  readonly jwks: { keys: JWK[] };

  private constructor(
    private readonly keys: readonly LoadedKey[],
    /** Where the JWK Set is served, under the agent's prefix; undefined when it is not. */
    readonly jwksPath: string | undefined,
  ) {
    this.jwks = { keys: keys.map((k) => k.publicJwk) };
  }

  /**
   * Reads and checks every key of the option.
   * @throws {Error} naming the key (`agentCardSigning.keys[1]`) and what is wrong with it.
   */
  static async create(options: AgentCardSigningOptions): Promise<CardSigner> {
    if (options === null || typeof options !== 'object') throw new Error('must be { keys, jwks? }');
    const entries = Array.isArray(options.keys) ? options.keys : [options.keys as CardSigningKey];
    if (entries.length === 0) throw new Error('.keys must name at least one key');
    const keys: LoadedKey[] = [];
    for (const [i, entry] of entries.entries()) {
      const where = Array.isArray(options.keys) ? `.keys[${i}]` : '.keys';
      if (entry === null || typeof entry !== 'object') throw new Error(`${where} must be { key } or { file }`);
      const loaded = await loadKey(entry, where);
      if (keys.some((k) => k.kid === loaded.kid)) throw new Error(`${where}: kid "${loaded.kid}" is used twice`);
      keys.push(loaded);
    }
    const { jwks = false } = options;
    if (jwks !== false && jwks !== true && (typeof jwks !== 'string' || !jwks.startsWith('/'))) {
      throw new Error('.jwks must be true, false or a path starting with "/"');
    }
    return new CardSigner(keys, jwks === true ? '/.well-known/jwks.json' : jwks === false ? undefined : jwks);
  }

  /**
   * One signature per key over the card's canonical payload (§8.4.2): protected header `alg`,
   * `typ: "JOSE"` (which the official SDK's verifier requires), `kid`, and `jku` when the key set
   * is published. The card's own `signatures` are not covered (§8.4.1).
   * @param jwksBase the public base URL of the agent (scheme, host, port, prefix), for `jku`.
   */
  async sign(card: JsonObject, jwksBase: string): Promise<AgentCardSignature[]> {
    const payload = new TextEncoder().encode(canonicalCardPayload(card));
    const jku = this.jwksPath === undefined ? undefined : `${jwksBase}${this.jwksPath}`;
    return Promise.all(
      this.keys.map(async ({ privateKey, kid, alg }) => {
        const jws = await new FlattenedSign(payload)
          .setProtectedHeader({ alg, typ: 'JOSE', kid, ...(jku === undefined ? {} : { jku }) })
          .sign(privateKey);
        return { protected: jws.protected as string, signature: jws.signature };
      }),
    );
  }

  /** The served card's JSON with its signatures in place of any it had. */
  async signJson(json: string, jwksBase: string): Promise<string> {
    const card = JSON.parse(json) as JsonObject;
    const signatures = await this.sign(card, jwksBase);
    const { signatures: _ignored, ...rest } = card;
    return JSON.stringify({ ...rest, signatures });
  }

  /**
   * Signs the extended card for the shape the call will answer with: its wire JSON is made by the
   * same codec the answer goes through (0.3 JSON-RPC sends the model's card, 0.3 HTTP+JSON its
   * ProtoJSON, 1.0 — any binding, gRPC too — 1.0's card), and the signatures set on the card.
   */
  async signExtended(card: AgentCard, ctx: CallContext, jwksBase: string): Promise<AgentCard> {
    const codec =
      ctx.version === '1.0' ? jsonRpc1_0.codec : ctx.binding === 'HTTP+JSON' ? rest0_3.codec : jsonRpc0_3.codec;
    const { signatures: _ignored, ...unsigned } = card;
    const wire = JSON.parse(JSON.stringify(codec.encodeResult('getExtendedAgentCard', unsigned))) as JsonObject;
    return { ...unsigned, signatures: await this.sign(wire, jwksBase) };
  }
}
