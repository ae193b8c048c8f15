/**
 * Outbound webhook calls for push notifications: check where a URL leads, then POST a JSON body to
 * exactly the addresses that were checked, with every part of the exchange bounded.
 *
 * It knows nothing of A2A tasks: the push delivery job serialises the notification, adds its
 * headers (`Authorization`, `X-A2A-Notification-Token`, `Content-Type`) and decides what to retry.
 *
 * - No second DNS lookup: the socket is opened to a checked IP address by the {@link Connector}; the
 *   HTTP request rides on that socket, and its `Host` header and TLS server name carry the URL's
 *   host, so virtual hosting and certificate checks still use the name (RFC 9110 §7.2, RFC 6066 §3).
 * - No redirects: a 3xx is a result, not followed (a redirect could point anywhere).
 * - No agent, no proxy, no connection reuse: each call is one connection, closed after the answer.
 * - Bounded: connect time (TCP and TLS), total time, and response size.
 */

import { type ClientRequest, request, validateHeaderName, validateHeaderValue } from 'node:http';
import { type LookupFunction, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { A2AError } from '../errors.js';
import {
  type CheckedDestination,
  checkDestination,
  type DestinationPolicy,
  isCheckedDestination,
} from './destination.js';
import { parseRetryAfter } from './retry-after.js';

export {
  type CheckedAddress,
  type CheckedDestination,
  checkDestination,
  type DestinationPolicy,
  isCheckedDestination,
  type ResolvedAddress,
  type Resolver,
} from './destination.js';

/** Trusted CA certificates in PEM, as `tls.connect`'s `ca` takes them. */
export type TlsCa = string | Buffer | readonly (string | Buffer)[];

/** One connection attempt, to one checked address. */
export interface ConnectTarget {
  /** The checked IP address to connect to. Never a name. */
  readonly address: string;
  readonly family: 4 | 6;
  readonly port: number;
  /** Whether to speak TLS (an `https:` URL). */
  readonly tls: boolean;
  /**
   * The TLS server name (SNI) and the name the certificate must be valid for: the URL's host name.
   * `undefined` when the URL's host is an IP address (RFC 6066 §3 forbids an IP as server name):
   * then the certificate must be valid for that IP.
   */
  readonly servername: string | undefined;
  /** CA certificates that replace the default trust store, when given. */
  readonly ca: TlsCa | undefined;
  /** Aborted when the attempt times out or the call is canceled: stop, and destroy any socket. */
  readonly signal: AbortSignal;
}

/**
 * Opens a connection and resolves once it is ready for HTTP (for TLS: after the handshake and the
 * certificate check). Tests inject one to see which address is dialled, or to answer from a local
 * server.
 */
export type Connector = (target: ConnectTarget) => Promise<Socket>;

export interface PostJsonOptions {
  /**
   * Request headers (e.g. `authorization`, `x-a2a-notification-token`, `content-type`). `host`,
   * `content-length`, `transfer-encoding` and `connection` are set by `postJson` and refused here.
   * @default { 'content-type': 'application/json' }
   */
  readonly headers?: Readonly<Record<string, string>>;
  /** Per address tried: until the TCP connection (and the TLS handshake) is up. @default 5000 */
  readonly connectTimeoutMs?: number;
  /** The whole call, from the first connection attempt to the answer's last byte. @default 10000 */
  readonly timeoutMs?: number;
  /** The most response body bytes read; past it the connection is destroyed (`too-large`). @default 65536 */
  readonly maxResponseBytes?: number;
  /**
   * CA certificates to trust instead of the default store, for receivers with a private CA. This is
   * the only TLS knob: certificate and host name checks cannot be turned off.
   * @default undefined (Node's bundled Mozilla CA store)
   */
  readonly ca?: TlsCa;
  /** Cancels the call (e.g. at shutdown); the result is an `aborted` failure. */
  readonly signal?: AbortSignal;
  /** @default a plain TCP or TLS connection to the target address */
  readonly connector?: Connector;
  /** The clock for an HTTP-date `Retry-After`. @default Date.now */
  readonly now?: () => number;
}

/** The receiver answered (any status: a 3xx is not followed, a 5xx is not retried here). */
export interface WebhookResponse {
  readonly type: 'response';
  readonly status: number;
  /** From `Retry-After` (RFC 9110 §10.2.3), seconds or an HTTP-date, in milliseconds from now. */
  readonly retryAfterMs?: number;
  /** The start of the body (at most {@link BODY_SNIPPET_BYTES} bytes), as UTF-8, for logs. */
  readonly bodySnippet: string;
  /** The address the request went to. */
  readonly address: string;
}

export type WebhookFailureKind =
  /** The destination policy refused the URL (`deliverJson` only). Retrying will not help. */
  | 'refused'
  /** The host did not resolve (`deliverJson` only); DNS may recover. */
  | 'unresolvable'
  /** `phase: 'connect'`: no connection within `connectTimeoutMs` (or `timeoutMs`); `'response'`: no complete answer within `timeoutMs`. */
  | 'timeout'
  | 'connection-refused'
  /** The TLS handshake failed: untrusted or expired certificate, wrong host name… */
  | 'tls'
  /** Any other connection or protocol error (reset, unreachable, a malformed answer). */
  | 'network'
  /** The answer's body was longer than `maxResponseBytes`; `status` says what the receiver answered. */
  | 'too-large'
  /** The caller's `signal` canceled the call. */
  | 'aborted';

export interface WebhookFailure {
  readonly type: 'failure';
  readonly kind: WebhookFailureKind;
  /** `PUSH_URL_REFUSED` for `refused` and `unresolvable`, else `PUSH_DELIVERY_FAILED`; the message says what to do. */
  readonly error: A2AError;
  readonly phase?: 'connect' | 'response';
  /** The address last dialled, when one was. */
  readonly address?: string;
  /** Set when the answer's status line had arrived. */
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly bodySnippet?: string;
}

export type WebhookResult = WebhookResponse | WebhookFailure;

export const BODY_SNIPPET_BYTES = 1024;

const DEFAULTS = { connectTimeoutMs: 5_000, timeoutMs: 10_000, maxResponseBytes: 65_536 } as const;

/** Set by postJson: a caller's value would desynchronise the request or point it elsewhere. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);

/** Verification errors of OpenSSL's X.509 checks as Node reports them (`tls` docs, "X509 certificate error codes"). */
const X509_ERROR_CODES = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_CRL',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECRYPT_CRL_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CRL_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CRL_NOT_YET_VALID',
  'CRL_HAS_EXPIRED',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'ERROR_IN_CRL_LAST_UPDATE_FIELD',
  'ERROR_IN_CRL_NEXT_UPDATE_FIELD',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_CHAIN_TOO_LONG',
  'CERT_REVOKED',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
]);

