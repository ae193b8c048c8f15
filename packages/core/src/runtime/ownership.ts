/**
 * Tasks belong to the principal that created them (the authentication issue): another principal
 * gets "task not found" for every operation on them — the answer for an id that never existed, so
 * nothing tells a guessed id from a real one. Anonymous callers own the tasks created anonymously.
 * Who the owner of a call is (`ownerOf`, tenants included) is the store kit's rule (`store/owner.ts`).
 */

import { taskNotFound } from '../errors.js';
import { type A2AStore, isOwnedBy, type StoreCallContext, type TaskRecord } from '../store/index.js';

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
