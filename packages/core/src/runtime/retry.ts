/**
 * Writes that must happen: the one that ends a turn (its last event, and its slot in the context's
 * queue). Given up, such a write leaves the task `working` and every later message of the context
 * queued behind a slot no one releases, so it is tried again through a store outage, with backoff,
 * until it succeeds or this worker lost its lease (then the turn belongs to the reaper).
 */

import type { Logger } from '../logger.js';

/** First wait after a failed attempt; doubles per attempt, up to {@link MAX_DELAY_MS}. */
const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 2000;

export interface RetryOptions {
  readonly log: Logger;
  /** Names the write in the log: `a2a: could not <what>; retrying`. */
  readonly what: string;
  /** Fields of every log line (the task id). */
  readonly fields: Record<string, unknown>;
  /** Checked before every retry: true stops retrying (the lease was lost). */
  giveUp(): boolean;
}

/** Runs `attempt` until it resolves (true) or `giveUp` says to stop (false); never throws. */
export async function retryUntilDone(attempt: () => Promise<unknown>, options: RetryOptions): Promise<boolean> {
  const { log, what, fields } = options;
  for (let failures = 0; ; failures++) {
    try {
      await attempt();
      if (failures > 0) log.info({ ...fields, attempts: failures + 1 }, `a2a: ${what} succeeded after a retry`);
      return true;
    } catch (error) {
      if (options.giveUp()) {
        log.error({ ...fields, err: error }, `a2a: could not ${what}; this worker lost its lease, so it stops trying`);
        return false;
      }
      const delayMs = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** failures);
      // One warning per write, then quieter: an outage would otherwise log every attempt at warn.
      const level = failures === 0 ? 'warn' : 'debug';
      log[level]({ ...fields, err: error, retryInMs: delayMs }, `a2a: could not ${what}; retrying`);
      await new Promise((resolve) => setTimeout(resolve, delayMs).unref());
    }
  }
}
