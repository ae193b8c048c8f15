/**
 * Verifying an agent card's signatures (A2A 1.0 §8.4.3): a card is accepted when at least one of
 * its `signatures` verifies, with a key the caller trusts, over the card's canonical payload
 * (`canonicalCardPayload` of @fastify-a2a/core: defaults and `signatures` left out, then JCS,
 * RFC 8785 — what the official SDKs sign). JWS (RFC 7515) checks are jose's.
 *
 * Keys come only from the caller: a key set or keys given, or a `jku` URL the caller listed as
 * trusted. A `jku` the card names is otherwise never fetched: a card that names its own key set
 * proves nothing.
 */

import { createPublicKey, type KeyObject } from 'node:crypto';
import { canonicalCardPayload, isJsonObject, type JsonObject } from '@fastify-a2a/core/protocol';
import {
  base64url,
  type CryptoKey,
  createLocalJWKSet,
  decodeProtectedHeader,
  flattenedVerify,
  type JSONWebKeySet,
  type JWK,
  type ProtectedHeaderParameters,
} from 'jose';
import { A2AClientError } from './errors.js';

/** The keys a card's signatures may be verified with. Give at least one source. */
export interface VerifyCardOptions {
  /** A JWK Set (RFC 7517 §5): a signature is checked with the key its `kid` names. */
  jwks?: JSONWebKeySet | undefined;
  /**
   * Public keys: JWKs (matched by `kid` when they carry one), SPKI PEM text or KeyObjects (tried
   * for any `kid`).
   */
  keys?: readonly (JWK | string | KeyObject)[] | undefined;
  /**
   * Key-set URLs the client may fetch when a signature's protected `jku` names one of them
   * exactly. A `jku` not listed is never fetched.
   */
  trustedJku?: readonly string[] | undefined;
  /** The `fetch` used for a trusted `jku`. @default globalThis.fetch */
  fetch?: typeof fetch | undefined;
  /** How long a `jku` fetch may take. @default 10000 */
  jkuTimeoutMs?: number | undefined;
}

/** Which signature verified. */
export interface CardVerification {
  kid: string;
  alg: string;
}

/** A key set larger than this is refused: a JWKS is a few keys. */
const MAX_JWKS_BYTES = 256 * 1024;

/** A key jose verifies with. */
type VerifyKey = CryptoKey | KeyObject | JWK | Uint8Array;

type KeyFor = (header: ProtectedHeaderParameters) => Promise<VerifyKey[]>;

async function fetchJwks(url: string, options: VerifyCardOptions): Promise<JSONWebKeySet> {
  const fetcher = options.fetch ?? globalThis.fetch;
  // No credentials: a key set is public, and the agent's token is not for the key set's host.
  const response = await fetcher(url, {
    headers: { accept: 'application/jwk-set+json, application/json' },
    redirect: 'error',
    signal: AbortSignal.timeout(options.jkuTimeoutMs ?? 10_000),
  });
  if (!response.ok) throw new Error(`the key set at ${url} answered HTTP ${response.status}`);
  const text = await response.text();
  if (text.length > MAX_JWKS_BYTES) throw new Error(`the key set at ${url} is larger than ${MAX_JWKS_BYTES} bytes`);
  const jwks = JSON.parse(text) as unknown;
  if (!isJsonObject(jwks) || !Array.isArray(jwks.keys)) throw new Error(`${url} holds no JWK Set ({ "keys": [...] })`);
  return jwks as unknown as JSONWebKeySet;
}

function keysFor(options: VerifyCardOptions): KeyFor {
  const local = options.jwks === undefined ? undefined : createLocalJWKSet(options.jwks);
  const given = (options.keys ?? []).map((key) =>
    typeof key === 'string'
      ? { key: createPublicKey(key) as KeyObject | JWK, kid: undefined }
      : { key, kid: (key as JWK).kid },
  );
  const fetched = new Map<string, Promise<ReturnType<typeof createLocalJWKSet>>>();
  return async (header) => {
    const out: VerifyKey[] = [];
    if (local !== undefined) {
      const key = await local(header).catch(() => undefined);
      if (key !== undefined) out.push(key);
    }
    for (const { key, kid } of given) if (kid === undefined || kid === header.kid) out.push(key);
    const { jku } = header;
    if (typeof jku === 'string' && (options.trustedJku ?? []).includes(jku)) {
      let set = fetched.get(jku);
      if (set === undefined) {
        set = fetchJwks(jku, options).then(createLocalJWKSet);
        fetched.set(jku, set);
      }
      const key = await (await set)(header).catch(() => undefined);
      if (key !== undefined) out.push(key);
    }
    return out;
  };
}

