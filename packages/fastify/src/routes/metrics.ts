/**
 * `GET <prefix>/metrics`: this worker's metrics in the Prometheus text exposition format (each
 * worker is scraped on its own; Prometheus sums across them). Opt-in, and guarded by the
 * `metrics.bearerToken` and `metrics.authorize` options when given.
 */

import type { FastifyPluginAsync } from 'fastify';
import { secretsEqual } from '../auth/constant-time.js';
import type { A2AMetrics } from '../telemetry/metrics.js';
import type { ResolvedMetricsOptions } from '../telemetry/options.js';

export interface MetricsRouteOptions {
  metrics: A2AMetrics;
  options: ResolvedMetricsOptions;
}

function bearerOf(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer +(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export const metricsRoute: FastifyPluginAsync<MetricsRouteOptions> = async (scope, { metrics, options }) => {
  scope.get(options.path, async (request, reply) => {
    if (options.bearerToken !== undefined) {
      const token = bearerOf(request.headers.authorization);
      if (token === undefined) {
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer realm="metrics"')
          .send({ error: 'Unauthorized: send the metrics bearer token in an Authorization: Bearer header.' });
      }
      if (!secretsEqual(token, options.bearerToken)) {
        return reply.code(403).send({ error: 'Forbidden: this token may not read the metrics.' });
      }
    }
    if (options.authorize !== undefined && (await options.authorize(request)) !== true) {
      request.log.warn('a2a: /metrics refused by metrics.authorize');
      return reply.code(403).send({ error: 'Forbidden: metrics.authorize refused this request.' });
    }
    const body = await metrics.exposition();
    return reply.header('content-type', metrics.registry.contentType).send(body);
  });
};
