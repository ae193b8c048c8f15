/**
 * The token agent of `npm run bench:tokens`: what an LLM agent's answer looks like on the wire —
 * one artifact streamed in many small text chunks at a steady rate.
 *
 * `tokens:<count>:<perSecond>[:<delayMs>[:plain]]` waits `delayMs` (default 0; the cross-worker
 * runs give the client time to resubscribe on the other worker), then emits `count` chunks of one
 * artifact, chunk i due at start + i / perSecond (a drift-free schedule: a late chunk does not
 * delay the ones after it). Each chunk's text is 4 characters: its index in base 36, padded to
 * three, and a space, so a client can check that no chunk is lost, duplicated or reordered. Unless
 * `plain`, the chunk's artifact carries `metadata.t`, the emit time (performance.timeOrigin +
 * performance.now(), ms with sub-ms resolution, comparable across processes on one host) taken
 * just before the chunk is handed to the server; `plain` leaves it out, for the final task's size.
 * On the artifact rather than the part: a part with metadata is a part of its own in the task's
 * snapshot, so a stamp per part would make the snapshot grow by one part per token, which an LLM's
 * plain text does not (the first runs of issue 30 measured it that way).
 */

import { performance } from 'node:perf_hooks';

export interface TokenCommand {
  count: number;
  perSecond: number;
  delayMs: number;
  plain: boolean;
}

export function parseTokenCommand(text: string): TokenCommand | undefined {
  const match = /^tokens:(\d+):(\d+)(?::(\d+))?(:plain)?$/.exec(text.trim());
  if (!match) return undefined;
  return {
    count: Number(match[1]),
    perSecond: Math.max(1, Number(match[2])),
    delayMs: Number(match[3] ?? 0),
    plain: match[4] !== undefined,
  };
}

export const nowHr = (): number => performance.timeOrigin + performance.now();

/** Chunk i's text: its index in base 36, three characters, then a space. */
export function tokenText(index: number): string {
  return `${index.toString(36).padStart(3, '0')} `;
}

/** The index a chunk's text names (NaN when it is not a token). */
export function tokenIndex(text: string): number {
  return /^[0-9a-z]{3} $/.test(text) ? Number.parseInt(text, 36) : Number.NaN;
}

/** One chunk: its text part, and (unless plain) the artifact metadata stamping its emit time. */
export interface TokenChunk {
  part: { kind: 'text'; text: string };
  metadata?: { t: number };
}

export function tokenChunk(index: number, plain: boolean): TokenChunk {
  const part = { kind: 'text' as const, text: tokenText(index) };
  return plain ? { part } : { part, metadata: { t: nowHr() } };
}

/** Resolves at `at` (a performance.now() time) or at once when it has passed; early when `signal` aborts. */
export function sleepUntil(at: number, signal?: AbortSignal): Promise<void> {
  const wait = at - performance.now();
  if (wait <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, wait);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Runs the schedule: `emit(i, part)` for every chunk at its due time. `emit` may return a promise
 * (the runtime's backpressure); it is awaited before the next chunk's wait.
 */
export async function streamTokens(
  command: TokenCommand,
  emit: (index: number, chunk: TokenChunk) => unknown,
  signal?: AbortSignal,
): Promise<void> {
  const start = performance.now() + command.delayMs;
  const interval = 1000 / command.perSecond;
  for (let i = 0; i < command.count; i++) {
    await sleepUntil(start + i * interval, signal);
    if (signal?.aborted) return;
    await emit(i, tokenChunk(i, command.plain));
  }
}
