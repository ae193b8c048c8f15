/**
 * JWT bearer authentication: `Authorization: Bearer <jwt>` verified with `jose` against a JWKS URL
 * (keys cached, refetched when a token names a key not yet seen: rotation), a local key set, a
 * public key, or a shared secret. The signature, `exp`/`nbf` (with clock skew), and when configured
 * the issuer and audience are checked; the principal is the `sub` claim.
 */

import { createPublicKey, createSecretKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { Principal } from '@fastify-a2a/core';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  type JSONWebKeySet,
  type JWK,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from 'jose';
import { type Authenticator, bearerTokenOf, CredentialsRejected, quoted } from './authenticators.js';

export interface JwtOptions {
  /** Where the issuer publishes its signing keys (`…/.well-known/jwks.json`). */
  jwksUrl?: string | URL;
  /** The key set itself, for keys that do not change or a test. */
  jwks?: JSONWebKeySet;
  /** One public key: PEM (SPKI), a JWK, or a KeyObject. */
  publicKey?: string | JWK | KeyObject;
  /** A shared secret, for HMAC-signed tokens (HS256/384/512). */
  secret?: string | Uint8Array;
  /** The `iss` every token must carry. Strongly recommended. */
  issuer?: string | string[];
  /** The `aud` every token must carry (one of). Without it, a token the issuer made for any other service is accepted too. */
  audience?: string | string[];
  /** Accepted clock difference for `exp`, `nbf` and `iat`, in seconds. @default 30 */
  clockToleranceSeconds?: number;
  /** Accepted signing algorithms. @default the asymmetric ones (RS*, PS*, ES*, EdDSA), or HS* with `secret` */
  algorithms?: string[];
  /** Claims every token must have. @default ['exp'] (a token that never expires is refused) */
  requiredClaims?: string[];
  /** The claim naming the principal. @default 'sub' */
  principalClaim?: string;
  /** The claim listing roles (an array of strings, or one string). @default 'roles' */
  rolesClaim?: string;
  /** How long fetched keys are used before they are fetched again, in ms. @default 600000 */
  jwksCacheMaxAgeMs?: number;
  /** After a fetch, a token with an unknown key id waits this long before the next fetch, in ms. @default 30000 */
  jwksCooldownMs?: number;
  /** A JWKS fetch taking longer than this fails, in ms. @default 5000 */
  jwksTimeoutMs?: number;
  /** The key of the scheme in the card. @default 'jwt' */
  schemeName?: string;
  /** The challenge's realm. @default 'a2a' */
  realm?: string;
  /** Shown in the card's scheme. */
  description?: string;
}

const ASYMMETRIC = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];
const SYMMETRIC = ['HS256', 'HS384', 'HS512'];

/** The one key source the options name, as jose's key resolver or key. */
function keySource(options: JwtOptions): {
  key: JWTVerifyGetKey | KeyObject;
  symmetric: boolean;
  remote?: ReturnType<typeof createRemoteJWKSet>;
} {
  const given = (['jwksUrl', 'jwks', 'publicKey', 'secret'] as const).filter((name) => options[name] !== undefined);
  if (given.length !== 1) {
    throw new TypeError(
      `jwtBearer: give exactly one of jwksUrl, jwks, publicKey or secret (${given.length === 0 ? 'none given' : `got ${given.join(' and ')}`})`,
    );
  }
  if (options.jwksUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(options.jwksUrl);
    } catch {
      throw new TypeError(`jwtBearer: jwksUrl ${JSON.stringify(String(options.jwksUrl))} is not a URL`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new TypeError(`jwtBearer: jwksUrl must be http(s), got ${url.protocol}`);
    }
    const remote = createRemoteJWKSet(url, {
      ...(options.jwksCacheMaxAgeMs === undefined ? {} : { cacheMaxAge: options.jwksCacheMaxAgeMs }),
      ...(options.jwksCooldownMs === undefined ? {} : { cooldownDuration: options.jwksCooldownMs }),
      ...(options.jwksTimeoutMs === undefined ? {} : { timeoutDuration: options.jwksTimeoutMs }),
    });
    return { key: remote, symmetric: false, remote };
  }
  if (options.jwks !== undefined) return { key: createLocalJWKSet(options.jwks), symmetric: false };
  if (options.secret !== undefined) {
    const secret = typeof options.secret === 'string' ? Buffer.from(options.secret, 'utf8') : options.secret;
    // RFC 7518 §3.2: an HMAC key at least as long as the hash (32 bytes for HS256).
    if (secret.length < 32) throw new TypeError('jwtBearer: the secret must be at least 32 bytes long');
    return { key: createSecretKey(secret), symmetric: true };
  }
  const { publicKey } = options;
  try {
    const key =
      typeof publicKey === 'string'
        ? createPublicKey(publicKey)
        : publicKey !== null && typeof publicKey === 'object' && 'asymmetricKeyType' in publicKey
          ? (publicKey as KeyObject)
          : createPublicKey({ key: publicKey as JsonWebKey, format: 'jwk' });
    return { key, symmetric: false };
  } catch (error) {
    throw new TypeError(`jwtBearer: publicKey is not a public key (${(error as Error).message})`);
  }
}

