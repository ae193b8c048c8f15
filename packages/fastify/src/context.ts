/**
 * The edge: what the plugin reads off an HTTP request to build the {@link CallContext} every
 * operation gets. Nothing past this file looks at headers.
 */

import {
  A2AError,
  type BindingName,
  type CallContext,
  type Principal,
  type ProtocolVersion,
  type StreamSignal,
} from '@fastify-a2a/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { principalOfRequest } from './auth/authentication.js';

/** The protocol versions served, as `A2A-Version` names them (major.minor). */
export const SERVED_VERSIONS: readonly ProtocolVersion[] = ['0.3', '1.0'];

/** The service parameter naming the version a client speaks (A2A 1.0 §3.6), as a header or a query parameter. */
export const VERSION_HEADER = 'a2a-version';
const VERSION_QUERY = 'A2A-Version';

/**
 * The protocol version a request asks for (A2A 1.0 §3.6.2): the `A2A-Version` header, else the
 * query parameter of the same name; absent or empty means 0.3 (clients of 0.3 send neither). A
 * patch number is ignored (`1.0.1` is 1.0).
 * @throws {A2AError} VERSION_NOT_SUPPORTED for a version this server does not serve.
 */
export function requestedVersion(request: FastifyRequest): ProtocolVersion {
  const header = request.headers[VERSION_HEADER];
  let value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) {
    const query = (request.query as Record<string, unknown> | undefined)?.[VERSION_QUERY];
    value = typeof query === 'string' ? query : undefined;
  }
  const text = value?.trim() ?? '';
  if (text === '') return '0.3';
  // What clients send, answered without the pattern's match array and strings.
  if (text === '1.0' || text === '0.3') return text;
  const match = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(text);
  const version = match === null ? undefined : `${Number(match[1])}.${Number(match[2])}`;
  if (version === '0.3' || version === '1.0') return version;
  throw new A2AError(
    'VERSION_NOT_SUPPORTED',
    `Version not supported: A2A-Version "${text}"; this agent serves ${SERVED_VERSIONS.join(' and ')} (send A2A-Version: 1.0, or no header for 0.3).`,
    { data: { requested: text, supported: SERVED_VERSIONS.join(', ') } },
  );
}

/**
 * Ends one stream when its client goes away or the server closes: the part of an AbortSignal the
 * runtime uses ({@link StreamSignal}), without an AbortController's weight (see bench/PROFILE.md).
 */
export class StreamEnd implements StreamSignal {
  aborted = false;
  /** One listener as itself, an array only for more (a stream has one: its follower's). */
  #listeners: (() => void) | (() => void)[] | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.#listeners;
    if (listeners === undefined) this.#listeners = listener;
    else if (Array.isArray(listeners)) listeners.push(listener);
    else this.#listeners = [listeners, listener];
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.#listeners;
    if (listeners === listener) {
      this.#listeners = undefined;
      return;
    }
    if (!Array.isArray(listeners)) return;
    const index = listeners.indexOf(listener);
    if (index >= 0) listeners.splice(index, 1);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (typeof listeners === 'function') listeners();
    else for (const listener of listeners ?? []) listener();
  }
}

/** SSE `Last-Event-ID` (a sequence number this server sent as an event id), or undefined. */
function lastEventIdOf(request: FastifyRequest): number | undefined {
  const header = request.headers['last-event-id'];
  return typeof header === 'string' && /^\d{1,15}$/.test(header) ? Number(header) : undefined;
}

/**
 * One request's context. Its stream signal is made on first read: only streaming operations read
 * it, so a plain request creates none.
 */
export class RequestContext implements CallContext {
  readonly version: ProtocolVersion;
  readonly binding: BindingName;
  readonly principal: Principal | undefined;
  readonly tenant: string | undefined;
  readonly lastEventId: number | undefined;
  #streamEnd: StreamEnd | undefined;
  #holdEnd: StreamEnd | undefined;
  /** The reply, for {@link holdSignal}: undefined where no reply is at hand. */
  readonly #reply: FastifyReply | undefined;

  constructor(
    /** The HTTP request: for the application's own callbacks (the extended card's), never read below the edge. */
    readonly request: FastifyRequest,
    binding: BindingName,
    version: ProtocolVersion,
    tenant?: string,
    reply?: FastifyReply,
  ) {
    this.#reply = reply;
    this.binding = binding;
    this.version = version;
    // Found by the authenticate option's hook before the body was read; undefined when it is off.
    this.principal = principalOfRequest(request);
    // The HTTP+JSON binding of 1.0 carries it in the path (`/{tenant}/…`).
    this.tenant = tenant;
    this.lastEventId = lastEventIdOf(request);
  }

  get signal(): StreamEnd {
    this.#streamEnd ??= new StreamEnd();
    return this.#streamEnd;
  }

  /**
   * Aborted when the client goes away from a request the runtime holds (a GetTask long-poll, A2A
   * 1.1 draft §3.2.7): made on first read, so no other request pays for it.
   */
  get holdSignal(): StreamEnd | undefined {
    const reply = this.#reply;
    if (reply === undefined) return undefined;
    if (this.#holdEnd === undefined) {
      const end = new StreamEnd();
      this.#holdEnd = end;
      // The response's close: the client went away, or the answer was sent (then nothing waits).
      reply.raw.once('close', () => end.abort());
    }
    return this.#holdEnd;
  }

  /** The stream signal if an operation asked for one. */
  get streamEnd(): StreamEnd | undefined {
    return this.#streamEnd;
  }
}

/**
 * The request of a call, for the application's callbacks (the extended card's function): the
 * Fastify request, or the stand-in a listener beside Fastify puts on its context as `request` (the
 * gRPC binding's: the metadata as `headers`, `id`, `log`).
 */
export function requestOf(ctx: CallContext): FastifyRequest | undefined {
  if (ctx instanceof RequestContext) return ctx.request;
  const standIn = (ctx as { request?: unknown }).request;
  return standIn !== null && typeof standIn === 'object' ? (standIn as FastifyRequest) : undefined;
}

/** Whether the client reads `text/event-stream` (the `Accept` header names it, or any type). */
export function acceptsEventStream(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return typeof accept === 'string' && accept.includes('text/event-stream');
}
