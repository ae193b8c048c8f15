/**
 * The rows the SQL stores read, under the column names both schemas use, and what each becomes.
 * Documents are read as text and parsed here, so a driver's own JSON parsing can't change what a
 * store returns. Epoch columns are bigints: node-postgres gives them as strings, better-sqlite3 as
 * numbers, so every mapper reads them through `Number`.
 */

import type { Task, TaskEvent } from '../model/types.js';
import type { ContextRecord, StoredEvent, TaskRecord } from './contract.js';
import type { MessageIndexEntry, QueueSlot, WorkerRecord } from './coordination.js';
import type {
  PushConfigRecord,
  PushDelivery,
  PushProtocolVersion,
  SavePushConfigRequest,
  StoredPushConfig,
} from './push.js';

/** An epoch column: a bigint, as the driver gives it. */
export type EpochColumn = string | number;

export interface TaskRow {
  /** The task's JSON. */
  task: string;
  version: number;
  created_at: EpochColumn;
  updated_at: EpochColumn;
  owner: string | null;
  /** Migration 7: the trace context of the commit that last changed the task. */
  trace_context: string | null;
}

export function toTaskRecord(row: TaskRow): TaskRecord {
  const record: TaskRecord = {
    task: JSON.parse(row.task) as Task,
    version: row.version,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
  // No owner: no property at all (the contract's "absent, not null").
  if (row.owner !== null) record.owner = row.owner;
  // Absent, not null, like the owner.
  if (row.trace_context !== null && row.trace_context !== undefined) record.traceContext = row.trace_context;
  return record;
}

export interface EventRow {
  seq: number;
  /** The event's JSON. */
  event: string;
  created_at: EpochColumn;
}

export function toStoredEvent(row: EventRow): StoredEvent {
  return { seq: row.seq, event: JSON.parse(row.event) as TaskEvent, createdAt: Number(row.created_at) };
}

export interface ContextRow {
  /** The state's JSON; SQL NULL is what release 1 of the Postgres store wrote for `undefined`. */
  state: string | null;
  updated_at: EpochColumn;
}

export function toContextRecord(contextId: string, row: ContextRow): ContextRecord {
  // NULL reads as JSON null, like `undefined` (stored as null) does.
  return { contextId, state: JSON.parse(row.state ?? 'null') as unknown, updatedAt: Number(row.updated_at) };
}

/** A row of the turns table: one queue slot. */
export interface QueueSlotRow {
  context_id: string;
  position: EpochColumn;
  task_id: string;
  /** The slot's messageId (the column is named from before the field was). */
  turn_id: string;
  worker_id: string;
}

export function toQueueSlot(row: QueueSlotRow): QueueSlot {
  return {
    contextId: row.context_id,
    position: Number(row.position),
    taskId: row.task_id,
    messageId: row.turn_id,
    workerId: row.worker_id,
  };
}

export interface WorkerDescriptionRow {
  worker_id: string;
  lease_until: EpochColumn;
  last_heartbeat: EpochColumn;
  /** NULL for a lease written by heartbeat() alone. */
  incarnation: string | null;
  host: string | null;
  pid: number | null;
  started_at: EpochColumn | null;
}

export function toWorkerRecord(row: WorkerDescriptionRow, turns: QueueSlot[]): WorkerRecord {
  const { incarnation, host, pid, started_at: startedAt } = row;
  return {
    workerId: row.worker_id,
    leaseUntil: Number(row.lease_until),
    lastHeartbeat: Number(row.last_heartbeat),
    description:
      incarnation === null || host === null || pid === null || startedAt === null
        ? null
        : { incarnation, host, pid, startedAt: Number(startedAt) },
    turns,
  };
}

export interface MessageIndexRow {
  task_id: string;
  context_id: string;
  /** NULL for entries indexed before digests were recorded. */
  digest: string | null;
}

export function toMessageIndexEntry(row: MessageIndexRow): MessageIndexEntry {
  const entry: MessageIndexEntry = { taskId: row.task_id, contextId: row.context_id };
  if (row.digest !== null) entry.digest = row.digest;
  return entry;
}

export interface PushConfigRow {
  task_id: string;
  config_id: string;
  /** The config's JSON. */
  config: string;
  protocol_version: string;
  created_at: EpochColumn;
  updated_at: EpochColumn;
}

export function toPushConfigRecord(row: PushConfigRow): PushConfigRecord {
  return {
    taskId: row.task_id,
    config: JSON.parse(row.config) as StoredPushConfig,
    protocolVersion: row.protocol_version as PushProtocolVersion,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/**
 * The record savePushConfig returns: the config as the row holds it (`configJson`, parsed again, so
 * it is a copy in the JSON form every read gives), with the times the row was given.
 */
export function savedPushConfigRecord(
  request: SavePushConfigRequest,
  configJson: string,
  saved: { created_at: EpochColumn; updated_at: EpochColumn },
): PushConfigRecord {
  return {
    taskId: request.taskId,
    config: JSON.parse(configJson) as StoredPushConfig,
    protocolVersion: request.protocolVersion,
    createdAt: Number(saved.created_at),
    updatedAt: Number(saved.updated_at),
  };
}

export interface PushDeliveryRow extends PushConfigRow {
  cursor: number;
  attempts: number;
  next_attempt_at: EpochColumn | null;
  last_sent_at: EpochColumn | null;
  /** A boolean column: Postgres gives `true`/`false`, SQLite 1/0. */
  failed: boolean | number;
  last_error: string | null;
  last_status: number | null;
  claimed_by: string | null;
  claim_id: string | null;
  claim_until: EpochColumn | null;
  task_version: number;
}

/** NULL stays null. */
const epochOrNull = (value: EpochColumn | null): number | null => (value === null ? null : Number(value));

export function toPushDelivery(row: PushDeliveryRow): PushDelivery {
  return {
    config: toPushConfigRecord(row),
    state: {
      cursor: row.cursor,
      attempts: row.attempts,
      nextAttemptAt: epochOrNull(row.next_attempt_at),
      lastSentAt: epochOrNull(row.last_sent_at),
      failed: row.failed === true || row.failed === 1,
      lastError: row.last_error,
      lastStatus: row.last_status,
      claimedBy: row.claimed_by,
      claimId: row.claim_id,
      claimUntil: epochOrNull(row.claim_until),
    },
    taskVersion: row.task_version,
  };
}

/**
 * The mappers above as one object, what a store imports to turn its rows into records
 * (`fromRow.task(row)`).
 */
export const fromRow = {
  task: toTaskRecord,
  event: toStoredEvent,
  context: toContextRecord,
  queueSlot: toQueueSlot,
  worker: toWorkerRecord,
  messageIndexEntry: toMessageIndexEntry,
  pushConfig: toPushConfigRecord,
  savedPushConfig: savedPushConfigRecord,
  pushDelivery: toPushDelivery,
} as const;
