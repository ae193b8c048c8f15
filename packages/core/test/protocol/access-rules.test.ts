/** Declarative access rules: who each rule is for, what it allows, deny by default, and checked configuration. */

import { describe, expect, it } from 'vitest';
import { accessRules, allOf } from '../../src/protocol/access-rules.js';
import { callContext, type Principal } from '../../src/protocol/context.js';
import { OPERATIONS, type OperationName } from '../../src/protocol/operations.js';

const ALL = Object.keys(OPERATIONS) as OperationName[];

async function allowedFor(
  hook: ReturnType<typeof accessRules>,
  principal: Principal | undefined,
): Promise<OperationName[]> {
  const ctx = callContext(principal === undefined ? {} : { principal });
  const allowed: OperationName[] = [];
  for (const operation of ALL) if ((await hook(ctx, operation, {} as never)) !== false) allowed.push(operation);
  return allowed;
}

const reader: Principal = { id: 'rita', roles: ['reader'] };
const ops: Principal = { id: 'otto', roles: ['ops', 'reader'], scopes: ['a2a:write'] };
const bot: Principal = { id: 'bot-7', scopes: ['a2a:write'] };

describe('accessRules', () => {
  const hook = accessRules([
    { role: 'reader', allow: ['read'] },
    { role: 'ops', scope: 'a2a:write', allow: ['write'] },
    { principal: 'bot-7', allow: ['sendMessage'] },
  ]);

  it('a role rule allows its group: read operations only', async () => {
    expect(await allowedFor(hook, reader)).toEqual([
      'getTask',
      'listTasks',
      'subscribeToTask',
      'getTaskPushNotificationConfig',
      'listTaskPushNotificationConfig',
      'getExtendedAgentCard',
    ]);
  });

  it('a rule naming a role and a scope needs both; rules add up', async () => {
    expect(await allowedFor(hook, ops)).toEqual(ALL);
    // bot-7 has the scope but not the role: only its own rule applies.
    expect(await allowedFor(hook, bot)).toEqual(['sendMessage']);
  });

  it('denies by default: a caller no rule is for, and an anonymous one, may do nothing', async () => {
    expect(await allowedFor(hook, { id: 'stranger' })).toEqual([]);
    expect(await allowedFor(hook, undefined)).toEqual([]);
  });

  it('a rule for nobody in particular is for every authenticated caller; anonymous callers need anonymous: true', async () => {
    const everyone = accessRules([{ allow: ['getTask'] }]);
    expect(await allowedFor(everyone, { id: 'x' })).toEqual(['getTask']);
    expect(await allowedFor(everyone, undefined)).toEqual([]);
    const open = accessRules([{ anonymous: true, allow: ['*'] }]);
    expect(await allowedFor(open, undefined)).toEqual(ALL);
  });

  it('refuses rules that name nothing, an unknown operation, or an empty selector, saying which rule', () => {
    expect(() => accessRules([{ role: 'a', allow: [] }])).toThrow(
      'access rule 0: "allow" must list operations or groups',
    );
    expect(() => accessRules([{ allow: ['read'] }, { allow: ['tasks/get' as never] }])).toThrow(
      /access rule 1: "tasks\/get" is neither an operation \(sendMessage, .*\) nor a group/,
    );
    expect(() => accessRules([{ role: '', allow: ['read'] }])).toThrow(
      'access rule 0: "role" must be a non-empty string',
    );
    expect(() => accessRules('admin' as never)).toThrow('must be an array');
  });
});

describe('allOf', () => {
  it('the first refusal wins, in order; no hooks is undefined; one hook is itself', async () => {
    const seen: string[] = [];
    const yes = async () => {
      seen.push('yes');
      return true;
    };
    const no = async () => {
      seen.push('no');
      return false;
    };
    const both = allOf(no, yes);
    expect(await both?.(callContext(), 'getTask', {} as never)).toBe(false);
    expect(seen).toEqual(['no']);
    expect(allOf(undefined, undefined)).toBeUndefined();
    expect(allOf(undefined, yes)).toBe(yes);
  });
});
