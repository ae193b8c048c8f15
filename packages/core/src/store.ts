/**
 * The storage contract every adapter implements (memory, SQLite, Postgres).
 *
 * Model: a task is a snapshot plus an append-only, per-task event log. Every event gets the next
 * sequence number of its task (1, 2, 3, …) and the snapshot's `version` is always the sequence of
 * the last event applied to it. Writers send the version they read (`expectedVersion`); a store
 * that finds another version refuses the write with {@link VersionConflictError}, so two workers
 * (or an agent event racing a cancel) never silently overwrite each other.
 *
 * Stores are deliberately dumb: they persist what the runtime computed (see `applyEvents` in
 * `task-state.ts`) and never interpret protocol rules, so every adapter behaves the same.
 *
 * All data is copied in and out: callers may mutate what they pass or receive. Data is JSON: a
 * store gives back what `JSON.parse(JSON.stringify(x))` of what it was given would be (a `Date`
 * comes back as its ISO string, `undefined` properties are gone), whatever the backend.
 *
 * Rules every adapter follows (the conformance suite checks them):
 * - `supports` can be read right after construction, before `open()`.
 * - Every method returns a promise and fails by rejecting (never a synchronous throw); calls
 *   before `open()` or after `close()` reject with A2AError `STORE_UNAVAILABLE`. A store need not
 *   support `open()` again after `close()`.
 * - A listener that throws affects neither the commit nor the other listeners (stores take an
 *   `onListenerError` option to see such errors).
 * - Context state is any JSON value; `undefined` is stored as `null`.
 * - `limit` arguments are integers ≥ 0.
 */