/** Refuses any attempt to resolve a name: the default connector is only ever given IP addresses. */
const noLookup: LookupFunction = (hostname, _options, callback) => {
  callback(
    Object.assign(new Error(`postJson never resolves names, yet was asked to resolve "${hostname}"`), {
      code: 'ENOTFOUND',
    }),
    '',
    0,
  );
};

/** The default {@link Connector}: TCP, or TLS with the certificate checked against `servername`. */
export const defaultConnector: Connector = (target) =>
  new Promise<Socket>((resolve, reject) => {
    const common = { host: target.address, port: target.port, family: target.family, lookup: noLookup };
    // tls.connect checks the certificate against `servername`, else `host` (here the IP).
    const socket: Socket = target.tls
      ? tlsConnect({
          ...common,
          ...(target.servername === undefined ? {} : { servername: target.servername }),
          ...(target.ca === undefined ? {} : { ca: target.ca as string | Buffer | (string | Buffer)[] }),
          ALPNProtocols: ['http/1.1'],
        })
      : netConnect(common);
    const onAbort = (): void => {
      socket.destroy();
      reject(target.signal.reason);
    };
    if (target.signal.aborted) return onAbort();
    target.signal.addEventListener('abort', onAbort, { once: true });
    socket.once(target.tls ? 'secureConnect' : 'connect', () => {
      target.signal.removeEventListener('abort', onAbort);
      socket.removeListener('error', onError);
      resolve(socket);
    });
    const onError = (error: Error): void => {
      target.signal.removeEventListener('abort', onAbort);
      socket.destroy();
      reject(error);
    };
    socket.once('error', onError);
  });

