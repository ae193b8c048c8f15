/**
 * Writing streams as Server-Sent Events (A2A §7.2, §3.5.6), the same way for every binding: each
 * frame is one event whose `id` is its event sequence number, so a client reconnecting with
 * `Last-Event-ID` resumes after it on any worker. One heartbeat timer serves every open stream.
 */

import type { StreamFrame } from '@fastify-a2a/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StreamEnd } from './context.js';

/** A binding's stream: the frames, and how each one (or a failure) becomes an event. */
export interface EncodedStream {
  readonly frames: AsyncGenerator<StreamFrame>;
  data(frame: StreamFrame): string;
  /** The event reporting a failure after the stream started (`event` names its type when not `message`). */
  error(error: unknown): { event?: string; data: string };
}

/** The SSE route options of every streaming route: the handler decides at run time, no per-stream timer. */
export const SSE_ROUTE_OPTIONS = {
  kind: 'manual',
  heartbeat: false,
  serializer: (data: unknown) => data as string,
} as const;

/**
 * The first event, with the response head: the head is written on its own (corked into the same
 * segment as the event), which makes Node flatten the header string it keeps for the response's
 * life. Sent with the event, only the concatenation was flattened, and the response kept its head
 * as a tree of some 30 string pieces: about 0.8 KB per held stream (bench/PROFILE.md).
 */
function sendFirst(reply: FastifyReply, event: { id: string; data: string }): Promise<void> {
  const socket = reply.raw.socket;
  socket?.cork();
  let sent: Promise<void>;
  try {
    reply.sse.sendHeaders();
    reply.raw.flushHeaders();
    // `send` writes before its first await; uncorked before waiting on it, as a write past the
    // socket's buffer waits for a `drain` that a corked socket never emits.
    sent = reply.sse.send(event);
  } finally {
    socket?.uncork();
  }
  return sent;
}

export class StreamHub {
  readonly #open = new Map<StreamEnd, FastifyReply>();
  readonly #heartbeat: NodeJS.Timeout | undefined;
  /** Called each time the last open stream ends (see drain). */
  #onEmpty: (() => void)[] = [];

  constructor(heartbeatIntervalMs: number) {
    // One timer for every open stream rather than one per stream (@fastify/sse's own heartbeat is
    // off on the routes): an idle stream then costs no timer at all.
    this.#heartbeat =
      heartbeatIntervalMs > 0
        ? setInterval(() => {
            for (const reply of this.#open.values()) {
              // Only once the response is committed as SSE, and never into a closed socket.
              if (reply.raw.headersSent && reply.sse.isConnected && !reply.raw.writableEnded) {
                reply.raw.write(': heartbeat\n\n');
              }
            }
          }, heartbeatIntervalMs)
        : undefined;
    this.#heartbeat?.unref();
  }

  /** Writes the stream until it ends, the client goes away or the server closes. */
  async pipe(request: FastifyRequest, reply: FastifyReply, stream: EncodedStream, end: StreamEnd): Promise<void> {
    this.#open.set(end, reply);
    reply.sse.onClose(() => end.abort());
    const { frames } = stream;
    try {
      for await (const frame of frames) {
        if (!reply.sse.isConnected) break;
        if (reply.raw.headersSent) await reply.sse.send({ id: String(frame.seq), data: stream.data(frame) });
        else await sendFirst(reply, { id: String(frame.seq), data: stream.data(frame) });
      }
      // A stream that ends before its first event (a reconnect whose Last-Event-ID is the final
      // event) is still an event stream: EventSource and @a2a-js/sdk refuse a 200 answer whose
      // Content-Type is not text/event-stream, which is what an empty reply would be.
      if (!reply.raw.headersSent && reply.sse.isConnected) reply.sse.sendHeaders();
    } catch (error) {
      request.log.warn({ err: error }, 'a2a: stream failed');
      if (reply.sse.isConnected) await reply.sse.send(stream.error(error)).catch(() => undefined);
    } finally {
      end.abort();
      this.#open.delete(end);
      await frames.return(undefined);
      if (this.#open.size === 0) for (const resolve of this.#onEmpty.splice(0)) resolve();
    }
  }

  /** Streams being written. */
  get size(): number {
    return this.#open.size;
  }

  /** Answers a streaming call with one event and ends: how a streaming client reads a refusal. */
  async single(reply: FastifyReply, data: string): Promise<void> {
    await reply.sse.send({ data });
  }

  /**
   * Server closing, once the runtime drained its turns: a stream of a turn that ran here got its
   * final event meanwhile and ends by itself (§7.2: a stream ends after the final event); give
   * those up to `graceMs` to be written, then end the rest (streams of tasks running on other
   * workers: their clients reconnect elsewhere with Last-Event-ID). Resolves, once all have ended,
   * with how many had to be ended.
   */
  async drain(graceMs: number): Promise<number> {
    if (this.#open.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.#empty(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, graceMs);
        }),
      ]);
      clearTimeout(timer);
    }
    const cut = this.#open.size;
    this.close();
    await this.#empty();
    return cut;
  }

  #empty(): Promise<void> {
    return this.#open.size === 0 ? Promise.resolve() : new Promise((resolve) => this.#onEmpty.push(resolve));
  }

  /** Ends every open stream at once and stops the heartbeat. */
  close(): void {
    clearInterval(this.#heartbeat);
    for (const end of this.#open.keys()) end.abort();
  }
}
