/** The rows and statement parameters only the SQLite store has; the rows both SQL stores read are in @fastify-a2a/core. */

import type {
  EnqueueTurnRequest,
  IndexedMessage,
  QueueSlot,
  TaskEvent,
  TaskRow,
  WorkerDescription,
} from '@fastify-a2a/core';

/** A row of a listTasks page: the record and its key in the list. */
export interface ListedRow extends TaskRow {
  status_ts: number;
  task_id: string;
}

/**
 * The named parameters of the listTasks statements: the query's filters (a filter left out is
 * undefined, and a statement without it ignores it) and the limit.
 */
export interface ListParams {
  namespace: string;
  /** A principal id, or null for the tasks without an owner. */
  owner: string | null | undefined;
  contextId: string | undefined;
  state: string | undefined;
  since: number | undefined;
  afterTs: number | undefined;
  afterId: string | undefined;
  limit: number;
}

export interface TaskWrite {
  namespace: string;
  taskId: string;
  contextId: string;
  /** The owner, written when the commit creates the task (NULL for none). */
  owner: string | null;
  /** The commit's trace context, replacing the previous one (NULL for none). */
  traceContext: string | null;
  state: string;
  /** statusTimestampOf(task): what listTasks sorts by. */
  statusTs: number;
  version: number;
  taskJson: string;
  now: number;
}

export interface EventWrite {
  namespace: string;
  taskId: string;
  seq: number;
  eventJson: string;
  now: number;
}

export interface CommitArgs {
  write: TaskWrite;
  expectedVersion: number;
  eventJsons: string[];
  /** The events themselves when the committer handed them over (`CommitRequest.transfer`). */
  transferred: readonly TaskEvent[] | undefined;
  /** User messages to index (see `indexedMessages` in @fastify-a2a/core). */
  messages: IndexedMessage[];
  /** Their scope in the index: the commit's owner, '' for the anonymous scope. */
  scope: string;
  /** A turn of this task to enqueue in the same transaction. */
  enqueueTurn: { messageId: string; workerId: string } | undefined;
  /** A slot to remove in the same transaction. */
  finishTurn: QueueSlot | undefined;
}

export interface WorkerRow {
  worker_id: string;
  last_heartbeat: number;
}

export interface JoinArgs {
  namespace: string;
  workerId: string;
  leaseUntil: number;
  description: WorkerDescription;
  now: number;
}

export interface EnqueueArgs {
  namespace: string;
  request: EnqueueTurnRequest;
  now: number;
}

/** The key of one delivery; `claimId` only where the claim is checked. */
export interface PushKey {
  namespace: string;
  taskId: string;
  configId: string;
}

export interface PushSave extends PushKey {
  configJson: string;
  protocolVersion: string;
  now: number;
}

export interface PushClaimArgs {
  namespace: string;
  workerId: string;
  claimId: string;
  now: number;
  claimUntil: number;
  limit: number;
}
