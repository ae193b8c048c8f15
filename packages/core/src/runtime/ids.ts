/**
 * The runtime's default ids: UUID version 7 (RFC 9562 §5.7), a millisecond timestamp in the first
 * 48 bits and 74 random bits after it, so that ids made later sort after earlier ones.
 *
 * Why time-ordered: every store keys its rows by task and context id (the task row, its log's
 * `(task, seq)` key, the message index by task, the indexes by context). Random v4 ids put each
 * new task's rows on a random leaf page of every one of those B-trees, so a busy store dirties a
 * different page per send in each of them; ids that grow with time append to the same few pages.
 * A blocking send on a SQLite file delivered 22–25 % more per second, 50–70 % more in a second
 * window on the grown file (`BENCH_SERVERS=sqlite BENCH_SCENARIOS=send npm run bench`, alternating
 * runs; issue 30). What they give away is the creation time, to the millisecond, which the task's
 * own status timestamp already says to whoever can read it.
 *
 * Built from `crypto.randomUUID()` (Node's pooled entropy): its first 48 bits are replaced by the
 * time and its version digit by 7; its variant bits are already RFC 9562's. 74 random bits stay,
 * fresh for every id (no counter within a millisecond, as some v7 generators use, which would
 * leave ids of one millisecond only 42 random bits apart).
 */

import { randomUUID } from 'node:crypto';

const MAX_48_BITS = 2 ** 48 - 1;

/** A new UUID v7 for the time `now` (epoch ms; the system clock when left out). */
export function timeOrderedUuid(now: number = Date.now()): string {
  const random = randomUUID();
  const ms = Number.isFinite(now) ? Math.min(Math.max(Math.floor(now), 0), MAX_48_BITS) : 0;
  const time = ms.toString(16).padStart(12, '0');
  // random is xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: keep from the digit after the version on.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`;
}
