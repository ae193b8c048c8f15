/**
 * The comparison routine behind bearer tokens and API keys: right answers, and the same work
 * whatever the candidate (every stored secret compared, each comparison on equal-length digests).
 */

import { timingSafeEqual } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { digestOf, SecretTable, secretsEqual } from '../../src/auth/constant-time.js';

/** timingSafeEqual, recording the length of every pair it is given. */
function countingCompare() {
  const calls: [number, number][] = [];
  const compare = ((a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    calls.push([a.byteLength, b.byteLength]);
    return timingSafeEqual(a, b);
  }) as typeof timingSafeEqual;
  return { calls, compare };
}

describe('secretsEqual', () => {
  it.each([
    ['same', 'token-1', 'token-1', true],
    ['last character differs', 'token-1', 'token-2', false],
    ['prefix', 'token', 'token-1', false],
    ['empty vs non-empty', '', 'x', false],
    ['both empty', '', '', true],
    ['unicode', 'tökén-✓', 'tökén-✓', true],
  ])('%s', (_name, a, b, equal) => {
    expect(secretsEqual(a, b)).toBe(equal);
  });

  it('compares fixed-length digests, whatever the lengths of the secrets', () => {
    const { calls, compare } = countingCompare();
    secretsEqual('a', 'a much longer candidate than the secret', compare);
    secretsEqual('x'.repeat(10_000), 'y', compare);
    expect(calls).toEqual([
      [32, 32],
      [32, 32],
    ]);
    expect(digestOf('')).toHaveLength(32);
  });
});

describe('SecretTable', () => {
  const table = (compare?: typeof timingSafeEqual) =>
    new SecretTable(
      [
        ['first-secret', 'alice'],
        ['second-secret', 'bob'],
        ['third-secret', 'carol'],
      ],
      compare,
    );

  it('finds what each secret stands for, and nothing for a near miss', () => {
    const t = table();
    expect(t.find('first-secret')).toBe('alice');
    expect(t.find('third-secret')).toBe('carol');
    expect(t.find('third-secreT')).toBeUndefined();
    expect(t.find('')).toBeUndefined();
    expect(t.size).toBe(3);
  });

  it('compares with every entry whether the match is first, last or absent', () => {
    for (const candidate of ['first-secret', 'third-secret', 'no-such-secret', 'x'.repeat(5000)]) {
      const { calls, compare } = countingCompare();
      table(compare).find(candidate);
      expect(calls, candidate).toEqual([
        [32, 32],
        [32, 32],
        [32, 32],
      ]);
    }
  });

  it('with a secret listed twice, the first entry wins', () => {
    const t = new SecretTable([
      ['same', 'one'],
      ['same', 'two'],
    ]);
    expect(t.find('same')).toBe('one');
  });
});
