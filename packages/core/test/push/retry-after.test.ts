import { describe, expect, it } from 'vitest';
import { parseHttpDate, parseRetryAfter } from '../../src/push/retry-after.js';

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0); // Mon, 23 Nov 2026 12:00:00 GMT

describe('parseRetryAfter (RFC 9110 §10.2.3)', () => {
  it('reads delay-seconds', () => {
    expect(parseRetryAfter('120', NOW)).toBe(120_000);
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter(' 5 ', NOW)).toBe(5_000);
  });

  it('reads an HTTP-date as the time left until it, and a past date as 0', () => {
    expect(parseRetryAfter('Mon, 23 Nov 2026 12:01:30 GMT', NOW)).toBe(90_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 12:00:00 GMT', NOW)).toBe(0);
  });

  it.each([
    undefined,
    '',
    '-1',
    '1.5',
    '1e3',
    '+5',
    '0x10',
    'soon',
    '1 hour',
    '99999999999999999999',
    'Mon, 23 Nov 2026 12:01:30',
  ])('gives no hint for %j', (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });
});

describe('parseHttpDate (RFC 9110 §5.6.7)', () => {
  const expected = Date.UTC(1994, 10, 6, 8, 49, 37);

  it('reads the three forms a recipient must accept', () => {
    expect(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT', NOW)).toBe(expected);
    expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', NOW)).toBe(expected);
    expect(parseHttpDate('Sun Nov  6 08:49:37 1994', NOW)).toBe(expected);
    expect(parseHttpDate('Sun Nov 16 08:49:37 1994', NOW)).toBe(Date.UTC(1994, 10, 16, 8, 49, 37));
  });

  it('puts a two-digit year more than 50 years ahead in the past century', () => {
    expect(new Date(parseHttpDate('Thursday, 01-Jan-76 00:00:00 GMT', NOW)!).getUTCFullYear()).toBe(2076);
    expect(new Date(parseHttpDate('Friday, 01-Jan-77 00:00:00 GMT', NOW)!).getUTCFullYear()).toBe(1977);
  });

  it.each([
    'Sun, 31 Feb 2026 08:49:37 GMT',
    'Sun, 06 Nov 1994 24:00:00 GMT',
    'Sun, 06 Nov 1994 08:60:00 GMT',
    'Sun, 00 Nov 1994 08:49:37 GMT',
    'sun, 06 nov 1994 08:49:37 gmt',
    'Sun, 6 Nov 1994 08:49:37 GMT',
    'Sun, 06 Nov 1994 08:49:37 UTC',
    '1994-11-06T08:49:37Z',
    '1',
  ])('refuses %j', (value) => {
    expect(parseHttpDate(value, NOW)).toBeUndefined();
  });
});
