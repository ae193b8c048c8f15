/**
 * Model output arrives a few characters at a time; each A2A artifact update is an event in the
 * task's log, a write to the store and a frame to every follower. {@link TextArtifactStream} turns
 * the deltas into the chunks of one artifact (§7.2.3 `append`, `lastChunk`), sending a chunk when
 * the text held back reaches a size or has waited a time, whichever comes first.
 */

import type { ArtifactInput, TurnContext } from '../executor.js';
import type { Metadata } from '../model/types.js';

export interface TextArtifactOptions {
  /** The artifact's id. @default a fresh id, chosen by the turn on the first chunk */
  artifactId?: string;
  /** The artifact's name, e.g. `answer`. */
  name?: string;
  description?: string;
  /** Sent with every chunk. */
  metadata?: Metadata;
  /**
   * The longest a delta is held back before it is sent, in milliseconds: the latency a client
   * sees at most, and what bounds the chunk rate of a fast model. `0` sends every delta at once.
   * @default 50
   */
  maxDelayMs?: number;
  /**
   * A chunk is sent as soon as this many characters wait, and no chunk is longer (a longer delta
   * is split, never inside a surrogate pair). @default 1024
   */
  maxChars?: number;
}

export const DEFAULT_MAX_DELAY_MS = 50;
export const DEFAULT_MAX_CHARS = 1024;

/**
 * One text artifact streamed in chunks. Text is sent in the order written, none dropped, none
 * repeated: `write` appends to a buffer, a chunk leaves when the buffer reaches `maxChars` (the
 * write then waits for it: backpressure from the store reaches the model's stream) or when the
 * oldest character in it has waited `maxDelayMs` (a timer); `close` sends what is left as the last
 * chunk. Chunks are sent one after the other, each after the previous one's `turn.artifact` call
 * resolved.
 *
 * Before an update of another kind (a `working` status, another artifact, the turn's final
 * status), `await flush()`, so the client sees the text written before it first.
 *
 * A failed send (e.g. the store rejecting the write) is kept and thrown by the next `write`,
 * `flush` or `close`.
 */
export class TextArtifactStream {
  readonly #turn: Pick<TurnContext, 'artifact'>;
  readonly #options: TextArtifactOptions;
  readonly #maxDelayMs: number;
  readonly #maxChars: number;
  #buffer = '';
  #text = '';
  #artifactId: string | undefined;
  #chunks = 0;
  #timer: NodeJS.Timeout | undefined;
  /** The sends so far, in order: each chunk is sent after the previous one resolved. */
  #sending: Promise<void> = Promise.resolve();
  #failure: { error: unknown } | undefined;
  #closed = false;

  constructor(turn: Pick<TurnContext, 'artifact'>, options: TextArtifactOptions = {}) {
    const maxDelayMs = options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
    const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
    if (!Number.isFinite(maxDelayMs) || maxDelayMs < 0) {
      throw new RangeError(`maxDelayMs must be a number of milliseconds >= 0, got ${maxDelayMs}.`);
    }
    if (!Number.isInteger(maxChars) || maxChars < 2) {
      throw new RangeError(`maxChars must be an integer >= 2, got ${maxChars}.`);
    }
    this.#turn = turn;
    this.#options = options;
    this.#maxDelayMs = maxDelayMs;
    this.#maxChars = maxChars;
    this.#artifactId = options.artifactId;
  }

  /** The artifact's id once its first chunk was sent (or the id given in the options). */
  get artifactId(): string | undefined {
    return this.#artifactId;
  }

  /** All text written so far, sent or not. */
  get text(): string {
    return this.#text;
  }

  /** How many chunks were sent (or are being sent). */
  get chunks(): number {
    return this.#chunks;
  }

  /** Whether `close` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Adds a delta. Resolves at once while the buffer is below `maxChars`; otherwise once the
   * chunks it filled have been handed to the turn.
   * @throws {Error} after `close`, and the error of an earlier failed send.
   */
  write(delta: string): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('TextArtifactStream: write after close.'));
    if (this.#failure) return Promise.reject(this.#failure.error);
    if (delta === '') return Promise.resolve();
    this.#buffer += delta;
    this.#text += delta;
    if (this.#buffer.length >= this.#maxChars || this.#maxDelayMs === 0) return this.flush();
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        // Its failure is kept in #failure and thrown by the next call.
        this.flush().catch(() => undefined);
      }, this.#maxDelayMs);
    }
    return Promise.resolve();
  }

  /** Sends what the buffer holds now (not as the last chunk); resolves once every chunk so far was handed to the turn. */
  flush(): Promise<void> {
    return this.#drain(false);
  }

  /**
   * Sends what is left as the artifact's last chunk (`lastChunk: true`; an empty text part when
   * everything was sent already). Sends nothing when nothing was ever written. Idempotent.
   * @returns the artifact's id, or undefined when nothing was written.
   */
  async close(): Promise<string | undefined> {
    if (!this.#closed) {
      this.#closed = true;
      await this.#drain(true);
    } else {
      await this.#sending;
    }
    if (this.#failure) throw this.#failure.error;
    return this.#chunks === 0 ? undefined : this.#artifactId;
  }

  /** Drops what was not sent and stops the timer, e.g. when the turn was canceled. Later writes reject. */
  discard(): void {
    this.#closed = true;
    this.#buffer = '';
    this.#stopTimer();
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #drain(last: boolean): Promise<void> {
    this.#stopTimer();
    if (this.#failure) return Promise.reject(this.#failure.error);
    const pieces = splitText(this.#buffer, this.#maxChars);
    this.#buffer = '';
    if (last && pieces.length === 0 && this.#chunks > 0) pieces.push('');
    pieces.forEach((piece, index) => {
      const lastChunk = last && index === pieces.length - 1;
      const chunk = this.#chunk(piece, lastChunk);
      this.#chunks += 1;
      this.#sending = this.#sending.then(() => this.#send(chunk));
    });
    return this.#sending.then(() => {
      if (this.#failure) throw this.#failure.error;
    });
  }

  #chunk(text: string, lastChunk: boolean): ArtifactInput {
    const first = this.#chunks === 0;
    const chunk: ArtifactInput = { text, append: !first };
    if (lastChunk) chunk.lastChunk = true;
    if (first) {
      if (this.#options.name !== undefined) chunk.name = this.#options.name;
      if (this.#options.description !== undefined) chunk.description = this.#options.description;
    }
    if (this.#options.metadata !== undefined) chunk.metadata = this.#options.metadata;
    return chunk;
  }

  async #send(chunk: ArtifactInput): Promise<void> {
    if (this.#failure) return;
    try {
      // The id is known only once the first chunk was sent, unless given: set it here, in order.
      if (this.#artifactId !== undefined) chunk.artifactId = this.#artifactId;
      this.#artifactId = await this.#turn.artifact(chunk);
    } catch (error) {
      this.#failure = { error };
    }
  }
}

/** `text` in pieces of at most `max` UTF-16 units, never cutting a surrogate pair in two. */
export function splitText(text: string, max: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + max, text.length);
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
