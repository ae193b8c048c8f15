/**
 * A bound on how long a request's body may take to arrive. Node's own `requestTimeout` (5 minutes
 * by default) is the application's server option, and an idle timeout does not stop a client that
 * sends one byte every few seconds: a slow body would hold its connection and parser for minutes.
 * So each binding's scope starts a timer when a request with a body arrives and stops it once the
 * body is parsed; when it fires, the client gets `408 Request Timeout` and the connection closes.
 */

import type { FastifyInstance, FastifyRequest } from 'fastify';

const deadlines = new WeakMap<FastifyRequest, NodeJS.Timeout>();

function hasBody(request: FastifyRequest): boolean {
  const { headers } = request;
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}

function stop(request: FastifyRequest): void {
  const timer = deadlines.get(request);
  if (timer !== undefined) {
    clearTimeout(timer);
    deadlines.delete(request);
  }
}

/**
 * Adds the body deadline to `scope`'s routes. `answer` is the JSON body of the 408, in the
 * binding's error form. `ms` 0 turns it off.
 */
export function limitBodyTime(scope: FastifyInstance, ms: number, answer: () => unknown): void {
  if (ms <= 0) return;
  scope.addHook('onRequest', async (request) => {
    if (!hasBody(request)) return;
    const timer = setTimeout(() => {
      deadlines.delete(request);
      const { socket } = request.raw;
      if (socket.destroyed) return;
      request.log.info({ bodyTimeoutMs: ms }, 'a2a: request body not received in time; closing the connection');
      const body = JSON.stringify(answer());
      socket.end(
        `HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      socket.destroySoon();
    }, ms);
    timer.unref();
    deadlines.set(request, timer);
  });
  // The body is in (or there was an error reading it): no deadline. A client that went away
  // before its body arrived leaves its timer to fire and find the socket destroyed: an
  // onRequestAbort hook would make Fastify add a 'close' listener (a closure and its context) to
  // every request, which a held stream keeps for its whole life (bench/PROFILE.md).
  scope.addHook('preValidation', async (request) => stop(request));
  scope.addHook('onError', async (request) => stop(request));
}