/**
 * Checks the card's signatures; resolves with the one that verified.
 * @param source where the card came from, for the error message.
 * @throws {A2AClientError} `card-unverified`, saying for each signature why it did not verify (no
 *   signatures, no trusted key for its `kid`, or a signature that does not match the card).
 */
export async function verifyCardSignatures(
  card: JsonObject,
  options: VerifyCardOptions,
  source = 'the agent card',
): Promise<CardVerification> {
  if (options.jwks === undefined && (options.keys ?? []).length === 0 && (options.trustedJku ?? []).length === 0) {
    throw new A2AClientError('usage', 'verifyCard needs keys to trust: jwks, keys or trustedJku.');
  }
  const signatures = Array.isArray(card.signatures) ? (card.signatures as unknown[]) : [];
  if (signatures.length === 0) {
    throw new A2AClientError(
      'card-unverified',
      `${source} is not signed (it has no "signatures"), so it cannot be verified.`,
    );
  }
  let payload: string;
  try {
    payload = base64url.encode(canonicalCardPayload(card));
  } catch (error) {
    throw new A2AClientError('card-unverified', `${source} cannot be verified: ${(error as Error).message}.`);
  }
  let keysOf: KeyFor;
  try {
    keysOf = keysFor(options);
  } catch (error) {
    throw new A2AClientError(
      'usage',
      `verifyCard: the keys given cannot be read (a JWK Set, JWKs, SPKI PEM or KeyObjects): ${(error as Error).message}`,
    );
  }
  const reasons: string[] = [];
  for (const [i, entry] of signatures.entries()) {
    const label = `signature ${i + 1}`;
    if (!isJsonObject(entry) || typeof entry.protected !== 'string' || typeof entry.signature !== 'string') {
      reasons.push(`${label}: not a JWS ({ protected, signature })`);
      continue;
    }
    let header: ProtectedHeaderParameters;
    try {
      header = decodeProtectedHeader({ protected: entry.protected });
    } catch {
      reasons.push(`${label}: its protected header is not base64url JSON`);
      continue;
    }
    // §8.4.2: the protected header MUST carry alg and kid.
    if (typeof header.alg !== 'string' || typeof header.kid !== 'string') {
      reasons.push(`${label}: its protected header lacks "alg" or "kid"`);
      continue;
    }
    const named = `${label} (kid ${JSON.stringify(header.kid)}, ${header.alg})`;
    let keys: VerifyKey[];
    try {
      keys = await keysOf(header);
    } catch (error) {
      reasons.push(`${named}: its key set could not be read: ${(error as Error).message}`);
      continue;
    }
    if (keys.length === 0) {
      reasons.push(
        `${named}: no trusted key has this kid${typeof header.jku === 'string' && !(options.trustedJku ?? []).includes(header.jku) ? ` (its jku ${header.jku} is not trusted)` : ''}`,
      );
      continue;
    }
    const jws = {
      payload,
      protected: entry.protected,
      signature: entry.signature,
      ...(isJsonObject(entry.header) ? { header: entry.header } : {}),
    };
    let verified = false;
    for (const key of keys) {
      try {
        await flattenedVerify(jws, key);
        verified = true;
        break;
      } catch {
        // The next key of the same kid, if any.
      }
    }
    if (verified) return { kid: header.kid, alg: header.alg };
    reasons.push(`${named}: does not match the card (the card was changed after signing, or signed by another key)`);
  }
  throw new A2AClientError('card-unverified', `${source} failed signature verification: ${reasons.join('; ')}.`);
}
