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

/** One event: `id` and `event` lines when given, then `data` (already serialised) line by line. */
export interface ServerSentEvent {
  id?: string;
  event?: string;
  data: string;
}

function formatEvent({ id, event, data }: ServerSentEvent): string {
  let text = '';
  if (id) text += `id: ${id}\n`;
  if (event) text += `event: ${event}\n`;
  for (const line of data.split('\n')) text += `data: ${line}\n`;
  return `${text}\n`;
}

/**
 * A response being written as Server-Sent Events. Made only when a request streams: a plain
 * request's route carries no SSE machinery at all (@fastify/sse's 'manual' routes built a context
 * with two response listeners and an extra async frame for every request, bench/PROFILE.md). The
 * wire format and headers are those @fastify/sse wrote.
 */
export class EventStream {
  readonly reply: FastifyReply;
  #connected = true;
  #headersSent = false;

  constructor(reply: FastifyReply) {
    this.reply = reply;
  }

  /** The response closed or failed: nothing more is written. */
  disconnected(): void {
    this.#connected = false;
  }

  get isConnected(): boolean {
    return this.#connected;
  }

  /** Writes the response head (the headers set with `reply.header()` included) unless written already. */
  sendHeaders(): void {
    if (this.#headersSent) return;
    const raw = this.reply.raw;
    raw.setHeader('Content-Type', 'text/event-stream');
    raw.setHeader('Cache-Control', 'no-cache');
    raw.setHeader('Connection', 'keep-alive');
    raw.setHeader('X-Accel-Buffering', 'no'); // nginx: do not buffer the stream
    for (const [name, value] of Object.entries(this.reply.getHeaders())) {
      if (value !== undefined) raw.setHeader(name, value);
    }
    raw.writeHead(raw.statusCode ?? 200);
    this.#headersSent = true;
  }

  /** Writes one event; resolves once the socket takes more (a full buffer waits for `drain`). */
  send(event: ServerSentEvent): Promise<void> {
    if (!this.#connected) return Promise.reject(new Error('SSE connection is closed'));
    this.sendHeaders();
    const raw = this.reply.raw;
    if (raw.write(formatEvent(event))) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (error?: Error): void => {
        raw.off('drain', done);
        raw.off('error', done);
        raw.off('close', done);
        if (error instanceof Error) {
          this.#connected = false;
          this.reply.log.info({ err: error }, 'SSE write ended');
        }
        resolve();
      };
      raw.once('drain', done);
      raw.once('error', done);
      // A client gone with the buffer full never drains it.
      raw.once('close', done);
    });
  }

