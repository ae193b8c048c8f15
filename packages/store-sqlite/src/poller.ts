/**
 * How a SQLite store's subscribers hear of commits made by other processes to the same file: SQLite
 * has no notifications between processes, so while anyone listens the store polls the file. A
 * cheap check first (`PRAGMA data_version` moves only when another connection committed), then the
 * versions of the subscribed tasks, whether their turns are still queued (another process's
 * finishTurn), and, for subscribeAll(), the tasks updated since the last look.
 */

import { type Clock, Subscribers, type Unsubscribe } from '@fastify-a2a/core';
import type Database from 'better-sqlite3';

/**
 * How far back subscribeAll's poll looks before the last update it saw: processes on one machine
 * read one clock, but a commit may take its `updated_at` a little before an earlier one commits.
 */
const ALL_TASKS_CLOCK_MARGIN_MS = 2000;

/**
 * The statements the poller runs, typed here rather than as a slice of the store's whole statement
 * set: that set's inferred type names better-sqlite3's internal namespace, which a declaration file
 * cannot, so it stays internal to the package (`@internal`, stripped from the .d.ts files).
 */
export interface PollerStatements {
  dataVersion: Database.Statement<[], number>;
  subscriptionHead: Database.Statement<
    [{ namespace: string; taskId: string }],
    { version: number | null; queued: number }
  >;
  taskVersions: Database.Statement<[string, string], { task_id: string; version: number }>;
  queuedTasks: Database.Statement<[string, string], string>;
  tasksUpdatedSince: Database.Statement<[string, number], { task_id: string; version: number; updated_at: number }>;
}

export interface ChangePollerOptions {
  /** The store's statements while it is open (the ones the poller runs). */
  statements(): PollerStatements | undefined;
  namespace: string;
  clock: Clock;
  /** Whether other processes can commit to the file (not for `:memory:`): only then is there anything to poll. */
  crossProcess: boolean;
  pollIntervalMs: number;
  onListenerError: ((error: unknown, taskId: string) => void) | undefined;
}

export class ChangePoller {
  readonly #options: ChangePollerOptions;
  readonly #subscribers: Subscribers;
  /** The version each subscribed task was last notified at (or had when first subscribed). */
  readonly #seen = new Map<string, number>();
  /** Subscribed tasks that had a turn queued when last checked (to notice another process's finishTurn). */
  readonly #queued = new Set<string>();
  /** For subscribeAll's poll: the version and update time each recently changed task was seen at. */
  readonly #allSeen = new Map<string, { version: number; updatedAt: number }>();
  /** subscribeAll's poll reads tasks updated at or after this (the store's clock). */
  #allSince = 0;
  #timer: NodeJS.Timeout | undefined;
  #dataVersion: number | undefined;

  constructor(options: ChangePollerOptions) {
    this.#options = options;
    this.#subscribers = new Subscribers(options.onListenerError);
  }

  /** The store opened: start polling if anyone listens. */
  opened(): void {
    this.#dataVersion = undefined;
    this.sync();
  }

  /** The store closed: its subscriptions end. */
  closed(): void {
    this.#subscribers.clear();
    this.#seen.clear();
    this.#queued.clear();
    this.sync();
  }

