/**
 * Whether this worker can serve: 200 while its store answers, 503 when it does not (for load
 * balancers and orchestrators). It is unauthenticated, so it says nothing more: why the store
 * failed (a host, a user, a schema) goes to the log only.
 */

import type { A2AStore } from '@fastify-a2a/core';
import type { FastifyPluginAsync } from 'fastify';

export interface HealthRouteOptions {
  store: A2AStore;
}

const statusSchema = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', enum: ['ok', 'unavailable'] } },
  additionalProperties: false,
} as const;

export const healthRoute: FastifyPluginAsync<HealthRouteOptions> = async (scope, { store }) => {
  scope.get(
    '/a2a/health',
    { schema: { response: { 200: statusSchema, 503: statusSchema } } },
    async (request, reply) => {
      try {
        await store.ping();
        return { status: 'ok' };
      } catch (error) {
        request.log.warn({ err: error }, 'a2a: health check: the store does not answer');
        return reply.code(503).send({ status: 'unavailable' });
      }
    },
  );
};
