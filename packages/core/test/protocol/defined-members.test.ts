/**
 * The codecs write results through definedMembers / nonEmptyMembers, copies that replaced
 * `delete` on the literal: the JSON written must be the same as before, member for member and in
 * the same order.
 */
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/json.js';
import { definedMembers, nonEmptyMembers, snakeCaseOf } from '../../src/protocol/proto-json-results.js';

describe('definedMembers and nonEmptyMembers', () => {
  it('leave out undefined members and keep the others in their order', () => {
    const object = { id: 't1', contextId: undefined, status: { state: 'x' }, history: [], metadata: {} } as JsonObject;
    expect(JSON.stringify(definedMembers(object))).toBe(
      '{"id":"t1","status":{"state":"x"},"history":[],"metadata":{}}',
    );
    expect(JSON.stringify(nonEmptyMembers(object))).toBe('{"id":"t1","status":{"state":"x"},"metadata":{}}');
  });

  it('keep a member named __proto__ (from parsed JSON) as a member, as a spread did', () => {
    const skill = JSON.parse('{"id":"s","__proto__":{"polluted":true},"tags":[]}') as JsonObject;
    const copy = definedMembers({ ...skill, security: undefined });
    expect(JSON.stringify(copy)).toBe('{"id":"s","__proto__":{"polluted":true},"tags":[]}');
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
  });
});

describe('snakeCaseOf', () => {
  it('names a proto field the way the proto does, the same on every call', () => {
    expect(snakeCaseOf('historyLength')).toBe('history_length');
    expect(snakeCaseOf('statusTimestampAfter')).toBe('status_timestamp_after');
    expect(snakeCaseOf('historyLength')).toBe('history_length');
    expect(snakeCaseOf('id')).toBe('id');
  });
});
