/**
 * The HTTP+JSON binding (A2A §3.5.6 in 0.3), independent of any HTTP framework: each version's
 * mapping lists its routes; this file matches a request to one, builds the operation's parameters
 * from the path, query and body, and hands them to the same dispatch as JSON-RPC.
 */

import { A2AError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { RestMapping, RestRequest, RestRoute } from '../codec.js';
import type { CallContext, ProtocolVersion } from '../context.js';
import { type Dispatcher, publicError } from '../dispatch.js';
import type { StreamFrame } from '../operations.js';

export type RestMethod = RestRoute['method'];

interface CompiledRoute {
  readonly route: RestRoute;
  readonly pattern: RegExp;
  readonly names: readonly string[];
}

export interface RestMatch {
  readonly route: RestRoute;
  readonly path: Readonly<Record<string, string>>;
}

/**
 * Turns `/v1/tasks/{id}:cancel` into a regular expression. A parameter matches one path segment
 * (no `/`); a literal suffix after it (`:cancel`) binds to the end of the segment, so an id may
 * itself contain `:`.
 */
function compile(route: RestRoute): CompiledRoute {
  const names: string[] = [];
  let source = '';
  let rest = route.path;
  for (let match = /\{(\w+)\}/.exec(rest); match !== null; match = /\{(\w+)\}/.exec(rest)) {
    source += escapeRegExp(rest.slice(0, match.index));
    source += '([^/]+)';
    names.push(match[1] as string);
    rest = rest.slice(match.index + match[0].length);
  }
  source += escapeRegExp(rest);
  return { route, pattern: new RegExp(`^${source}$`), names };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A route table: which route (and path parameters) a method and path select. */
export class RestRouter {
  readonly #routes: readonly CompiledRoute[];
  /**
   * The routes of each method, in the same order: a request's path is tried against its method's
   * routes only (a `GET /v1/tasks/{id}` was tried against every pattern, some 4 % of a REST get:
   * bench/PROFILE.md). Every route is tried only to word a not-found answer.
   */
  readonly #routesByMethod = new Map<string, CompiledRoute[]>();

  constructor(routes: readonly RestRoute[]) {
    // Routes with a literal suffix after a parameter come first: `/v1/tasks/{id}:subscribe`
    // must win over `/v1/tasks/{id}`, whose parameter would also take "abc:subscribe".
    this.#routes = routes
      .map(compile)
      .sort((a, b) => Number(hasSuffix(b.route.path)) - Number(hasSuffix(a.route.path)));
    for (const compiled of this.#routes) {
      const ofMethod = this.#routesByMethod.get(compiled.route.method);
      if (ofMethod === undefined) this.#routesByMethod.set(compiled.route.method, [compiled]);
      else ofMethod.push(compiled);
    }
  }

  /**
   * The route for `method` and `path` (relative to the binding's base, without the query string).
   * @throws {A2AError} METHOD_NOT_FOUND when no route matches, or INVALID_REQUEST for a malformed
   *   percent-encoding in the path.
   */
  match(method: string, path: string): RestMatch {
    for (const { route, pattern, names } of this.#routesByMethod.get(method) ?? []) {
      const found = pattern.exec(path);
      if (found === null) continue;
      const params: Record<string, string> = {};
      for (let i = 0; i < names.length; i++) params[names[i] as string] = decodeSegment(found[i + 1] as string);
      return { route, path: params };
    }
    // No route of this method: does the path exist under another one?
    const allowed = this.#routes.some(({ pattern }) => pattern.test(path));
    throw new A2AError(
      'METHOD_NOT_FOUND',
      allowed
        ? `Method not allowed: ${method} ${path} is not an A2A operation; see the agent's HTTP+JSON routes.`
        : `Not found: ${method} ${path} is not an A2A operation.`,
      { data: { method, path } },
    );
  }

  /** Every route, for a framework to register. */
  get routes(): readonly RestRoute[] {
    return this.#routes.map((r) => r.route);
  }
}

function hasSuffix(path: string): boolean {
  return /\}[^/]/.test(path);
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new A2AError(
      'INVALID_REQUEST',
      `Invalid Request: the path segment "${segment}" is not valid percent-encoding.`,
    );
  }
}

/** An answer that is one JSON body. */
export interface RestReply {
  readonly type: 'response';
  readonly status: number;
  readonly body: unknown;
}

/** An answer that is a stream of SSE events, each one stream item in the version's JSON. */
export class RestStream {
  readonly type = 'stream';

  constructor(
    readonly frames: AsyncGenerator<StreamFrame>,
    readonly mapping: RestMapping,
    readonly log: Logger | undefined,
  ) {}

