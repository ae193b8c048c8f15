/** Retention: the periodic purge of terminal tasks nobody has touched for `ttlMs`. */

import type { A2AStore, Clock } from '../../store/index.js';
import type { RetentionOptions, RuntimeLogger } from '../options.js';
import type { JobSpec } from './background.js';

export const DEFAULT_TTL_MS = 86_400_000;
export const DEFAULT_SWEEP_INTERVAL_MS = 600_000;

export class Retention {
  readonly #store: A2AStore;
  readonly #clock: Clock;
  readonly #log: RuntimeLogger;

  constructor(store: A2AStore, clock: Clock, log: RuntimeLogger) {
    this.#store = store;
    this.#clock = clock;
    this.#log = log;
  }

  /** Purges terminal tasks (and contexts left without tasks) last updated more than `ttlMs` ago. */
  async sweep(ttlMs: number): Promise<void> {
    const purged = await this.#store.purgeExpired(this.#clock() - ttlMs);
    if (purged.tasks > 0 || purged.contexts > 0) this.#log.info({ purged }, 'a2a: purged expired tasks');
  }

  /** The sweep as a background job with the runtime's retention options. */
  job(options: RetentionOptions = {}): JobSpec {
    const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    return {
      name: 'retention sweep',
      intervalMs: options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS,
      run: () => this.sweep(ttlMs),
    };
  }
}
