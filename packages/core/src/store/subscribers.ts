/**
 * The subscriber fan-out every store has: listeners of one task, listeners of every task, and the
 * rule that a listener that throws affects neither the commit nor the other listeners (its error
 * goes to the store's `onListenerError`, and an error handler that throws is ignored).
 */

import { runInMicrotask } from '../microtask.js';
import { type MultiMap, multiMapAdd, multiMapDelete, multiMapHas, multiMapValues } from '../multi-map.js';

interface TaskSubscription {
  listener: (seq: number) => void;
}

interface AllSubscription {
  listener: (taskId: string, seq: number) => void;
}

export class Subscribers {
  /** Task id → its subscriptions (one kept as itself: see MultiMap). */
  readonly #byTask: MultiMap<string, TaskSubscription> = new Map();
  /** subscribeAll() listeners: every task's notifications. */
  readonly #all = new Set<AllSubscription>();
  readonly #onListenerError: ((error: unknown, taskId: string) => void) | undefined;

  constructor(onListenerError?: (error: unknown, taskId: string) => void) {
    this.#onListenerError = onListenerError;
  }

  /**
   * A wrapper per call, so subscribing the same function twice gives two independent
   * subscriptions. Unsubscribing tells whether this call removed it (false the second time).
   */
  subscribe(taskId: string, listener: (seq: number) => void): () => boolean {
    const subscription: TaskSubscription = { listener };
    multiMapAdd(this.#byTask, taskId, subscription);
    return () => multiMapDelete(this.#byTask, taskId, subscription);
  }

  /** Unsubscribing tells whether this call removed it. */
  subscribeAll(listener: (taskId: string, seq: number) => void): () => boolean {
    const subscription: AllSubscription = { listener };
    this.#all.add(subscription);
    return () => this.#all.delete(subscription);
  }

  /** Whether `taskId` has a subscriber. */
  has(taskId: string): boolean {
    return this.#byTask.has(taskId);
  }

  /** The subscribed task ids. */
  taskIds(): IterableIterator<string> {
    return this.#byTask.keys();
  }

  /** How many tasks have subscribers. */
  get tasks(): number {
    return this.#byTask.size;
  }

  /** How many subscribeAll() listeners there are. */
  get allListeners(): number {
    return this.#all.size;
  }

  /** Drops every subscription of a task (a closed store). */
  clear(): void {
    this.#byTask.clear();
  }

  /** Calls the listeners of every task, then those of `taskId`, now. */
  notify(taskId: string, seq: number): void {
    if (this.#all.size > 0) this.notifyAll(taskId, seq);
    if (!this.#byTask.has(taskId)) return;
    for (const { listener } of multiMapValues(this.#byTask, taskId)) {
      try {
        listener(seq);
      } catch (error) {
        this.#report(error, taskId);
      }
    }
  }

  /** Calls the listeners of every task only, now. */
  notifyAll(taskId: string, seq: number): void {
    for (const { listener } of this.#all) {
      try {
        listener(taskId, seq);
      } catch (error) {
        this.#report(error, taskId);
      }
    }
  }

  /**
   * Calls the listeners subscribed now in a microtask, outside the caller's write, so they can
   * neither break it nor observe a half-finished one. Whoever unsubscribes before then is not called.
   */
  notifyLater(taskId: string, seq: number): void {
    if (this.#all.size > 0) {
      const all = [...this.#all];
      runInMicrotask(() => {
        for (const subscription of all) {
          if (!this.#all.has(subscription)) continue;
          try {
            subscription.listener(taskId, seq);
          } catch (error) {
            this.#report(error, taskId);
          }
        }
      });
    }
    if (!this.#byTask.has(taskId)) return;
    const subscriptions = multiMapValues(this.#byTask, taskId);
    runInMicrotask(() => {
      for (const subscription of subscriptions) {
        if (!multiMapHas(this.#byTask, taskId, subscription)) continue;
        try {
          subscription.listener(seq);
        } catch (error) {
          this.#report(error, taskId);
        }
      }
    });
  }

  #report(error: unknown, taskId: string): void {
    try {
      this.#onListenerError?.(error, taskId);
    } catch {
      // A failing error handler must not stop the remaining listeners either.
    }
  }
}
