/**
 * What every store repeats: the task states it selects by, the key of the anonymous scope, the
 * status timestamp it sorts by, the messages it indexes at commit, and ListTasks' filter shapes and
 * page. Shared here so that a new store writes its queries, not this logic again.
 */

import { INTERRUPTED_STATES, type Message, type TaskEvent, type TaskState, TERMINAL_STATES } from '../model/types.js';
import type { TaskListPage, TaskListQuery, TaskRecord } from './contract.js';
import { messageDigest } from './message-digest.js';

/** Every task state (§6.3), in the order of the spec's list; a missing or unknown one fails to compile. */
export const TASK_STATES: readonly TaskState[] = Object.keys({
  submitted: true,
  working: true,
  'input-required': true,
  completed: true,
  canceled: true,
  failed: true,
  rejected: true,
  'auth-required': true,
  unknown: true,
} satisfies Record<TaskState, true>) as TaskState[];

/**
 * §6.3: the states that are neither terminal nor interrupted, what {@link TaskStore.listActiveTasks}
 * selects. The SQL stores' partial indexes on active tasks were created with this list (their
 * migrations keep a frozen copy).
 */
export const ACTIVE_STATES: readonly TaskState[] = TASK_STATES.filter(
  (state) => !TERMINAL_STATES.has(state) && !INTERRUPTED_STATES.has(state),
);

/** §6.3: terminal or interrupted, the states a push throttle window does not hold back. */
export const FINAL_STATES: readonly TaskState[] = [...TERMINAL_STATES, ...INTERRUPTED_STATES];

/** An SQL list literal of state names (constants, never user input): `'submitted', 'working'`. */
export function sqlStateList(states: Iterable<TaskState>): string {
  return [...states].map((state) => `'${state}'`).join(', ');
}

/**
 * The state lists the SQL stores select by, as SQL list literals built once: what their statements
 * write after `state IN`.
 */
export const SQL_STATE_LISTS = {
  all: sqlStateList(TASK_STATES),
  active: sqlStateList(ACTIVE_STATES),
  final: sqlStateList(FINAL_STATES),
  interrupted: sqlStateList(INTERRUPTED_STATES),
  terminal: sqlStateList(TERMINAL_STATES),
} as const;

/**
 * The owner key of the message index (and of the SQL stores' owner index) for commits without an
 * owner: a key column cannot be NULL, and commits refuse '' as an owner (see
 * `checkCommitRequest`), so no principal shares this scope.
 */
export const ANONYMOUS_SCOPE = '';

/**
 * The sort key {@link TaskStore.listTasks} uses for a task without a status timestamp, or with
 * one `Date.parse` cannot read: below every date (`Date` ends at ±8.64e15 ms), so such tasks sort
 * after all others and no `statusTimestampAfter` selects them. A number rather than SQL NULL, so
 * the keyset comparison and its index need no special case.
 */
export const NO_STATUS_TIMESTAMP: number = Number.MIN_SAFE_INTEGER;

/**
 * A task's status timestamp as listTasks sorts and filters it: `status.timestamp` (ISO 8601) in
 * epoch milliseconds, or {@link NO_STATUS_TIMESTAMP}. Stores compute it with this function when
 * they commit, so every adapter agrees on the order.
 */
export function statusTimestampOf(task: { status: { timestamp?: string | undefined } }): number {
  const timestamp = task.status.timestamp;
  const parsed = typeof timestamp === 'string' ? Date.parse(timestamp) : Number.NaN;
  return Number.isFinite(parsed) ? parsed : NO_STATUS_TIMESTAMP;
}

/**
 * The user messages a commit indexes (see {@link CoordinationStore.findMessage}), in event order:
 * every `message` event, and the first history message of a `task` event when the user sent it.
 */
function indexedMessageList(events: readonly TaskEvent[]): Message[] {
  const messages: Message[] = [];
  for (const event of events) {
    if (event.kind === 'message') messages.push(event);
    else if (event.kind === 'task' && event.history?.[0]?.role === 'user') messages.push(event.history[0]);
  }
  return messages;
}

/** The ids of the user messages a commit indexes, in event order (see {@link indexedMessages}). */
export function indexedMessageIds(events: readonly TaskEvent[]): string[] {
  return indexedMessageList(events).map((message) => message.messageId);
}

/** One entry a commit adds to the message index. */
export interface IndexedMessage {
  messageId: string;
  /** {@link messageDigest} of the message. */
  digest: string;
}

