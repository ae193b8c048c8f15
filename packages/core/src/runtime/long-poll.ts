/**
 * GetTask with `currentGeneration` (the A2A 1.1 draft's long-poll, §3.2.7): the task once its
 * generation is greater than the one the client has, or as it is when the wait's bound comes or
 * the client goes away. Woken by the store's notifications (a commit on any worker sharing the
 * store), with a safety re-read every follow poll interval for notifications that were lost, as
 * streams have (runtime/follower.ts).
 */

import { taskNotFound } from '../errors.js';
import { isTerminalState } from '../model/types.js';
import type { StreamSignal } from '../protocol/context.js';
import type { A2AStore, StoreCallContext, TaskRecord } from '../store/index.js';

export interface GenerationWait {
  readonly store: A2AStore;
  readonly taskId: string;
  /** The generation the client has: the wait ends once the task's is greater. */
  readonly after: number;
  /** The task as read before waiting (the caller's own: its owner was checked). */
  readonly record: TaskRecord;
  readonly maxWaitMs: number;
  /** The safety re-read's interval. */
  readonly pollIntervalMs: number;
  /** The caller went away. */
  readonly signal: StreamSignal | undefined;
  /** The worker is shutting down: answer now rather than hold its close up. */
  readonly stop: AbortSignal;
  readonly ctx: StoreCallContext | undefined;
}

/** Whether `record` answers a long-poll for a generation after `after` at once. */
export function answersAfter(record: TaskRecord, after: number): boolean {
  // A terminal task changes no more (A2A §6.3): holding the request would only delay the answer.
  return (record.task.generation ?? 0) > after || isTerminalState(record.task.status.state);
}

/**
 * The task once {@link answersAfter} holds, or as it is when `maxWaitMs` passed, the caller went
 * away or the worker began to shut down. Not found when the task was purged meanwhile.
 */
export function waitForGeneration(wait: GenerationWait): Promise<TaskRecord> {
  const { store, taskId, after, signal, ctx } = wait;
  return new Promise<TaskRecord>((resolve, reject) => {
    let last = wait.record;
    let reading = false;
    /** A wake came while a read was in flight: read again after it. */
    let again = false;
    /** The bound came: the next read answers whatever it finds. */
    let expired = false;
    let done = false;
    const finish = (outcome: TaskRecord | Error): void => {
      if (done) return;
      done = true;
      unsubscribe();
      clearTimeout(bound);
      clearInterval(poll);
      signal?.removeEventListener('abort', onAbort);
      wait.stop.removeEventListener('abort', onAbort);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const read = (): void => {
      if (done) return;
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      store.getTask(taskId, ctx).then(
        (record) => {
          reading = false;
          if (record === undefined) return finish(taskNotFound(taskId));
          last = record;
          if (expired || answersAfter(record, after)) return finish(record);
          if (again) {
            again = false;
            read();
          }
        },
        (error: unknown) => {
          reading = false;
          finish(error instanceof Error ? error : new Error(String(error)));
        },
      );
    };
    // Notifications say how far the log reaches; only a commit past the version read can matter.
    const unsubscribe = store.subscribe(taskId, (seq) => {
      if (seq > last.version) read();
    });
    const onAbort = (): void => finish(last);
    const bound = setTimeout(() => {
      expired = true;
      read();
    }, wait.maxWaitMs);
    const poll = setInterval(read, wait.pollIntervalMs);
    poll.unref();
    if (signal?.aborted || wait.stop.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort);
    wait.stop.addEventListener('abort', onAbort);
    // A commit between the read the caller made and the subscription above told no one here.
    read();
  });
}
