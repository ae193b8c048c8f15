/**
 * What an operator (the plugin's monitor) may do to any task, whoever owns it: cancel it, fail a
 * turn that is stuck, release a context's queue slot, retry a push delivery that gave up. The
 * agent's callers never reach these: the monitor puts its own operator check in front of them.
 */

import { A2AError, taskNotFound } from '../errors.js';
import { isFinalState, isTerminalState, type Task } from '../model/types.js';
import { type A2AStore, hasPushStore, type QueueSlot } from '../store/index.js';
import type { Events } from './events.js';
import { releaseSlot } from './scheduler.js';
import { TaskWriter } from './task-writer.js';

export interface OperatorActionsOptions {
  readonly store: A2AStore;
  readonly events: Events;
  /** Aborts this process's turns of the task at once (other workers see the final state in the log). */
  readonly abortTask: (taskId: string) => void;
}

/** The slots queued in the store, from every worker's lease (stores with `supports.cluster`). */
async function queuedSlots(store: A2AStore): Promise<QueueSlot[]> {
  if (store.supports.cluster !== true || store.listWorkers === undefined) {
    throw new A2AError(
      'UNSUPPORTED_OPERATION',
      'This store does not list the turn queue (store.supports.cluster is false); the memory, SQLite and Postgres stores do.',
    );
  }
  return (await store.listWorkers()).flatMap((worker) => worker.turns);
}

export class OperatorActions {
  readonly #store: A2AStore;
  readonly #events: Events;
  readonly #abortTask: (taskId: string) => void;

  constructor(options: OperatorActionsOptions) {
    this.#store = options.store;
    this.#events = options.events;
    this.#abortTask = options.abortTask;
  }

  /**
   * Moves the task to `canceled` (A2A §7.4, as tasks/cancel does, whoever owns it), with `reason`
   * as its status message; the worker running its turn sees it in the log and aborts.
   * @throws {A2AError} TASK_NOT_FOUND, or TASK_NOT_CANCELABLE for a terminal task.
   */
  async cancel(taskId: string, reason: string): Promise<Task> {
    const writer = await this.#writer(taskId);
    await writer.commit((task) => {
      if (isTerminalState(task.status.state)) {
        throw new A2AError('TASK_NOT_CANCELABLE', `Task "${task.id}" is already ${task.status.state}.`, {
          data: { taskId: task.id, state: task.status.state },
        });
      }
      return [this.#events.status(task, 'canceled', reason)];
    });
    this.#abortTask(taskId);
    return writer.task;
  }

  /**
   * Fails a turn that does not end by itself: the task moves to `failed` with `reason`, and its
   * queued slots are released, so the next turn of its context may start. The worker running it,
   * if any, sees the final state and aborts.
   * @throws {A2AError} TASK_NOT_FOUND, or TASK_NOT_CANCELABLE for a task already in a final state.
   */
  async failTurn(taskId: string, reason: string): Promise<Task> {
    const writer = await this.#writer(taskId);
    const slots = (await queuedSlots(this.#store)).filter((slot) => slot.taskId === taskId);
    const [first, ...rest] = slots;
    await writer.commit(
      (task) => {
        if (isFinalState(task.status.state)) {
          throw new A2AError(
            'TASK_NOT_CANCELABLE',
            `Task "${task.id}" is ${task.status.state}: no turn of it is running, so there is none to fail.`,
            { data: { taskId: task.id, state: task.status.state } },
          );
        }
        return [this.#events.status(task, 'failed', reason)];
      },
      { releaseSlot: first },
    );
    for (const slot of rest) await releaseSlot(this.#store, slot);
    this.#abortTask(taskId);
    return writer.task;
  }

  /**
   * Releases the slot at the head of the context's queue (or the slot at `position`): the turn
   * holding it is forgotten by the queue, so the one behind it may start. The task is left as it is.
   * @returns the released slot.
   * @throws {A2AError} TASK_NOT_FOUND (naming the context) when no such slot is queued.
   */
  async releaseSlot(contextId: string, position?: number): Promise<QueueSlot> {
    const slots = (await queuedSlots(this.#store))
      .filter((slot) => slot.contextId === contextId)
      .sort((a, b) => a.position - b.position);
    const slot = position === undefined ? slots[0] : slots.find((t) => t.position === position);
    if (slot === undefined) {
      throw new A2AError(
        'TASK_NOT_FOUND',
        position === undefined
          ? `No turn is queued in context "${contextId}".`
          : `No turn is queued at position ${position} of context "${contextId}".`,
        { data: { contextId } },
      );
    }
    await releaseSlot(this.#store, slot);
    return slot;
  }

  /**
   * Starts a push delivery that gave up (or is waiting for a retry) afresh: the config is saved
   * again as it is, which resets its delivery state (PushStore.savePushConfig), so the task's
   * current state goes out at once.
   * @throws {A2AError} TASK_NOT_FOUND when the task has no such config, UNSUPPORTED_OPERATION
   *   without push support in the store.
   */
  async retryPush(taskId: string, configId: string): Promise<void> {
    const store = this.#store;
    if (!hasPushStore(store)) {
      throw new A2AError('UNSUPPORTED_OPERATION', 'This store keeps no push configs (store.supports.push is false).');
    }
    const record = await store.getPushConfig(taskId, configId);
    if (record === undefined) {
      throw new A2AError('TASK_NOT_FOUND', `Task "${taskId}" has no push notification config "${configId}".`, {
        data: { taskId, configId },
      });
    }
    await store.savePushConfig({ taskId, config: record.config, protocolVersion: record.protocolVersion });
  }

  async #writer(taskId: string): Promise<TaskWriter> {
    const record = await this.#store.getTask(taskId);
    if (record === undefined) throw taskNotFound(taskId);
    return new TaskWriter(this.#store, record.task, record.version, undefined);
  }
}