/**
 * The user messages a commit indexes (see {@link CoordinationStore.findMessage}), in event order,
 * each with its {@link messageDigest}: every `message` event, and the first history message of a
 * `task` event when the user sent it. Stores call it at commit so that they all index the same
 * messages with the same digests.
 */
export function indexedMessages(events: readonly TaskEvent[]): IndexedMessage[] {
  return indexedMessageList(events).map((message) => ({
    messageId: message.messageId,
    digest: messageDigest(message),
  }));
}

// ---- ListTasks ----
//
// A store prepares one statement per combination of the query's filters (a shape, as bits), so
// that each is one index range; these name the bits, in the order the statements number their
// parameters.

export const LIST_FILTER = {
  /** Only one owner's tasks, or those without one. */
  byOwner: 1,
  /** Only one context's tasks. */
  byContext: 2,
  /** Only tasks in one state. */
  byState: 4,
  /** Only tasks whose status timestamp is at or after a time. */
  since: 8,
  /** Only tasks after a cursor (a page after the first); always the last filter. */
  after: 16,
} as const;
/** How many shapes there are: every combination of the bits above. */
export const LIST_SHAPES = 32;

/** One statement (or its text) per ListTasks shape, indexed by the shape: `build` is called for each. */
export function perListShape<T>(build: (shape: number) => T): T[] {
  return Array.from({ length: LIST_SHAPES }, (_, shape) => build(shape));
}

/** Which filters `query` has: the shape of the statement that reads its page. */
export function taskListShape(query: TaskListQuery): number {
  return (
    (query.owner === undefined ? 0 : LIST_FILTER.byOwner) |
    (query.contextId === undefined ? 0 : LIST_FILTER.byContext) |
    (query.state === undefined ? 0 : LIST_FILTER.byState) |
    (query.statusTimestampAfter === undefined ? 0 : LIST_FILTER.since) |
    (query.after === undefined ? 0 : LIST_FILTER.after)
  );
}

/**
 * Appends the values of `query`'s filters to `values`, in bit order (the owner, `null` for the
 * tasks without one; the context id; the state; the lower status timestamp bound; the cursor's
 * status timestamp and task id) and returns the query's shape: which statement to run with them.
 */
export function pushTaskListFilters(query: TaskListQuery, values: unknown[]): number {
  const { owner, contextId, state, statusTimestampAfter, after } = query;
  let shape = 0;
  if (owner !== undefined) {
    shape |= LIST_FILTER.byOwner;
    values.push(owner);
  }
  if (contextId !== undefined) {
    shape |= LIST_FILTER.byContext;
    values.push(contextId);
  }
  if (state !== undefined) {
    shape |= LIST_FILTER.byState;
    values.push(state);
  }
  if (statusTimestampAfter !== undefined) {
    shape |= LIST_FILTER.since;
    values.push(statusTimestampAfter);
  }
  if (after !== undefined) {
    shape |= LIST_FILTER.after;
    values.push(after.statusTimestamp, after.taskId);
  }
  return shape;
}

/** The SQL condition of each filter of a shape, with its parameters, in bit order. */
export interface TaskListConditions {
  owner: string;
  context: string;
  state: string;
  since: string;
  after: string;
}

/** The conditions of `shape` joined with AND, after `first` (the namespace's). */
export function taskListWhere(shape: number, first: string, conditions: TaskListConditions): string {
  const where = [first];
  if (shape & LIST_FILTER.byOwner) where.push(conditions.owner);
  if (shape & LIST_FILTER.byContext) where.push(conditions.context);
  if (shape & LIST_FILTER.byState) where.push(conditions.state);
  if (shape & LIST_FILTER.since) where.push(conditions.since);
  if (shape & LIST_FILTER.after) where.push(conditions.after);
  return where.join(' AND ');
}

/** A listed row: what a page needs beyond the record, the key of its place in the list. */
export interface ListedTaskKey {
  status_ts: string | number;
  task_id: string;
}

/**
 * The page of `rows`, read with limit + 1 to learn whether more follow: at most `limit` records,
 * and the key of the last one when more do.
 */
export function taskListPage<Row extends ListedTaskKey>(
  rows: readonly Row[],
  total: number,
  limit: number,
  toRecord: (row: Row) => TaskRecord,
): TaskListPage {
  const more = rows.length > limit;
  const listed = more ? rows.slice(0, limit) : rows;
  const page: TaskListPage = { records: listed.map(toRecord), total };
  const last = listed.at(-1);
  if (more && last !== undefined) page.next = { statusTimestamp: Number(last.status_ts), taskId: last.task_id };
  return page;
}
