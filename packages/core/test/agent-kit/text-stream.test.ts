/**
 * TextArtifactStream: deltas become chunks of one artifact, bounded in time and size, never lost,
 * repeated or reordered; the last chunk is marked. Driven with fake timers over a recording
 * `artifact` (the executor contract's own signature), then once through the real runtime.
 */

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { splitText, TextArtifactStream } from '../../src/agent-kit/index.js';
import type { ArtifactInput } from '../../src/executor.js';
import { asTask, textParts, useRuntimes, userMessage } from '../runtime/helpers.js';

/** The chunks a stream hands to `turn.artifact`, and the id the turn gives the artifact. */
function recordingTurn(options: { hold?: Promise<void>; failAt?: number } = {}) {
  const chunks: ArtifactInput[] = [];
  return {
    chunks,
    async artifact(chunk: ArtifactInput): Promise<string> {
      chunks.push(structuredClone(chunk));
      if (options.failAt === chunks.length) throw new Error('store down');
      await options.hold;
      return chunk.artifactId ?? 'generated-id';
    },
  };
}

const joined = (chunks: ArtifactInput[]): string => chunks.map((chunk) => chunk.text ?? '').join('');

describe('TextArtifactStream', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('holds deltas back until maxDelayMs, then sends them as one chunk', async () => {
    const turn = recordingTurn();
    const stream = new TextArtifactStream(turn, { maxDelayMs: 100, maxChars: 1000, name: 'answer' });
    for (const token of ['Hel', 'lo', ', ', 'wor']) await stream.write(token);
    await vi.advanceTimersByTimeAsync(99);
    expect(turn.chunks).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(turn.chunks).toEqual([{ text: 'Hello, wor', append: false, name: 'answer' }]);
    await stream.write('ld');
    expect(await stream.close()).toBe('generated-id');
    // The second chunk extends the first one's artifact, by the id the turn gave it.
    expect(turn.chunks[1]).toEqual({ artifactId: 'generated-id', text: 'ld', append: true, lastChunk: true });
  });

  it('sends a chunk as soon as maxChars wait, and no chunk is longer', async () => {
    const turn = recordingTurn();
    const stream = new TextArtifactStream(turn, { maxDelayMs: 10_000, maxChars: 4 });
    await stream.write('ab');
    expect(turn.chunks).toHaveLength(0);
    await stream.write('cdefghij'); // 10 waiting: 4 + 4 + 2
    expect(turn.chunks.map((chunk) => chunk.text)).toEqual(['abcd', 'efgh', 'ij']);
    await stream.close();
    expect(turn.chunks.map((chunk) => chunk.text)).toEqual(['abcd', 'efgh', 'ij', '']);
    expect(turn.chunks.map((chunk) => chunk.lastChunk === true)).toEqual([false, false, false, true]);
  });

  it('keeps every character, in order, however the deltas and the timer interleave', async () => {
    const turn = recordingTurn();
    const stream = new TextArtifactStream(turn, { maxDelayMs: 30, maxChars: 16, artifactId: 'fixed' });
    let expected = '';
    for (let i = 0; i < 500; i++) {
      const delta = `t${i}${'x'.repeat(i % 7)} `;
      expected += delta;
      await stream.write(delta);
      if (i % 3 === 0) await vi.advanceTimersByTimeAsync(11);
    }
    await stream.close();
    expect(joined(turn.chunks)).toBe(expected);
    expect(stream.text).toBe(expected);
    expect(turn.chunks.every((chunk) => (chunk.text ?? '').length <= 16)).toBe(true);
    expect(turn.chunks.every((chunk) => chunk.artifactId === 'fixed')).toBe(true);
    expect(turn.chunks.filter((chunk) => chunk.append === false)).toHaveLength(1);
    expect(turn.chunks.filter((chunk) => chunk.lastChunk)).toEqual([turn.chunks.at(-1)]);
  });

  it('coalesces a fast model: 1000 tokens in 1 s become about 1 s / maxDelayMs chunks', async () => {
    const turn = recordingTurn();
    const stream = new TextArtifactStream(turn, { maxDelayMs: 50, maxChars: 100_000 });
    for (let i = 0; i < 1000; i++) {
      await stream.write('tok ');
      await vi.advanceTimersByTimeAsync(1);
    }
    await stream.close();
    expect(turn.chunks.length).toBeGreaterThanOrEqual(19);
    expect(turn.chunks.length).toBeLessThanOrEqual(22);
  });

  it('write waits for the chunks it filled (backpressure); below maxChars it resolves at once', async () => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const turn = recordingTurn({ hold });
    const stream = new TextArtifactStream(turn, { maxDelayMs: 10_000, maxChars: 4 });
    let settled = false;
    const full = stream.write('abcd').then(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    release();
    await full;
    expect(settled).toBe(true);
  });

  it('never splits a surrogate pair', () => {
    expect(splitText('ab😀cd', 3)).toEqual(['ab', '😀c', 'd']);
    expect(splitText('', 3)).toEqual([]);
  });

  it('sends nothing when nothing was written, and close is idempotent', async () => {
    const turn = recordingTurn();
    const stream = new TextArtifactStream(turn);
    await stream.write('');
    expect(await stream.close()).toBeUndefined();
    expect(await stream.close()).toBeUndefined();
    expect(turn.chunks).toEqual([]);
    await expect(stream.write('late')).rejects.toThrow(/after close/);
  });

  it('a failed send is thrown by the next call, and no later chunk is sent', async () => {
    const turn = recordingTurn({ failAt: 1 });
    const stream = new TextArtifactStream(turn, { maxDelayMs: 10, maxChars: 1000 });
    await stream.write('one');
    await vi.advanceTimersByTimeAsync(10);
    await expect(stream.write('two')).rejects.toThrow('store down');
    await expect(stream.close()).rejects.toThrow('store down');
    expect(turn.chunks.map((chunk) => chunk.text)).toEqual(['one']);
  });

  it('discard drops the buffer and stops the timer', async () => {
    const turn = recordingTurn();
    const stream = new TextArtifactStream(turn, { maxDelayMs: 10 });
    await stream.write('never sent');
    stream.discard();
    await vi.advanceTimersByTimeAsync(100);
    expect(turn.chunks).toEqual([]);
  });

  it('rejects bounds that cannot work', () => {
    const turn = recordingTurn();
    expect(() => new TextArtifactStream(turn, { maxDelayMs: -1 })).toThrow(/maxDelayMs/);
    expect(() => new TextArtifactStream(turn, { maxChars: 1 })).toThrow(/maxChars/);
  });
});

describe('TextArtifactStream through the runtime', () => {
  const runtime = useRuntimes();

  it('the task ends with one artifact holding the whole text, its last chunk marked', async () => {
    const words = Array.from({ length: 200 }, (_, i) => `w${i} `);
    const rt = runtime(async (turn) => {
      const stream = new TextArtifactStream(turn, { maxDelayMs: 5, maxChars: 64, name: 'answer' });
      for (const word of words) await stream.write(word);
      await stream.close();
      await turn.complete();
    });
    const task = asTask(await rt.sendMessage({ message: userMessage('go') }));
    expect(task.artifacts).toHaveLength(1);
    expect(task.artifacts?.[0]?.name).toBe('answer');
    expect(textParts(task.artifacts?.[0]?.parts)).toBe(words.join(''));
    // Coalesced: far fewer parts than words.
    expect(task.artifacts?.[0]?.parts.length).toBeLessThan(words.length / 4);
  });
});
