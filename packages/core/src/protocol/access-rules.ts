/**
 * Declarative authorization: which callers may run which operations, as a list of rules read by
 * the dispatch's authorize step. A rule names who it is for (a role, a scope, a principal id, or
 * nobody in particular: every caller) and what it allows (operations, or the groups `read`,
 * `write` and `*`). A call is allowed when some rule for its caller allows its operation; with
 * rules configured, anything no rule allows is refused (deny by default).
 */

import { A2AError } from '../errors.js';
import type { CallContext, Principal } from './context.js';
import type { AuthorizeHook } from './dispatch.js';
import { OPERATIONS, type OperationName } from './operations.js';

/** Operations by what they do: `read` (get, list, subscribe, read push configs, the extended card), `write` (send, cancel, change push configs), `*` (all). */
export type OperationGroup = 'read' | 'write' | '*';

export interface AccessRule {
  /** The rule is for callers holding this role (`principal.roles`). */
  role?: string;
  /** The rule is for callers granted this scope (`principal.scopes`). */
  scope?: string;
  /** The rule is for the caller with this principal id. */
  principal?: string;
  /**
   * Whether a rule that names no role, scope or principal applies to anonymous callers too (when
   * authentication is off, every caller is anonymous). @default false
   */
  anonymous?: boolean;
  /** What the rule allows: operation names (`getTask`, `sendMessage`, …) or groups. */
  allow: readonly (OperationName | OperationGroup)[];
}

const GROUPS: ReadonlySet<string> = new Set<OperationGroup>(['read', 'write', '*']);

/** The operations a rule's `allow` list names. */
function allowed(allow: readonly string[]): Set<OperationName> {
  const operations = new Set<OperationName>();
  for (const [name, spec] of Object.entries(OPERATIONS) as [OperationName, (typeof OPERATIONS)[OperationName]][]) {
    if (allow.includes(name) || allow.includes('*') || allow.includes(spec.access)) operations.add(name);
  }
  return operations;
}

/** Whether `rule` is for `principal` (undefined: an anonymous caller). */
function appliesTo(rule: AccessRule, principal: Principal | undefined): boolean {
  const { role, scope, principal: id } = rule;
  if (role === undefined && scope === undefined && id === undefined) {
    return principal !== undefined || rule.anonymous === true;
  }
  if (principal === undefined) return false;
  // Every selector a rule names must match: `{ role: 'ops', scope: 'a2a:write' }` is for callers with both.
  if (role !== undefined && !(principal.roles ?? []).includes(role)) return false;
  if (scope !== undefined && !(principal.scopes ?? []).includes(scope)) return false;
  if (id !== undefined && principal.id !== id) return false;
  return true;
}

/**
 * Checks `rules` and returns the authorize hook that applies them.
 * @throws {TypeError} for a rule that names no operation or one that does not exist, saying which.
 */
export function accessRules(rules: readonly AccessRule[]): AuthorizeHook {
  if (!Array.isArray(rules))
    throw new TypeError('access rules must be an array of { role?, scope?, principal?, allow }');
  const compiled = rules.map((rule, index) => {
    const where = `access rule ${index}`;
    if (rule === null || typeof rule !== 'object') throw new TypeError(`${where} must be an object`);
    if (!Array.isArray(rule.allow) || rule.allow.length === 0) {
      throw new TypeError(`${where}: "allow" must list operations or groups (read, write, *)`);
    }
    for (const name of rule.allow) {
      if (!GROUPS.has(name) && !Object.hasOwn(OPERATIONS, name)) {
        throw new TypeError(
          `${where}: "${String(name)}" is neither an operation (${Object.keys(OPERATIONS).join(', ')}) nor a group (read, write, *)`,
        );
      }
    }
    for (const field of ['role', 'scope', 'principal'] as const) {
      if (rule[field] !== undefined && (typeof rule[field] !== 'string' || rule[field] === '')) {
        throw new TypeError(`${where}: "${field}" must be a non-empty string`);
      }
    }
    return { rule, operations: allowed(rule.allow) };
  });
  return (ctx: CallContext, operation: OperationName) =>
    compiled.some(({ rule, operations }) => operations.has(operation) && appliesTo(rule, ctx.principal));
}

/**
 * Both hooks, in order: the first refusal (a `false`, or a thrown error) wins, so declarative rules
 * are checked before an application's own hook.
 */
export function allOf(...hooks: readonly (AuthorizeHook | undefined)[]): AuthorizeHook | undefined {
  const present = hooks.filter((hook): hook is AuthorizeHook => hook !== undefined);
  if (present.length <= 1) return present[0];
  return async (ctx, operation, params) => {
    for (const hook of present) {
      if ((await hook(ctx, operation, params)) === false) return false;
    }
    return true;
  };
}

/** The refusal a hook may throw to say why, answered as PERMISSION_DENIED (HTTP 403). */
export function permissionDenied(message: string): A2AError {
  return new A2AError('PERMISSION_DENIED', `Permission denied: ${message}`);
}