  data(frame: StreamFrame): string {
    return JSON.stringify(this.mapping.codec.encodeStreamItem(frame.result));
  }

  /** The event that reports a failure after the stream started. */
  error(error: unknown): { event?: string; data: string } {
    const { event, data } = this.mapping.streamError(publicError(error, this.log));
    return event === undefined ? { data: JSON.stringify(data) } : { event, data: JSON.stringify(data) };
  }
}

export type RestOutcome = RestReply | RestStream;

export interface RestBindingOptions {
  dispatcher: Dispatcher;
  /** Each protocol version served, as HTTP+JSON. */
  mappings: Readonly<Partial<Record<ProtocolVersion, RestMapping>>>;
  logger?: Logger;
}

export class RestBinding {
  readonly #dispatcher: Dispatcher;
  readonly #mappings: Readonly<Partial<Record<ProtocolVersion, RestMapping>>>;
  readonly #routers = new Map<ProtocolVersion, RestRouter>();
  readonly #log: Logger | undefined;

  constructor(options: RestBindingOptions) {
    this.#dispatcher = options.dispatcher;
    this.#mappings = options.mappings;
    this.#log = options.logger;
    for (const [version, mapping] of Object.entries(options.mappings) as [ProtocolVersion, RestMapping][]) {
      this.#routers.set(version, new RestRouter(mapping.routes));
    }
  }

  /** The mapping of a version served, if it is served. */
  mapping(version: ProtocolVersion): RestMapping | undefined {
    return this.#mappings[version];
  }

  /** The router of one version's routes. */
  router(version: ProtocolVersion): RestRouter | undefined {
    return this.#routers.get(version);
  }

  /**
   * The route `method` and `path` (relative to the binding's base) select among `version`'s
   * routes, or the error to answer with: MethodNotFound, or VersionNotSupported when the path is a
   * route of another version (A2A 1.0 §3.6: the `A2A-Version` header picks the version, and a
   * missing one means 0.3), saying which header the route needs.
   */
  resolve(version: ProtocolVersion, method: string, path: string): { match: RestMatch } | { error: A2AError } {
    const router = this.#routers.get(version);
    if (router === undefined) {
      return { error: publicError(new A2AError('INTERNAL', `No mapping for A2A version ${version}.`), this.#log) };
    }
    try {
      return { match: router.match(method, path) };
    } catch (error) {
      for (const [other, otherRouter] of this.#routers) {
        if (other === version) continue;
        try {
          otherRouter.match(method, path);
        } catch {
          continue;
        }
        return {
          error: new A2AError(
            'VERSION_NOT_SUPPORTED',
            `Version not supported: ${method} ${path} is an A2A ${other} route, and this request speaks ${version}; send it with the header "A2A-Version: ${other}"${other === '0.3' ? ' (or without the header)' : ''}.`,
            { data: { requested: version, route: other } },
          ),
        };
      }
      return { error: publicError(error, this.#log) };
    }
  }

  /** Runs the operation of a resolved route. Never throws: every failure becomes the version's error answer. */
  async handleMatch(match: RestMatch, request: Omit<RestRequest, 'path'>, ctx: CallContext): Promise<RestOutcome> {
    const mapping = this.#mappings[ctx.version] as RestMapping;
    const params = match.route.params({ ...request, path: match.path });
    const dispatched = await this.#dispatcher.dispatch(mapping.codec, match.route.operation, params, ctx);
    switch (dispatched.kind) {
      case 'result':
        return { type: 'response', status: 200, body: dispatched.result };
      case 'stream':
        return new RestStream(dispatched.frames, mapping, this.#log);
      case 'error':
        // REST clients read a refused stream from the HTTP status, before any event.
        return this.#errorReply(mapping, dispatched.error);
    }
  }

  /**
   * Handles one request: `method` and `path` (relative to the binding's base) select the route
   * among those of `ctx.version`. Never throws: every failure becomes the version's error answer.
   */
  async handle(
    method: string,
    path: string,
    request: Omit<RestRequest, 'path'>,
    ctx: CallContext,
  ): Promise<RestOutcome> {
    const mapping = this.#mappings[ctx.version];
    if (mapping === undefined) {
      const error = publicError(new A2AError('INTERNAL', `No mapping for A2A version ${ctx.version}.`), this.#log);
      return { type: 'response', status: 500, body: { message: error.message } };
    }
    const resolved = this.resolve(ctx.version, method, path);
    if ('error' in resolved) return this.#errorReply(mapping, resolved.error);
    return this.handleMatch(resolved.match, request, ctx);
  }

  #errorReply(mapping: RestMapping, error: A2AError): RestReply {
    const { status, body } = mapping.error(error);
    return { type: 'response', status, body };
  }
}
