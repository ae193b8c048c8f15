import type { CallContext, Principal } from '../protocol/context.js';

/**
 * Per-call information a store may use: cancellation, and the caller on whose behalf it is called
 * (the runtime passes the principal and tenant of the request it serves). Optional in every call.
 */
export interface StoreCallContext {
  signal?: AbortSignal;
  principal?: Principal;
  tenant?: string;
}

/**
 * The store context of a call: its principal and tenant (undefined when it has neither, the common
 * case, so that costs nothing). The request's stream signal is not passed: a turn's writes must go
 * on when the client that sent its message goes away.
 */
export function storeContextOf(ctx: CallContext): StoreCallContext | undefined {
  const { principal, tenant } = ctx;
  if (principal === undefined && tenant === undefined) return undefined;
  const storeContext: StoreCallContext = {};
  if (principal !== undefined) storeContext.principal = principal;
  if (tenant !== undefined) storeContext.tenant = tenant;
  return storeContext;
}
