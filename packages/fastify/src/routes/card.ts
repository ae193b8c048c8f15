/** The public agent card (A2A §5.3 well-known URI), at the paths clients look for it. */

import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { type CardCache, type CardShape, publicBase } from '../card.js';
import type { CardSigner } from '../card-signing.js';
import { VERSION_HEADER } from '../context.js';

export interface CardRoutesOptions {
  cards: CardCache;
  baseUrl: string | undefined;
  /** The `agentCardVersions` option: which versions' card shapes are served. */
  versions: readonly ('1.0' | '0.3')[];
  /** `Cache-Control: max-age` of the card, in seconds (0: `no-cache`). */
  maxAgeSeconds: number;
  /** Publishes the card-signing keys' JWK Set when it has a path. */
  signer?: CardSigner | undefined;
}

/**
 * The shape a card request gets. Clients fetch the card before they speak any version, mostly
 * without an `A2A-Version` header, so the deployment chooses: one version alone gets that
 * version's pure card; both get the combined card, except a request that says it speaks 1.0 or
 * later (`A2A-Version: 1.0`), which gets the pure 1.0 card its schema validates.
 */
export function cardShapeOf(request: FastifyRequest, versions: readonly ('1.0' | '0.3')[]): CardShape {
  if (!versions.includes('0.3')) return '1.0';
  if (!versions.includes('1.0')) return '0.3';
  const header = request.headers[VERSION_HEADER];
  const value = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
  const major = /^(\d+)\.(\d+)/.exec(value);
  if (major === null) return 'combined';
  return Number(major[1]) >= 1 ? '1.0' : 'combined';
}

/** Whether the request's `If-None-Match` names `etag` (RFC 9110 §13.1.2: weak comparison, or `*`). */
function notModified(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (header === undefined) return false;
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === etag);
}

/**
 * The combined and 0.3 cards' required members, for documentation (OpenAPI). Not set on the route:
 * the pure 1.0 card (`agentCardVersions`) has neither `url` nor `protocolVersion`.
 */
export const agentCardResponseSchema = {
  type: 'object',
  required: [
    'protocolVersion',
    'name',
    'description',
    'url',
    'version',
    'capabilities',
    'defaultInputModes',
    'defaultOutputModes',
    'skills',
  ],
  properties: {
    protocolVersion: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    url: { type: 'string' },
    preferredTransport: { type: 'string' },
    additionalInterfaces: {
      type: 'array',
      items: { type: 'object', properties: { url: { type: 'string' }, transport: { type: 'string' } } },
    },
    version: { type: 'string' },
    capabilities: { type: 'object', additionalProperties: true },
    defaultInputModes: { type: 'array', items: { type: 'string' } },
    defaultOutputModes: { type: 'array', items: { type: 'string' } },
    skills: { type: 'array', items: { type: 'object', additionalProperties: true } },
    supportsAuthenticatedExtendedCard: { type: 'boolean' },
  },
  additionalProperties: true,
} as const;

export const cardRoutes: FastifyPluginAsync<CardRoutesOptions> = async (
  scope,
  { cards, baseUrl, versions, maxAgeSeconds, signer },
) => {
  // The tests check every shape against schemas written from each version's specification.
  // Made once, at start: the card does not change while the server runs.
  const lastModified = new Date(Math.floor(Date.now() / 1000) * 1000).toUTCString();
  const cacheControl = maxAgeSeconds > 0 ? `public, max-age=${maxAgeSeconds}` : 'no-cache';
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const card = await cards.served(publicBase(request, baseUrl), cardShapeOf(request, versions));
    // 1.0 §8.6.1 (SHOULD): caching headers, and 304 for a cache that still holds this card. The
    // shape depends on A2A-Version, so caches keep one per value.
    reply.header('Cache-Control', cacheControl).header('ETag', card.etag).header('Last-Modified', lastModified);
    if (versions.length > 1) reply.header('Vary', VERSION_HEADER);
    if (notModified(request, card.etag)) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(card.json);
  };
  for (const url of ['/.well-known/agent-card.json', '/.well-known/agent.json', '/a2a']) {
    scope.get(url, handler);
  }
  // The public half of the card-signing keys (RFC 7517 §5), which each signature's `jku` names.
  if (signer?.jwksPath !== undefined) {
    const jwks = JSON.stringify(signer.jwks);
    scope.get(signer.jwksPath, async (_request, reply) =>
      reply.header('Cache-Control', cacheControl).type('application/jwk-set+json').send(jwks),
    );
  }
};
