/**
 * One HTTP exchange with retries: the caller's headers (credentials read from their sources, read
 * again once after a 401), a per-request timeout, a whole-call deadline and the caller's
 * AbortSignal, and bounded exponential backoff with full jitter on the failures a retry can cure —
 * no connection, a connection dropped before the answer was read, 502/503/504 — honouring
 * `Retry-After` (RFC 9110 §10.2.3). Retrying an A2A send is safe because its messageId is fixed
 * before the first try and a server treats a retried messageId as the same message.
 */

import { A2AClientError } from './errors.js';
import type { HeaderSet } from './headers.js';

export interface RetryOptions {
  /** Tries in all, the first included. @default 4 */
  attempts?: number;
  /** The first backoff; each next one doubles, up to `maxDelayMs`. @default 250 */
  baseDelayMs?: number;
  /** @default 5000 */
  maxDelayMs?: number;
  /**
   * The longest `Retry-After` waited for; a server asking for more fails the call at once (else a
   * call without a timeout could sleep an hour per try). @default 60000
   */
  maxRetryAfterMs?: number;
}

export interface CallOptions {
  /** Gives up the whole call (all tries, a whole stream) after this long. */
  timeoutMs?: number | undefined;
  /** Cancels the call. */
  signal?: AbortSignal | undefined;
  /**
   * The answer may take as long as the agent works (a blocking send): no per-request timeout, only
   * the call's own.
   */
  slowAnswer?: boolean | undefined;
}

export interface HttpOptions {
  headers: HeaderSet;
  retry?: RetryOptions | undefined;
  /** Each request (one try, up to its response head and, for a non-stream, its body). @default 30000 */
  requestTimeoutMs?: number | undefined;
  /** Called with a one-line, redacted account of each try and retry (`--debug`). */
  debug?: ((line: string) => void) | undefined;
  /** The `fetch` to use. @default globalThis.fetch */
  fetch?: typeof fetch | undefined;
}

export interface HttpRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  body?: string | undefined;
  /** Read the body as a stream (SSE): the per-request timeout then covers the response head only. */
  stream?: boolean;
}

export interface HttpResponse {
  status: number;
  headers: Headers;
  /** The body (non-stream requests): read in full within the per-request timeout. */
  text: string;
  /** The body as a stream (stream requests). */
  body: AsyncIterable<Uint8Array> | undefined;
  /** Ends a streamed body (and its connection). */
  close(): void;
}

const RETRYABLE_STATUS = new Set([502, 503, 504]);
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 10;

/** A deadline and a signal shared by every try of one call. */
export class CallScope {
  readonly signal: AbortSignal;
  readonly deadline: number | undefined;
  readonly slowAnswer: boolean;
  readonly #timeoutMs: number | undefined;

  constructor(options: CallOptions = {}) {
    const signals: AbortSignal[] = [];
    if (options.signal) signals.push(options.signal);
    if (options.timeoutMs !== undefined && options.timeoutMs > 0) {
      // Not AbortSignal.timeout(): AbortSignal.any() holds its sources weakly, and Node drops a
      // timeout signal's timer when the signal is garbage-collected, so a collection during the call
      // (likely on a busy machine, with heartbeats arriving) left the deadline never firing. This
      // timer holds its controller, so the deadline fires whatever is collected. Unref'd, as
      // AbortSignal.timeout's is: a deadline alone does not keep the process alive.
      const deadline = new AbortController();
      setTimeout(
        () => deadline.abort(new DOMException('The call timed out.', 'TimeoutError')),
        options.timeoutMs,
      ).unref();
      signals.push(deadline.signal);
      this.deadline = Date.now() + options.timeoutMs;
    }
    this.#timeoutMs = options.timeoutMs;
    this.slowAnswer = options.slowAnswer === true;
    this.signal = signals.length === 0 ? new AbortController().signal : AbortSignal.any(signals);
  }

  /** Throws the call's timeout or abort if it has happened. */
  check(): void {
    if (this.signal.aborted) throw this.reason();
  }

  reason(): A2AClientError {
    const reason = this.signal.reason as { name?: string } | undefined;
    if (reason?.name === 'TimeoutError')
      return new A2AClientError('timeout', `The call did not finish within ${this.#timeoutMs} ms.`);
    return new A2AClientError('aborted', 'The call was aborted.', { cause: reason });
  }

  /** Sleeps, unless the call ends first. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.signal.aborted) return reject(this.reason());
      const done = () => {
        clearTimeout(timer);
        this.signal.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        done();
        reject(this.reason());
      };
      const timer = setTimeout(() => {
        done();
        resolve();
      }, ms);
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** `Retry-After` as milliseconds from now: delay-seconds or an HTTP date; undefined if absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"): uniform in [0, capped 2^n base]. */
export function backoffMs(attempt: number, retry: Required<RetryOptions>): number {
  const ceiling = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** attempt);
  return Math.round(Math.random() * ceiling);
}

