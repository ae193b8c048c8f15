/**
 * The task state machine and how events change a task snapshot. Pure functions: the runtime
 * computes the next snapshot here and a store only persists it, so every adapter agrees.
 */

import { A2AError } from './errors.js';
import type { TaskEvent } from './store.js';
import {
  type Artifact,
  isFinalState,
  isTerminalState,
  type Task,
  type TaskArtifactUpdateEvent,
  type TaskState,
} from './types.js';

/**
 * §6.3: terminal states (completed, canceled, failed, rejected) are final; `submitted` is only the
 * initial state; `unknown` is something a server reports, never a state it moves a task into.
 */
export function assertTransition(taskId: string, from: TaskState, to: TaskState): void {
  if (isTerminalState(from)) {
    throw new A2AError(
      'INVALID_TRANSITION',
      `Task "${taskId}" is ${from}, a terminal state (A2A §6.3); it cannot move to ${to}. Start a new task instead.`,
      { data: { taskId, from, to } },
    );
  }
  if ((to === 'submitted' && from !== 'submitted') || to === 'unknown') {
    throw new A2AError('INVALID_TRANSITION', `Task "${taskId}" cannot move from ${from} to ${to}.`, {
      data: { taskId, from, to },
    });
  }
}

function assertWritable(task: Task, what: string): void {
  if (isTerminalState(task.status.state)) {
    throw new A2AError(
      'INVALID_TRANSITION',
      `Task "${task.id}" is ${task.status.state}, a terminal state (A2A §6.3); ${what} is not allowed any more.`,
      { data: { taskId: task.id, state: task.status.state } },
    );
  }
}

function withArtifact(artifacts: readonly Artifact[], event: TaskArtifactUpdateEvent): Artifact[] {
  const index = artifacts.findIndex((a) => a.artifactId === event.artifact.artifactId);
  const incoming = event.artifact;
  if (index === -1) return [...artifacts, incoming];
  const next = [...artifacts];
  if (event.append) {
    // §7.2.3: `append` adds the parts to the artifact sent earlier under the same id.
    const existing = artifacts[index] as Artifact;
    const merged: Artifact = { ...existing, parts: [...existing.parts, ...incoming.parts] };
    if (incoming.name !== undefined) merged.name = incoming.name;
    if (incoming.description !== undefined) merged.description = incoming.description;
    if (incoming.metadata !== undefined) merged.metadata = { ...existing.metadata, ...incoming.metadata };
    next[index] = merged;
  } else {
    next[index] = incoming;
  }
  return next;
}

/**
 * Applies `events` to `task` (or creates it from a `task` event) and returns the new snapshot.
 *
 * Neither `task` nor the events are modified: the result is a new object that shares whatever did
 * not change (unchanged messages, artifacts, parts) with its inputs and the events. Nothing in the
 * runtime changes a snapshot or an event in place, and stores copy what they keep, so sharing is
 * safe, and it keeps each update O(size of the changed lists) rather than a deep copy of the task.
 * @throws {A2AError} INVALID_TRANSITION for an event the state machine forbids.
 */
export function applyEvents(task: Task | undefined, events: readonly TaskEvent[]): Task {
  let next: Task | undefined = task === undefined ? undefined : { ...task };
  for (const event of events) {
    if (event.kind === 'task') {
      if (next !== undefined) {
        throw new A2AError('INVALID_TRANSITION', `Task "${event.id}" already exists.`, { data: { taskId: event.id } });
      }
      next = { ...event };
      continue;
    }
    if (next === undefined) {
      throw new A2AError('INVALID_TRANSITION', `A ${event.kind} event needs an existing task; create it first.`);
    }
    switch (event.kind) {
      case 'message':
        assertWritable(next, 'adding a message');
        next.history = [...(next.history ?? []), event];
        break;
      case 'status-update':
        assertTransition(next.id, next.status.state, event.status.state);
        next.status = event.status;
        // The agent's status message becomes part of the conversation, as clients expect to see it
        // in `history` when they fetch the task later.
        if (event.status.message) next.history = [...(next.history ?? []), event.status.message];
        break;
      case 'artifact-update':
        assertWritable(next, 'adding an artifact');
        next.artifacts = withArtifact(next.artifacts ?? [], event);
        break;
      case 'turn-end':
        break;
    }
  }
  if (next === undefined) throw new A2AError('INVALID_TRANSITION', 'No events to apply.');
  return next;
}

/** True when this stored event ends a stream of the task: a status-update in a final state. */
export function endsStream(event: TaskEvent): boolean {
  return event.kind === 'status-update' && isFinalState(event.status.state);
}

/** §7.3 historyLength: the most recent `historyLength` messages; undefined keeps all. */
export function withHistoryLength(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined || task.history === undefined) return task;
  return { ...task, history: historyLength === 0 ? [] : task.history.slice(-historyLength) };
}
