/**
 * The JSON-RPC binding at `POST <prefix>/a2a`, in a scope of its own: it reads every body as text
 * (so a body that is not JSON becomes JSON-RPC -32700, §8.1, never Fastify's HTTP 400) without
 * touching the content-type parsers of the application's other routes.
 */

import {
  A2AError,
  errorResponse,
  type JsonRpcBinding,
  type JsonRpcMapping,
  jsonRpc0_3,
  jsonRpc1_0,
  type ProtocolVersion,
} from '@fastify-a2a/core';
import type {
  FastifyError,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  HTTPMethods,
} from 'fastify';
import { type Authentication, requireAuthentication } from '../auth/authentication.js';
import { limitBodyTime } from '../body-deadline.js';
import { RequestContext, requestedVersion } from '../context.js';
import { lingerAfterAnswer } from '../lingering-close.js';
import { SSE_ROUTE_OPTIONS, type StreamHub } from '../sse.js';
import { tenantOf } from '../tenants.js';

export interface JsonRpcRoutesOptions {
  binding: JsonRpcBinding;
  streams: StreamHub;
  bodyLimit: number;
  bodyTimeoutMs: number;
  /** Authenticates every call before its body is read; undefined when the agent is open. */
  authentication: Authentication | undefined;
  /**
   * The agent's prefix (the scope's), to tell whether a route is already registered. Not named
   * `prefix`: Fastify would take that for a register prefix and apply it a second time. @default ''
   */
  agentPrefix?: string;
}

/** `application/json`, or any `application/*+json`, with parameters. */
export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  if (value === 'application/json') return true; // what nearly every client sends
  const type = value.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/**
 * A request body whose Content-Type is not JSON (`text/plain`, a form, none, a malformed one):
 * ContentTypeNotSupported, as independent A2A 1.0 conformance clients expect (HTTP 415; -32005 on
 * JSON-RPC), in both versions — 0.3 defines the same error and code (§8.2). `expected` names the
 * type to send instead.
 */
export function contentTypeNotSupported(got: string | undefined, expected: string): A2AError {
  // Echoed to its sender only, as JSON; cut so a huge header does not make a huge answer.
  const shown = got === undefined ? undefined : got.length > 100 ? `${got.slice(0, 100)}…` : got;
  return new A2AError(
    'CONTENT_TYPE_NOT_SUPPORTED',
    `Content type not supported: the request's Content-Type must be ${expected} (got ${shown === undefined ? 'no Content-Type' : JSON.stringify(shown)}).`,
    { data: shown === undefined ? { expected } : { contentType: shown, expected } },
  );
}

/** The HTTP status of a {@link contentTypeNotSupported} answer (RFC 9110 §15.5.16). */
export const UNSUPPORTED_MEDIA_TYPE = 415;

/** Fastify's own request error for a Content-Type header it cannot read (`json`, `;`). */
export const INVALID_MEDIA_TYPE = 'FST_ERR_CTP_INVALID_MEDIA_TYPE';

/** Fastify's own request errors that are the client's doing: they answer -32600, not -32603. */
const CLIENT_ERRORS = new Set([
  'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
  'FST_ERR_CTP_EMPTY_TYPE',
  'FST_ERR_CTP_INVALID_TYPE',
]);

/** The JSON-RPC mapping whose error format answers `request`: 0.3's or 1.0's by its A2A-Version. */
function errorMappingOf(request: FastifyRequest): JsonRpcMapping {
  try {
    return requestedVersion(request) === '0.3' ? jsonRpc0_3 : jsonRpc1_0;
  } catch {
    return jsonRpc1_0; // a version not served: 1.0's error format, as for the -32009 answer
  }
}