/** Whether `error` says the keys could not be loaded (the issuer's JWKS endpoint), not that the token is bad. */
function isKeySetUnavailable(error: unknown): boolean {
  if (error instanceof errors.JWKSTimeout) return true;
  if (error instanceof errors.JOSEError)
    return error.code === 'ERR_JOSE_GENERIC' && /JSON Web Key Set/.test(error.message);
  // fetch's own failures (refused connection, DNS): a TypeError from undici.
  return error instanceof TypeError;
}

/** What was wrong with a token, in words a client can act on. */
function rejectionOf(error: unknown): CredentialsRejected {
  if (error instanceof errors.JWTExpired) {
    const exp = typeof error.payload.exp === 'number' ? ` at ${new Date(error.payload.exp * 1000).toISOString()}` : '';
    return new CredentialsRejected(`the JWT expired${exp}`);
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === 'missing')
      return new CredentialsRejected(`the JWT has no "${error.claim}" claim, which this agent requires`);
    if (error.claim === 'nbf') return new CredentialsRejected('the JWT is not valid yet (its "nbf" is in the future)');
    return new CredentialsRejected(`the JWT's "${error.claim}" claim is not accepted (${error.message})`);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return new CredentialsRejected("the JWT's signature does not verify with this agent's keys");
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return new CredentialsRejected("no key of the issuer's key set matches the JWT's key id");
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return new CredentialsRejected("the JWT's signing algorithm is not one this agent accepts");
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
    return new CredentialsRejected('the bearer token is not a well-formed signed JWT');
  }
  if (error instanceof errors.JOSENotSupported || error instanceof errors.JOSEError) {
    return new CredentialsRejected(`the JWT cannot be verified (${error.message})`);
  }
  return new CredentialsRejected('the JWT cannot be verified');
}

function stringList(value: unknown): string[] {
  if (typeof value === 'string') return value.split(/\s+/).filter((item) => item !== '');
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}

/** The caller a verified token names. */
function principalOf(payload: JWTPayload, principalClaim: string, rolesClaim: string): Principal {
  const id = payload[principalClaim];
  if (typeof id !== 'string' || id === '') {
    throw new CredentialsRejected(`the JWT has no "${principalClaim}" claim naming the caller`);
  }
  // RFC 8693 §4.2 `scope` is a space-separated string; some issuers send `scp`, as an array.
  const scopes = stringList(payload.scope ?? payload.scp);
  const roles = stringList(payload[rolesClaim]);
  return Object.freeze({ id, claims: Object.freeze({ ...payload }), roles, scopes });
}

/** A JWT authenticator; see {@link JwtOptions}. */
export function jwtBearer(options: JwtOptions): Authenticator & { readonly audienceChecked: boolean } {
  if (options === null || typeof options !== 'object') throw new TypeError('jwtBearer: options are required');
  const { key, symmetric, remote } = keySource(options);
  const clockTolerance = options.clockToleranceSeconds ?? 30;
  if (typeof clockTolerance !== 'number' || !Number.isFinite(clockTolerance) || clockTolerance < 0) {
    throw new TypeError('jwtBearer: clockToleranceSeconds must be a non-negative number');
  }
  const algorithms = options.algorithms ?? (symmetric ? SYMMETRIC : ASYMMETRIC);
  const verifyOptions = {
    algorithms,
    clockTolerance,
    requiredClaims: options.requiredClaims ?? ['exp'],
    ...(options.issuer === undefined ? {} : { issuer: options.issuer }),
    ...(options.audience === undefined ? {} : { audience: options.audience }),
  };
  const principalClaim = options.principalClaim ?? 'sub';
  const rolesClaim = options.rolesClaim ?? 'roles';

  const verify = async (token: string) => {
    if (remote === undefined) return jwtVerify(token, key as KeyObject, verifyOptions);
    try {
      return await jwtVerify(token, remote, verifyOptions);
    } catch (error) {
      // The issuer's key endpoint is down: keys fetched before still verify the tokens they signed,
      // so an outage of the identity provider does not lock every caller out.
      const known = remote.jwks();
      if (!isKeySetUnavailable(error) || known === undefined) throw error;
      return jwtVerify(token, createLocalJWKSet(known), verifyOptions);
    }
  };

  return {
    schemeName: options.schemeName ?? 'jwt',
    securityScheme: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      ...(options.description === undefined ? {} : { description: options.description }),
    },
    challenge: `Bearer realm=${quoted(options.realm ?? 'a2a')}`,
    audienceChecked: options.audience !== undefined,
    async authenticate(request) {
      const token = bearerTokenOf(request);
      if (token === undefined) return null;
      let payload: JWTPayload;
      try {
        ({ payload } = await verify(token));
      } catch (error) {
        if (isKeySetUnavailable(error)) {
          throw new CredentialsRejected(
            "the issuer's signing keys could not be loaded; retry shortly",
            'temporarily_unavailable',
            true,
          );
        }
        throw rejectionOf(error);
      }
      return principalOf(payload, principalClaim, rolesClaim);
    },
  };
}
