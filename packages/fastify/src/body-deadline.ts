/**
 * A bound on how long a request's body may take to arrive. Node's own `requestTimeout` (5 minutes
 * by default) is the application's server option, and an idle timeout does not stop a client that
 * sends one byte every few seconds: a slow body would hold its connection and parser for minutes.
 * So each binding's scope notes when a request with a body arrives and forgets it once the body is
 * parsed; a request still waiting past the deadline gets `408 Request Timeout` and the connection
 * closes.
 *
 * One sweep timer per scope rather than one timer per request: nearly every body is in before the
 * route runs, and a timer set and cleared per request cost about 2 % of a plain request's CPU
 * under load (bench/PROFILE.md). The sweep runs every tenth of the deadline while requests wait,
 * so a slow body is cut off between `ms` and 1.1 × `ms` after its headers.
 */

import type { FastifyInstance, FastifyRequest } from 'fastify';

/** The sweep's period as a share of the deadline, and its floor (a sub-second deadline is for tests). */
const SWEEP_SHARE = 0.1;
const MIN_SWEEP_MS = 10;

function hasBody(request: FastifyRequest): boolean {
  const { headers } = request;
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}

/** The requests of one scope whose bodies are still arriving, in arrival order, so in deadline order too. */
class BodyDeadlines {
  readonly #waiting = new Map<FastifyRequest, number>();
  readonly #ms: number;
  readonly #sweepMs: number;
  readonly #answer: () => unknown;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(ms: number, answer: () => unknown) {
    this.#ms = ms;
    this.#sweepMs = Math.max(MIN_SWEEP_MS, Math.ceil(ms * SWEEP_SHARE));
    this.#answer = answer;
  }

  start(request: FastifyRequest): void {
    this.#waiting.set(request, Date.now() + this.#ms);
    if (this.#sweeper === undefined) {
      this.#sweeper = setInterval(this.#sweep, this.#sweepMs);
      this.#sweeper.unref();
    }
  }

  stop(request: FastifyRequest): void {
    this.#waiting.delete(request);
  }

  readonly #sweep = (): void => {
    const now = Date.now();
    for (const [request, deadline] of this.#waiting) {
      if (deadline > now) break;
      this.#waiting.delete(request);
      this.#expire(request);
    }
    // Idle: no timer until the next request with a body.
    if (this.#waiting.size === 0) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  };

  #expire(request: FastifyRequest): void {
    const { socket } = request.raw;
    if (socket.destroyed) return;
    request.log.info({ bodyTimeoutMs: this.#ms }, 'a2a: request body not received in time; closing the connection');
    const body = JSON.stringify(this.#answer());
    socket.end(
      `HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    socket.destroySoon();
  }
}

/**
 * Adds the body deadline to `scope`'s routes. `answer` is the JSON body of the 408, in the
 * binding's error form. `ms` 0 turns it off.
 */
export function limitBodyTime(scope: FastifyInstance, ms: number, answer: () => unknown): void {
  if (ms <= 0) return;
  const deadlines = new BodyDeadlines(ms, answer);
  // Callback hooks, not async ones: these run on every request, and an async hook costs a promise.
  scope.addHook('onRequest', (request, _reply, done) => {
    if (hasBody(request)) deadlines.start(request);
    done();
  });
  // The body is in (or there was an error reading it): no deadline. A client that went away
  // before its body arrived stays until the sweep finds its socket destroyed: an onRequestAbort
  // hook would make Fastify add a 'close' listener (a closure and its context) to every request,
  // which a held stream keeps for its whole life (bench/PROFILE.md).
  scope.addHook('preValidation', (request, _reply, done) => {
    deadlines.stop(request);
    done();
  });
  scope.addHook('onError', (request, _reply, _error, done) => {
    deadlines.stop(request);
    done();
  });
}
