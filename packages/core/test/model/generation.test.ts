import { describe, expect, it } from 'vitest';
import { advancesGeneration, applyEvents } from '../../src/model/task-state.js';
import type { Message, Task, TaskEvent, TaskState } from '../../src/model/types.js';

// The A2A 1.1 draft's task generation (§3.2.7), as the model derives it from the log.

const created: Task = {
  kind: 'task',
  id: 't1',
  contextId: 'c1',
  status: { state: 'submitted' },
  history: [{ kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hi' }] }],
};

const status = (state: TaskState): TaskEvent => ({
  kind: 'status-update',
  taskId: 't1',
  contextId: 'c1',
  final: false,
  status: { state },
});

const chunk = (text: string, append = true): TaskEvent => ({
  kind: 'artifact-update',
  taskId: 't1',
  contextId: 'c1',
  artifact: { artifactId: 'a', parts: [{ kind: 'text', text }] },
  append,
});

const followUp = (messageId: string): Message => ({
  kind: 'message',
  role: 'user',
  messageId,
  taskId: 't1',
  contextId: 'c1',
  parts: [{ kind: 'text', text: 'more' }],
});

const turnEnd: TaskEvent = { kind: 'turn-end', taskId: 't1', contextId: 'c1', turnId: 'm1' };

describe('task generation (A2A 1.1 draft §3.2.7)', () => {
  it('is 1 when the task is created, and the creating event carries none', () => {
    const task = applyEvents(undefined, [created]);
    expect(task.generation).toBe(1);
    expect(created).not.toHaveProperty('generation');
  });

  it('grows by exactly one per status change, artifact chunk and recorded user message, not per turn end', () => {
    const events: TaskEvent[] = [
      created,
      status('working'),
      chunk('a', false),
      chunk('b'),
      chunk('c'),
      turnEnd,
      status('input-required'),
      followUp('m2'),
      status('working'),
      status('completed'),
    ];
    // Applied one by one, as commits do, and all at once: the same count either way.
    let task: Task | undefined;
    const seen: number[] = [];
    for (const event of events) {
      task = applyEvents(task, [event]);
      seen.push(task.generation as number);
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 5, 6, 7, 8, 9]);
    expect(applyEvents(undefined, events).generation).toBe(9);
    // The rule, event by event: the count is 1 plus the advancing events after creation.
    expect(1 + events.slice(1).filter(advancesGeneration).length).toBe(9);
  });

  it('merges chunks of text into one part, yet counts each chunk as its own change', () => {
    const task = applyEvents(undefined, [created, chunk('a', false), chunk('b'), chunk('c')]);
    expect(task.artifacts?.[0]?.parts).toEqual([{ kind: 'text', text: 'abc' }]);
    expect(task.generation).toBe(4);
  });

  it('counts a task written before generations were kept from 1 at its next change', () => {
    const legacy: Task = { ...created, status: { state: 'working' } };
    expect(legacy.generation).toBeUndefined();
    expect(applyEvents(legacy, [chunk('x', false)]).generation).toBe(1);
    expect(applyEvents(legacy, [turnEnd]).generation).toBeUndefined();
  });

  it('leaves the snapshot it was given as it was', () => {
    const task = applyEvents(undefined, [created]);
    const next = applyEvents(task, [status('working')]);
    expect(task.generation).toBe(1);
    expect(next.generation).toBe(2);
  });

  it('is refused with the event an illegal change brings: nothing counted for it', () => {
    const done = applyEvents(undefined, [created, status('completed')]);
    expect(done.generation).toBe(2);
    expect(() => applyEvents(done, [followUp('m3')])).toThrow(/terminal/);
  });
});