/** Whether an error thrown by fetch (or by reading a body) means the connection failed or dropped. */
function isNetworkError(error: unknown): boolean {
  if (A2AClientError.is(error)) return false;
  const name = (error as { name?: string } | undefined)?.name;
  return name === 'TypeError' || name === 'SocketError' || (error as { code?: string })?.code !== undefined;
}

/** Debug output keeps to 64 KiB per body: a large inline file would drown the rest. */
const DEBUG_BODY_LIMIT = 65_536;

function clip(text: string): string {
  const oneLine = text.replace(/\r?\n/g, '\\n');
  return oneLine.length <= DEBUG_BODY_LIMIT
    ? oneLine
    : `${oneLine.slice(0, DEBUG_BODY_LIMIT)}… (${oneLine.length - DEBUG_BODY_LIMIT} more characters)`;
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  return cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error);
}

export class HttpClient {
  readonly headers: HeaderSet;
  readonly #retry: Required<RetryOptions>;
  readonly #requestTimeoutMs: number;
  readonly #debug: ((line: string) => void) | undefined;
  readonly #fetch: typeof fetch;

  constructor(options: HttpOptions) {
    this.headers = options.headers;
    this.#retry = { attempts: 4, baseDelayMs: 250, maxDelayMs: 5000, maxRetryAfterMs: 60_000, ...options.retry };
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#debug = options.debug;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  debug(line: string): void {
    this.#debug?.(this.headers.redact(line));
  }

  get retry(): Required<RetryOptions> {
    return this.#retry;
  }

