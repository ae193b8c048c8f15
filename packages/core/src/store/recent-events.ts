/**
 * The events a store instance committed recently, kept so that `readEvents` of them needs no
 * database read. Under an agent streaming an artifact in small chunks, every chunk is one commit
 * and every stream following the task reads it back at once (the follower is woken by the
 * commit's notification): without this, the instance reads back, per chunk and per stream, what
 * it has just written itself.
 *
 * What it holds, per task: the JSON texts of the latest events this instance committed (the text
 * the store serialised for its insert: a string is the smallest form, and every read parses its own
 * copy, as the contract's "copied out" requires), contiguous, with their sequence numbers and commit
 * times. Bounded per task and in total (by the texts' length); tasks beyond the bound are dropped
 * least recently committed first. Beside a text it may hold the committed event itself, when its
 * committer handed it over (`CommitRequest.transfer`), until the first reader that never changes
 * what it reads (`readEvents`'s `shared`) takes it: the stream following the task on this instance
 * then gets the event without parsing it (issue 30). Taken, not kept: objects held for every task
 * held made 10,000 held streams on Postgres leave ~18 MB more behind (bench/PROFILE.md); later
 * readers parse their own copy, as before.
 *
 * Why an answer from here is right, though other instances commit to the same tables:
 * - an event never changes once committed, so each event held is the database's event at that
 *   seq. Until its task is purged: a purge by this instance clears the cache; one by another
 *   instance is not heard of, but purging takes only tasks terminal for longer than the retention
 *   period, which no stream follows (and what is held is of the tasks committed to lately).
 * - what may differ is the end: another instance may have committed events after the last one held.
 *   The answer then stops early, a prefix of the log. Never earlier than a version this instance
 *   has told anyone about, though: the store reports to {@link RecentEvents.sawVersion} every
 *   version it hears of (notifications, task records, getVersions) before passing it on, which
 *   drops a task whose held events end before it, and a version conflict drops the task (its caller
 *   now knows the log moved). A follower woken for a later seq therefore reads the database; a
 *   caller reading up to a version it was given reads up to it; and a reader that reads until it
 *   gets `[]` reads the database last (`[]` is never answered from here: only the database knows
 *   that nothing follows).
 *
 * Events another instance committed, heard of in its notification ({@link RecentEvents.recordHeard}),
 * are held the same way, with one more rule: they may arrive late (each instance notifies when it
 * can, so another one's notification of a later commit of the task can come first), and are taken
 * only if they reach the latest version this cache has seen of their task. To know that of a task it
 * holds nothing of, it remembers the versions it was told of such tasks, bounded like the tasks
 * held (four times as many); past that bound the oldest are forgotten, so an answer could stop
 * early only if a notification came later than several thousand tasks' newer versions.
 */

import type { TaskEvent } from '../model/types.js';
import type { StoredEvent } from './contract.js';

/** The bounds of a {@link RecentEvents} cache. */
export interface RecentEventsLimits {
  /** Tasks held; past it the least recently committed is dropped. @default 2000 */
  maxTasks?: number;
  /**
   * Events held per task (its latest). A follower is a few events behind the last commit at most,
   * and one that is further back reads the database as before. @default 256
   */
  maxEventsPerTask?: number;
  /** JSON characters held per task: an event larger than this is not held at all. @default 65_536 */
  maxCharsPerTask?: number;
  /**
   * JSON characters held in all, so that memory stays bounded whatever the mix of tasks (one
   * character is one byte for ASCII text, two otherwise). @default 8_388_608 (8 Mi)
   */
  maxChars?: number;
}

export const RECENT_EVENTS_DEFAULTS: Readonly<Required<RecentEventsLimits>> = Object.freeze({
  maxTasks: 2000,
  maxEventsPerTask: 256,
  maxCharsPerTask: 65_536,
  maxChars: 8 * 1024 * 1024,
});

/**
 * One task's latest events: `texts[i]` is the event at seq `first + i`, committed at `times[i]`;
 * `shared[i]` is the committed object of that event until a shared read takes it.
 */
interface TaskTail {
  first: number;
  texts: string[];
  times: number[];
  shared: (TaskEvent | undefined)[];
  chars: number;
}

/**
 * What event `i` of a tail counts against the bounds: its text's length, twice when it is also held
 * as an object (a parsed event takes at least the room of its text), so that the bounds hold what
 * is kept, not only the texts.
 */
