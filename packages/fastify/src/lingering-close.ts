/**
 * A lingering close for answers sent before the request's body was read (issue 23: a body over
 * `bodyLimit`). Fastify answers 413 with `Connection: close`, and Node then destroys the socket as
 * soon as the answer is written, while the client is still sending: the unread bytes make the
 * kernel reset the connection, and a client that writes its whole body before it reads (undici,
 * as the SDK clients use; node:http sending blindly) gets EPIPE / "fetch failed" instead of the
 * error. So, as HTTP servers do (RFC 9112 §9.6), the answer is followed by a half close (FIN), and
 * the rest of the body is read and discarded until the client is done, bounded in time and bytes;
 * then the socket is closed. A slow client is still cut: the linger ends at its deadline.
 */

import type { FastifyRequest } from 'fastify';

/** At most this long after the answer. */
export const LINGER_MAX_MS = 5000;
/** At most this many more bytes read and discarded. */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Call before sending an answer to a request whose body was not read to its end. Once Node
 * closes the connection after the answer, the socket half-closes and lingers instead.
 * `maxMs` bounds the linger (the body deadline when it is shorter than {@link LINGER_MAX_MS}).
 */
export function lingerAfterAnswer(request: FastifyRequest, maxMs = LINGER_MAX_MS): void {
  const incoming = request.raw;
  const socket = incoming.socket;
  if (incoming.complete || socket.destroyed) return;
  let discarded = 0;
  let timer: NodeJS.Timeout | undefined;
  let answered = false;
  /** The client sent it all: close once the answer is flushed (destroying earlier would drop it). */
  const close = () => {
    if (timer !== undefined) clearTimeout(timer);
    if (!answered) return;
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  };
  /** A bound was reached: stop reading now. */
  const cut = () => {
    if (timer !== undefined) clearTimeout(timer);
    socket.destroy();
  };
  // Reading the rest keeps the kernel from resetting the connection under the answer; a listener
  // puts the request in flowing mode, and what arrives is counted and dropped.
  incoming.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_MAX_BYTES) cut();
  });
  incoming.once('end', close);
  incoming.once('error', cut);
  // Node ends a `Connection: close` exchange with socket.destroySoon() once the answer is queued:
  // for this socket only, that becomes a half close (the answer, then FIN) and a bounded linger.
  const lingering = socket as typeof socket & { destroySoon(): void };
  lingering.destroySoon = () => {
    answered = true;
    socket.end();
    if (incoming.complete) return close();
    timer = setTimeout(cut, Math.min(maxMs, LINGER_MAX_MS));
    timer.unref();
  };
}