interface Settings {
  readonly connectTimeoutMs: number;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly connector: Connector;
  readonly now: () => number;
}

function invalidOption(message: string): A2AError {
  return new A2AError('INVALID_OPTIONS', `postJson: ${message}.`);
}

function settingsOf(options: PostJsonOptions): Settings {
  const positive = (name: keyof typeof DEFAULTS): number => {
    const value = options[name] ?? DEFAULTS[name];
    // setTimeout's ceiling: a larger delay fires at once.
    if (!Number.isSafeInteger(value) || value < 1 || value > 2_147_483_647) {
      throw invalidOption(`${name} must be a whole number from 1 to 2147483647, got ${String(value)}`);
    }
    return value;
  };
  const connector = options.connector ?? defaultConnector;
  if (typeof connector !== 'function') throw invalidOption('connector must be a function (target) => Promise<Socket>');
  return {
    connectTimeoutMs: positive('connectTimeoutMs'),
    timeoutMs: positive('timeoutMs'),
    maxResponseBytes: positive('maxResponseBytes'),
    connector,
    now: options.now ?? Date.now,
  };
}

function requestHeaders(
  destination: CheckedDestination,
  given: Readonly<Record<string, string>> | undefined,
  length: number,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given ?? {})) {
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower)) throw invalidOption(`leave out the "${name}" header: postJson sets it`);
    try {
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch (error) {
      throw new A2AError(
        'INVALID_OPTIONS',
        `postJson: header "${name}" is not a valid HTTP header: ${String(error)}.`,
        {
          cause: error,
        },
      );
    }
    if (typeof value !== 'string') throw invalidOption(`header "${name}" must be a string`);
    headers[lower] = value;
  }
  headers['content-type'] ??= 'application/json';
  headers.host = destination.hostHeader;
  headers['content-length'] = String(length);
  // One request per connection: nothing to pool, and the receiver learns it may close.
  headers.connection = 'close';
  return headers;
}

interface FailureDetails {
  readonly address?: string;
  readonly phase?: 'connect' | 'response';
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly bodySnippet?: string;
  readonly cause?: unknown;
}

/** Every delivery failure's message, in one place. */
function deliveryFailure(
  kind: Exclude<WebhookFailureKind, 'refused' | 'unresolvable'>,
  destination: CheckedDestination,
  settings: Settings,
  details: FailureDetails,
): WebhookFailure {
  const where = `${details.address ?? destination.hostname} port ${destination.port}`;
  const code = (details.cause as { code?: unknown } | undefined)?.code;
  const causeText =
    details.cause instanceof Error ? `${typeof code === 'string' ? `${code}: ` : ''}${details.cause.message}` : '';
  const status = details.status === undefined ? 'no status yet' : `status ${details.status}`;
  let message: string;
  switch (kind) {
    case 'timeout':
      message =
        details.phase === 'connect'
          ? `no connection to ${where} within ${Math.min(settings.connectTimeoutMs, settings.timeoutMs)} ms; check that the receiver is up and reachable from this server, or raise connectTimeoutMs.`
          : `no complete answer from ${where} within ${settings.timeoutMs} ms (${status}); a receiver should answer at once and do its work later, or raise timeoutMs.`;
      break;
    case 'connection-refused':
      message = `${where} refused the connection; check that the receiver listens on that port.`;
      break;
    case 'tls':
      message = `the TLS handshake with ${where} failed (${causeText}); the receiver needs a certificate valid for ${destination.hostname} from a trusted CA (pass ca for a private CA).`;
      break;
    case 'network':
      message = `the exchange with ${where} failed (${causeText || 'connection closed'}); retry later, and check the receiver if it persists.`;
      break;
    case 'too-large':
      message = `the answer from ${where} (${status}) is longer than ${settings.maxResponseBytes} bytes and was cut; a receiver should answer with a short body, or raise maxResponseBytes.`;
      break;
    case 'aborted':
      message = `the call to ${where} was canceled by the caller.`;
      break;
  }
  const error = new A2AError('PUSH_DELIVERY_FAILED', `Push delivery to ${destination.hostname} failed: ${message}`, {
    data: {
      kind,
      host: destination.hostname,
      port: destination.port,
      ...(details.address === undefined ? {} : { address: details.address }),
      ...(details.phase === undefined ? {} : { phase: details.phase }),
      ...(details.status === undefined ? {} : { status: details.status }),
    },
    cause: details.cause,
  });
  const { cause: _cause, ...rest } = details;
  return { type: 'failure', kind, error, ...rest };
}

