/**
 * Tasks belong to the principal that created them (the authentication issue): another principal
 * gets "task not found" for every operation on them — the answer for an id that never existed, so
 * nothing tells a guessed id from a real one. Anonymous callers own the tasks created anonymously.
 */

import { taskNotFound } from '../errors.js';
import type { CallContext } from '../protocol/context.js';
import type { A2AStore, StoreCallContext, TaskRecord } from '../store.js';

/** Whose a call's tasks are: the principal's id, or undefined for an anonymous caller. */
export function ownerOf(ctx: CallContext): string | undefined {
  return ctx.principal?.id;
}

/** Whether `record` belongs to `owner` (a task without owner belongs to anonymous callers). */
export function isOwnedBy(record: TaskRecord, owner: string | undefined): boolean {
  return record.owner === owner;
}

/**
 * The task if the caller owns it.
 * @throws {A2AError} TASK_NOT_FOUND when it does not exist or belongs to someone else.
 */
export async function readOwnTask(
  store: A2AStore,
  taskId: string,
  owner: string | undefined,
  storeContext: StoreCallContext | undefined,
): Promise<TaskRecord> {
  const record = await store.getTask(taskId, storeContext);
  if (record === undefined || !isOwnedBy(record, owner)) throw taskNotFound(taskId);
  return record;
}