function weightOf(tail: TaskTail, i: number): number {
  const length = (tail.texts[i] as string).length;
  return tail.shared[i] === undefined ? length : 2 * length;
}

/** See the module comment. One per store instance (an instance has one namespace). */
export class RecentEvents {
  readonly #limits: Readonly<Required<RecentEventsLimits>>;
  /** In order of the last commit, oldest first (a Map iterates in insertion order). */
  readonly #tasks = new Map<string, TaskTail>();
  /**
   * Task id → the latest version seen of a task that holds no events (or what its dropped events
   * reached): heard events that end before it are refused. Oldest first, bounded by `4 × maxTasks`.
   */
  readonly #seen = new Map<string, number>();
  #chars = 0;

  constructor(limits: RecentEventsLimits = {}) {
    const merged = { ...RECENT_EVENTS_DEFAULTS, ...limits };
    for (const [name, value] of Object.entries(merged)) {
      if (!Number.isInteger(value) || value < 0) throw new RangeError(`RecentEvents: ${name} must be an integer ≥ 0`);
    }
    this.#limits = Object.freeze(merged);
  }

  /** Tasks held. */
  get size(): number {
    return this.#tasks.size;
  }

  /** JSON characters held in all (an event also held as an object counts twice: see weightOf). */
  get chars(): number {
    return this.#chars;
  }

  /**
   * Records a commit that succeeded (call it after the transaction committed and before the
   * store's subscribers are told): `eventJsons` are its events' JSON texts, the first at seq
   * `firstSeq`, all committed at `createdAt`. Events that do not follow the task's held ones
   * (another instance committed in between) replace them. `events`, when given, are the committed
   * objects themselves, which their committer will never change (`CommitRequest.transfer`): the
   * first shared read of each takes it.
   */
  record(
    taskId: string,
    firstSeq: number,
    eventJsons: readonly string[],
    createdAt: number,
    events?: readonly TaskEvent[],
  ): void {
    this.#hold(taskId, firstSeq, eventJsons, createdAt, events?.length === eventJsons.length ? events : undefined);
  }

