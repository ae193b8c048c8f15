/** The public agent card (A2A §5.3 well-known URI), at the paths clients look for it. */

import type { FastifyPluginAsync } from 'fastify';
import { type CardCache, publicBase } from '../card.js';

export interface CardRoutesOptions {
  cards: CardCache;
  baseUrl: string | undefined;
}

/** The card's required members, for documentation (OpenAPI) and a check of what is sent. */
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

export const cardRoutes: FastifyPluginAsync<CardRoutesOptions> = async (scope, { cards, baseUrl }) => {
  const schema = { response: { 200: agentCardResponseSchema } };
  // Sent as the JSON made once per base URL; the schema documents it.
  const handler = async (request: Parameters<typeof publicBase>[0]) => cards.get(publicBase(request, baseUrl)).json;
  for (const url of ['/.well-known/agent-card.json', '/.well-known/agent.json', '/a2a']) {
    scope.get(url, { schema }, async (request, reply) =>
      reply.type('application/json; charset=utf-8').send(await handler(request)),
    );
  }
};
