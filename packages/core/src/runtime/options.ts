/** The runtime's public option types, shared by the façade and its parts. */

import type { AgentExecutorLike } from '../executor.js';
import type { StreamSignal } from '../protocol/context.js';
import type { A2AStore, Clock } from '../store.js';

/** The subset of a pino / Fastify logger the runtime uses. */
export interface RuntimeLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: RuntimeLogger = { debug() {}, info() {}, warn() {}, error() {} };

export interface RetentionOptions {
  /** Terminal tasks last updated longer ago than this are purged. @default 86_400_000 (24 h) */
  ttlMs?: number;
  /** How often the sweep runs. @default 600_000 (10 min) */
  sweepIntervalMs?: number;
}

export interface A2ARuntimeOptions {
  store: A2AStore;
  executor: AgentExecutorLike;
  logger?: RuntimeLogger;
  /** Fails a turn that runs longer than this (its signal is aborted). @default undefined (no limit) */
  turnTimeoutMs?: number;
  /**
   * Streams read the event log when notified. In case a notification was lost, this process also
   * checks the versions of every task its streams wait on this often (one `getVersions` call for
   * all of them) and wakes the streams whose task moved on. @default 2000
   */
  followPollIntervalMs?: number;
  /** A turn waiting for its context re-checks the queue this often between notifications. @default 100 */
  turnPollIntervalMs?: number;
  /** @default Date.now */
  clock?: Clock;
  /** Ids for tasks, contexts, artifacts and agent messages. @default crypto.randomUUID */
  generateId?: () => string;
  /** Periodic purge of old terminal tasks; `false` disables it. @default {} (24 h TTL) */
  retention?: RetentionOptions | false;
  /** This process's identity in the store's worker leases. @default `<hostname>-<pid>-<random>` */
  workerId?: string;
  /**
   * What a message whose `messageId` the caller already used, with different content, gets:
   * `'reject'` (-32602: a message id names one message; a retry resends it unchanged) or
   * `'replay'` (the original task, as for a retry; the A2A TCK's concurrency tests reuse one id
   * for different texts). @default 'reject'
   */
  messageIdReuse?: 'reject' | 'replay';
  /**
   * A worker that has not renewed its lease for this long is considered dead: another worker
   * fails its running tasks ("worker lost"). Leases are renewed every quarter of this. @default 15000
   */
  leaseTtlMs?: number;
  /**
   * On close, running turns may finish for this long; then they are aborted and their tasks failed.
   * @default 10000
   */
  drainTimeoutMs?: number;
  /** close() also closes the store. Pass false for a store the application owns. @default true */
  closeStore?: boolean;
}

export interface StreamOptions {
  /** Ends the stream (and stops waiting) when aborted, e.g. when the client disconnects. */
  signal?: StreamSignal;
  /** Resume after this event sequence (SSE Last-Event-ID) instead of starting with a snapshot. */
  afterSeq?: number;
  historyLength?: number;
  /**
   * Subscribing (without `afterSeq`) to a task that is already terminal is an error rather than a
   * stream of its one snapshot: A2A 1.0's SubscribeToTask (§3.1.6: UnsupportedOperationError).
   */
  terminalIsError?: boolean;
}
