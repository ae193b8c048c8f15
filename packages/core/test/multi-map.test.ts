import { describe, expect, it } from 'vitest';
import { type MultiMap, multiMapAdd, multiMapDelete, multiMapHas, multiMapValues } from '../src/multi-map.js';

describe('MultiMap', () => {
  it('keeps one value as itself, several in an array, and goes back to one', () => {
    const map: MultiMap<string, { n: number }> = new Map();
    const [a, b, c] = [{ n: 1 }, { n: 2 }, { n: 3 }];
    multiMapAdd(map, 'k', a);
    expect(map.get('k')).toBe(a);
    multiMapAdd(map, 'k', b);
    multiMapAdd(map, 'k', c);
    expect(multiMapValues(map, 'k')).toEqual([a, b, c]);
    expect(multiMapDelete(map, 'k', b)).toBe(true);
    expect(multiMapDelete(map, 'k', b)).toBe(false);
    expect(multiMapDelete(map, 'k', a)).toBe(true);
    expect(map.get('k')).toBe(c);
    expect(multiMapHas(map, 'k', c)).toBe(true);
    expect(multiMapHas(map, 'k', a)).toBe(false);
    expect(multiMapDelete(map, 'k', c)).toBe(true);
    expect(map.has('k')).toBe(false);
    expect(multiMapValues(map, 'k')).toEqual([]);
  });

  it('keeps a value added twice twice, and removes one occurrence at a time', () => {
    const map: MultiMap<string, { n: number }> = new Map();
    const a = { n: 1 };
    multiMapAdd(map, 'k', a);
    multiMapAdd(map, 'k', a);
    expect(multiMapValues(map, 'k')).toEqual([a, a]);
    multiMapDelete(map, 'k', a);
    expect(multiMapValues(map, 'k')).toEqual([a]);
    multiMapDelete(map, 'k', a);
    expect(map.size).toBe(0);
  });

  it('hands out a copy: changing the map while iterating it is safe', () => {
    const map: MultiMap<string, { n: number }> = new Map();
    const values = [{ n: 1 }, { n: 2 }];
    for (const value of values) multiMapAdd(map, 'k', value);
    const seen: number[] = [];
    for (const value of multiMapValues(map, 'k')) {
      seen.push(value.n);
      multiMapDelete(map, 'k', value);
    }
    expect(seen).toEqual([1, 2]);
    expect(map.size).toBe(0);
  });
});