  /** Ends the response if it was committed as SSE. Safe to call more than once. */
  close(): void {
    if (!this.#connected) return;
    this.#connected = false;
    if (this.#headersSent) this.reply.raw.end();
  }
}

/**
 * An event stream for `reply` that notices its client going away: `gone` runs then too. One
 * listener function for both events, so a held stream keeps one closure for it.
 */
function eventStreamOf(reply: FastifyReply, gone?: () => void): EventStream {
  const stream = new EventStream(reply);
  const onGone = (): void => {
    stream.disconnected();
    gone?.();
  };
  reply.raw.on('close', onGone);
  // An error on the response (a client reset mid-write) is a client gone, not a crash.
  reply.raw.on('error', onGone);
  return stream;
}

/**
 * The first event, with the response head: the head is written on its own (corked into the same
 * segment as the event), which makes Node flatten the header string it keeps for the response's
 * life. Sent with the event, only the concatenation was flattened, and the response kept its head
 * as a tree of some 30 string pieces: about 0.8 KB per held stream (bench/PROFILE.md).
 */
function sendFirst(events: EventStream, event: ServerSentEvent): Promise<void> {
  const socket = events.reply.raw.socket;
  socket?.cork();
  let sent: Promise<void>;
  try {
    events.sendHeaders();
    events.reply.raw.flushHeaders();
    // `send` writes before it returns; uncorked before waiting on it, as a write past the
    // socket's buffer waits for a `drain` that a corked socket never emits.
    sent = events.send(event);
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
  readonly #events: EventStream;
  readonly #stream: EncodedStream;
  readonly #end: StreamEnd;
  /** Resolves the route handler's promise; undefined once called. */
  #settle: (() => void) | undefined;
  /** The hub's: called once the stream is done with. */
  readonly #ended: (end: StreamEnd) => void;
  readonly #onFrame = (result: IteratorResult<StreamFrame>): void => this.#write(result);
  readonly #onError = (error: unknown): void => this.#fail(error);

  constructor(
    events: EventStream,
    stream: EncodedStream,
    end: StreamEnd,
    settle: () => void,
    ended: (end: StreamEnd) => void,
  ) {
    this.#events = events;
    this.#stream = stream;
    this.#end = end;
    this.#settle = settle;
    this.#ended = ended;
  }

  next(): void {
    this.#stream.frames.next().then(this.#onFrame, this.#onError);
  }

  #write(result: IteratorResult<StreamFrame>): void {
    const events = this.#events;
    const reply = events.reply;
    if (result.done === true || !events.isConnected) {
      // A stream that ends before its first event (a reconnect whose Last-Event-ID is the final
      // event) is still an event stream: EventSource and @a2a-js/sdk refuse a 200 answer whose
      // Content-Type is not text/event-stream, which is what an empty reply would be.
      if (!reply.raw.headersSent && events.isConnected) events.sendHeaders();
      this.#finish();
      return;
    }
    let sent: Promise<void>;
    try {
      const event = { id: String(result.value.seq), data: this.#stream.data(result.value) };
      sent = reply.raw.headersSent ? events.send(event) : sendFirst(events, event);
    } catch (error) {
      this.#fail(error);
      return;
    }
    // The response is committed as SSE: the route handler can return.
    this.#release();
    sent.then(() => this.next(), this.#onError);
  }

  #fail(error: unknown): void {
    const events = this.#events;
    events.reply.request.log.warn({ err: error }, 'a2a: stream failed');
    if (!events.isConnected) {
      this.#finish();
      return;
    }
    let sent: Promise<void>;
    try {
      sent = events.send(this.#stream.error(error));
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
      this.#events.close();
      this.#release();
      this.#ended(this.#end);
    };
    this.#stream.frames.return(undefined).then(done, (error: unknown) => {
      this.#events.reply.request.log.warn({ err: error }, 'a2a: a stream failed to end');
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
  readonly #open = new Map<StreamEnd, EventStream>();
  readonly #heartbeat: NodeJS.Timeout | undefined;
  /** Called each time the last open stream ends (see drain). */
  #onEmpty: (() => void)[] = [];

  constructor(heartbeatIntervalMs: number) {
    // One timer for every open stream rather than one per stream: an idle stream then costs no
    // timer at all.
    this.#heartbeat =
      heartbeatIntervalMs > 0
        ? setInterval(() => {
            for (const events of this.#open.values()) {
              // Only once the response is committed as SSE, and never into a closed socket.
              const raw = events.reply.raw;
              if (raw.headersSent && events.isConnected && !raw.writableEnded) {
                raw.write(': heartbeat\n\n');
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
   * held stream keeps no suspended async frame of the route or of this method
   * (bench/PROFILE.md, per-stream memory).
   */
  pipe(reply: FastifyReply, stream: EncodedStream, end: StreamEnd): Promise<void> {
    // The client went away: the stream ends (the pump then ends the response).
    const events = eventStreamOf(reply, () => end.abort());
    this.#open.set(end, events);
    return new Promise<void>((settle) => {
      new StreamPump(events, stream, end, settle, this.#ended).next();
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
    const events = eventStreamOf(reply);
    try {
      await events.send({ data });
    } finally {
      events.close();
    }
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
