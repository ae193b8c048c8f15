/**
 * The runtime's default ids are time-ordered UUID v7s (runtime/ids.ts, issue 30): later ids sort
 * after earlier ones, so new tasks' rows land next to each other in a store's indexes, and each
 * id still carries 74 fresh random bits.
 */

import { describe, expect, it } from 'vitest';
import { timeOrderedUuid } from '../../src/runtime/ids.js';
import { asTask, useRuntimes, userMessage } from './helpers.js';

const start = useRuntimes();
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** The id's first 48 bits: its millisecond. */
const timeOf = (id: string): number => Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
/** The 74 random bits: the rest, without the version digit and the variant's two bits. */
const randomOf = (id: string): string => id.replace(/-/g, '').slice(13);

describe('time-ordered ids', () => {
  it('is a UUID v7 whose first 48 bits are the millisecond it was made at', () => {
    const id = timeOrderedUuid(1_764_400_000_123);
    expect(id).toMatch(UUID_V7);
    expect(timeOf(id)).toBe(1_764_400_000_123);
    expect(timeOf(timeOrderedUuid(0))).toBe(0);
    // A clock that says something odd still gives a well-formed id.
    for (const odd of [-5, Number.NaN, 2 ** 60, 12.7]) expect(timeOrderedUuid(odd)).toMatch(UUID_V7);
    expect(timeOf(timeOrderedUuid(12.7))).toBe(12);
  });

  it('ids of later milliseconds sort after earlier ones; ids of one millisecond differ in their random bits', () => {
    const ids = [1000, 1001, 2000, 65_536, 1_764_400_000_000].map((ms) => timeOrderedUuid(ms));
    expect([...ids].sort()).toEqual(ids);
    const sameMs = Array.from({ length: 2000 }, () => timeOrderedUuid(5000));
    expect(new Set(sameMs.map(randomOf)).size).toBe(2000);
    // Every random hex digit takes many values across them (not a counter).
    for (let digit = 0; digit < 19; digit++) {
      const values = new Set(sameMs.map((id) => randomOf(id)[digit]));
      // The fourth is the variant digit: two random bits, four values.
      expect(values.size).toBeGreaterThan(digit === 3 ? 3 : 12);
    }
  });

  it('is what the runtime gives new tasks and contexts unless generateId is set', async () => {
    const before = Date.now();
    const runtime = start(async (turn) => {
      await turn.complete('done');
    });
    const task = asTask(await runtime.sendMessage({ message: userMessage('hello') }));
    expect(task.id).toMatch(UUID_V7);
    expect(task.contextId).toMatch(UUID_V7);
    expect(timeOf(task.id)).toBeGreaterThanOrEqual(before);
    expect(timeOf(task.id)).toBeLessThanOrEqual(Date.now());

    let n = 0;
    const custom = start(async (turn) => turn.complete('done'), { generateId: () => `id-${++n}` });
    const other = asTask(await custom.sendMessage({ message: userMessage('hello') }));
    expect(other.contextId).toBe('id-1');
    expect(other.id).toBe('id-2');
  });
});
