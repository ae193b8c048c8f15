/**
 * tooDeep answers most input from a walk that builds no paths, and walks the rest path by path to
 * name the place: both must agree on the boundary, on arrays and objects alike.
 */
import { describe, expect, it } from 'vitest';
import { tooDeep } from '../../src/protocol/validation.js';

/** An object `levels` levels deep: `{a: {a: … 'x'}}`; built in a loop, as recursion would not reach 100,000. */
function nestedObjects(levels: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describe('tooDeep', () => {
  it('passes input that reaches exactly the limit, and names the first value past it', () => {
    expect(tooDeep(nestedObjects(3), 3, 'params')).toBeUndefined();
    expect(tooDeep(nestedObjects(4), 3, 'params')).toBe('params.a.a.a');
  });

  it('counts arrays as levels and names their indexes', () => {
    expect(tooDeep({ parts: [{ data: {} }] }, 4, 'params')).toBeUndefined();
    expect(tooDeep({ parts: ['text', { data: [{}] }] }, 4, 'params')).toBe('params.parts[1].data[0]');
  });

  it('passes scalars and shallow objects whatever the limit', () => {
    expect(tooDeep('text', 0, 'params')).toBeUndefined();
    expect(tooDeep(null, 0, 'params')).toBeUndefined();
    expect(tooDeep({ id: 't1', historyLength: 0, metadata: { a: [1, 2] } }, 100, 'params')).toBeUndefined();
  });

  it('refuses input 100,000 levels deep without overflowing the stack', () => {
    const path = tooDeep(nestedObjects(100_000), 100, 'params');
    expect(path).toBe(`params${'.a'.repeat(100)}`);
  });
});
