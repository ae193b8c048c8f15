/**
 * The HTTP+JSON binding, in a scope of its own with its own body parser: A2A 0.3's routes under
 * `<prefix>/v1/…` and A2A 1.0's at `<prefix>/…` (and `<prefix>/{tenant}/…`), the request's
 * `A2A-Version` header picking the version. An empty body is no body (clients send
 * `Content-Type: application/json` on bodiless POSTs such as `:cancel`), and a malformed one is the
 * binding's -32700 answer rather than Fastify's. Every path under `<prefix>/v1/` belongs to the
 * binding: one that names no operation is its MethodNotFound answer, not Fastify's 404.
 */

import {
  A2AError,
  OPERATIONS,
  type ProtocolVersion,
  type RestBinding,
  type RestMapping,
  type RestRoute,
  rest1_0,
} from '@fastify-a2a/core';
import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type Authentication, requireAuthentication } from '../auth/authentication.js';
import { limitBodyTime } from '../body-deadline.js';
import { RequestContext, requestedVersion } from '../context.js';
import { lingerAfterAnswer } from '../lingering-close.js';
import { SSE_ROUTE_OPTIONS, type StreamHub } from '../sse.js';
import { tenantOf } from '../tenants.js';
import { contentTypeNotSupported, INVALID_MEDIA_TYPE, isJsonContentType, withTrailingSlash } from './jsonrpc.js';

export interface RestRoutesOptions {
  binding: RestBinding;
  streams: StreamHub;
  bodyLimit: number;
  /** The versions served: their routes are registered. */
  versions: readonly ProtocolVersion[];
  bodyTimeoutMs: number;
  /** The agent's prefix: request URLs are matched to routes after it. */
  prefix: string;
  /** Authenticates every request before its body is read; undefined when the agent is open. */
  authentication: Authentication | undefined;
}

/**
 * The Fastify path that carries `route`: `{id}` (and any literal suffix in its segment, such as
 * `:cancel`, which Fastify's router cannot express) becomes one parameter, and a `:` in a static
 * segment is escaped. Routes that differ only by a suffix share a Fastify route; the binding's own
 * router tells them apart.
 */
export function fastifyPath(route: RestRoute): string {
  return route.path
    .split('/')
    .map((segment, i) => (segment.includes('{') ? `:p${i}` : segment.replaceAll(':', '::')))
    .join('/');
}

const noBody = Symbol('no body');

/**
 * The media type of an answer in `mapping`'s version: 1.0's protocol requirements (§11.1) say
 * `application/json` for requests and responses, while its examples and IANA section name
 * `application/a2a+json`, and conformance clients require the former, errors included. So
 * `application/json`, unless the request's `Accept` asks for the version's own type by name.
 */
export function answerMediaType(request: FastifyRequest, mapping: RestMapping): string {
  if (mapping.mediaType === 'application/json') return mapping.mediaType;
  const accept = request.headers.accept;
  const asked = typeof accept === 'string' && accept.toLowerCase().includes(mapping.mediaType);
  return asked ? mapping.mediaType : 'application/json';
}

/** `text` ending with a full stop. */
function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** The number of path segments in `path`, ignoring empty ones. */
function segmentCount(path: string): number {
  return path.split('/').filter((segment) => segment !== '').length;
}

/**
 * The request path relative to the agent's prefix, still percent-encoded: the binding's router
 * tells an id's `%3A` from the `:` of a `:cancel` suffix. The prefix is dropped by its number of
 * segments rather than its length, as the raw URL spells it percent-encoded (`/agents/caf%C3%A9`
 * for the prefix `/agents/café`); empty segments (a doubled or trailing `/`, which Fastify's router
 * may be told to ignore) are dropped too, as no route has one.
 */
function bindingPath(request: FastifyRequest, prefixSegments: number): string {
  const url = request.raw.url ?? '';
  const queryAt = url.indexOf('?');
  const raw = queryAt === -1 ? url : url.slice(0, queryAt);
  const segments = raw.split('/').filter((segment) => segment !== '');
  return `/${segments.slice(prefixSegments).join('/')}`;
}

