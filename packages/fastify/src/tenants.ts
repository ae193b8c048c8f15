/**
 * Tenants (A2A 1.0 §11.4: the `/{tenant}/…` routes of HTTP+JSON; the `tenant` field of every 1.0
 * request). The runtime keeps tenants apart by folding the tenant into the owner of the tasks a
 * call creates and reads (core `ownerOf`); this file reads the tenant off a request and runs the
 * `tenants` option's check on it. A2A 0.3 has no tenants.
 */

import { A2AError, type AuthorizeHook, type CallContext } from '@fastify-a2a/core';
import type { FastifyRequest } from 'fastify';
import { RequestContext } from './context.js';

/**
 * Decides whether a call may address `tenant`: return `false` (or throw an A2AError) to refuse it
 * with PERMISSION_DENIED (HTTP 403). `ctx.principal` is the authenticated caller, when
 * `authenticate` is set.
 */
export type TenantCheck = (
  tenant: string,
  ctx: CallContext,
  request: FastifyRequest | undefined,
) => boolean | undefined | Promise<boolean | undefined>;

/** The `tenant` member of a 1.0 request's params, body or query; undefined when absent or empty (the proto3 default). */
export function tenantOf(...sources: unknown[]): string | undefined {
  for (const source of sources) {
    if (source === null || typeof source !== 'object' || Array.isArray(source)) continue;
    const tenant = (source as { tenant?: unknown }).tenant;
    if (typeof tenant === 'string' && tenant !== '') return tenant;
  }
  return undefined;
}

/** The authorize hook that enforces the `tenants` option; undefined when every tenant is served. */
export function tenantHookOf(option: boolean | TenantCheck): AuthorizeHook | undefined {
  if (option === true) return undefined;
  if (option === false) {
    return (ctx) => {
      if (ctx.tenant === undefined) return true;
      throw new A2AError(
        'INVALID_PARAMS',
        `Invalid params: this agent does not use tenants (tenant "${ctx.tenant}" given); call it without a tenant (no /{tenant} path segment, no "tenant" field).`,
      );
    };
  }
  return async (ctx) => {
    if (ctx.tenant === undefined) return true;
    const request = ctx instanceof RequestContext ? ctx.request : undefined;
    if ((await option(ctx.tenant, ctx, request)) === false) {
      const who = ctx.principal === undefined ? 'an anonymous caller' : `principal "${ctx.principal.id}"`;
      throw new A2AError('PERMISSION_DENIED', `Permission denied: ${who} may not use tenant "${ctx.tenant}".`, {
        data: { tenant: ctx.tenant },
      });
    }
    return true;
  };
}
