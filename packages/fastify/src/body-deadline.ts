/**
 * A bound on how long a request's body may take to arrive. Node's own `requestTimeout` (5 minutes
 * by default) is the application's server option, and an idle timeout does not stop a client that
 * sends one byte every few seconds: a slow body would hold its connection and parser for minutes.
 * So each binding's scope notes when a request with a body arrives and forgets it once the body is
 * parsed, or once it is answered, whatever answered it; a request still waiting past the deadline
 * gets `408 Request Timeout` and the connection closes.
 *
 * The 408 is written on the socket itself (Fastify still waits for the body), so only when no byte
 * of any other answer can be on it (issue 28, item 7): never once this request's own answer has
 * begun (a refusal sent before the body came; the connection is then closed without a word if the
 * body still has not arrived), and never while the answer to an earlier pipelined request still
 * holds the socket (the 408 waits for it to end).
 *
 * One sweep timer per scope rather than one timer per request: nearly every body is in before the
 * route runs, and a timer set and cleared per request cost about 2 % of a plain request's CPU
 * under load (bench/PROFILE.md). The sweep runs every tenth of the deadline while requests wait,
 * so a slow body is cut off between `ms` and 1.1 × `ms` after its headers.
 */

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The sweep's period as a share of the deadline, and its floor (a sub-second deadline is for tests). */
const SWEEP_SHARE = 0.1;
const MIN_SWEEP_MS = 10;

function hasBody(request: FastifyRequest): boolean {
  const { headers } = request;
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}

/**
 * The requests of one scope whose bodies are still arriving, in arrival order, so in deadline order
 * too. Keyed by the reply: whether its response has begun, and whether it owns the socket, decide
 * what the deadline may still do.
 */
class BodyDeadlines {
  readonly #waiting = new Map<FastifyReply, number>();
  readonly #ms: number;
  readonly #sweepMs: number;
  readonly #answer: () => unknown;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(ms: number, answer: () => unknown) {
    this.#ms = ms;
    this.#sweepMs = Math.max(MIN_SWEEP_MS, Math.ceil(ms * SWEEP_SHARE));
    this.#answer = answer;
  }

  start(reply: FastifyReply): void {
    this.#waiting.set(reply, Date.now() + this.#ms);
    if (this.#sweeper === undefined) {
      this.#sweeper = setInterval(this.#sweep, this.#sweepMs);
      this.#sweeper.unref();
    }
  }

  stop(reply: FastifyReply): void {
    this.#waiting.delete(reply);
  }

  /**
   * The request was answered, by whatever answered it (the route, an authentication hook's 401, an
   * application hook's 429): its deadline ends with it. Unless its body is still arriving: then the
   * connection carries nothing else until the body is in, and the deadline still bounds that wait.
   */
  answered(reply: FastifyReply): void {
    if (reply.request.raw.complete) this.#waiting.delete(reply);
  }

  readonly #sweep = (): void => {
    const now = Date.now();
    for (const [reply, deadline] of this.#waiting) {
      if (deadline > now) break;
      if (this.#expire(reply)) this.#waiting.delete(reply);
    }
    // Idle: no timer until the next request with a body.
    if (this.#waiting.size === 0) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  };

  /** The deadline passed: acts on it if it can yet; false to look again at the next sweep. */
  #expire(reply: FastifyReply): boolean {
    const incoming = reply.request.raw;
    const { socket } = incoming;
    if (socket.destroyed || incoming.complete) return true;
    const response = reply.raw;
    if (response.headersSent) {
      // An answer has begun (a refusal sent before the body came): not a byte more is written. Once
      // it is written out, the connection is this body's alone (no later request can be read before
      // it), so it closes; an answer still being written is looked at again.
      if (!response.writableFinished) return false;
      reply.request.log.info(
        { bodyTimeoutMs: this.#ms },
        'a2a: request body not received in time after its answer; closing the connection',
      );
      socket.destroy();
      return true;
    }
    // A pipelined request whose answer waits behind an earlier one still being written (a stream):
    // the socket is that answer's, and a raw write would land inside it. Looked at again once the
    // earlier answer is done and the socket is this response's.
    if (response.socket !== socket) return false;
    reply.request.log.info(
      { bodyTimeoutMs: this.#ms },
      'a2a: request body not received in time; closing the connection',
    );
    const body = JSON.stringify(this.#answer());
    // Raw, not through the response: Fastify still waits for the body and would answer again.
    socket.end(
      `HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    socket.destroySoon();
    return true;
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
  scope.addHook('onRequest', (request, reply, done) => {
    if (hasBody(request)) deadlines.start(reply);
    done();
  });
  // The body is in (or there was an error reading it): no deadline. A client that went away
  // before its body arrived stays until the sweep finds its socket destroyed: an onRequestAbort
  // hook would make Fastify add a 'close' listener (a closure and its context) to every request,
  // which a held stream keeps for its whole life (bench/PROFILE.md).
  scope.addHook('preValidation', (_request, reply, done) => {
    deadlines.stop(reply);
    done();
  });
  scope.addHook('onError', (_request, reply, _error, done) => {
    deadlines.stop(reply);
    done();
  });
  // Whatever answered: a hook's refusal (authentication's 401 here, an application's onRequest or
  // preParsing hook) skips preValidation, and a deadline left behind would later write its 408
  // onto the connection's next answer (issue 28, item 7).
  scope.addHook('onResponse', (_request, reply, done) => {
    deadlines.answered(reply);
    done();
  });
}
