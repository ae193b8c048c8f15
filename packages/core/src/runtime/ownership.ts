/**
 * Tasks belong to the principal that created them (the authentication issue): another principal
 * gets "task not found" for every operation on them — the answer for an id that never existed, so
 * nothing tells a guessed id from a real one. Anonymous callers own the tasks created anonymously.
 */

import { taskNotFound } from '../errors.js';
import type { CallContext } from '../protocol/context.js';
import type { A2AStore, StoreCallContext, TaskRecord } from '../store/index.js';

/**
 * Marks an owner scoped by a tenant. A control character, so no principal id an authenticator
 * issues (a token's name, a JWT `sub`) reads as a tenant's owner; not NUL, which Postgres text
 * refuses.
 */
const TENANT_MARK = '\u001e';

/**
 * Whose a call's tasks are: the principal's id, or undefined for an anonymous caller; within a
 * tenant (A2A 1.0 §11.4 `/{tenant}/…`, the requests' `tenant` field), the tenant and the principal
 * together, anonymous callers of a tenant included. Folding the tenant into the owner isolates
 * tenants wherever owners are isolated (tasks, contexts, push configs, listing, the message index)
 * with no store change: a task of tenant A is "not found" for tenant B, as for another principal.
 */
export function ownerOf(ctx: CallContext): string | undefined {
  const principal = ctx.principal?.id;
  if (ctx.tenant === undefined || ctx.tenant === '') return principal;
  return `${TENANT_MARK}${ctx.tenant}${TENANT_MARK}${principal ?? ''}`;
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
