/**
 * Authentication (A2A §4): who is calling, established from the HTTP request's credentials, never
 * from the A2A payload. An {@link Authenticator} reads one kind of credential and also says how the
 * agent card declares it (`securitySchemes`, §5.5.2) and how a 401 challenges for it
 * (`WWW-Authenticate`, RFC 9110 §11.6.1).
 */

import type { Principal, SecurityScheme } from '@fastify-a2a/core';
import type { FastifyRequest } from 'fastify';
import { SecretTable } from './constant-time.js';

export interface Authenticator {
  /** The scheme's key in the card's `securitySchemes` (and `security`). */
  readonly schemeName: string;
  /** How the card declares it (an OpenAPI security scheme object). */
  readonly securityScheme: SecurityScheme;
  /** The challenge sent in `WWW-Authenticate` when a call is refused, e.g. `Bearer realm="a2a"`. */
  readonly challenge: string;
  /**
   * The caller, or `null` when the request carries no credentials of this kind (another
   * authenticator may know them).
   * @throws {CredentialsRejected} when the request carries credentials of this kind that are wrong
   * (unknown, expired, badly signed), saying what was wrong.
   */
  authenticate(request: FastifyRequest): Promise<Principal | null>;
}

/**
 * Credentials were presented and refused. The message is sent to the client, so it says what was
 * wrong with them (expired, wrong audience…) and never echoes them.
 */
export class CredentialsRejected extends Error {
  constructor(
    message: string,
    /** RFC 6750 §3.1 error code for the challenge (`invalid_token`, `insufficient_scope`). */
    readonly challengeError: string = 'invalid_token',
    /** The credentials could not be checked at all (the key set did not load): 503, not 401. */
    readonly unavailable = false,
  ) {
    super(message);
    this.name = 'CredentialsRejected';
  }
}

/** Who a static credential stands for: a principal id, or a principal with roles and scopes. */
export type PrincipalInput = string | Principal;

function principalOf(input: PrincipalInput, where: string): Principal {
  if (typeof input === 'string') {
    if (input === '') throw new TypeError(`${where}: the principal id must be a non-empty string`);
    return Object.freeze({ id: input });
  }
  if (input === null || typeof input !== 'object' || typeof input.id !== 'string' || input.id === '') {
    throw new TypeError(`${where}: expected a principal id (string) or { id, roles?, scopes?, claims? }`);
  }
  for (const field of ['roles', 'scopes'] as const) {
    const list = input[field];
    if (list !== undefined && (!Array.isArray(list) || list.some((item) => typeof item !== 'string'))) {
      throw new TypeError(`${where}: "${field}" must be an array of strings`);
    }
  }
  return Object.freeze({ ...input });
}

/** Secrets → principals, checked: each secret a non-empty string, at least one. */
function secretTable(
  secrets: Readonly<Record<string, PrincipalInput>> | ReadonlyMap<string, PrincipalInput>,
  what: string,
): SecretTable<Principal> {
  if (secrets === null || typeof secrets !== 'object')
    throw new TypeError(`${what}: expected a map of secret → principal`);
  const entries = secrets instanceof Map ? [...secrets.entries()] : Object.entries(secrets);
  if (entries.length === 0) throw new TypeError(`${what}: give at least one`);
  return new SecretTable(
    entries.map(([secret, principal], index): [string, Principal] => {
      if (typeof secret !== 'string' || secret.trim() === '') {
        throw new TypeError(`${what}: entry ${index} has an empty secret`);
      }
      return [secret, principalOf(principal, `${what}, entry ${index}`)];
    }),
  );
}

/** A quoted-string for a challenge parameter (RFC 9110 §5.6.4). */
export function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, '\\$&')}"`;
}

/** The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1), or undefined. */
export function bearerTokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export interface BearerTokensOptions {
  /** The key of the scheme in the card. @default 'bearer' */
  schemeName?: string;
  /** The challenge's realm. @default 'a2a' */
  realm?: string;
  /** Shown in the card's scheme. */
  description?: string;
}

/**
 * Static bearer tokens (`Authorization: Bearer <token>`), each standing for a principal. Tokens are
 * compared in constant time.
 *
 * @example bearerTokens({ [process.env.ALICE_TOKEN]: 'alice', [process.env.OPS_TOKEN]: { id: 'ops', roles: ['admin'] } })
 */
export function bearerTokens(
  tokens: Readonly<Record<string, PrincipalInput>> | ReadonlyMap<string, PrincipalInput>,
  options: BearerTokensOptions = {},
): Authenticator {
  const table = secretTable(tokens, 'bearerTokens');
  return {
    schemeName: options.schemeName ?? 'bearer',
    securityScheme: {
      type: 'http',
      scheme: 'bearer',
      ...(options.description === undefined ? {} : { description: options.description }),
    },
    challenge: `Bearer realm=${quoted(options.realm ?? 'a2a')}`,
    async authenticate(request) {
      const token = bearerTokenOf(request);
      if (token === undefined) return null;
      const principal = table.find(token);
      if (principal === undefined) throw new CredentialsRejected('the bearer token is not one this agent accepts');
      return principal;
    },
  };
}

export interface ApiKeyOptions {
  /** The request header carrying the key. @default 'X-API-Key' */
  header?: string;
  /** The key of the scheme in the card. @default 'apiKey' */
  schemeName?: string;
  /** Shown in the card's scheme. */
  description?: string;
}

/** API keys sent in a header (`X-API-Key: <key>` by default), each standing for a principal; compared in constant time. */
export function apiKeys(
  keys: Readonly<Record<string, PrincipalInput>> | ReadonlyMap<string, PrincipalInput>,
  options: ApiKeyOptions = {},
): Authenticator {
  const table = secretTable(keys, 'apiKeys');
  const header = options.header ?? 'X-API-Key';
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(header)) {
    throw new TypeError(`apiKeys: "${header}" is not a valid HTTP header name`);
  }
  const lower = header.toLowerCase();
  return {
    schemeName: options.schemeName ?? 'apiKey',
    securityScheme: {
      type: 'apiKey',
      in: 'header',
      name: header,
      ...(options.description === undefined ? {} : { description: options.description }),
    },
    // No registered HTTP scheme names API keys; the challenge says which header to send.
    challenge: `ApiKey header=${quoted(header)}`,
    async authenticate(request) {
      const value = request.headers[lower];
      const key = Array.isArray(value) ? value[0] : value;
      if (key === undefined || key.trim() === '') return null;
      const principal = table.find(key.trim());
      if (principal === undefined)
        throw new CredentialsRejected(`the ${header} header is not a key this agent accepts`);
      return principal;
    },
  };
}