/**
 * The binding's routes, parsers and error handler, encapsulated. Registered by {@link restRoutes}
 * without a `prefix` register option, so its routes sit under the parent scope's prefix (the
 * agent's) exactly once.
 */
async function restScope(
  scope: FastifyInstance,
  { binding, streams, bodyLimit, versions, prefix, bodyTimeoutMs, authentication }: RestRoutesOptions,
): Promise<void> {
  limitBodyTime(
    scope,
    bodyTimeoutMs,
    () =>
      (binding.mapping(versions[0] as ProtocolVersion) as RestMapping).error(
        new A2AError('INVALID_REQUEST', `Invalid Request: the body did not arrive within ${bodyTimeoutMs} ms.`),
      ).body,
  );
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (_request, body, done) => done(null, body));

  const mappings = new Map(versions.map((version) => [version, binding.mapping(version) as RestMapping]));
  /** The mapping whose error format answers `request`: its version's, or 1.0's when it names one not served. */
  const mappingOf = (request: FastifyRequest): RestMapping => {
    try {
      return mappings.get(requestedVersion(request)) ?? rest1_0;
    } catch {
      return rest1_0;
    }
  };
  const answerError = (reply: FastifyReply, error: A2AError, status?: number) => {
    const mapping = mappingOf(reply.request);
    const answer = mapping.error(error);
    return reply
      .code(status ?? answer.status)
      .type(`${answerMediaType(reply.request, mapping)}; charset=utf-8`)
      .send(answer.body);
  };
  // Every path of the binding, unknown ones included: an unauthenticated client learns nothing of
  // which routes or tasks exist.
  if (authentication !== undefined) requireAuthentication(scope, authentication, answerError);
  scope.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      lingerAfterAnswer(request, bodyTimeoutMs > 0 ? bodyTimeoutMs : undefined);
      return answerError(
        reply,
        new A2AError('INVALID_REQUEST', `Invalid Request: the body is larger than the ${bodyLimit}-byte limit.`),
        413,
      );
    }
    if (error.code === INVALID_MEDIA_TYPE) {
      // A Content-Type header Fastify cannot read: not JSON either (see parseBody).
      request.log.info({ err: error }, 'a2a: HTTP+JSON request with an unreadable Content-Type');
      return answerError(reply, contentTypeNotSupported(request.headers['content-type'], 'application/json'));
    }
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      // A client error from Fastify or from the application's hooks (an authentication hook's 401, a
      // rate limiter's 429): its status is the answer a client acts on, so it is kept.
      request.log.info({ err: error }, 'a2a: HTTP+JSON request refused');
      return answerError(
        reply,
        new A2AError('INVALID_REQUEST', `Invalid Request: ${sentence(error.message)}`),
        error.statusCode,
      );
    }
    request.log.error({ err: error }, 'a2a: HTTP+JSON request failed');
    // The message may name internals, so it stays in the log; a 5xx status the error carries (503
    // from a load-shedding hook) is kept, as clients and proxies retry by it.
    const serverStatus = error.statusCode !== undefined && error.statusCode >= 500 && error.statusCode < 600;
    return answerError(
      reply,
      new A2AError('INTERNAL', 'Internal error: the server failed to handle the request; see the server log.'),
      serverStatus ? error.statusCode : 500,
    );
  });

  /** The JSON body, undefined when there is none, or the error answer for one that is not JSON. */
  const parseBody = (request: FastifyRequest): unknown => {
    const text = request.body;
    if (typeof text !== 'string' || text.trim() === '') return noBody;
    if (!isJsonContentType(request.headers['content-type'])) {
      // HTTP 415 with the version's error body (1.0: AIP-193 `google.rpc.Status`, reason
      // CONTENT_TYPE_NOT_SUPPORTED), as conformance clients expect; both versions alike.
      throw contentTypeNotSupported(request.headers['content-type'], 'application/json');
    }
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new A2AError(
        'PARSE_ERROR',
        `Parse error: the request body is not valid JSON (${(error as Error).message}).`,
      );
    }
  };

  const prefixSegments = segmentCount(prefix);
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    let version: ProtocolVersion;
    try {
      version = requestedVersion(request);
    } catch (error) {
      return answerError(reply, error as A2AError);
    }
    // Which version answered (the spec names no header for it; this one mirrors the request's).
    reply.header('A2A-Version', version);
    const mapping = mappings.get(version) as RestMapping;
    let body: unknown;
    try {
      body = parseBody(request);
    } catch (error) {
      return answerError(reply, error as A2AError);
    }
    const resolved = binding.resolve(version, request.method, bindingPath(request, prefixSegments));
    if ('error' in resolved) return answerError(reply, resolved.error);
    // 1.0: the `/{tenant}` segment, else a `tenant` member of the body or query (§11.4).
    const tenant = version === '0.3' ? undefined : tenantOf(resolved.match.path, body, request.query);
    const ctx = new RequestContext(request, 'HTTP+JSON', version, tenant, reply);
    const outcome = await binding.handleMatch(
      resolved.match,
      { query: (request.query ?? {}) as Record<string, unknown>, body: body === noBody ? undefined : body },
      ctx,
    );
    if (outcome.type === 'response') {
      return reply
        .code(outcome.status)
        .type(`${answerMediaType(request, mapping)}; charset=utf-8`)
        .send(outcome.body);
    }
    // Returned, not awaited: a held stream then keeps no suspended frame of this handler
    // (bench/PROFILE.md, per-stream memory).
    return streams.pipe(reply, outcome, ctx.signal);
  };

  // A Fastify route per method and path; it carries @fastify/sse only when one of the versions'
  // operations at that path streams, so that a plain request's route has no SSE wrapper (its
  // per-request context, listeners and async frame: bench/PROFILE.md).
  const routesByKey = new Map<string, { method: RestRoute['method']; url: string; streams: boolean }>();
  for (const route of [...mappings.values()].flatMap((mapping) => mapping.routes)) {
    const url = fastifyPath(route);
    const key = `${route.method} ${url}`;
    const streams = OPERATIONS[route.operation].streaming || routesByKey.get(key)?.streams === true;
    routesByKey.set(key, { method: route.method, url, streams });
  }
  for (const { method, url, streams } of routesByKey.values()) {
    // With a trailing slash too, as JSON-RPC's endpoint (issue 23); 0.3's `/v1/…/` reaches the
    // binding through the wildcard below. The binding's router reads the path without it.
    for (const path of url.startsWith('/v1/') ? [url] : withTrailingSlash(scope, prefix, method, url)) {
      scope.route(streams ? { method, url: path, sse: SSE_ROUTE_OPTIONS, handler } : { method, url: path, handler });
    }
  }

  // The rest of `<prefix>/v1/…` (unknown paths, and known paths under another method) goes to the
  // binding too, whose router answers MethodNotFound and says whether the path exists under another
  // method. A wildcard route rather than a not-found handler: Fastify allows one not-found handler
  // per prefix, and an application's own `/v1` plugin with one would clash with ours when the agent
  // sits at the root. The application's own routes under /v1 still win (find-my-way prefers static
  // and parametric routes to a wildcard). OPTIONS is left out so that CORS preflights reach the
  // application's handler for them (e.g. @fastify/cors's `OPTIONS *`). It can stream too: a path
  // with an empty segment (`/v1//tasks/t1:subscribe`) arrives here and reads as the path without it,
  // as it does on the routes themselves when Fastify's router is told to ignore such slashes.
  scope.route({ method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], url: '/v1/*', sse: SSE_ROUTE_OPTIONS, handler });
}

/**
 * Registers {@link restScope} in a scope of its own. Wrapped with fastify-plugin so that Fastify
 * does not take the `prefix` option (the agent's prefix, which the parent scope already applies)
 * for a register prefix, which would put the routes under `<prefix><prefix>/v1`.
 */
export const restRoutes: FastifyPluginAsync<RestRoutesOptions> = fp(
  async (parent: FastifyInstance, options: RestRoutesOptions) => {
    await parent.register(async (scope: FastifyInstance) => restScope(scope, options));
  },
  { fastify: '5.x', name: 'fastify-a2a-rest' },
);
