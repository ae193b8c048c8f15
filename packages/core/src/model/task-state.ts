/**
 * The task state machine and how events change a task snapshot. Pure functions: the runtime
 * computes the next snapshot here and a store only persists it, so every adapter agrees.
 */

import { A2AError } from '../errors.js';
import type { TaskEvent } from './types.js';
import {
  type Artifact,
  isFinalState,
  isTerminalState,
  type Message,
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

/**
 * Adds the artifact update to `artifacts`, an array this call of {@link applyEvents} owns. An
 * artifact it extends is copied once per call (then tracked in `owned` and extended in place), so
 * a batch of k appends to an artifact of n parts costs O(n + k), not O(k·n): an agent streaming
 * tokens into one artifact stays linear. Returns the set of artifacts this call copied (made on the
 * first copy: most calls never extend an artifact).
 */
function addArtifact(
  artifacts: Artifact[],
  event: TaskArtifactUpdateEvent,
  owned: Set<Artifact> | undefined,
): Set<Artifact> | undefined {
  const incoming = event.artifact;
  const index = artifacts.findIndex((a) => a.artifactId === incoming.artifactId);
  if (index === -1) {
    artifacts.push(incoming);
    return owned;
  }
  if (!event.append) {
    artifacts[index] = incoming;
    return owned;
  }
  // §7.2.3: `append` adds the parts to the artifact sent earlier under the same id.
  let target = artifacts[index] as Artifact;
  let copies = owned;
  if (copies === undefined || !copies.has(target)) {
    target = { ...target, parts: target.parts.slice() };
    artifacts[index] = target;
    copies ??= new Set<Artifact>();
    copies.add(target);
  }
  const parts = target.parts;
  for (const part of incoming.parts) {
    // Consecutive plain text chunks share one part: a streamed answer's snapshot holds its text
    // once, not one part per token (issue 30). The concatenation is the artifact's content as
    // §7.2.3 defines it; every chunk stays in the task's log, so a stream resumed after a sequence
    // still receives each chunk as it was sent. Parts with metadata keep their own part.
    const last = parts[parts.length - 1];
    if (last?.kind === 'text' && part.kind === 'text' && last.metadata === undefined && part.metadata === undefined) {
      parts[parts.length - 1] = { kind: 'text', text: last.text + part.text };
    } else {
      parts.push(part);
    }
  }
  if (incoming.name !== undefined) target.name = incoming.name;
  if (incoming.description !== undefined) target.description = incoming.description;
  if (incoming.metadata !== undefined) target.metadata = { ...target.metadata, ...incoming.metadata };
  return copies;
}

/**
 * Appends `message` to `task`'s history, copying the history first unless it is `own`, the array
 * this call of {@link applyEvents} made; returns the array it appended to (now owned).
 */
function appendHistory(task: Task, own: Message[] | undefined, message: Message): Message[] {
  if (own !== undefined && task.history === own) {
    own.push(message);
    return own;
  }
  // Of exactly the length it needs: a copy extended with push reserves spare slots, which every
  // task snapshot kept in memory would carry (bench/PROFILE.md).
  const history = task.history === undefined ? [message] : task.history.concat([message]);
  task.history = history;
  return history;
}

/**
 * The task generation rule (A2A 1.1 draft, §3.2.7 "Task Generation Semantics" of the spec's
 * `dev-1.1` branch), the one place it is written: the generation is 1 when the task is created
 * and grows by exactly 1 with each event of the task's log for which this is true: a state change
 * (`status-update`), an artifact added or updated (`artifact-update`, each chunk its own change),
 * and a user message recorded in the task (`message`: the draft's timeline orders client messages
 * by generation, and two follow-ups racing with the same `ifGenerationMatch` must not both pass,
 * so the first one recorded moves it). `turn-end` is internal and changes nothing a client sees.
 * Derived from the log, never counted beside it: every store persists the snapshot that
 * {@link applyEvents} computes with this rule, and a stream counts the same events.
 */
export function advancesGeneration(event: TaskEvent): boolean {
  return event.kind === 'status-update' || event.kind === 'artifact-update' || event.kind === 'message';
}

/** The generation a task is created with (draft §3.2.7): a client that reads 0 knows a server does not count. */
export const FIRST_GENERATION = 1;

/**
 * Applies `events` to `task` (or creates it from a `task` event) and returns the new snapshot.
 *
 * Neither `task` nor the events are modified: the result is a new object that shares whatever did
 * not change (unchanged messages, artifacts, parts) with its inputs and the events. Nothing in the
 * runtime changes a snapshot or an event in place, and stores copy what they keep, so sharing is
 * safe. Each list the events change (history, artifacts, an appended artifact's parts) is copied
 * once per call and then extended in place, so a call costs O(size of the changed lists + events).
 * @throws {A2AError} INVALID_TRANSITION for an event the state machine forbids.
 */
export function applyEvents(task: Task | undefined, events: readonly TaskEvent[]): Task {
  let next: Task | undefined = task === undefined ? undefined : { ...task };
  // What this call made, and so may extend in place (never the input's or an event's objects).
  let ownHistory: Message[] | undefined;
  let ownArtifacts: Artifact[] | undefined;
  // Made on the first append to an existing artifact: most calls never need it.
  let ownedArtifacts: Set<Artifact> | undefined;
  for (const event of events) {
    if (event.kind === 'task') {
      if (next !== undefined) {
        throw new A2AError('INVALID_TRANSITION', `Task "${event.id}" already exists.`, { data: { taskId: event.id } });
      }
      next = { ...event };
      next.generation = FIRST_GENERATION;
      continue;
    }
    if (next === undefined) {
      throw new A2AError('INVALID_TRANSITION', `A ${event.kind} event needs an existing task; create it first.`);
    }
    switch (event.kind) {
      case 'message':
        assertWritable(next, 'adding a message');
        ownHistory = appendHistory(next, ownHistory, event);
        break;
      case 'status-update':
        assertTransition(next.id, next.status.state, event.status.state);
        next.status = event.status;
        // The agent's status message becomes part of the conversation, as clients expect to see it
        // in `history` when they fetch the task later.
        if (event.status.message) ownHistory = appendHistory(next, ownHistory, event.status.message);
        break;
      case 'artifact-update':
        assertWritable(next, 'adding an artifact');
        if (ownArtifacts === undefined || next.artifacts !== ownArtifacts) {
          ownArtifacts = next.artifacts === undefined ? [] : next.artifacts.slice();
          next.artifacts = ownArtifacts;
        }
        ownedArtifacts = addArtifact(ownArtifacts, event, ownedArtifacts);
        break;
      case 'turn-end':
        break;
    }
    // A task written before generations were kept has none: it counts from 1 at its next change.
    if (advancesGeneration(event)) next.generation = (next.generation ?? 0) + 1;
  }
  if (next === undefined) throw new A2AError('INVALID_TRANSITION', 'No events to apply.');
  return next;
}

/**
 * The state part of {@link applyEvents}: checks the events against the task's state exactly as
 * applying them would (transitions, nothing after a terminal state) and returns the task with its
 * new status, leaving history and artifacts as they are. A turn checks each update of its agent
 * against this projection in O(1); the full snapshot is computed once per commit.
 */
export function projectStatus(task: Task, events: readonly TaskEvent[]): Task {
  let status = task.status;
  const check: Task = { ...task };
  for (const event of events) {
    switch (event.kind) {
      case 'task':
        throw new A2AError('INVALID_TRANSITION', `Task "${event.id}" already exists.`, { data: { taskId: event.id } });
      case 'message':
        assertWritable(check, 'adding a message');
        break;
      case 'status-update':
        assertTransition(task.id, status.state, event.status.state);
        status = event.status;
        check.status = status;
        break;
      case 'artifact-update':
        assertWritable(check, 'adding an artifact');
        break;
      case 'turn-end':
        break;
    }
  }
  return check;
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