function connectErrorKind(error: unknown): 'connection-refused' | 'tls' | 'network' {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ECONNREFUSED') return 'connection-refused';
  if (
    typeof code === 'string' &&
    (code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_') || X509_ERROR_CODES.has(code))
  ) {
    return 'tls';
  }
  return 'network';
}

/**
 * Settles with the connector's socket, or rejects when `signal` aborts first; a socket that arrives
 * after that is destroyed, so a connector that ignores its signal cannot leak one.
 */
function untilAborted(connecting: Promise<Socket>, signal: AbortSignal): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    connecting.then(
      (socket) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) socket.destroy();
        else resolve(socket);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

type Attempt = { readonly socket: Socket } | { readonly failure: WebhookFailure };

async function connectTo(
  destination: CheckedDestination,
  address: CheckedDestination['addresses'][number],
  settings: Settings,
  ca: TlsCa | undefined,
  call: AbortSignal,
): Promise<Attempt> {
  const attempt = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    attempt.abort(new Error('connect timeout'));
  }, settings.connectTimeoutMs);
  const onCallAbort = (): void => attempt.abort(call.reason);
  call.addEventListener('abort', onCallAbort, { once: true });
  const target: ConnectTarget = {
    address: address.address,
    family: address.family,
    port: destination.port,
    tls: destination.protocol === 'https:',
    // RFC 6066 §3: no trailing dot in a server name.
    servername: destination.isIpLiteral ? undefined : destination.hostname.replace(/\.$/, ''),
    ca,
    signal: attempt.signal,
  };
  try {
    // A connector that throws instead of rejecting is handled the same way.
    return {
      socket: await untilAborted(
        Promise.resolve().then(() => settings.connector(target)),
        attempt.signal,
      ),
    };
  } catch (error) {
    const details = { address: address.address, phase: 'connect' as const, cause: error };
    if (timedOut) return { failure: deliveryFailure('timeout', destination, settings, details) };
    return { failure: deliveryFailure(connectErrorKind(error), destination, settings, details) };
  } finally {
    clearTimeout(timer);
    call.removeEventListener('abort', onCallAbort);
  }
}

function exchange(
  socket: Socket,
  address: string,
  destination: CheckedDestination,
  headers: Record<string, string>,
  payload: Uint8Array,
  settings: Settings,
  call: AbortSignal,
  timedOut: () => boolean,
): Promise<WebhookResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let status: number | undefined;
    let retryAfterMs: number | undefined;
    let settled = false;
    const snippet = (): string => Buffer.concat(chunks).subarray(0, BODY_SNIPPET_BYTES).toString('utf8');
    const known = (): { status?: number; retryAfterMs?: number } => ({
      ...(status === undefined ? {} : { status }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
    let req: ClientRequest | undefined;
    const settle = (result: WebhookResult): void => {
      if (settled) return;
      settled = true;
      call.removeEventListener('abort', onAbort);
      req?.destroy();
      socket.destroy();
      resolve(result);
    };
    const fail = (kind: 'timeout' | 'network' | 'too-large' | 'aborted', cause?: unknown): void =>
      settle(
        deliveryFailure(kind, destination, settings, {
          address,
          ...(kind === 'timeout' ? { phase: 'response' as const } : {}),
          ...known(),
          ...(status === undefined ? {} : { bodySnippet: snippet() }),
          cause,
        }),
      );
    const onAbort = (): void => fail(timedOut() ? 'timeout' : 'aborted');

    // Until the request takes the socket over, an error on it must not go unheard (an 'error'
    // event without a listener would crash the process).
    socket.on('error', (error) => fail('network', error));
    try {
      req = request({
        method: 'POST',
        host: address,
        port: destination.port,
        path: destination.path,
        headers,
        setHost: false,
        // The socket is already connected to the checked address: no agent, no lookup, no proxy.
        createConnection: () => socket,
      });
    } catch (error) {
      return fail('network', error);
    }
    req.on('error', (error) => fail('network', error));
    req.on('response', (res) => {
      status = res.statusCode;
      const retryAfter = res.headers['retry-after'];
      retryAfterMs = parseRetryAfter(typeof retryAfter === 'string' ? retryAfter : undefined, settings.now());
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > settings.maxResponseBytes) return fail('too-large');
      res.on('data', (chunk: Buffer) => {
        const room = settings.maxResponseBytes - bytes;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          bytes += room;
          return fail('too-large');
        }
        chunks.push(chunk);
        bytes += chunk.length;
      });
      res.on('end', () =>
        settle({ type: 'response', status: status ?? 0, ...known(), bodySnippet: snippet(), address }),
      );
      res.on('error', (error) => fail('network', error));
      res.on('close', () => {
        if (!res.complete) fail('network');
      });
    });
    if (call.aborted) return onAbort();
    call.addEventListener('abort', onAbort, { once: true });
    req.end(payload);
  });
}

