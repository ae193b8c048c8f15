/**
 * `Retry-After` (RFC 9110 §10.2.3): `HTTP-date / delay-seconds`.
 *
 * Dates are parsed by hand in the three forms RFC 9110 §5.6.7 says a recipient must accept,
 * because `Date.parse` accepts far more than HTTP-dates (`Date.parse('1')` is a time in 2001), and
 * a receiver's garbage must read as "no hint", not as some date.
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '([0-9]{2}):([0-9]{2}):([0-9]{2})';

// IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
const IMF_FIXDATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) ${MONTH} ([0-9]{4}) ${TIME} GMT$`);
// rfc850-date (obsolete): Sunday, 06-Nov-94 08:49:37 GMT
const RFC850_DATE = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), ([0-9]{2})-${MONTH}-([0-9]{2}) ${TIME} GMT$`,
);
// asctime-date (obsolete): Sun Nov  6 08:49:37 1994
const ASCTIME_DATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} ([0-9]{2}| [0-9]) ${TIME} ([0-9]{4})$`);

/**
 * Milliseconds to wait before retrying, or `undefined` when the header is absent or not valid.
 * A date in the past gives `0`. `now` is epoch milliseconds.
 */
export function parseRetryAfter(header: string | undefined, now: number): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (/^[0-9]+$/.test(value)) {
    const ms = Number(value) * 1000;
    return Number.isSafeInteger(ms) ? ms : undefined;
  }
  const date = parseHttpDate(value, now);
  return date === undefined ? undefined : Math.max(0, date - now);
}

/** Epoch milliseconds of an HTTP-date (RFC 9110 §5.6.7), or `undefined`. */
export function parseHttpDate(value: string, now: number): number | undefined {
  let m = IMF_FIXDATE.exec(value);
  if (m) return utc(Number(m[3]), m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
  m = ASCTIME_DATE.exec(value);
  if (m) return utc(Number(m[6]), m[1]!, Number(m[2]!.trim()), m[3]!, m[4]!, m[5]!);
  m = RFC850_DATE.exec(value);
  if (m) {
    // §5.6.7: a two-digit year that looks more than 50 years in the future is in the past century.
    const twoDigits = Number(m[3]);
    const thisYear = new Date(now).getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + twoDigits;
    if (year > thisYear + 50) year -= 100;
    return utc(year, m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
  }
  return undefined;
}

function utc(year: number, monthName: string, day: number, h: string, m: string, s: string): number | undefined {
  const month = MONTHS.indexOf(monthName);
  const [hour, minute, second] = [Number(h), Number(m), Number(s)];
  // second may be 60 (a leap second, §5.6.7); Date.UTC rolls it into the next minute.
  if (hour > 23 || minute > 59 || second > 60 || day < 1) return undefined;
  const time = Date.UTC(year, month, day, hour, minute, second);
  // 31 Feb would roll into March: refuse a day the month does not have.
  if (new Date(Date.UTC(year, month, day)).getUTCMonth() !== month) return undefined;
  return time;
}
