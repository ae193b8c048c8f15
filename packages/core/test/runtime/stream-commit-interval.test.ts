/**
 * `streamCommitIntervalMs`: appended artifact chunks are committed at most this often per task;
 * every other update goes at once and takes waiting chunks with it (issue 30).
 */
import { A2AError, type CommitRequest, type TurnContext } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import { A2ARuntime } from '../../src/runtime.js';
import { asTask, delay, textParts, useRuntimes, userMessage } from './helpers.js';

const start = useRuntimes();

/** A memory store that records each commit's events (kind, and `append` for artifact chunks) and when it came. */
function recordingStore(): { store: MemoryStore; commits: { at: number; kinds: string[] }[] } {
  const store = new MemoryStore();
  const commits: { at: number; kinds: string[] }[] = [];
  const commit = store.commit.bind(store);
  store.commit = (request: CommitRequest, ctx) => {
    commits.push({
      at: performance.now(),
      kinds: request.events.map((e) => (e.kind === 'artifact-update' && e.append ? 'chunk' : e.kind)),
    });
    return commit(request, ctx);
  };
  return { store, commits };
}

/** An agent streaming `chunks` appended chunks `gapMs` apart, then a status message, then done. */
const streamingAgent = (chunks: number, gapMs: number) => async (turn: TurnContext) => {
  await turn.artifact({ artifactId: 'answer', text: 'c0' });
  for (let i = 1; i < chunks; i++) {
    await delay(gapMs);
    turn.artifact({ artifactId: 'answer', text: `c${i}`, append: true });
  }
  await turn.working('thinking about the next part');
  await turn.complete();
};

describe('streamCommitIntervalMs', () => {
  it('off (the default): each chunk emitted after the previous commit was written is its own commit', async () => {
    const { store, commits } = recordingStore();
    const runtime = start(streamingAgent(8, 15), { store });
    const task = asTask(await runtime.sendMessage({ message: userMessage('stream') }));
    expect(textParts(task.artifacts?.[0]?.parts)).toBe('c0c1c2c3c4c5c6c7');
    expect(commits.filter((c) => c.kinds.includes('chunk'))).toHaveLength(7);
  });

  it('on: chunks share commits, each still its own event in the log, in order; other updates do not wait', async () => {
    const { store, commits } = recordingStore();
    const runtime = start(streamingAgent(12, 10), { store, streamCommitIntervalMs: 60 });
    const task = asTask(await runtime.sendMessage({ message: userMessage('stream') }));
    expect(task.status.state).toBe('completed');
    expect(textParts(task.artifacts?.[0]?.parts)).toBe(Array.from({ length: 12 }, (_, i) => `c${i}`).join(''));
    const withChunks = commits.filter((c) => c.kinds.includes('chunk'));
    // 11 chunks 10 ms apart over ~110 ms, at most one commit per 60 ms: a few commits, not 11.
    expect(withChunks.length).toBeLessThanOrEqual(4);
    expect(withChunks.flatMap((c) => c.kinds.filter((k) => k === 'chunk'))).toHaveLength(11);
    // Every chunk is its own event, in the order emitted.
    const events = await store.readEvents(task.id, 0);
    const chunkTexts = events
      .map((e) => e.event)
      .filter((e) => e.kind === 'artifact-update')
      .map((e) => textParts(e.artifact.parts));
    expect(chunkTexts).toEqual(Array.from({ length: 12 }, (_, i) => `c${i}`));
  });

  it('a status update, or the end, never waits for the interval: it takes the waiting chunks with it', async () => {
    const { store, commits } = recordingStore();
    // The longest interval: had anything waited it out, the turn would take seconds.
    const runtime = start(
      async (turn) => {
        await turn.artifact({ artifactId: 'answer', text: 'a' });
        turn.artifact({ artifactId: 'answer', text: 'b', append: true });
        await delay(20);
        turn.artifact({ artifactId: 'answer', text: 'c', append: true });
        await turn.working('a status update');
        turn.artifact({ artifactId: 'answer', text: 'd', append: true });
        await turn.complete();
      },
      { store, streamCommitIntervalMs: 1000 },
    );
    const began = performance.now();
    const task = asTask(await runtime.sendMessage({ message: userMessage('stream') }));
    expect(performance.now() - began).toBeLessThan(900);
    expect(textParts(task.artifacts?.[0]?.parts)).toBe('abcd');
    // 'b' and 'c' waited and went with the status update; 'd' with the end.
    // 'c' waited, and went with the status update that followed it (and what came after).
    const withC = commits.find((c, i) => i > 0 && c.kinds.includes('chunk'));
    expect(withC?.kinds.slice(0, 2)).toEqual(['chunk', 'status-update']);
  });

  it("defaults to the store's advice (supports.streamCommitIntervalMs), and an explicit 0 overrides it", async () => {
    const advised = () => {
      const recording = recordingStore();
      Object.defineProperty(recording.store, 'supports', {
        value: { ...recording.store.supports, streamCommitIntervalMs: 60 },
      });
      return recording;
    };
    const paced = advised();
    const task = asTask(
      await start(streamingAgent(12, 10), { store: paced.store }).sendMessage({ message: userMessage('s') }),
    );
    expect(task.status.state).toBe('completed');
    expect(paced.commits.filter((c) => c.kinds.includes('chunk')).length).toBeLessThanOrEqual(4);
    const unpaced = advised();
    await start(streamingAgent(12, 10), { store: unpaced.store, streamCommitIntervalMs: 0 }).sendMessage({
      message: userMessage('s'),
    });
    expect(unpaced.commits.filter((c) => c.kinds.includes('chunk'))).toHaveLength(11);
  });

  it('refuses a value that is not a number of milliseconds from 0 to 1000', () => {
    for (const streamCommitIntervalMs of [-1, 1001, Number.NaN, '40' as unknown as number]) {
      let error: unknown;
      try {
        new A2ARuntime({ store: new MemoryStore(), executor: async () => {}, streamCommitIntervalMs });
      } catch (caught) {
        error = caught;
      }
      expect(A2AError.is(error) && error.code).toBe('INVALID_OPTIONS');
      expect((error as Error).message).toMatch(
        /streamCommitIntervalMs must be a number of milliseconds from 0 to 1000/,
      );
    }
  });
});
