import { describe, expect, it } from 'vitest';
import { cloneJson, MAX_JSON_DEPTH } from '../src/json.js';

/** What a JSON round trip gives: the behaviour cloneJson must match. */
const viaJson = (value: unknown): unknown => {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(text);
};

describe('cloneJson', () => {
  const cases: Record<string, unknown> = {
    'a task-like object': {
      kind: 'task',
      id: 't',
      status: { state: 'working', timestamp: '2026-11-22T00:00:00.000Z' },
      history: [{ kind: 'message', parts: [{ kind: 'text', text: 'hi' }] }],
    },
    'primitives and nesting': { s: 'x', n: 1.5, t: true, f: false, z: null, a: [1, [2, [3]]], e: {}, ea: [] },
    'undefined, functions and symbols: dropped in objects, null in arrays': {
      u: undefined,
      fn: () => 1,
      sym: Symbol('s'),
      list: [undefined, () => 1, Symbol('s'), 1],
    },
    'non-finite numbers and negative zero': { nan: Number.NaN, inf: Number.POSITIVE_INFINITY, negZero: -0, list: [-0] },
    'a Date and other toJSON objects': { at: new Date(Date.UTC(2026, 10, 22)), custom: { toJSON: () => ({ v: 1 }) } },
    'boxed primitives': { n: new Number(3), s: new String('x'), b: new Boolean(false) },
    'strings JSON must escape': { nul: '\u0000', lone: '\ud800', emoji: '😀', quote: '"\\' },
    // biome-ignore lint/suspicious/noSparseArray: a hole is what this case is about
    'a sparse array': [1, , 3],
    'a Map and a Set (no enumerable properties)': { m: new Map([['a', 1]]), s: new Set([1]) },
    'a class instance (own enumerable properties only)': new (class Point {
      x = 1;
      y = 2;
      get sum(): number {
        return this.x + this.y;
      }
    })(),
  };
  for (const [name, value] of Object.entries(cases)) {
    it(`matches a JSON round trip: ${name}`, () => {
      expect(cloneJson(value)).toStrictEqual(viaJson(value));
    });
  }

  it('returns undefined where JSON.stringify does', () => {
    expect(cloneJson(undefined)).toBeUndefined();
    expect(cloneJson(() => 1)).toBeUndefined();
    expect(cloneJson(Symbol('s'))).toBeUndefined();
  });

  it('copies deeply: changing the copy leaves the original alone', () => {
    const original = { a: { b: [{ c: 1 }] } };
    const copy = cloneJson(original);
    copy.a.b[0] = { c: 2 };
    (copy.a.b as unknown[]).push(3);
    expect(original).toEqual({ a: { b: [{ c: 1 }] } });
  });

  it('keeps a "__proto__" key as an own property, like JSON.parse, without touching the prototype', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') as Record<string, unknown>;
    const copy = cloneJson(parsed);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'ok']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(copy)).toBe(JSON.stringify(parsed));
  });

  it('throws a TypeError for a BigInt, naming where it is', () => {
    expect(() => cloneJson({ deep: { n: 1n } })).toThrow(/BigInt \(at "n"\)/);
    expect(() => JSON.stringify({ n: 1n })).toThrow(TypeError);
  });

  it('throws a TypeError, not a stack overflow, for a cycle', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    expect(() => cloneJson(cyclic)).toThrow(TypeError);
    expect(() => cloneJson(cyclic)).toThrow(/cyclic or nested deeper than/);
  });

  it(`copies nesting up to ${MAX_JSON_DEPTH} levels and refuses deeper`, () => {
    const nest = (levels: number): unknown => {
      let value: unknown = 'leaf';
      for (let i = 0; i < levels; i++) value = [value];
      return value;
    };
    expect(cloneJson(nest(MAX_JSON_DEPTH))).toEqual(nest(MAX_JSON_DEPTH));
    expect(() => cloneJson(nest(MAX_JSON_DEPTH + 1))).toThrow(TypeError);
  });
});