  /**
   * Records events another instance committed, heard of in its notification (after its commit):
   * `eventJsons[i]` is the event at seq `firstSeq + i`, committed at `createdAts[i]`. Taken only if
   * they reach past what is held of the task and reach the latest version seen of it (a late
   * notification is not an older answer's source); events that overlap the held ones add what
   * follows them. Whether anything was taken.
   */
  recordHeard(taskId: string, firstSeq: number, eventJsons: readonly string[], createdAts: readonly number[]): boolean {
    const count = eventJsons.length;
    if (count === 0 || createdAts.length !== count || !Number.isInteger(firstSeq) || firstSeq < 1) return false;
    const last = firstSeq + count - 1;
    const tail = this.#tasks.get(taskId);
    let skip = 0;
    if (tail !== undefined) {
      const end = tail.first + tail.texts.length - 1;
      if (last <= end) return false;
      if (firstSeq <= end) skip = end + 1 - firstSeq;
    } else if (last < (this.#seen.get(taskId) ?? 0)) {
      return false;
    }
    const texts = skip === 0 ? eventJsons : eventJsons.slice(skip);
    const times = skip === 0 ? createdAts : createdAts.slice(skip);
    this.#hold(taskId, firstSeq + skip, texts, times, undefined);
    return this.#tasks.has(taskId);
  }

  /** `createdAt`: one time for all the events, or one each; `events`: the objects of `eventJsons`, if known. */
  #hold(
    taskId: string,
    firstSeq: number,
    eventJsons: readonly string[],
    createdAt: number | readonly number[],
    events: readonly TaskEvent[] | undefined,
  ): void {
    if (eventJsons.length === 0) return;
    let tail = this.#tasks.get(taskId);
    if (tail !== undefined) {
      this.#tasks.delete(taskId); // re-inserted below: the most recently committed
      if (tail.first + tail.texts.length !== firstSeq) {
        this.#chars -= tail.chars;
        tail = undefined;
      }
    }
    this.#seen.delete(taskId);
    tail ??= { first: firstSeq, texts: [], times: [], shared: [], chars: 0 };
    for (let i = 0; i < eventJsons.length; i++) {
      const text = eventJsons[i] as string;
      tail.texts.push(text);
      tail.times.push(typeof createdAt === 'number' ? createdAt : (createdAt[i] as number));
      tail.shared.push(events?.[i]);
      const weight = weightOf(tail, tail.texts.length - 1);
      tail.chars += weight;
      this.#chars += weight;
    }
    const { maxEventsPerTask, maxCharsPerTask, maxChars, maxTasks } = this.#limits;
    let drop = 0;
    let dropped = 0;
    while (
      drop < tail.texts.length &&
      (tail.texts.length - drop > maxEventsPerTask || tail.chars - dropped > maxCharsPerTask)
    ) {
      dropped += weightOf(tail, drop);
      drop++;
    }
    if (drop > 0) {
      tail.texts.splice(0, drop);
      tail.times.splice(0, drop);
      tail.shared.splice(0, drop);
      tail.first += drop;
      tail.chars -= dropped;
      this.#chars -= dropped;
    }
    if (tail.texts.length > 0) this.#tasks.set(taskId, tail);
    else this.#see(taskId, tail.first - 1);
    // Oldest first (the task just recorded comes last: it goes only when it alone is over a bound).
    for (const [oldest, held] of this.#tasks) {
      if (this.#tasks.size <= maxTasks && this.#chars <= maxChars) break;
      this.#drop(oldest, held);
    }
  }

  /**
   * The events after `afterSeq` (at most `limit`, and up to the last held), each parsed afresh, or
   * with `shared` (the caller never changes them: `readEvents`'s option) the committed object when
   * one is still held, which this read takes; `undefined` when the event at `afterSeq + 1` is not
   * held (read the database). A non-integer `afterSeq` or a `limit` other than a positive integer
   * also gives `undefined`: the database's answer (or error) for those stays the store's.
   */
  read(taskId: string, afterSeq: number, limit?: number, shared = false): StoredEvent[] | undefined {
    const tail = this.#tasks.get(taskId);
    if (tail === undefined || !Number.isInteger(afterSeq)) return undefined;
    if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) return undefined;
    const start = afterSeq + 1 - tail.first;
    if (start < 0 || start >= tail.texts.length) return undefined;
    const end = limit === undefined ? tail.texts.length : Math.min(tail.texts.length, start + limit);
    const events: StoredEvent[] = [];
    for (let i = start; i < end; i++) {
      const text = tail.texts[i] as string;
      const held = shared ? tail.shared[i] : undefined;
      let event: TaskEvent;
      if (held !== undefined) {
        event = held;
        tail.shared[i] = undefined;
        // No longer held as an object (see weightOf).
        tail.chars -= text.length;
        this.#chars -= text.length;
      } else {
        event = JSON.parse(text) as TaskEvent;
      }
      events.push({ seq: tail.first + i, event, createdAt: tail.times[i] as number });
    }
    return events;
  }

  /**
   * The store heard that the task is at `version` (a notification, a read of the task, a version
   * conflict): if its held events end before that, they are dropped, so that a read up to
   * `version` goes to the database. Call it before passing the version on.
   */
  sawVersion(taskId: string, version: number): void {
    const tail = this.#tasks.get(taskId);
    if (tail !== undefined) {
      if (tail.first + tail.texts.length - 1 >= version) return;
      this.#drop(taskId, tail);
    }
    this.#see(taskId, version);
  }

  /** Drops what is held of the task. */
  forget(taskId: string): void {
    const tail = this.#tasks.get(taskId);
    if (tail !== undefined) this.#drop(taskId, tail);
  }

  /** Drops everything (a purge, close). */
  clear(): void {
    this.#tasks.clear();
    this.#seen.clear();
    this.#chars = 0;
  }

  /** What is held of a task goes; the version its events reached stays seen. */
  #drop(taskId: string, tail: TaskTail): void {
    this.#tasks.delete(taskId);
    this.#chars -= tail.chars;
    this.#see(taskId, tail.first + tail.texts.length - 1);
  }

  #see(taskId: string, version: number): void {
    if (!Number.isFinite(version)) return;
    const seen = this.#seen.get(taskId);
    if (seen !== undefined) {
      if (seen >= version) return;
      this.#seen.delete(taskId); // re-inserted below: the most recently seen
    }
    this.#seen.set(taskId, version);
    if (this.#seen.size > 4 * this.#limits.maxTasks) {
      for (const oldest of this.#seen.keys()) {
        this.#seen.delete(oldest);
        break;
      }
    }
  }
}
