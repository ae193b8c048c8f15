/**
 * Appending chunks to one artifact is linear (regression: each chunk was projected onto the whole
 * task, copying the artifact's parts, so 16,000 one-word chunks took 10.8 s and stalled other
 * requests meanwhile). An LLM streaming tokens into one artifact does exactly this.
 */

import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import { applyEvents, projectStatus } from '../../src/model/task-state.js';
import type { Task, TaskArtifactUpdateEvent, TaskEvent } from '../../src/model/types.js';
import { asTask, textParts, useRuntimes, userMessage } from './helpers.js';

const runtime = useRuntimes();

function append(text: string, append = true): TaskArtifactUpdateEvent {
  return {
    kind: 'artifact-update',
    taskId: 't',
    contextId: 'c',
    artifact: { artifactId: 'out', parts: [{ kind: 'text', text }] },
    append,
  };
}

const base: Task = { kind: 'task', id: 't', contextId: 'c', status: { state: 'working' } };

describe('applyEvents with many appends in one call', () => {
  it('appends every chunk in order, leaving the input task and the events unchanged', () => {
    const start = applyEvents(base, [append('0', false)]);
    const events = Array.from({ length: 1000 }, (_, i) => append(` ${i + 1}`));
    const frozen = JSON.stringify(start);
    const eventsBefore = JSON.stringify(events);
    const next = applyEvents(start, events);
    // Plain text chunks share one part in the snapshot (issue 30).
    expect(next.artifacts?.[0]?.parts).toHaveLength(1);
    const expected = `0${Array.from({ length: 1000 }, (_, i) => ` ${i + 1}`).join('')}`;
    expect(textParts(next.artifacts?.[0]?.parts)).toBe(expected);
    expect(JSON.stringify(start)).toBe(frozen);
    expect(JSON.stringify(events)).toBe(eventsBefore);
    // The next call extends a copy, never the previous snapshot it was given.
    const after = applyEvents(next, [append(' more')]);
    expect(textParts(after.artifacts?.[0]?.parts)).toBe(`${expected} more`);
    expect(textParts(next.artifacts?.[0]?.parts)).toBe(expected);
  });

  it('a replacing update after appends replaces the artifact; history grows once per message', () => {
    const next = applyEvents(base, [
      append('a', false),
      append('b'),
      append('c'),
      {
        kind: 'status-update',
        taskId: 't',
        contextId: 'c',
        status: { state: 'working', message: userMessage('m1') },
        final: false,
      },
      append('fresh', false),
      userMessage('m2') as TaskEvent,
    ]);
    expect(textParts(next.artifacts?.[0]?.parts)).toBe('fresh');
    expect(next.history?.map((m) => textParts(m.parts))).toEqual(['m1', 'm2']);
    expect(base.history).toBeUndefined();
  });
});

describe('projectStatus', () => {
  it('checks transitions and terminal states as applyEvents does, without building artifacts', () => {
    const projected = projectStatus(base, [append('x')]);
    expect(projected.artifacts).toBeUndefined();
    const done = projectStatus(base, [
      { kind: 'status-update', taskId: 't', contextId: 'c', status: { state: 'completed' }, final: true },
    ]);
    expect(done.status.state).toBe('completed');
    expect(() => projectStatus(done, [append('late')])).toThrow(/terminal state/);
    expect(() =>
      projectStatus(done, [
        { kind: 'status-update', taskId: 't', contextId: 'c', status: { state: 'working' }, final: false },
      ]),
    ).toThrow(/cannot move to working/);
  });
});

describe('an agent appending one word per chunk', () => {
  /** Runs a turn that appends `words` one-word chunks to one artifact; its duration in ms. */
  async function appendTurn(words: number): Promise<{ ms: number; task: Task; store: MemoryStore }> {
    const store = new MemoryStore();
    const rt = runtime(
      async (turn) => {
        for (let i = 0; i < words; i++) {
          await turn.artifact({ artifactId: 'tokens', text: `w${i} `, append: i > 0, lastChunk: i === words - 1 });
        }
        await turn.complete();
      },
      { store },
    );
    const started = performance.now();
    const task = asTask(await rt.sendMessage({ message: userMessage('go') }));
    return { ms: performance.now() - started, task, store };
  }

  it('keeps every chunk, in order: the snapshot as one part, the log chunk by chunk', async () => {
    const { task, store } = await appendTurn(3000);
    const parts = task.artifacts?.[0]?.parts ?? [];
    expect(parts).toHaveLength(1);
    expect(textParts(parts)).toBe(Array.from({ length: 3000 }, (_, i) => `w${i} `).join(''));
    const chunks = (await store.readEvents(task.id, 0))
      .map((stored) => stored.event)
      .filter((event) => event.kind === 'artifact-update')
      .map((event) => textParts(event.artifact.parts));
    expect(chunks).toEqual(Array.from({ length: 3000 }, (_, i) => `w${i} `));
  });

  it('takes time linear in the number of chunks: 8× the chunks, far less than 64× the time', async () => {
    await appendTurn(500); // warm up the JIT
    // The best of two runs each, as a machine shared with other work is noisy.
    const small = Math.min((await appendTurn(4000)).ms, (await appendTurn(4000)).ms);
    const large = Math.min((await appendTurn(32000)).ms, (await appendTurn(32000)).ms);
    // Linear is about 8×; the quadratic projection this replaces measured above 40×.
    expect(large / small).toBeLessThan(20);
  }, 60_000);
});
