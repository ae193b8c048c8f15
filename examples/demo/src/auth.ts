/**
 * The demo's authentication, from the environment:
 * - `A2A_AUTH_TOKENS="alice:tok-a,bob:tok-b"`: bearer tokens, each standing for a principal;
 * - `A2A_JWKS_URL` (with `A2A_JWT_ISSUER`, `A2A_JWT_AUDIENCE`): JWTs verified against that key set;
 * - both: either is accepted; neither: the agent is open, and says so at start-up.
 * With authentication on, callers also get an extended card with one more skill (`whoami`).
 */

import type { AgentCardInput, Authenticator, ExtendedAgentCardOption } from 'fastify-a2a';
import { bearerTokens, jwtBearer } from 'fastify-a2a';

export interface DemoAuth {
  authenticate?: Authenticator[];
  extendedAgentCard?: ExtendedAgentCardOption;
  /** One line for the start-up log saying how callers authenticate. */
  summary: string;
}

/**
 * Parses `A2A_AUTH_TOKENS`: comma-separated `principal:token` pairs.
 * @throws {Error} naming the malformed entry (never printing a token).
 */
export function parseTokens(value: string): Record<string, string> {
  const tokens: Record<string, string> = {};
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0)
    throw new Error('A2A_AUTH_TOKENS is set but empty; give "principal:token" pairs separated by commas.');
  entries.forEach((entry, index) => {
    const colon = entry.indexOf(':');
    const principal = colon === -1 ? '' : entry.slice(0, colon).trim();
    const token = colon === -1 ? '' : entry.slice(colon + 1).trim();
    if (principal === '' || token === '') {
      throw new Error(
        `A2A_AUTH_TOKENS entry ${index + 1} is not "principal:token" (e.g. A2A_AUTH_TOKENS="alice:tok-a,bob:tok-b").`,
      );
    }
    if (Object.hasOwn(tokens, token)) {
      throw new Error(
        `A2A_AUTH_TOKENS entry ${index + 1} reuses the token of principal "${tokens[token]}"; give each principal its own.`,
      );
    }
    tokens[token] = principal;
  });
  return tokens;
}

/** The skill only authenticated callers see. */
export const whoamiSkill = {
  id: 'whoami',
  name: 'Who am I',
  description: 'Send "whoami": the agent says which principal it believes you are.',
  tags: ['demo', 'auth'],
  examples: ['whoami'],
};

export function demoAuth(env: NodeJS.ProcessEnv, card: AgentCardInput): DemoAuth {
  const authenticators: Authenticator[] = [];
  const modes: string[] = [];
  if (env.A2A_AUTH_TOKENS !== undefined) {
    const tokens = parseTokens(env.A2A_AUTH_TOKENS);
    authenticators.push(bearerTokens(tokens));
    modes.push(`bearer tokens for ${[...new Set(Object.values(tokens))].join(', ')}`);
  }
  if (env.A2A_JWKS_URL !== undefined && env.A2A_JWKS_URL !== '') {
    authenticators.push(
      jwtBearer({
        jwksUrl: env.A2A_JWKS_URL,
        ...(env.A2A_JWT_ISSUER ? { issuer: env.A2A_JWT_ISSUER } : {}),
        ...(env.A2A_JWT_AUDIENCE ? { audience: env.A2A_JWT_AUDIENCE } : {}),
      }),
    );
    modes.push(`JWTs signed by the keys at ${env.A2A_JWKS_URL}`);
  } else if (env.A2A_JWT_ISSUER || env.A2A_JWT_AUDIENCE) {
    throw new Error('A2A_JWT_ISSUER and A2A_JWT_AUDIENCE need A2A_JWKS_URL, the issuer’s key set.');
  }
  if (authenticators.length === 0)
    return { summary: 'authentication off (set A2A_AUTH_TOKENS or A2A_JWKS_URL to turn it on)' };
  return {
    authenticate: authenticators,
    extendedAgentCard: { skills: [...(card.skills ?? []), whoamiSkill] },
    summary: `authentication: ${modes.join('; or ')}`,
  };
}

/** Whether `host` only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}