  /**
   * Listeners hear of this store's commits right away, and of other processes' commits from the
   * poll loop, which reads the tasks updated since its last look (by `updated_at`, with a margin
   * for clocks of processes on one machine that disagree a little).
   */
  subscribeAll(listener: (taskId: string, seq: number) => void): Unsubscribe {
    if (this.#subscribers.allListeners === 0) this.#allSince = this.#options.clock() - ALL_TASKS_CLOCK_MARGIN_MS;
    const unsubscribe = this.#subscribers.subscribeAll(listener);
    this.sync();
    return () => {
      if (!unsubscribe()) return;
      if (this.#subscribers.allListeners === 0) this.#allSeen.clear();
      this.sync();
    };
  }

  subscribe(taskId: string, listener: (seq: number) => void): Unsubscribe {
    if (!this.#subscribers.has(taskId)) {
      const seen = this.#seen.has(taskId);
      if (!seen || this.#options.crossProcess) {
        const { version, queued } = this.#subscriptionHead(taskId);
        if (!seen) this.#seen.set(taskId, version);
        if (this.#options.crossProcess && queued) this.#queued.add(taskId);
      }
    }
    // A subscription per call, so subscribing the same function twice needs two unsubscribes.
    const unsubscribe = this.#subscribers.subscribe(taskId, listener);
    this.sync();
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      if (!unsubscribe() || this.#subscribers.has(taskId)) return;
      this.#seen.delete(taskId);
      this.#queued.delete(taskId);
      this.sync();
    };
  }

  /** `seq` 0 means "no new events, re-check" (a turn ended); it is not recorded as seen. */
  notify(taskId: string, seq: number): void {
    if (seq > 0 && this.#subscribers.has(taskId)) this.#seen.set(taskId, seq);
    this.#subscribers.notify(taskId, seq);
  }

  /** The task's version (0: none yet) and whether a turn of it is queued. */
  #subscriptionHead(taskId: string): { version: number; queued: boolean } {
    try {
      const row = this.#options.statements()?.subscriptionHead.get({ namespace: this.#options.namespace, taskId });
      return { version: row?.version ?? 0, queued: row?.queued === 1 };
    } catch {
      // Unknown for now: the poll loop will report whatever version it finds.
      return { version: 0, queued: false };
    }
  }

  /** Tells subscribeAll's listeners of the tasks whose version changed since they were last seen. */
  #pollAll(changed: { task_id: string; version: number; updated_at: number }[], since: number): void {
    let latest = since + ALL_TASKS_CLOCK_MARGIN_MS;
    for (const { task_id: taskId, version, updated_at: updatedAt } of changed) {
      latest = Math.max(latest, updatedAt);
      const seen = this.#allSeen.get(taskId);
      this.#allSeen.set(taskId, { version, updatedAt });
      if (seen?.version !== version) this.#subscribers.notifyAll(taskId, version);
    }
    this.#allSince = latest - ALL_TASKS_CLOCK_MARGIN_MS;
    // Only tasks the next look can return again need remembering.
    for (const [taskId, { updatedAt }] of this.#allSeen) {
      if (updatedAt < this.#allSince) this.#allSeen.delete(taskId);
    }
  }

  /** Runs the poll loop exactly while the store is open, shared and has subscribers. */
  sync(): void {
    const wanted =
      this.#options.crossProcess &&
      this.#options.statements() !== undefined &&
      (this.#subscribers.tasks > 0 || this.#subscribers.allListeners > 0);
    if (wanted && this.#timer === undefined) {
      this.#timer = setInterval(() => this.#poll(), this.#options.pollIntervalMs);
      this.#timer.unref();
    } else if (!wanted && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  #poll(): void {
    const statements = this.#options.statements();
    const { namespace } = this.#options;
    const subscribers = this.#subscribers;
    if (statements === undefined || (subscribers.tasks === 0 && subscribers.allListeners === 0)) return;
    let rows: { task_id: string; version: number }[] = [];
    let queued = new Set<string>();
    let changed: { task_id: string; version: number; updated_at: number }[] = [];
    let dataVersion: number | undefined;
    const since = this.#allSince;
    try {
      // Cheap check first: data_version only moves when another connection committed.
      dataVersion = statements.dataVersion.get();
      if (dataVersion === this.#dataVersion) return;
      if (subscribers.tasks > 0) {
        const ids = JSON.stringify([...subscribers.taskIds()]);
        rows = statements.taskVersions.all(namespace, ids);
        queued = new Set(statements.queuedTasks.all(namespace, ids));
      }
      if (subscribers.allListeners > 0) changed = statements.tasksUpdatedSince.all(namespace, since);
    } catch {
      // Transient (locked, or closed between ticks): the next tick tries again.
      return;
    }
    this.#dataVersion = dataVersion;
    if (subscribers.allListeners > 0) this.#pollAll(changed, since);
    const notified = new Set<string>();
    for (const { task_id: taskId, version } of rows) {
      // Versions only grow, except when a purged task id is created again: report any change.
      if (version !== this.#seen.get(taskId)) {
        this.notify(taskId, version);
        notified.add(taskId);
      }
    }
    // A turn of a subscribed task ended in another process: wake the turns waiting behind it.
    for (const taskId of [...this.#queued]) {
      if (queued.has(taskId)) continue;
      this.#queued.delete(taskId);
      if (!notified.has(taskId)) this.notify(taskId, 0);
    }
    for (const taskId of queued) if (subscribers.has(taskId)) this.#queued.add(taskId);
  }
}