import type { CoordinationStore, TurnTicket } from './coordination.js';
import { A2AError } from './errors.js';
import type { Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from './types.js';

/** Internal marker: the turn `turnId` ended with the task still non-final (e.g. `working`). */
export interface TurnEndEvent {
  kind: 'turn-end';
  taskId: string;
  contextId: string;
  /** The messageId of the user message that started the turn. */
  turnId: string;
}

/**
 * What the event log holds. `task` creates the task; a `message` appends a user message to the
 * history (a follow-up on an existing task); status and artifact updates are the A2A stream events
 * (§7.2); `turn-end` is internal and never sent to clients.
 */
export type TaskEvent = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent | TurnEndEvent;

export interface StoredEvent {
  /** Per-task sequence number, starting at 1, without gaps. */
  seq: number;
  event: TaskEvent;
  /** When the store recorded it, in epoch milliseconds (the store's clock). */
  createdAt: number;
}

export interface TaskRecord {
  task: Task;
  /** Sequence number of the last event applied to `task`. */
  version: number;
  /** Epoch milliseconds (the store's clock). */
  createdAt: number;
  updatedAt: number;
}

export interface CommitRequest {
  taskId: string;
  /** The version the caller read; 0 creates the task. */
  expectedVersion: number;
  /** The snapshot after applying `events`. */
  task: Task;
  /** At least one event; they get sequence numbers expectedVersion+1, expectedVersion+2, … */
  events: TaskEvent[];
  /**
   * Also appends a turn of this task to its context's queue, in the same transaction (the ticket's
   * `taskId` and `contextId` are the task's): the same as {@link CoordinationStore.enqueueTurn}
   * right before the commit, in one round trip. A refused commit enqueues nothing.
   */
  enqueueTurn?: { turnId: string; workerId: string };
  /**
   * Also removes this ticket from its queue, in the same transaction: the turn ended with these
   * events (its final status, or its turn end). It must be a ticket of this task. Subscribers of
   * the task hear of the commit as usual, which is what a turn waiting behind this one waits for.
   * A refused commit removes nothing.
   */
  finishTurn?: TurnTicket;
  /**
   * The caller hands `task` and `events` over: it never mutates them (nor anything they reference)
   * after this call, so a store that keeps objects (the memory store) may keep these instead of
   * copying them. Stores that serialise ignore it. The runtime sets it; its snapshots are built
   * copy-on-write and never changed once made.
   */
  transfer?: boolean;
}

export interface CommitResult {
  /** The task's version after the commit: the sequence number of its last event. */
  version: number;
  /** The ticket `enqueueTurn` added (not yet known to be ready: ask {@link CoordinationStore.turnReadiness}). */
  turn?: TurnTicket;
}

export interface ContextRecord {
  contextId: string;
  /** The agent's own state for this conversation, any JSON value (e.g. an upstream conversation id). */
  state: unknown;
  updatedAt: number;
}

/** Per-call information a store may use (cancellation, tracing). Optional in every call. */
export interface StoreCallContext {
  signal?: AbortSignal;
}

export interface ListTasksOptions {
  /** At most this many, oldest first. */
  limit?: number;
}

export interface PurgeResult {
  tasks: number;
  contexts: number;
}

/**
 * What a store can do, as data (abstract-level's manifest). The conformance suite skips a module
 * only when the store declares the capability false; users read it too.
 */
export interface StoreCapabilities {
  /** Data survives close() and a new instance on the same location. */
  durable: boolean;
  /** Events committed by one process reach subscribers in another. */
  crossProcess: boolean;
  /** purgeExpired() deletes terminal tasks and their contexts. */
  ttl: boolean;
  /** Several agents (namespaces) can share one database without seeing each other. */
  namespaces: boolean;
}

export type Unsubscribe = () => void;

export interface TaskStore {
  /**
   * Atomically checks the task's version, stores the new snapshot and appends the events.
   * `expectedVersion: 0` creates the task and fails if it exists. In the same transaction it
   * indexes user message ids (see {@link CoordinationStore.findMessage}), and enqueues or finishes
   * a turn when asked to.
   * @returns the new version (and the enqueued ticket); read the stored events with `readEvents`.
   * @throws {VersionConflictError} when the task's version is not `expectedVersion`
   *   (including: creating a task that exists, or updating one that does not).
   * @throws {DuplicateMessageError} when a user message id in `events` is already indexed (for
   *   this or another task); nothing is written.
   * @throws {A2AError} `INTERNAL` for an empty `events` list, a snapshot whose id is not `taskId`,
   *   or a `finishTurn` ticket of another task.
   */
  commit(request: CommitRequest, ctx?: StoreCallContext): Promise<CommitResult>;

  /** The task with its version, or `undefined` when it does not exist (or was purged). */
  getTask(taskId: string, ctx?: StoreCallContext): Promise<TaskRecord | undefined>;

  /**
   * The current version of each of `taskIds` that exists; ids of unknown (or purged) tasks are not
   * in the map. One round trip for any number of tasks: the runtime's safety poll of every stream
   * a process serves uses it.
   */
  getVersions(taskIds: readonly string[], ctx?: StoreCallContext): Promise<Map<string, number>>;

  /** Events with `seq > afterSeq` in sequence order (at most `limit`); `[]` for an unknown task. */
  readEvents(taskId: string, afterSeq: number, limit?: number, ctx?: StoreCallContext): Promise<StoredEvent[]>;

  /** Tasks of one context, oldest first; `[]` for an unknown context. */
  listTasksByContext(contextId: string, options?: ListTasksOptions, ctx?: StoreCallContext): Promise<TaskRecord[]>;

  /** Tasks whose state is neither terminal nor interrupted (§6.3): submitted, working, unknown. */
  listActiveTasks(ctx?: StoreCallContext): Promise<TaskRecord[]>;
}

export interface ContextStore {
  /** The context's state, or `undefined` when none was ever set (or it was purged). */
  getContext(contextId: string, ctx?: StoreCallContext): Promise<ContextRecord | undefined>;
  /** Creates or replaces the context's state. */
  setContext(contextId: string, state: unknown, ctx?: StoreCallContext): Promise<void>;
}

/** Delivery of "task X has events up to seq N" to live subscribers, in-process or across processes. */
export interface EventNotifier {
  /**
   * Calls `listener` with a sequence number after events of `taskId` are committed (by this process
   * or, when `supports.crossProcess`, by any). Notifications may be coalesced, repeated or arrive
   * late: subscribers read the log with `readEvents` and never trust a notification for content.
   */
  subscribe(taskId: string, listener: (seq: number) => void): Unsubscribe;
}

export interface A2AStore extends TaskStore, ContextStore, EventNotifier, CoordinationStore {
  readonly supports: StoreCapabilities;
  /** Connects and migrates; idempotent. The runtime calls it before first use. */
  open(): Promise<void>;
  /** Releases what the store created (a pool it was given stays open). Idempotent. */
  close(): Promise<void>;
  /** Resolves when the backing storage answers; rejects with an Error saying why otherwise. */
  ping(): Promise<void>;
  /**
   * Deletes terminal tasks (with their events and indexed message ids) last updated strictly before
   * `cutoff` (epoch ms), and contexts that no longer have any task and were last updated before `cutoff`.
   */
  purgeExpired(cutoff: number, ctx?: StoreCallContext): Promise<PurgeResult>;
}

/** Clock injected into stores and the runtime so tests control time without sleeping. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

/**
 * The checks every store makes on a commit request before touching its data; stores call it so
 * that they refuse the same requests with the same messages.
 * @throws {A2AError} `INTERNAL` naming what is wrong with the request.
 */
export function checkCommitRequest(request: CommitRequest, storeName: string): void {
  const problem = commitRequestProblem(request);
  if (problem !== undefined) {
    throw new A2AError('INTERNAL', `${storeName}: commit() for task "${request.taskId}" ${problem}.`, {
      data: { taskId: request.taskId },
    });
  }
}

function commitRequestProblem(request: CommitRequest): string | undefined {
  const { taskId, expectedVersion, task, events, finishTurn } = request;
  if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 0) {
    return `needs expectedVersion to be an integer >= 0, got ${String(expectedVersion)}`;
  }
  if (!Array.isArray(events) || events.length === 0) return 'has no events; send at least one';
  if (task?.id !== taskId) return `carries the snapshot of task "${String(task?.id)}"; they must match`;
  if (finishTurn !== undefined && (finishTurn.taskId !== taskId || finishTurn.contextId !== task.contextId)) {
    return `was asked to finish a turn of task "${finishTurn.taskId}" in context "${finishTurn.contextId}"; only a turn of this task can end with its commit`;
  }
  return undefined;
}

/**
 * The user message ids a commit indexes (see {@link CoordinationStore.findMessage}), in event order:
 * every `message` event, and the first history message of a `task` event when the user sent it.
 */
export function indexedMessageIds(events: readonly TaskEvent[]): string[] {
  const ids: string[] = [];
  for (const event of events) {
    if (event.kind === 'message') ids.push(event.messageId);
    else if (event.kind === 'task' && event.history?.[0]?.role === 'user') ids.push(event.history[0].messageId);
  }
  return ids;
}
