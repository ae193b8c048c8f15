/**
 * The owner rule: whose a call's tasks are, as the `owner` every store keeps beside a task, a
 * context, a push config and a message-index entry. Below the runtime and ListTasks paging
 * (`task-list.ts`), which both apply it, so neither reaches into the other; a store compares the
 * value and never computes it.
 */

import type { CallContext } from '../protocol/context.js';
import type { TaskRecord } from './contract.js';

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