export const jsonRpcRoutes: FastifyPluginAsync<JsonRpcRoutesOptions> = async (
  scope,
  { binding, streams, bodyLimit, bodyTimeoutMs, authentication, agentPrefix = '' },
) => {
  // Armed before authentication, as on HTTP+JSON: a refused request whose body is still on its way
  // is bounded too (its deadline ends with its answer when the body is in: body-deadline.ts).
  limitBodyTime(scope, bodyTimeoutMs, () =>
    errorResponse(
      null,
      new A2AError('INVALID_REQUEST', `Invalid Request: the body did not arrive within ${bodyTimeoutMs} ms.`),
      jsonRpc0_3,
    ),
  );
  if (authentication !== undefined) {
    // The body is not read yet, so the answer's id is null (JSON-RPC 2.0 §5: the id could not be
    // determined); refusing first means an unauthenticated client cannot make the server parse.
    requireAuthentication(scope, authentication, (reply, error, status) =>
      reply
        .code(status)
        .type('application/json; charset=utf-8')
        .send(errorResponse(null, error, errorMappingOf(reply.request))),
    );
  }
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (_request, body, done) => done(null, body));
  scope.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      const tooLarge = new A2AError(
        'INVALID_REQUEST',
        `Invalid Request: the body is larger than the ${bodyLimit}-byte limit.`,
      );
      lingerAfterAnswer(request, bodyTimeoutMs > 0 ? bodyTimeoutMs : undefined);
      return reply.code(413).send(errorResponse(null, tooLarge, jsonRpc0_3));
    }
    if (error.code === INVALID_MEDIA_TYPE) {
      request.log.info({ err: error }, 'a2a: JSON-RPC request with an unreadable Content-Type');
      const unsupported = contentTypeNotSupported(request.headers['content-type'], 'application/json');
      return reply.code(UNSUPPORTED_MEDIA_TYPE).send(errorResponse(null, unsupported, errorMappingOf(request)));
    }
    if (error.code !== undefined && CLIENT_ERRORS.has(error.code)) {
      request.log.info({ err: error }, 'a2a: malformed JSON-RPC request');
      const invalid = new A2AError(
        'INVALID_REQUEST',
        `Invalid Request: Content-Type must be application/json (got ${JSON.stringify(request.headers['content-type'] ?? '')}).`,
      );
      return reply.code(200).send(errorResponse(null, invalid, jsonRpc0_3));
    }
    const status = error.statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      // A refusal by one of the application's hooks (an authentication hook's 401, a rate
      // limiter's 429): its status is what clients and proxies act on, so it is kept, with the
      // JSON-RPC error clients read.
      request.log.info({ err: error }, 'a2a: JSON-RPC request refused');
      const refused = new A2AError('INVALID_REQUEST', `Invalid Request: ${error.message}.`);
      return reply.code(status).send(errorResponse(null, refused, jsonRpc0_3));
    }
    request.log.error({ err: error }, 'a2a: JSON-RPC request failed');
    const internal = new A2AError(
      'INTERNAL',
      'Internal error: the server failed to handle the request; see the server log.',
    );
    // A 5xx the error carries (503 from load shedding) is kept, as clients retry by it; the
    // message, which may name internals, stays in the log.
    const serverStatus = status !== undefined && status >= 500 && status < 600 ? status : 200;
    return reply.code(serverStatus).send(errorResponse(null, internal, jsonRpc0_3));
  });

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    let version: ProtocolVersion;
    try {
      version = requestedVersion(request);
    } catch (error) {
      // -32009 with 1.0's ErrorInfo: a client that names a version speaks 1.0 or later.
      return errorResponse(null, error as A2AError, jsonRpc1_0);
    }
    // Which version answered (the spec names no header for it; this one mirrors the request's).
    reply.header('A2A-Version', version);
    const contentType = request.headers['content-type'];
    if (!isJsonContentType(contentType)) {
      // HTTP 415 with the JSON-RPC error in the body: conformance clients accept either, and
      // JSON-RPC clients (@a2a-js/sdk's among them) read the error from a non-200 answer too.
      const unsupported = contentTypeNotSupported(contentType, 'application/json');
      return reply
        .code(UNSUPPORTED_MEDIA_TYPE)
        .send(errorResponse(null, unsupported, version === '0.3' ? jsonRpc0_3 : jsonRpc1_0));
    }
    // Parsed here (the binding takes a parsed body as it is; it answers a body that does not parse),
    // since 1.0 requests carry their tenant in their params (§11.4); 0.3 has none.
    const body = parsedJson(request.body ?? '');
    const tenant = version === '0.3' ? undefined : tenantOf((body as { params?: unknown } | null)?.params);
    const ctx = new RequestContext(request, 'JSONRPC', version, tenant, reply);
    const outcome = await binding.handle(body, ctx);
    if (outcome.type === 'response') {
      if (outcome.status !== undefined) return reply.code(outcome.status).send(outcome.response);
      if (!outcome.asEvent) return outcome.response;
      await streams.single(reply, JSON.stringify(outcome.response));
      return;
    }
    // Returned, not awaited: a held stream then keeps no suspended frame of this handler
    // (bench/PROFILE.md, per-stream memory).
    return streams.pipe(reply, outcome, ctx.signal);
  };
  // Served with and without a trailing slash: clients that join a base URL and a path (httpx's
  // base_url, several SDKs) POST to `…/a2a/`, and Fastify's own 404 is no JSON-RPC answer they
  // could read (issue 23).
  for (const url of withTrailingSlash(scope, agentPrefix, 'POST', '/a2a')) {
    scope.post(url, { sse: SSE_ROUTE_OPTIONS }, handler);
  }
};

/**
 * `path` and `path/`, or only `path` when the application's router already treats them as one
 * (`ignoreTrailingSlash`), where registering both would be a duplicate route. `prefix` is the
 * scope's, as `hasRoute` matches full URLs.
 */
export function withTrailingSlash(scope: FastifyInstance, prefix: string, method: HTTPMethods, path: string): string[] {
  if (path.endsWith('/')) return [path];
  const slashed = `${path}/`;
  const routerOptions = (scope.initialConfig as { routerOptions?: { ignoreTrailingSlash?: boolean } }).routerOptions;
  const ignored = routerOptions?.ignoreTrailingSlash ?? scope.initialConfig.ignoreTrailingSlash ?? false;
  return ignored || scope.hasRoute({ method, url: `${prefix}${slashed}` }) ? [path] : [path, slashed];
}

/** The body as JSON, or as it came when it is not JSON (the binding answers that with a parse error). */
function parsedJson(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}
