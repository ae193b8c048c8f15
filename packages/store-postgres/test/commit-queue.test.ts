/** The group-commit queue's interval: plain updates wait for company, anything else goes at once (issue 30). */
import { describe, expect, it } from 'vitest';
import { CommitQueue } from '../src/group-commit.js';

interface Entry {
  name: string;
  keys: string[];
  mayWait: boolean;
}

/** A queue whose batches are recorded with the time they went, each taking `runMs` to run. */
function recordingQueue(intervalMs: number, runMs = 1) {
  const batches: { at: number; names: string[] }[] = [];
  const began = performance.now();
  const queue = new CommitQueue<Entry>(
    2,
    128,
    async (batch) => {
      batches.push({ at: performance.now() - began, names: batch.map((e) => e.name) });
      await new Promise((resolve) => setTimeout(resolve, runMs));
    },
    { ms: intervalMs, mayWait: (entry) => entry.mayWait },
  );
  const push = (name: string, mayWait = true) => queue.push({ name, keys: [`t:${name}`], mayWait });
  return { queue, batches, push };
}

describe('CommitQueue interval', () => {
  it('a commit after a quiet moment goes at once; those right after it wait out the interval, then go together', async () => {
    const { queue, batches, push } = recordingQueue(60);
    push('a');
    push('b');
    push('c');
    expect(batches.map((b) => b.names)).toEqual([['a']]);
    await queue.drained();
    expect(batches.map((b) => b.names)).toEqual([['a'], ['b', 'c']]);
    expect((batches[1]?.at ?? 0) - (batches[0]?.at ?? 0)).toBeGreaterThanOrEqual(55);
  });

  it('a commit that may not wait ends the wait, taking the waiting ones with it', async () => {
    const { queue, batches, push } = recordingQueue(10_000);
    push('a');
    push('b');
    push('c');
    push('d', false);
    // No timer ran: 'd' sent 'b', 'c' and itself at once (the wait would have been 10 s).
    expect(batches.map((b) => b.names)).toEqual([['a'], ['b', 'c', 'd']]);
    await queue.drained();
  });

  it('interval 0: every batch goes as soon as a lane is free', async () => {
    const { queue, batches, push } = recordingQueue(0, 20);
    push('a');
    push('b');
    push('c');
    expect(batches.map((b) => b.names)).toEqual([['a'], ['b']]);
    await queue.drained();
    expect(batches.map((b) => b.names)).toEqual([['a'], ['b'], ['c']]);
  });
});
