/**
 * Liveness and readiness, for load balancers and orchestrators. Both are unauthenticated, so they
 * say nothing an outsider could use: why the store failed (a host, a user, a schema) goes to the
 * log only.
 *
 * - `GET <prefix>/a2a/health`: liveness, as before: 200 while the store answers a ping, else 503.
 * - `GET <prefix>/a2a/health/ready`: readiness with its detail in JSON: the store answers, this
 *   worker's lease is current, the store's cross-worker notifications are connected (where it has
 *   them), and how late push delivery runs (reported, not required). 503 when any required check
 *   fails, so a load balancer stops sending to a worker that lost its store or its lease.
 */

import type { A2ARuntime, A2AStore } from '@fastify-a2a/core';
import type { FastifyPluginAsync } from 'fastify';
import type { PluginTelemetry } from '../telemetry/telemetry.js';

export interface HealthRouteOptions {
  store: A2AStore;
  runtime: A2ARuntime;
  /** Where the last push attempt's lateness is known, when telemetry is on. */
  telemetry: PluginTelemetry | undefined;
  /** A store ping slower than this fails readiness. @default 2000 */
  storeTimeoutMs?: number;
}

const statusSchema = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', enum: ['ok', 'unavailable'] } },
  additionalProperties: false,
} as const;

const checkSchema = {
  type: 'object',
  required: ['ok'],
  properties: { ok: { type: 'boolean' } },
  additionalProperties: true,
} as const;

const readinessSchema = {
  type: 'object',
  required: ['status', 'checks'],
  properties: {
    status: { type: 'string', enum: ['ready', 'unavailable'] },
    checks: {
      type: 'object',
      required: ['store', 'lease', 'notifications'],
      properties: {
        store: {
          type: 'object',
          required: ['ok'],
          properties: { ok: { type: 'boolean' }, latencyMs: { type: 'number' } },
          additionalProperties: false,
        },
        lease: checkSchema,
        notifications: {
          type: 'object',
          required: ['ok'],
          properties: { ok: { type: 'boolean' }, mode: { type: 'string' } },
          additionalProperties: false,
        },
        push: {
          type: 'object',
          properties: {
            enabled: { type: 'boolean' },
            lastBacklogAgeSeconds: { type: ['number', 'null'] },
            lastAttemptAt: { type: ['string', 'null'] },
          },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

/** Resolves to the ping's latency in ms, or rejects (its error, or a timeout). */
async function timedPing(store: A2AStore, timeoutMs: number): Promise<number> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      store.ping(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the store did not answer a ping within ${timeoutMs} ms`)),
          timeoutMs,
        );
        timer.unref();
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
  return Math.round((performance.now() - started) * 10) / 10;
}

export const healthRoute: FastifyPluginAsync<HealthRouteOptions> = async (
  scope,
  { store, runtime, telemetry, storeTimeoutMs = 2000 },
) => {
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

  scope.get(
    '/a2a/health/ready',
    { schema: { response: { 200: readinessSchema, 503: readinessSchema } } },
    async (request, reply) => {
      let storeCheck: { ok: boolean; latencyMs?: number };
      try {
        storeCheck = { ok: true, latencyMs: await timedPing(store, storeTimeoutMs) };
      } catch (error) {
        request.log.warn({ err: error }, 'a2a: readiness: the store does not answer');
        storeCheck = { ok: false };
      }
      // A store without cross-process notifications (memory: one process; SQLite: polling) has
      // nothing to be disconnected from.
      const listens = store.supports.crossProcess && store.notificationsConnected !== undefined;
      const notifications = listens
        ? { ok: store.notificationsConnected === true, mode: 'listen' }
        : { ok: true, mode: store.supports.crossProcess ? 'poll' : 'in-process' };
      const lease = { ok: runtime.leaseCurrent };
      const last = telemetry?.lastPush;
      const push = runtime.pushEnabled
        ? {
            enabled: true,
            lastBacklogAgeSeconds: last?.backlogAgeSeconds ?? null,
            lastAttemptAt: last === undefined ? null : new Date(last.at).toISOString(),
          }
        : { enabled: false };
      const ready = storeCheck.ok && lease.ok && notifications.ok;
      // The worker id (host, pid) is not for anonymous callers: it goes to the log only.
      if (!ready) request.log.warn({ worker: runtime.workerId, storeCheck, lease, notifications }, 'a2a: not ready');
      return reply.code(ready ? 200 : 503).send({
        status: ready ? 'ready' : 'unavailable',
        checks: { store: storeCheck, lease, notifications, push },
      });
    },
  );
};
