/**
 * The events the runtime itself writes into a task's log (status updates, turn ends) and their
 * timestamps. One instance per runtime: its clock and id generator are the runtime's options.
 */

import { toAgentMessage } from '../executor.js';
import { cloneJson } from '../json.js';
import { endsStream } from '../model/task-state.js';
import {
  isFinalState,
  type Message,
  type Metadata,
  type Task,
  type TaskEvent,
  type TaskState,
  type TaskStatusUpdateEvent,
  type TurnEndEvent,
} from '../model/types.js';
import type { Clock } from '../store/index.js';

/**
 * Whether `event`, written by the turn of user message `messageId`, ends that turn: a final status
 * (§7.2 `final`) or that turn's `turn-end`.
 */
export function endsTurn(event: TaskEvent, messageId: string): boolean {
  return endsStream(event) || (event.kind === 'turn-end' && event.turnId === messageId);
}

export class Events {
  readonly #clock: Clock;
  readonly #generateId: () => string;
  #lastNow = Number.NaN;
  #lastNowIso = '';

  constructor(clock: Clock, generateId: () => string) {
    this.#clock = clock;
    this.#generateId = generateId;
  }

  /** A fresh id for a task, context, artifact or agent message. */
  newId(): string {
    return this.#generateId();
  }

  /** The clock as an ISO timestamp; one string per millisecond (a turn stamps several events in one). */
  now(): string {
    const now = this.#clock();
    if (now !== this.#lastNow) {
      this.#lastNow = now;
      this.#lastNowIso = new Date(now).toISOString();
    }
    return this.#lastNowIso;
  }

  /** §7.2.2 TaskStatusUpdateEvent; `final` follows the state (terminal or interrupted). */
  status(task: Task, state: TaskState, message?: Message | string, metadata?: Metadata): TaskStatusUpdateEvent {
    const status: TaskStatusUpdateEvent['status'] = { state, timestamp: this.now() };
    if (message !== undefined) {
      status.message =
        typeof message === 'string'
          ? toAgentMessage(message, { taskId: task.id, contextId: task.contextId, messageId: this.#generateId() })
          : message;
    }
    const event: TaskStatusUpdateEvent = {
      kind: 'status-update',
      taskId: task.id,
      contextId: task.contextId,
      status,
      final: isFinalState(state),
    };
    if (metadata !== undefined) event.metadata = cloneJson(metadata); // the agent may reuse its object
    return event;
  }

  /**
   * The turn of user message `messageId` ended and left the task non-final (`working`): the event
   * that frees streams waiting for that turn, which no A2A event marks (it is never sent).
   */
  turnEnd(task: Task, messageId: string): TurnEndEvent {
    return { kind: 'turn-end', taskId: task.id, contextId: task.contextId, turnId: messageId };
  }
}
