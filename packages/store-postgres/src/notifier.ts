/**
 * The sending side of cross-process notifications: after a commit, other processes are told that
 * a task has events up to a sequence number, coalesced so that one NOTIFY statement is in flight at
 * a time, carrying the latest seq of every task committed since the previous one.
 *
 * Not inside the commit: Postgres holds a server-wide lock from a notifying transaction's
 * pre-commit until its commit is flushed, so a NOTIFY in every commit made all commits of all
 * workers wait on one another (the cross-worker bench had 2 workers slower than 1). The NOTIFY
 * transaction writes nothing else and skips the WAL flush wait, so it holds that lock briefly. A
 * notification lost in a crash right after a commit costs a stream nothing but latency: it
 * re-reads the log on its poll interval.
 *
 * Each task's payload is `<task id>:<seq>`. Before it, in the same statement (so delivered first),
 * goes the events themselves when they are small: a process following the task then holds them
 * (see RecentEvents.recordHeard) and its streams read nothing from the database. Under an agent
 * streaming a long answer that read was one query per task per notification on every other worker
 * (issue 30: the clients on a second worker cost the database more than the commits did). The
 * events payload ({@link eventsPayload}) is one an older release ignores: its parser takes the
 * text after the last ':' as the seq, and an events payload ends with an event's closing brace.
 */

import type pg from 'pg';

/**
 * Postgres refuses a payload of 8000 bytes or more (the default build): what an events payload may
 * take, its header included. A commit whose events do not fit goes as its seq alone.
 */
const EVENTS_PAYLOAD_MAX_BYTES = 7900;

/** What an events payload starts with (a character no `<task id>:<seq>` payload of ours starts with). */
const EVENTS_PAYLOAD_MARK = '\u0001';

/**
 * What a presence payload starts with: `\u0002<origin>`, a listening store saying it listens (see
 * `presenceIntervalMs` in options.ts). An older release ignores it: it holds no ':' to take a seq after.
 */
const PRESENCE_PAYLOAD_MARK = '\u0002';

export interface CommitNotifierOptions {
  /** The store's pool while it is open; undefined once closed (pending notifications are dropped). */
  pool(): pg.Pool | undefined;
  /** The statement taking the channel and the payloads (a JSON array of strings). */
  statement: string;
  channel: string;
  /** Names this process in its events payloads, so that its own listener skips them. */
  origin: string;
  /** A failed NOTIFY, with the comma-separated payloads it carried. */
  onError(error: unknown, payloads: string): void;
}

/** The events committed since the previous NOTIFY, while they follow one another and fit a payload. */
interface PendingTask {
  last: number;
  first: number;
  texts: string[];
  times: number[];
  /** The payload's size so far, header estimate included. */
  bytes: number;
  /** No more events join (they did not follow, or did not fit): the payload carries what it has. */
  closed: boolean;
}

/** A header's size beyond its task id, and each event's beyond its text: a bound, not a count. */
const HEADER_BYTES = 64;
const PER_EVENT_BYTES = 18;

export class CommitNotifier {
  readonly #options: CommitNotifierOptions;
  /** Task id → what waits for the next coalesced NOTIFY. */
  #pending = new Map<string, PendingTask>();
  #sending = false;

  constructor(options: CommitNotifierOptions) {
    this.#options = options;
  }

  /**
   * Tells other processes, soon, that `taskId` has events up to `seq`, and what they are when
   * given: `eventJsons[i]` is the event at seq `seq - eventJsons.length + 1 + i`, committed at
   * `createdAt`.
   */
  notify(taskId: string, seq: number, eventJsons: readonly string[] = [], createdAt = 0): void {
    let task = this.#pending.get(taskId);
    if (task === undefined) {
      const bytes = HEADER_BYTES + Buffer.byteLength(taskId);
      task = { last: 0, first: seq - eventJsons.length + 1, texts: [], times: [], bytes, closed: false };
      this.#pending.set(taskId, task);
    }
    if (!task.closed && eventJsons.length > 0) this.#addEvents(task, seq, eventJsons, createdAt);
    task.last = Math.max(task.last, seq);
    if (!this.#sending) {
      this.#sending = true;
      setImmediate(() => void this.#send());
    }
  }

  #addEvents(task: PendingTask, seq: number, eventJsons: readonly string[], createdAt: number): void {
    if (task.first + task.texts.length !== seq - eventJsons.length + 1) {
      task.closed = true;
      return;
    }
    for (const text of eventJsons) {
      const bytes = Buffer.byteLength(text) + PER_EVENT_BYTES;
      if (task.bytes + bytes > EVENTS_PAYLOAD_MAX_BYTES) {
        task.closed = true;
        return;
      }
      task.bytes += bytes;
      task.texts.push(text);
      task.times.push(createdAt);
    }
  }

