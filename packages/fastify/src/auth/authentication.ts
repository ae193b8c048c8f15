/**
 * The `authenticate` option at work: run before a binding reads the body, it finds the caller or
 * refuses the request with HTTP 401 and a `WWW-Authenticate` challenge (A2A §4.4: authentication
 * is HTTP's, on every request), and tells the card which security schemes to declare (§5.5.2).
 */

import { A2AError, type Principal, type SecurityScheme } from '@fastify-a2a/core';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { type Authenticator, CredentialsRejected } from './authenticators.js';

/** An application's own authentication: the caller, or null/undefined when the request does not authenticate. */
export type AuthenticateFunction = (
  request: FastifyRequest,
) => Principal | null | undefined | Promise<Principal | null | undefined>;

/** The `authenticate` option: built-in authenticators (any one may accept a call) or a function. */
export type AuthenticateOption = AuthenticateFunction | Authenticator | readonly Authenticator[];

/** Refused: the error to answer with, its status, and the `WWW-Authenticate` challenges. */
export interface AuthenticationRefusal {
  error: A2AError;
  status: number;
  challenges: readonly string[];
}

const principals = new WeakMap<FastifyRequest, Principal>();

/** The caller authentication found for `request`, if any. */
export function principalOfRequest(request: FastifyRequest): Principal | undefined {
  return principals.get(request);
}

function isAuthenticator(value: unknown): value is Authenticator {
  const candidate = value as Partial<Authenticator> | null;
  return (
    candidate !== null &&
    typeof candidate === 'object' &&
    typeof candidate.authenticate === 'function' &&
    typeof candidate.schemeName === 'string' &&
    typeof candidate.challenge === 'string' &&
    typeof candidate.securityScheme === 'object'
  );
}

/** What a client must send for a scheme, in words (for "authentication required" answers). */
function describeScheme(scheme: SecurityScheme): string {
  switch (scheme.type) {
    case 'http':
      return scheme.scheme.toLowerCase() === 'bearer'
        ? `an "Authorization: Bearer <${scheme.bearerFormat === 'JWT' ? 'JWT' : 'token'}>" header`
        : `an "Authorization: ${scheme.scheme} …" header`;
    case 'apiKey':
      return `the API key in the ${scheme.in} "${scheme.name}"`;
    case 'oauth2':
    case 'openIdConnect':
      return 'an "Authorization: Bearer <access token>" header';
    case 'mutualTLS':
      return 'a client certificate';
  }
}

/** A challenge for a scheme the application declared itself (for the function form of the option). */
function challengeOf(scheme: SecurityScheme): string {
  switch (scheme.type) {
    case 'http':
      return `${scheme.scheme.charAt(0).toUpperCase()}${scheme.scheme.slice(1)} realm="a2a"`;
    case 'apiKey':
      return `ApiKey ${scheme.in}="${scheme.name}"`;
    default:
      return 'Bearer realm="a2a"';
  }
}

/** Appends RFC 6750 §3 `error` to a challenge whose credentials were refused. */
function withError(challenge: string, error: string): string {
  return `${challenge}${challenge.includes(' ') ? ',' : ''} error="${error}"`;
}

export class Authentication {
  readonly #authenticators: readonly Authenticator[];
  readonly #function: AuthenticateFunction | undefined;
  /** The schemes the card declares, and one challenge each. */
  readonly #schemes: readonly { name: string; scheme: SecurityScheme; challenge: string }[];
  readonly #log: FastifyBaseLogger;

