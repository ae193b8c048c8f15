/**
 * The caller's side of every operation, built once per request at the edge (the binding) and
 * passed through dispatch to the operation, the runtime, the agent (`turn.caller`) and the store
 * calls made on the caller's behalf. Nothing below the edge looks at HTTP.
 */

/** The A2A protocol version a call speaks. A 0.3 client sends no `A2A-Version` header. */
export type ProtocolVersion = '0.3' | '1.0';

/** The transport binding a call came through, named as agent cards name them (§5.5.5 `transport`). */
export type BindingName = 'JSONRPC' | 'HTTP+JSON' | 'GRPC';

/** Who is calling, as authentication established it. */
export interface Principal {
  /** A stable identifier of the caller (a user, a service account). */
  readonly id: string;
  /** What the authentication learned about it, e.g. a JWT's claims. */
  readonly claims?: Readonly<Record<string, unknown>>;
  /** Roles the caller holds, for access rules (e.g. a JWT's `roles` claim). */
  readonly roles?: readonly string[];
  /** OAuth scopes the caller was granted, for access rules (e.g. a JWT's `scope` claim). */
  readonly scopes?: readonly string[];
}

/**
 * What a stream needs to learn that its client went away: the part of an `AbortSignal` the runtime
 * reads. An AbortSignal is one; the Fastify plugin passes a lighter object of its own.
 */
export interface StreamSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export interface CallContext {
  readonly version: ProtocolVersion;
  readonly binding: BindingName;
  /** The authenticated caller; undefined when the agent does not authenticate. */
  readonly principal: Principal | undefined;
  /** The tenant the request addressed, where the binding carries one. */
  readonly tenant: string | undefined;
  /**
   * Aborted when the client goes away; ends streams. Only streaming operations read it, and a
   * binding may create it on that first read (a getter), so a plain request costs nothing for it.
   */
  readonly signal: StreamSignal | undefined;
  /** The SSE `Last-Event-ID` of a reconnecting stream: resume after that event sequence. */
  readonly lastEventId: number | undefined;
  /**
   * Aborted when the client of a plain (not streaming) request that the runtime holds goes away:
   * a GetTask long-poll (A2A 1.1 draft §3.2.7) stops waiting then. Read only by such a request; a
   * binding without one leaves it out, and the wait ends at its bound.
   */
  readonly holdSignal?: StreamSignal | undefined;
}

/** What an agent learns of the caller of the message that started its turn (`turn.caller`). */
export interface Caller {
  readonly version: ProtocolVersion;
  readonly binding: BindingName;
  readonly principal: Principal | undefined;
  readonly tenant: string | undefined;
}

export interface CallContextInit {
  version?: ProtocolVersion;
  binding?: BindingName;
  principal?: Principal;
  tenant?: string;
  signal?: StreamSignal;
  lastEventId?: number;
}

/**
 * A context for calls made outside any binding: tests, scripts, an application calling the
 * runtime directly. Defaults: A2A 0.3 over JSON-RPC, no principal, no tenant.
 */
export function callContext(init: CallContextInit = {}): CallContext {
  return {
    version: init.version ?? '0.3',
    binding: init.binding ?? 'JSONRPC',
    principal: init.principal,
    tenant: init.tenant,
    signal: init.signal,
    lastEventId: init.lastEventId,
  };
}

/** The caller as an agent sees it: the identity part of the context, without the request's signal. */
export function callerOf(ctx: CallContext): Caller {
  return { version: ctx.version, binding: ctx.binding, principal: ctx.principal, tenant: ctx.tenant };
}