  /** Sends what is pending, and keeps sending what piled up meanwhile: one NOTIFY in flight at a time. */
  async #send(): Promise<void> {
    const { statement, channel, origin } = this.#options;
    while (this.#pending.size > 0) {
      const payloads: string[] = [];
      for (const [taskId, task] of this.#pending) {
        if (task.texts.length > 0) payloads.push(eventsPayload(origin, taskId, task.first, task.times, task.texts));
        payloads.push(`${wellFormed(taskId)}:${task.last}`);
      }
      this.#pending = new Map();
      const pool = this.#options.pool();
      if (pool === undefined) break;
      try {
        await pool.query(statement, [channel, JSON.stringify(payloads)]);
      } catch (error) {
        this.#options.onError(error, payloads.filter((payload) => !isEventsPayload(payload)).join(','));
      }
    }
    this.#sending = false;
  }
}

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The text with each lone surrogate replaced by U+FFFD, as pg's UTF-8 encoding of a text parameter
 * would: the payloads travel inside one JSON parameter, whose `\udXXX` escape of a lone surrogate
 * Postgres refuses, which would fail the whole statement and every notification in it. (An events
 * payload's header keeps the id exact: JSON.stringify escapes it there, and the escape arrives as text.)
 */
function wellFormed(text: string): string {
  return LONE_SURROGATE.test(text) ? text.replace(/\p{Cs}/gu, '\uFFFD') : text;
}

/**
 * `\u0001["<origin>","<task id>",<first seq>,[<createdAt>…]]\n<event JSON>\n<event JSON>…`: the
 * header, then each event's JSON text on a line of its own (JSON.stringify escapes every newline
 * inside a text, so none is split).
 */
export function eventsPayload(
  origin: string,
  taskId: string,
  firstSeq: number,
  createdAts: readonly number[],
  eventJsons: readonly string[],
): string {
  return `${EVENTS_PAYLOAD_MARK}${JSON.stringify([origin, taskId, firstSeq, createdAts])}\n${eventJsons.join('\n')}`;
}

/** The payload by which the store named `origin` says that it listens on the channel. */
export function presencePayload(origin: string): string {
  return `${PRESENCE_PAYLOAD_MARK}${origin}`;
}

/** Who says it listens, when `payload` is a presence payload; undefined for any other payload. */
export function presenceOrigin(payload: string): string | undefined {
  return payload.startsWith(PRESENCE_PAYLOAD_MARK) ? payload.slice(PRESENCE_PAYLOAD_MARK.length) : undefined;
}

export function isEventsPayload(payload: string): boolean {
  return payload.startsWith(EVENTS_PAYLOAD_MARK);
}

/** How every events payload `origin` sends starts, so that its own listener can skip them unparsed. */
export function ownEventsPayloadPrefix(origin: string): string {
  return `${EVENTS_PAYLOAD_MARK}${JSON.stringify([origin]).slice(0, -1)},`;
}

export interface HeardEvents {
  taskId: string;
  firstSeq: number;
  createdAts: number[];
  eventJsons: string[];
}

/**
 * An events payload read back, or undefined when it is not one of this shape (a payload is data:
 * anyone who may NOTIFY on the channel can send one, so a malformed one is ignored, never thrown).
 */
export function parseEventsPayload(payload: string): HeardEvents | undefined {
  if (!isEventsPayload(payload)) return undefined;
  const newline = payload.indexOf('\n');
  if (newline < 0) return undefined;
  let header: unknown;
  try {
    header = JSON.parse(payload.slice(EVENTS_PAYLOAD_MARK.length, newline));
  } catch {
    return undefined;
  }
  if (!Array.isArray(header) || header.length !== 4) return undefined;
  const [origin, taskId, firstSeq, createdAts] = header as unknown[];
  if (typeof origin !== 'string' || typeof taskId !== 'string') return undefined;
  if (!Number.isSafeInteger(firstSeq) || (firstSeq as number) < 1 || !Array.isArray(createdAts)) return undefined;
  if (!createdAts.every((time) => Number.isFinite(time))) return undefined;
  const eventJsons = payload.slice(newline + 1).split('\n');
  if (eventJsons.length !== createdAts.length) return undefined;
  if (!eventJsons.every((text) => text.startsWith('{') && text.endsWith('}'))) return undefined;
  return { taskId, firstSeq: firstSeq as number, createdAts: createdAts as number[], eventJsons };
}
