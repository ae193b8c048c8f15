import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../src/model/types.js';
import { RECENT_EVENTS_DEFAULTS, RecentEvents } from '../src/store/recent-events.js';

/** An artifact chunk of `text`, as an agent streams one. */
function chunk(taskId: string, text: string): TaskEvent {
  return {
    kind: 'artifact-update',
    taskId,
    contextId: 'ctx',
    append: true,
    artifact: { artifactId: 'a', parts: [{ kind: 'text', text }] },
  } as TaskEvent;
}

function jsons(taskId: string, ...texts: string[]): string[] {
  return texts.map((text) => JSON.stringify(chunk(taskId, text)));
}

const seqs = (events: { seq: number }[] | undefined) => events?.map((e) => e.seq);

describe('RecentEvents', () => {
  it('answers the events after afterSeq from what was recorded, with seq and createdAt', () => {
    const recent = new RecentEvents();
    recent.record('t', 1, jsons('t', 'a', 'b'), 1000);
    recent.record('t', 3, jsons('t', 'c'), 2000);

    expect(recent.read('t', 0)).toEqual([
      { seq: 1, event: chunk('t', 'a'), createdAt: 1000 },
      { seq: 2, event: chunk('t', 'b'), createdAt: 1000 },
      { seq: 3, event: chunk('t', 'c'), createdAt: 2000 },
    ]);
    expect(seqs(recent.read('t', 1))).toEqual([2, 3]);
    expect(seqs(recent.read('t', 2))).toEqual([3]);
    expect(seqs(recent.read('t', 0, 2))).toEqual([1, 2]);
    expect(seqs(recent.read('t', 1, 1))).toEqual([2]);
  });

  it("parses afresh for every plain read, so each answer is its caller's to change", () => {
    const recent = new RecentEvents();
    recent.record('t', 1, jsons('t', 'a'), 1);
    const first = recent.read('t', 0)?.[0]?.event as Extract<TaskEvent, { kind: 'artifact-update' }>;
    first.artifact.parts = [];
    const second = recent.read('t', 0)?.[0]?.event;
    expect(second).not.toBe(first);
    expect(second).toEqual(chunk('t', 'a'));
  });

  it('hands a committed object to the first shared read, then parses as before', () => {
    const recent = new RecentEvents();
    const committed = [chunk('t', 'a'), chunk('t', 'b')];
    recent.record('t', 1, jsons('t', 'a', 'b'), 1, committed);
    recent.record('t', 3, jsons('t', 'c'), 2);

    // A plain read never gets the committed objects, nor takes them.
    const plain = recent.read('t', 0);
    expect(plain?.map((e) => e.event)).toEqual([chunk('t', 'a'), chunk('t', 'b'), chunk('t', 'c')]);
    for (const [i, stored] of (plain ?? []).slice(0, 2).entries()) expect(stored.event).not.toBe(committed[i]);

    const shared = recent.read('t', 0, undefined, true);
    expect(shared?.map((e) => e.event)).toEqual([chunk('t', 'a'), chunk('t', 'b'), chunk('t', 'c')]);
    expect(shared?.[0]?.event).toBe(committed[0]);
    expect(shared?.[1]?.event).toBe(committed[1]);
    // Taken: a later shared read parses its own, equal copy.
    const again = recent.read('t', 0, undefined, true);
    expect(again?.map((e) => e.event)).toEqual(shared?.map((e) => e.event));
    for (const [i, stored] of (again ?? []).entries()) expect(stored.event).not.toBe(shared?.[i]?.event);
  });

  it('counts an event held as an object twice against its bounds, until a shared read takes it', () => {
    const one = jsons('t', 'a')[0]?.length as number;
    const recent = new RecentEvents({ maxCharsPerTask: 3 * one });
    recent.record('t', 1, jsons('t', 'a'), 1, [chunk('t', 'a')]);
    expect(recent.chars).toBe(2 * one);
    recent.record('t', 2, jsons('t', 'b'), 1, [chunk('t', 'b')]);
    // Over 3 × one: the oldest go until it fits (event 1, weighing 2 × one).
    expect(recent.chars).toBe(2 * one);
    expect(recent.read('t', 0)).toBeUndefined();
    recent.read('t', 1, undefined, true); // takes event 2's object
    expect(recent.chars).toBe(one);
    recent.record('t', 3, jsons('t', 'c'), 1);
    expect(seqs(recent.read('t', 1))).toEqual([2, 3]);
    expect(recent.chars).toBe(2 * one);
  });

  it('ignores committed objects that do not match the texts one for one', () => {
    const recent = new RecentEvents();
    const lone = chunk('t', 'a');
    recent.record('t', 1, jsons('t', 'a', 'b'), 1, [lone]);
    const shared = recent.read('t', 0, undefined, true);
    expect(shared?.[0]?.event).not.toBe(lone);
    expect(shared?.map((e) => e.event)).toEqual([chunk('t', 'a'), chunk('t', 'b')]);
  });

  it('has no answer unless it holds the event right after afterSeq', () => {
    const recent = new RecentEvents();
    recent.record('t', 5, jsons('t', 'e', 'f'), 1);
    // Before what it holds: the database has events 1..4.
    expect(recent.read('t', 0)).toBeUndefined();
    expect(recent.read('t', 3)).toBeUndefined();
    expect(seqs(recent.read('t', 4))).toEqual([5, 6]);
    // At or past its end: only the database knows whether anything follows.
    expect(recent.read('t', 6)).toBeUndefined();
    expect(recent.read('t', 9)).toBeUndefined();
    expect(recent.read('other', 0)).toBeUndefined();
  });

  it('leaves odd arguments to the database', () => {
    const recent = new RecentEvents();
    recent.record('t', 1, jsons('t', 'a', 'b'), 1);
    expect(recent.read('t', 0.5)).toBeUndefined();
    expect(recent.read('t', -1)).toBeUndefined();
    expect(recent.read('t', 0, 0)).toBeUndefined();
    expect(recent.read('t', 0, -1)).toBeUndefined();
    expect(recent.read('t', 0, 1.5)).toBeUndefined();
    expect(recent.read('t', 0, Number.NaN)).toBeUndefined();
    expect(seqs(recent.read('t', 0, 1))).toEqual([1]);
  });

  it('gives every reader its own copy', () => {
    const recent = new RecentEvents();
    recent.record('t', 1, jsons('t', 'original'), 1);
    const [first] = recent.read('t', 0) ?? [];
    const [second] = recent.read('t', 0) ?? [];
    if (first === undefined || second === undefined) throw new Error('nothing read');
    expect(first.event).not.toBe(second.event);
    const part = (first.event as { artifact: { parts: { text: string }[] } }).artifact.parts[0];
    if (part === undefined) throw new Error('no part');
    part.text = 'changed';
    expect(recent.read('t', 0)).toEqual([{ seq: 1, event: chunk('t', 'original'), createdAt: 1 }]);
  });

  it('keeps a task contiguous: a commit that does not follow what it holds replaces it', () => {
    const recent = new RecentEvents();
    recent.record('t', 1, jsons('t', 'a', 'b'), 1);
    // Another instance committed 3; this one committed 4 after it.
    recent.record('t', 4, jsons('t', 'd'), 2);
    expect(recent.read('t', 0)).toBeUndefined();
    expect(recent.read('t', 2)).toBeUndefined();
    expect(seqs(recent.read('t', 3))).toEqual([4]);
    // A commit recorded late, behind what is held (seq 4 again after a purge and re-create, say).
    recent.record('t', 1, jsons('t', 'new'), 3);
    expect(recent.read('t', 0)).toEqual([{ seq: 1, event: chunk('t', 'new'), createdAt: 3 }]);
    expect(recent.read('t', 3)).toBeUndefined();
    expect(recent.chars).toBe(jsons('t', 'new')[0]?.length);
  });

  it('keeps only the latest maxEventsPerTask events of a task', () => {
    const recent = new RecentEvents({ maxEventsPerTask: 3 });
    for (let seq = 1; seq <= 5; seq++) recent.record('t', seq, jsons('t', `c${seq}`), seq);
    expect(recent.read('t', 1)).toBeUndefined();
    expect(seqs(recent.read('t', 2))).toEqual([3, 4, 5]);
    // One commit of more events than the bound keeps its latest.
    recent.record('t', 6, jsons('t', 'x', 'y', 'z', 'w'), 6);
    expect(recent.read('t', 5)).toBeUndefined();
    expect(seqs(recent.read('t', 6))).toEqual([7, 8, 9]);
  });

  it('keeps at most maxCharsPerTask characters of a task, and none of an event larger than that', () => {
    const one = jsons('t', 'a')[0]?.length as number;
    const recent = new RecentEvents({ maxCharsPerTask: 2 * one });
    recent.record('t', 1, jsons('t', 'a', 'b', 'c'), 1);
    expect(recent.read('t', 0)).toBeUndefined();
    expect(seqs(recent.read('t', 1))).toEqual([2, 3]);
    expect(recent.chars).toBe(2 * one);

    recent.record('t', 4, jsons('t', 'x'.repeat(3 * one)), 2);
    expect(recent.read('t', 3)).toBeUndefined();
    expect(recent.size).toBe(0);
    expect(recent.chars).toBe(0);
  });

  it('drops the least recently committed task past maxTasks', () => {
    const recent = new RecentEvents({ maxTasks: 2 });
    recent.record('a', 1, jsons('a', 'a1'), 1);
    recent.record('b', 1, jsons('b', 'b1'), 1);
    recent.record('a', 2, jsons('a', 'a2'), 2); // a is now the most recent
    recent.record('c', 1, jsons('c', 'c1'), 3); // b goes
    expect(recent.size).toBe(2);
    expect(recent.read('b', 0)).toBeUndefined();
    expect(seqs(recent.read('a', 0))).toEqual([1, 2]);
    expect(seqs(recent.read('c', 0))).toEqual([1]);
    expect(recent.chars).toBe([...jsons('a', 'a1', 'a2'), ...jsons('c', 'c1')].join('').length);
  });

  it('drops the least recently committed tasks past maxChars in all', () => {
    const one = jsons('a', 'x')[0]?.length as number;
    const recent = new RecentEvents({ maxChars: 3 * one, maxCharsPerTask: 2 * one });
    recent.record('a', 1, jsons('a', 'x'), 1);
    recent.record('b', 1, jsons('b', 'x'), 1);
    recent.record('c', 1, jsons('c', 'x'), 1);
    expect(recent.size).toBe(3);
    recent.record('c', 2, jsons('c', 'y'), 2);
    expect(recent.read('a', 0)).toBeUndefined();
    expect(seqs(recent.read('b', 0))).toEqual([1]);
    expect(seqs(recent.read('c', 0))).toEqual([1, 2]);
    expect(recent.chars).toBe(3 * one);
  });

  it('drops a task whose held events end before a version it is told of', () => {
    const recent = new RecentEvents();
    recent.record('t', 1, jsons('t', 'a', 'b'), 1);
    recent.sawVersion('t', 2); // its own commit's notification
    recent.sawVersion('t', 1);
    recent.sawVersion('t', 0); // "look again"
    expect(seqs(recent.read('t', 0))).toEqual([1, 2]);
    recent.sawVersion('t', 3); // another instance committed 3
    expect(recent.read('t', 0)).toBeUndefined();
    expect(recent.size).toBe(0);
    expect(recent.chars).toBe(0);
  });

  it('forgets a task, and everything on clear', () => {
    const recent = new RecentEvents();
    recent.record('a', 1, jsons('a', 'a1'), 1);
    recent.record('b', 1, jsons('b', 'b1'), 1);
    recent.forget('a');
    expect(recent.read('a', 0)).toBeUndefined();
    expect(seqs(recent.read('b', 0))).toEqual([1]);
    recent.clear();
    expect(recent.read('b', 0)).toBeUndefined();
    expect(recent.size).toBe(0);
    expect(recent.chars).toBe(0);
  });

  it('holds nothing with a bound of 0, and refuses bounds that are not counts', () => {
    const recent = new RecentEvents({ maxTasks: 0 });
    recent.record('t', 1, jsons('t', 'a'), 1);
    expect(recent.read('t', 0)).toBeUndefined();
    expect(recent.size).toBe(0);
    expect(() => new RecentEvents({ maxTasks: -1 })).toThrow(RangeError);
    expect(() => new RecentEvents({ maxChars: 1.5 })).toThrow(/maxChars/);
    expect(RECENT_EVENTS_DEFAULTS.maxTasks).toBe(2000);
  });

  describe('recordHeard: events another instance committed, from its notification', () => {
    it('holds them with their own commit times when it holds nothing of the task', () => {
      const recent = new RecentEvents();
      expect(recent.recordHeard('t', 4, jsons('t', 'd', 'e'), [10, 20])).toBe(true);
      expect(recent.read('t', 3)).toEqual([
        { seq: 4, event: chunk('t', 'd'), createdAt: 10 },
        { seq: 5, event: chunk('t', 'e'), createdAt: 20 },
      ]);
      // More heard next: they follow.
      expect(recent.recordHeard('t', 6, jsons('t', 'f'), [30])).toBe(true);
      expect(seqs(recent.read('t', 3))).toEqual([4, 5, 6]);
    });

    it('refuses events that end before a version it was told of (a late notification)', () => {
      const recent = new RecentEvents();
      recent.sawVersion('t', 9); // say, another worker's later notification, or a task record at 9
      expect(recent.recordHeard('t', 4, jsons('t', 'd', 'e'), [1, 1])).toBe(false);
      expect(recent.read('t', 3)).toBeUndefined();
      // Events reaching the version told are taken.
      expect(recent.recordHeard('t', 8, jsons('t', 'h', 'i'), [1, 1])).toBe(true);
      expect(seqs(recent.read('t', 7))).toEqual([8, 9]);
    });

    it('keeps what it knows when held events reach further, and adds what overlapping ones bring', () => {
      const recent = new RecentEvents();
      recent.record('t', 1, jsons('t', 'a', 'b', 'c'), 1);
      expect(recent.recordHeard('t', 2, jsons('t', 'b'), [1])).toBe(false);
      expect(recent.recordHeard('t', 2, jsons('t', 'b', 'c', 'd', 'e'), [1, 1, 2, 2])).toBe(true);
      expect(
        recent
          .read('t', 0)
          ?.map((e) => [
            e.seq,
            (e.event as { artifact: { parts: { text: string }[] } }).artifact.parts[0]?.text,
            e.createdAt,
          ]),
      ).toEqual([
        [1, 'a', 1],
        [2, 'b', 1],
        [3, 'c', 1],
        [4, 'd', 2],
        [5, 'e', 2],
      ]);
    });

    it('remembers how far dropped events reached: a late notification of fewer is refused', () => {
      const recent = new RecentEvents({ maxTasks: 1 });
      recent.record('t', 1, jsons('t', 'a', 'b', 'c'), 1);
      recent.record('u', 1, jsons('u', 'a'), 1); // drops t (one task held)
      expect(recent.read('t', 0)).toBeUndefined();
      expect(recent.recordHeard('t', 2, jsons('t', 'b'), [1])).toBe(false);
      expect(recent.read('t', 1)).toBeUndefined();
      // clear() forgets what was seen too (a purge: the ids may start over).
      recent.clear();
      expect(recent.recordHeard('t', 1, jsons('t', 'a'), [1])).toBe(true);
    });

    it('refuses malformed calls', () => {
      const recent = new RecentEvents();
      expect(recent.recordHeard('t', 1, jsons('t', 'a', 'b'), [1])).toBe(false);
      expect(recent.recordHeard('t', 0, jsons('t', 'a'), [1])).toBe(false);
      expect(recent.recordHeard('t', 1.5, jsons('t', 'a'), [1])).toBe(false);
      expect(recent.recordHeard('t', 1, [], [])).toBe(false);
      expect(recent.size).toBe(0);
    });
  });
});
