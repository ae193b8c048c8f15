import { describe, expect, it } from 'vitest';
import { A2AError } from '../../src/errors.js';
import { applyEvents, assertTransition, endsStream, withHistoryLength } from '../../src/model/task-state.js';
import type { Task, TaskEvent, TaskState } from '../../src/model/types.js';

const task = (): Task => ({
  kind: 'task',
  id: 't1',
  contextId: 'c1',
  status: { state: 'working' },
  history: [{ kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hi' }] }],
  artifacts: [{ artifactId: 'a', parts: [{ kind: 'text', text: 'one' }] }],
});

const status = (state: TaskState, text?: string): TaskEvent => ({
  kind: 'status-update',
  taskId: 't1',
  contextId: 'c1',
  final: false,
  status:
    text === undefined
      ? { state }
      : { state, message: { kind: 'message', role: 'agent', messageId: `s-${text}`, parts: [{ kind: 'text', text }] } },
});

const chunk = (artifactId: string, text: string, append?: boolean): TaskEvent => ({
  kind: 'artifact-update',
  taskId: 't1',
  contextId: 'c1',
  artifact: { artifactId, parts: [{ kind: 'text', text }] },
  ...(append === undefined ? {} : { append }),
});

describe('applyEvents', () => {
  it('changes neither the task nor the events it is given', () => {
    const before = task();
    const frozen = structuredClone(before);
    const events = [chunk('a', ' two', true), chunk('b', 'new'), status('completed', 'done')];
    const eventsCopy = structuredClone(events);
    const after = applyEvents(before, events);
    expect(before).toEqual(frozen);
    expect(events).toEqual(eventsCopy);
    expect(after).not.toBe(before);
    expect(after.artifacts?.map((a) => a.parts.map((p) => (p.kind === 'text' ? p.text : '')).join(''))).toEqual([
      'one two',
      'new',
    ]);
    expect(after.status.state).toBe('completed');
    expect(after.history?.map((m) => m.messageId)).toEqual(['m1', 's-done']);
  });

  it('appends chunks to the artifact with the same id, replaces it without append, adds new ids at the end', () => {
    const after = applyEvents(task(), [
      chunk('a', 'x', true),
      chunk('b', 'b1'),
      chunk('a', 'replaced'),
      chunk('b', 'b2', true),
    ]);
    expect(after.artifacts).toEqual([
      { artifactId: 'a', parts: [{ kind: 'text', text: 'replaced' }] },
      // Consecutive plain text chunks share one part (the log keeps each chunk).
      { artifactId: 'b', parts: [{ kind: 'text', text: 'b1b2' }] },
    ]);
  });

  it('joins only consecutive plain text chunks: a data part or metadata keeps parts apart', () => {
    const data = { kind: 'data' as const, data: { step: 1 } };
    const withMeta = { kind: 'text' as const, text: 'm', metadata: { lang: 'en' } };
    const events: TaskEvent[] = [
      chunk('a', 'x'),
      chunk('a', 'y', true),
      { ...chunk('a', '', true), artifact: { artifactId: 'a', parts: [data] } } as TaskEvent,
      chunk('a', 'z', true),
      { ...chunk('a', '', true), artifact: { artifactId: 'a', parts: [withMeta] } } as TaskEvent,
      chunk('a', 'w', true),
      chunk('a', 'v', true),
    ];
    const frozen = JSON.stringify(events);
    const after = applyEvents(task(), events);
    expect(after.artifacts?.[0]?.parts).toEqual([
      { kind: 'text', text: 'xy' },
      data,
      { kind: 'text', text: 'z' },
      withMeta,
      { kind: 'text', text: 'wv' },
    ]);
    // The events (what the log keeps and streams replay) are never changed.
    expect(JSON.stringify(events)).toBe(frozen);
  });

  it('appends user follow-up messages and agent status messages to the history, in order', () => {
    const follow: TaskEvent = {
      kind: 'message',
      role: 'user',
      messageId: 'm2',
      parts: [{ kind: 'text', text: 'more' }],
    };
    const after = applyEvents(task(), [status('input-required', 'q?'), follow, status('working')]);
    expect(after.history?.map((m) => m.messageId)).toEqual(['m1', 's-q?', 'm2']);
  });

  it('creates a task from a task event and refuses to create it twice', () => {
    const created = applyEvents(undefined, [task()]);
    expect(created.id).toBe('t1');
    expect(() => applyEvents(created, [task()])).toThrow(/already exists/);
    expect(() => applyEvents(undefined, [status('working')])).toThrow(/needs an existing task/);
  });

  it.each(['completed', 'canceled', 'failed', 'rejected'] as const)(
    'a %s task takes no more updates (§6.3)',
    (terminal) => {
      const done = applyEvents(task(), [status(terminal)]);
      for (const event of [
        status('working'),
        chunk('a', 'late', true),
        { kind: 'message', role: 'user', messageId: 'm9', parts: [] } as TaskEvent,
      ]) {
        let error: unknown;
        try {
          applyEvents(done, [event]);
        } catch (e) {
          error = e;
        }
        expect(A2AError.is(error) && error.code).toBe('INVALID_TRANSITION');
      }
    },
  );

  it('turn-end events change nothing', () => {
    const before = task();
    const after = applyEvents(before, [{ kind: 'turn-end', taskId: 't1', contextId: 'c1', turnId: 'm1' }]);
    expect(after).toEqual(before);
  });
});

describe('assertTransition', () => {
  it('allows moves between non-terminal states and into terminal ones', () => {
    expect(() => assertTransition('t', 'submitted', 'working')).not.toThrow();
    expect(() => assertTransition('t', 'working', 'input-required')).not.toThrow();
    expect(() => assertTransition('t', 'input-required', 'working')).not.toThrow();
    expect(() => assertTransition('t', 'auth-required', 'completed')).not.toThrow();
  });

  it('refuses to go back to submitted, to enter unknown, or to leave a terminal state', () => {
    expect(() => assertTransition('t', 'working', 'submitted')).toThrow(/cannot move from working to submitted/);
    expect(() => assertTransition('t', 'working', 'unknown')).toThrow(/cannot move/);
    expect(() => assertTransition('t', 'completed', 'working')).toThrow(/terminal state/);
  });
});

describe('endsStream and withHistoryLength', () => {
  it('terminal and interrupted status updates end a stream; others do not', () => {
    expect(endsStream(status('completed'))).toBe(true);
    expect(endsStream(status('input-required'))).toBe(true);
    expect(endsStream(status('auth-required'))).toBe(true);
    expect(endsStream(status('working'))).toBe(false);
    expect(endsStream(chunk('a', 'x'))).toBe(false);
  });

  it('keeps the last N messages; 0 keeps none; undefined keeps all', () => {
    const t = applyEvents(task(), [status('working', 'a'), status('working', 'b')]);
    expect(withHistoryLength(t, undefined).history).toHaveLength(3);
    expect(withHistoryLength(t, 2).history?.map((m) => m.messageId)).toEqual(['s-a', 's-b']);
    expect(withHistoryLength(t, 0).history).toEqual([]);
    expect(withHistoryLength(t, 10).history).toHaveLength(3);
  });
});