/**
 * POSTs `body` (JSON text) to a destination from {@link checkDestination}, connecting only to the
 * addresses it checked, in order, until one connects. Never rejects for a delivery problem: the
 * receiver's answer (whatever its status) or a {@link WebhookFailure} is the result. Throws
 * `INVALID_OPTIONS` for a destination not made by `checkDestination`, or bad options or headers.
 */
export async function postJson(
  destination: CheckedDestination,
  body: string | Uint8Array,
  options: PostJsonOptions = {},
): Promise<WebhookResult> {
  if (!isCheckedDestination(destination)) {
    throw invalidOption(
      'the destination must be the one checkDestination(url, policy) returned, which holds the checked addresses; call it first',
    );
  }
  const settings = settingsOf(options);
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const headers = requestHeaders(destination, options.headers, payload.byteLength);

  const call = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    call.abort(new Error('timeout'));
  }, settings.timeoutMs);
  const onCallerAbort = (): void => call.abort(options.signal?.reason);
  if (options.signal?.aborted) onCallerAbort();
  else options.signal?.addEventListener('abort', onCallerAbort, { once: true });
  try {
    let last: WebhookFailure | undefined;
    for (const address of destination.addresses) {
      if (call.signal.aborted) break;
      const attempt = await connectTo(destination, address, settings, options.ca, call.signal);
      if ('socket' in attempt) {
        return await exchange(
          attempt.socket,
          address.address,
          destination,
          headers,
          payload,
          settings,
          call.signal,
          () => timedOut,
        );
      }
      last = attempt.failure;
    }
    if (call.signal.aborted) {
      const details = { ...(last?.address === undefined ? {} : { address: last.address }), phase: 'connect' as const };
      return deliveryFailure(timedOut ? 'timeout' : 'aborted', destination, settings, details);
    }
    return last!;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onCallerAbort);
  }
}

/**
 * {@link checkDestination} then {@link postJson}: what a delivery does each time, since DNS may
 * have changed since the URL was registered. A refused URL is a `refused` (or `unresolvable`)
 * failure rather than a thrown error. (The time spent resolving is not part of `timeoutMs`.)
 */
export async function deliverJson(
  url: string | URL,
  policy: DestinationPolicy,
  body: string | Uint8Array,
  options: PostJsonOptions = {},
): Promise<WebhookResult> {
  let destination: CheckedDestination;
  try {
    destination = await checkDestination(url, policy);
  } catch (error) {
    if (A2AError.is(error) && error.code === 'PUSH_URL_REFUSED') {
      const unresolvable = (error.data as { reason?: unknown } | undefined)?.reason === 'unresolvable';
      return { type: 'failure', kind: unresolvable ? 'unresolvable' : 'refused', error };
    }
    throw error;
  }
  return postJson(destination, body, options);
}