  /**
   * Sends `request`, retrying what a retry can cure. Resolves with any answer that is not retried
   * (4xx, 500…): the caller reads the protocol's error from it. Rejects with `unreachable`,
   * `timeout`, `aborted` or `auth` (a 401/403 that a fresh credential did not cure is answered,
   * not thrown, so the binding can read its error body).
   */
  async send(request: HttpRequest, scope: CallScope): Promise<HttpResponse> {
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      scope.check();
      let delay: number | undefined;
      let failure: A2AClientError;
      try {
        const response = await this.#once(request, scope);
        if (response.status === 401 && !refreshed && this.headers.refreshable) {
          // A rotated token: read every source again and try once more (not counted as a retry).
          refreshed = true;
          response.close();
          this.headers.refresh();
          this.debug(`${request.method} ${request.url}: 401, reading the credentials again`);
          attempt--;
          continue;
        }
        if (!RETRYABLE_STATUS.has(response.status)) return response;
        delay = retryAfterMs(response.headers.get('retry-after'));
        failure = new A2AClientError('unreachable', `The agent answered HTTP ${response.status} at ${request.url}.`, {
          status: response.status,
        });
        if (attempt + 1 >= this.#retry.attempts) return response;
        response.close();
      } catch (error) {
        if (scope.signal.aborted) throw scope.reason();
        if (scope.slowAnswer && (error as { cause?: { code?: string } })?.cause?.code === 'UND_ERR_HEADERS_TIMEOUT') {
          // Node's fetch gives up on a response head after 300 s (undici's headersTimeout, not
          // settable without the undici package). The agent is still working on a blocking send:
          // sending it again would only wait another 300 s, so say how to follow the task instead.
          throw new A2AClientError(
            'timeout',
            `${request.method} ${request.url} got no answer within the 300 s Node's fetch waits for one; the agent may still be working. For long tasks send with maxWaitMs, non-blocking (CLI: --return-immediately) or streaming, then follow the task with getTask (a2a task get); the same messageId sent non-blocking returns its task on servers that deduplicate.`,
            { cause: error },
          );
        }
        if (A2AClientError.is(error) && error.kind !== 'timeout' && error.kind !== 'unreachable') throw error;
        failure = A2AClientError.is(error)
          ? error
          : new A2AClientError(
              'unreachable',
              `Could not reach the agent at ${request.url} (${describeNetworkError(error)}).`,
              { cause: error },
            );
        if (!isNetworkError(error) && !A2AClientError.is(error)) throw failure;
        if (attempt + 1 >= this.#retry.attempts) throw failure;
      }
      if (delay !== undefined && delay > this.#retry.maxRetryAfterMs) {
        throw new A2AClientError(
          'unreachable',
          `${failure.message} It asked to be retried in ${Math.ceil(delay / 1000)} s, longer than this client waits (retry.maxRetryAfterMs: ${this.#retry.maxRetryAfterMs} ms).`,
          { status: failure.status },
        );
      }
      const wait = Math.min(
        delay ?? backoffMs(attempt, this.#retry),
        // Retry-After may ask for more than the call has left: then fail now rather than sleep past it.
        scope.deadline === undefined ? Number.POSITIVE_INFINITY : Math.max(0, scope.deadline - Date.now()),
      );
      this.debug(`${request.method} ${request.url}: ${failure.message} — retry ${attempt + 1} in ${wait} ms`);
      await scope.sleep(wait);
    }
  }

  async #once(request: HttpRequest, scope: CallScope): Promise<HttpResponse> {
    const credentials = await this.headers.resolve();
    // One controller for this try: the per-request timer aborts it (until the head, for a stream;
    // until the body is read, otherwise), and `close()` aborts it to drop a stream's connection.
    const controller = new AbortController();
    let timedOut = false;
    const timer = scope.slowAnswer
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, this.#requestTimeoutMs);
    const signal = AbortSignal.any([scope.signal, controller.signal]);
    const started = Date.now();
    if (this.#debug !== undefined) this.#debugRequest(request, credentials);
    try {
      let response: Response;
      try {
        response = await this.#fetchFollowing(request, credentials, signal);
      } catch (error) {
        if (timedOut && !scope.signal.aborted) throw this.#requestTimeout(request);
        throw error;
      }
      this.debug(`${request.method} ${request.url} → ${response.status} in ${Date.now() - started} ms`);
      // Only an event stream is read as one: a refused stream (1.0 JSON-RPC answers its error as a
      // plain HTTP 200 JSON-RPC body) must reach the binding as text, to be read as the error it is.
      const eventStream = /^text\/event-stream\b/i.test(response.headers.get('content-type') ?? '');
      if (request.stream && response.ok && response.body && eventStream) {
        clearTimeout(timer);
        const events = iterate(response.body, signal);
        return {
          status: response.status,
          headers: response.headers,
          text: '',
          body: this.#debug === undefined ? events : this.#debugStream(request, events),
          close: () => controller.abort(),
        };
      }
      try {
        const text = await response.text();
        this.debug(`<<< ${request.method} ${request.url} ${response.status} body: ${clip(text)}`);
        return { status: response.status, headers: response.headers, text, body: undefined, close: () => {} };
      } catch (error) {
        if (timedOut && !scope.signal.aborted) throw this.#requestTimeout(request);
        throw error;
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * fetch, following redirects itself: fetch would carry every header but Authorization to another
   * origin, and ours include API keys and service parameters. Those go only to the origin asked for.
   */
  async #fetchFollowing(
    request: HttpRequest,
    credentials: Record<string, string>,
    signal: AbortSignal,
  ): Promise<Response> {
    const origin = new URL(request.url).origin;
    let url = request.url;
    let method: string = request.method;
    let body = request.body;
    for (let hop = 0; ; hop++) {
      const own = new URL(url).origin === origin;
      const headers: Record<string, string> = { ...(own ? credentials : {}), ...request.headers };
      if (body === undefined) delete headers['content-type'];
      const response = await this.#fetch(url, { method, headers, body, signal, redirect: 'manual' });
      const location = response.headers.get('location');
      if (!REDIRECT_STATUS.has(response.status) || location === null || hop >= MAX_REDIRECTS) return response;
      await response.body?.cancel().catch(() => {});
      const next = new URL(location, url).href;
      this.debug(`${method} ${url} → ${response.status}, following to ${next}`);
      // As fetch does (Fetch §4.4): 303, and 301/302 after a POST, become a GET without a body.
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
      url = next;
    }
  }

  /**
   * The raw request on `--debug` (a2a-cli A2ACLI_OUT_007): its headers and body as sent. Headers
   * that carry credentials show `***` by name, and `debug()` also redacts every credential value
   * read, wherever it appears (a token echoed in a body included).
   */
  #debugRequest(request: HttpRequest, credentials: Record<string, string>): void {
    const shown = Object.entries({ ...credentials, ...request.headers })
      .map(([name, value]) => `${name}: ${name in credentials ? '***' : value}`)
      .join('; ');
    this.debug(`>>> ${request.method} ${request.url} headers: ${shown}`);
    if (request.body !== undefined) this.debug(`>>> ${request.method} ${request.url} body: ${clip(request.body)}`);
  }

  /** An event stream's raw bytes on `--debug`, as they arrive. */
  async *#debugStream(request: HttpRequest, chunks: AsyncGenerator<Uint8Array>): AsyncGenerator<Uint8Array> {
    const decoder = new TextDecoder();
    for await (const chunk of chunks) {
      this.debug(`<<< ${request.method} ${request.url} stream: ${clip(decoder.decode(chunk, { stream: true }))}`);
      yield chunk;
    }
  }

  #requestTimeout(request: HttpRequest): A2AClientError {
    return new A2AClientError(
      'timeout',
      `${request.method} ${request.url} got no answer within ${this.#requestTimeoutMs} ms.`,
    );
  }
}

/** A web stream as an async iterable that stops (and releases the connection) when `signal` fires. */
async function* iterate(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  const onAbort = () => {
    reader.cancel().catch(() => {});
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    reader.cancel().catch(() => {});
  }
}
