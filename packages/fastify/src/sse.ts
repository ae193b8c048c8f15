/**
 * Writing streams as Server-Sent Events (A2A §7.2, §3.5.6), the same way for every binding: each
 * frame is one event whose `id` is its event sequence number, so a client reconnecting with
 * `Last-Event-ID` resumes after it on any worker. One heartbeat timer serves every open stream.
 */

import type { StreamFrame } from '@fastify-a2a/core';
import type { FastifyReply } from 'fastify';
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

/**
 * Writes one stream's frames as they come, with callbacks rather than an async loop: while the
 * stream waits for its task's next event, all it holds is this object and the pending `next()`.
 */
class StreamPump {
  readonly #reply: FastifyReply;
  readonly #stream: EncodedStream;
  readonly #end: StreamEnd;
  /** Resolves the route handler's promise; undefined once called. */
  #settle: (() => void) | undefined;
  /** The hub's: called once the stream is done with. */
  readonly #ended: (end: StreamEnd) => void;
  /** A write is waiting on the socket: set until it settles or the response closes. */
  #writing = false;
  readonly #onFrame = (result: IteratorResult<StreamFrame>): void => this.#write(result);
  readonly #onError = (error: unknown): void => this.#fail(error);
  readonly #onWritten = (): void => {
    if (!this.#writing) return;
    this.#writing = false;
    this.next();
  };
  readonly #onWriteError = (error: unknown): void => {
    if (!this.#writing) return;
    this.#writing = false;
    this.#fail(error);
  };

  constructor(
    reply: FastifyReply,
    stream: EncodedStream,
    end: StreamEnd,
    settle: () => void,
    ended: (end: StreamEnd) => void,
  ) {
    this.#reply = reply;
    this.#stream = stream;
    this.#end = end;
    this.#settle = settle;
    this.#ended = ended;
  }

  next(): void {
    this.#stream.frames.next().then(this.#onFrame, this.#onError);
  }

  #write(result: IteratorResult<StreamFrame>): void {
    const reply = this.#reply;
    if (result.done === true || !reply.sse.isConnected) {
      // A stream that ends before its first event (a reconnect whose Last-Event-ID is the final
      // event) is still an event stream: EventSource and @a2a-js/sdk refuse a 200 answer whose
      // Content-Type is not text/event-stream, which is what an empty reply would be.
      if (!reply.raw.headersSent && reply.sse.isConnected) reply.sse.sendHeaders();
      this.#finish();
      return;
    }
    let sent: Promise<void>;
    try {
      const data = this.#stream.data(result.value);
      const raw = reply.raw;
      if (raw.headersSent && !data.includes('\n')) {
        // Past the first event, the event is written here rather than through @fastify/sse's
        // send, which makes two promises and splits the data into lines for every event (issue
        // 30: one event per streamed chunk). The data is one line (a binding's JSON), so the event
        // is exactly what send would write. A full socket buffer waits for `drain`, or for the
        // response's `close` (see closed()).
        if (raw.write(`id: ${result.value.seq}\ndata: ${data}\n\n`)) {
          this.next();
        } else {
          this.#writing = true;
          raw.once('drain', this.#onWritten);
        }
        return;
      }
      const event = { id: String(result.value.seq), data };
      sent = raw.headersSent ? reply.sse.send(event) : sendFirst(reply, event);
    } catch (error) {
      this.#fail(error);
      return;
    }
    // The response is committed as SSE: the route handler can return.
    this.#release();
    this.#writing = true;
    sent.then(this.#onWritten, this.#onWriteError);
  }

  /**
   * The response closed. A write waiting for `drain` then waits for ever: @fastify/sse settles it
   * on `drain` or on an `error` of the response, and a client gone with the buffer full closes the
   * response with neither (regressions/disconnect-during-backpressure.test.ts). The stream ends
   * here instead, and the write's late settling, if any, is ignored.
   */
  closed(): void {
    if (!this.#writing) return;
    this.#writing = false;
    this.#finish();
  }

  #fail(error: unknown): void {
    this.#reply.request.log.warn({ err: error }, 'a2a: stream failed');
    const reply = this.#reply;
    if (!reply.sse.isConnected) {
      this.#finish();
      return;
    }
    let sent: Promise<void>;
    try {
      sent = reply.sse.send(this.#stream.error(error));
    } catch {
      sent = Promise.resolve();
    }
    sent.then(
      () => this.#finish(),
      () => this.#finish(),
    );
  }

  #finish(): void {
    this.#end.abort();
    const done = (): void => {
      // Ends the response (if it was committed as SSE) and the request's part in Fastify.
      this.#reply.sse.close();
      this.#release();
      this.#ended(this.#end);
    };
    this.#stream.frames.return(undefined).then(done, (error: unknown) => {
      this.#reply.request.log.warn({ err: error }, 'a2a: a stream failed to end');
      done();
    });
  }

  #release(): void {
    const settle = this.#settle;
    if (settle === undefined) return;
    this.#settle = undefined;
    settle();
  }
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

  /**
   * Writes the stream until it ends, the client goes away or the server closes. Resolves once the
   * first event is written (or the stream ended before one): the route handler then returns and
   * Fastify's part is done, while a {@link StreamPump} writes the rest and ends the response, so a
   * held stream keeps no suspended async frame of the route, of @fastify/sse or of this method
   * (bench/PROFILE.md, per-stream memory).
   */
  pipe(reply: FastifyReply, stream: EncodedStream, end: StreamEnd): Promise<void> {
    this.#open.set(end, reply);
    // @fastify/sse ends the response when the handler returns unless told otherwise: the pump ends it.
    reply.sse.keepAlive();
    return new Promise<void>((settle) => {
      const pump = new StreamPump(reply, stream, end, settle, this.#ended);
      // The client went away. On the response rather than through reply.sse.onClose, whose list of
      // callbacks would be an array with room for 17 (bench/PROFILE.md, per-stream memory).
      reply.raw.on('close', () => {
        end.abort();
        pump.closed();
      });
      pump.next();
    });
  }

  /** A stream's pump is done with it: the last stream to end wakes drain(). */
  readonly #ended = (end: StreamEnd): void => {
    this.#open.delete(end);
    if (this.#open.size === 0) for (const resolve of this.#onEmpty.splice(0)) resolve();
  };

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