  /**
   * @param declared the card's own `securitySchemes` (the application's), which the function form
   * of the option challenges for.
   * @throws {TypeError} for an option that is neither a function nor authenticators, or two
   * authenticators with one scheme name.
   */
  constructor(
    option: AuthenticateOption,
    declared: Readonly<Record<string, SecurityScheme>> | undefined,
    log: FastifyBaseLogger,
  ) {
    this.#log = log;
    if (typeof option === 'function') {
      this.#function = option;
      this.#authenticators = [];
      this.#schemes = Object.entries(declared ?? {}).map(([name, scheme]) => ({
        name,
        scheme,
        challenge: challengeOf(scheme),
      }));
      return;
    }
    const list = Array.isArray(option) ? option : [option];
    if (list.length === 0 || !list.every(isAuthenticator)) {
      throw new TypeError(
        'must be a function (request) => principal | null, or authenticators made by bearerTokens(), apiKeys() or jwtBearer() (one or an array)',
      );
    }
    const names = new Set<string>();
    for (const authenticator of list) {
      if (names.has(authenticator.schemeName) || Object.hasOwn(declared ?? {}, authenticator.schemeName)) {
        throw new TypeError(
          `two security schemes are named "${authenticator.schemeName}"; give each authenticator its own schemeName`,
        );
      }
      names.add(authenticator.schemeName);
    }
    this.#function = undefined;
    this.#authenticators = list;
    this.#schemes = list.map((a) => ({ name: a.schemeName, scheme: a.securityScheme, challenge: a.challenge }));
  }

  /**
   * What the card declares: the schemes, and `security` listing each as an alternative (0.3
   * §5.5.2: a list of requirement objects, any one of which suffices).
   */
  get cardSecurity():
    | { securitySchemes: Record<string, SecurityScheme>; security: Record<string, string[]>[] }
    | undefined {
    if (this.#authenticators.length === 0) return undefined;
    return {
      securitySchemes: Object.fromEntries(this.#schemes.map(({ name, scheme }) => [name, scheme])),
      security: this.#schemes.map(({ name }) => ({ [name]: [] })),
    };
  }

  /** The challenges of a 401 (RFC 9110 §11.6.1: at least one). */
  get #challenges(): string[] {
    return this.#schemes.length === 0
      ? ['Bearer realm="a2a"']
      : [...new Set(this.#schemes.map(({ challenge }) => challenge))];
  }

  /** The caller, or why the request is refused. Records the caller for {@link principalOfRequest}. */
  async authenticate(request: FastifyRequest): Promise<Principal | AuthenticationRefusal> {
    const outcome =
      this.#function !== undefined ? await this.#byFunction(request) : await this.#byAuthenticators(request);
    if ('id' in outcome) principals.set(request, outcome);
    return outcome;
  }

  /**
   * Authenticates a call that reached the agent through a listener other than Fastify's (the gRPC
   * binding): its credentials as HTTP header names carry them (gRPC metadata keys are lowercase
   * header names). Authenticators read `headers`; the function form of the option gets a stand-in
   * for the request with `headers`, `id` and `log` only.
   */
  authenticateHeaders(
    headers: Readonly<Record<string, string | undefined>>,
    id: string,
    log: FastifyBaseLogger,
  ): Promise<Principal | AuthenticationRefusal> {
    const standIn = { id, headers, log, query: {}, params: {} } as unknown as FastifyRequest;
    return this.authenticate(standIn);
  }

  async #byFunction(request: FastifyRequest): Promise<Principal | AuthenticationRefusal> {
    let principal: Principal | null | undefined;
    try {
      principal = await (this.#function as AuthenticateFunction)(request);
    } catch (error) {
      if (error instanceof CredentialsRejected) return this.#rejected(request, [{ error, challenge: undefined }]);
      if (A2AError.is(error) && error.exposed) {
        return { error, status: error.code === 'UNAUTHENTICATED' ? 401 : 503, challenges: this.#challenges };
      }
      return this.#failed(request, error);
    }
    if (principal === null || principal === undefined) return this.#missing();
    if (typeof principal !== 'object' || typeof principal.id !== 'string' || principal.id === '') {
      return this.#failed(request, new TypeError('the authenticate option returned a principal without a string "id"'));
    }
    return principal;
  }

  async #byAuthenticators(request: FastifyRequest): Promise<Principal | AuthenticationRefusal> {
    const rejections: { error: CredentialsRejected; challenge: string }[] = [];
    for (const authenticator of this.#authenticators) {
      try {
        const principal = await authenticator.authenticate(request);
        if (principal !== null) return principal;
      } catch (error) {
        if (!(error instanceof CredentialsRejected)) return this.#failed(request, error);
        rejections.push({ error, challenge: authenticator.challenge });
      }
    }
    return rejections.length === 0 ? this.#missing() : this.#rejected(request, rejections);
  }

  #missing(): AuthenticationRefusal {
    const what =
      this.#schemes.length === 0
        ? 'credentials'
        : this.#schemes.map(({ scheme }) => describeScheme(scheme)).join(' or ');
    return {
      error: new A2AError('UNAUTHENTICATED', `Authentication required: send ${what}.`),
      status: 401,
      challenges: this.#challenges,
    };
  }

  #rejected(
    request: FastifyRequest,
    rejections: readonly { error: CredentialsRejected; challenge: string | undefined }[],
  ): AuthenticationRefusal {
    const reasons = [...new Set(rejections.map(({ error }) => error.message))].join('; ');
    if (rejections.every(({ error }) => error.unavailable)) {
      this.#log.warn({ reqId: request.id, reason: reasons }, 'a2a: credentials could not be checked');
      return {
        error: new A2AError('UNAVAILABLE', `Service unavailable: ${reasons}.`),
        status: 503,
        challenges: [],
      };
    }
    // Never the credentials themselves: the reasons are ours.
    this.#log.info({ reqId: request.id, reason: reasons }, 'a2a: authentication failed');
    const refused = new Map(rejections.map(({ error, challenge }) => [challenge, error.challengeError]));
    // The function form has no challenge of its own: its refusal marks every challenge.
    const anyChallenge = refused.get(undefined);
    return {
      error: new A2AError('UNAUTHENTICATED', `Authentication failed: ${reasons}.`),
      status: 401,
      challenges: this.#challenges.map((challenge) => {
        const error = refused.get(challenge) ?? anyChallenge;
        return error === undefined ? challenge : withError(challenge, error);
      }),
    };
  }

  #failed(request: FastifyRequest, error: unknown): AuthenticationRefusal {
    request.log.error({ err: error }, 'a2a: authentication failed with an error');
    return {
      error: new A2AError(
        'INTERNAL',
        'Internal error: the server failed to authenticate the request; see the server log.',
        {
          expose: true,
        },
      ),
      status: 500,
      challenges: [],
    };
  }
}

/**
 * Adds the onRequest hook that authenticates every request of a binding's scope, before its body
 * is read, answering refusals with `answer` (the binding's error format).
 */
export function requireAuthentication(
  scope: {
    addHook(name: 'onRequest', hook: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>): unknown;
  },
  authentication: Authentication,
  answer: (reply: FastifyReply, error: A2AError, status: number) => FastifyReply,
): void {
  scope.addHook('onRequest', async (request, reply) => {
    const outcome = await authentication.authenticate(request);
    if ('id' in outcome) return;
    if (outcome.challenges.length > 0) {
      reply.header('WWW-Authenticate', outcome.challenges.length === 1 ? outcome.challenges[0] : outcome.challenges);
    }
    if (outcome.status === 503) reply.header('Retry-After', '5');
    await answer(reply, outcome.error, outcome.status);
    return reply;
  });
}
