/**
 * Small builders for tasks, messages and events, a controllable clock and store helpers. The
 * conformance suite uses them; other tests in the repository are welcome to.
 */

import { randomUUID } from 'node:crypto';
import { A2AError } from '../errors.js';
import { applyEvents } from '../model/task-state.js';
import {
  type Artifact,
  isFinalState,
  type Message,
  type Metadata,
  type Part,
  type Role,
  type Task,
  type TaskArtifactUpdateEvent,
  type TaskState,
  type TaskStatusUpdateEvent,
  type TextPart,
} from '../model/types.js';
import {
  type Clock,
  type CommitResult,
  type EnqueueTurnRequest,
  type MessageIndexEntry,
  messageDigest,
  type QueueSlot,
  type TaskEvent,
  type TaskStore,
  type TurnEndEvent,
} from '../store/index.js';

// ---- Clock ----

/** A {@link Clock} that only moves when told to. */
export interface TestClock extends Clock {
  /** The current time in epoch milliseconds (what calling the clock returns). */
  now: number;
  /** Moves the clock forward by `ms` and returns the new time. */
  advance(ms: number): number;
  /** Sets the clock to `ms` (epoch milliseconds). */
  set(ms: number): void;
}

/** 2023-11-14T22:13:20Z: a round, recent instant, far from 0 so "0 means unset" bugs show. */
export const TEST_CLOCK_START = 1_700_000_000_000;

export function createTestClock(start: number = TEST_CLOCK_START): TestClock {
  const clock = (() => clock.now) as TestClock;
  clock.now = start;
  clock.advance = (ms: number): number => {
    clock.now += ms;
    return clock.now;
  };
  clock.set = (ms: number): void => {
    clock.now = ms;
  };
  return clock;
}

// ---- Protocol objects ----

/** The two ids that place an event: the task's `id` and `contextId`. */
export type TaskRef = Pick<Task, 'id' | 'contextId'>;

export const newId = (prefix: string): string => `${prefix}-${randomUUID()}`;

export function textPart(text: string, metadata?: Metadata): TextPart {
  return metadata === undefined ? { kind: 'text', text } : { kind: 'text', text, metadata };
}

export type MessageOptions = Partial<Omit<Message, 'kind' | 'role' | 'parts'>>;

/** A message with a fresh `messageId`; `content` is a text or the parts. */
export function message(role: Role, content: string | Part[], options: MessageOptions = {}): Message {
  return {
    kind: 'message',
    messageId: newId('msg'),
    role,
    parts: typeof content === 'string' ? [textPart(content)] : content,
    ...options,
  };
}

export const userMessage = (content: string | Part[], options?: MessageOptions): Message =>
  message('user', content, options);

export const agentMessage = (content: string | Part[], options?: MessageOptions): Message =>
  message('agent', content, options);

export interface TaskFixtureOptions {
  /** @default a fresh `task-…` id */
  id?: string;
  /** @default a fresh `ctx-…` id */
  contextId?: string;
  /** @default 'submitted' */
  state?: TaskState;
  /** `status.timestamp`; `null` leaves it out. @default TEST_CLOCK_START as an ISO string */
  timestamp?: string | null;
  history?: Message[];
  artifacts?: Artifact[];
  metadata?: Metadata;
}

/** A task object, usable both as the creating `task` event and as a snapshot. */
export function taskFixture(options: TaskFixtureOptions = {}): Task {
  const task: Task = {
    kind: 'task',
    id: options.id ?? newId('task'),
    contextId: options.contextId ?? newId('ctx'),
    status: { state: options.state ?? 'submitted' },
  };
  const timestamp = options.timestamp === undefined ? new Date(TEST_CLOCK_START).toISOString() : options.timestamp;
  if (timestamp !== null) task.status.timestamp = timestamp;
  if (options.history !== undefined) task.history = options.history;
  if (options.artifacts !== undefined) task.artifacts = options.artifacts;
  if (options.metadata !== undefined) task.metadata = options.metadata;
  return task;
}

/**
 * The snapshot a commit creating `task` stores: the task as {@link applyEvents} makes it, with its
 * generation (the A2A 1.1 draft's, model/task-state.ts) counted.
 */
export function createdSnapshot(task: Task): Task {
  return applyEvents(undefined, [task]);
}

export interface StatusUpdateOptions {
  /** An agent message to attach to the status; a string becomes an agent text message. */
  message?: Message | string;
  /** @default isFinalState(state) */
  final?: boolean;
  timestamp?: string;
  metadata?: Metadata;
}

export function statusUpdate(
  task: TaskRef,
  state: TaskState,
  options: StatusUpdateOptions = {},
): TaskStatusUpdateEvent {
  const event: TaskStatusUpdateEvent = {
    kind: 'status-update',
    taskId: task.id,
    contextId: task.contextId,
    status: { state },
    final: options.final ?? isFinalState(state),
  };
  if (options.message !== undefined) {
    event.status.message =
      typeof options.message === 'string'
        ? agentMessage(options.message, { taskId: task.id, contextId: task.contextId })
        : options.message;
  }
  if (options.timestamp !== undefined) event.status.timestamp = options.timestamp;
  if (options.metadata !== undefined) event.metadata = options.metadata;
  return event;
}

export interface ArtifactUpdateOptions {
  append?: boolean;
  lastChunk?: boolean;
  metadata?: Metadata;
}

/** An artifact-update; `artifact` as a string is a text artifact with a fresh id. */
export function artifactUpdate(
  task: TaskRef,
  artifact: string | (Partial<Artifact> & Pick<Artifact, 'parts'>),
  options: ArtifactUpdateOptions = {},
): TaskArtifactUpdateEvent {
  const full: Artifact =
    typeof artifact === 'string'
      ? { artifactId: newId('artifact'), parts: [textPart(artifact)] }
      : { artifactId: newId('artifact'), ...artifact };
  const event: TaskArtifactUpdateEvent = {
    kind: 'artifact-update',
    taskId: task.id,
    contextId: task.contextId,
    artifact: full,
  };
  if (options.append !== undefined) event.append = options.append;
  if (options.lastChunk !== undefined) event.lastChunk = options.lastChunk;
  if (options.metadata !== undefined) event.metadata = options.metadata;
  return event;
}

export function turnEnd(task: TaskRef, turnId: string): TurnEndEvent {
  return { kind: 'turn-end', taskId: task.id, contextId: task.contextId, turnId };
}

/**
 * A task that exercises JSON fidelity: non-ASCII text (emoji, right-to-left, combining marks),
 * control characters except U+0000 (Postgres `jsonb` cannot hold it), nested data with numbers,
 * booleans and nulls, and file parts with bytes and with a URI.
 */
export function richTask(options: TaskFixtureOptions = {}): Task {
  const controls = `${Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join('')}\u007f`;
  const data = {
    string: 'plain',
    unicode: 'héllo wörld — ünïcödé ✓ 日本語 한국어',
    emoji: '👩🏽‍💻🚀🎉 family: 👨‍👩‍👧‍👦, flag: 🇫🇷',
    rtl: 'שלום עולם · مرحبا بالعالم',
    combining: 'e\u0301 a\u0308 \u200d zero-width-joiner',
    controls,
    quotes: 'single \' double " backslash \\ slash / tab\tnewline\nreturn\r',
    integers: [0, 1, -1, 42, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER],
    floats: [0.1, -2.5e-7, Math.PI, 1e21, 123456.789],
    booleans: [true, false],
    nulls: [null, { inner: null }],
    empty: { object: {}, array: [], string: '' },
    nested: { level1: { level2: { level3: { level4: { values: [1, 'two', { three: [3] }] } } } } },
    'key with spaces and ünïcode 🔑': 'value',
  };
  const history: Message[] = [
    userMessage(
      [
        textPart(`${data.unicode} ${data.emoji} ${data.rtl}`, { lang: 'mixed' }),
        { kind: 'data', data, metadata: { schema: 'fidelity', nulls: null } },
        { kind: 'file', file: { bytes: 'AAECAwQFBgcICQ==', name: 'bytes.bin', mimeType: 'application/octet-stream' } },
        { kind: 'file', file: { uri: 'https://example.com/files/r%C3%A9sum%C3%A9.pdf?x=1&y=2#p', name: 'résumé.pdf' } },
      ],
      { metadata: { controls, number: -0.5, flag: false, none: null } },
    ),
  ];
  return taskFixture({
    state: 'working',
    ...options,
    history: options.history ?? history,
    artifacts: options.artifacts ?? [
      {
        artifactId: 'artifact-fidelity',
        name: 'fidelity ✓',
        description: data.rtl,
        parts: [{ kind: 'data', data }, textPart(data.quotes)],
        extensions: ['https://example.com/ext/v1'],
        metadata: { nested: data.nested },
      },
    ],
    metadata: options.metadata ?? { data, list: [1, null, true, 'x'] },
  });
}

/** A string of exactly `length` UTF-16 code units mixing ASCII and multi-byte characters. */
export function largeText(length: number): string {
  const pattern = 'The quick brown fox — jumps over 12 lazy dogs. Ünïcödé ✓ 日本 שלום\n';
  return pattern.repeat(Math.ceil(length / pattern.length)).slice(0, length);
}

// ---- Coordination ----

/** An enqueueTurn() request; fresh `task-…`, `msg-…` and `worker-…` ids unless given (and a fresh context). */
export function turnRequest(options: Partial<EnqueueTurnRequest> = {}): EnqueueTurnRequest {
  return {
    contextId: options.contextId ?? newId('ctx'),
    taskId: options.taskId ?? newId('task'),
    messageId: options.messageId ?? newId('msg'),
    workerId: options.workerId ?? newId('worker'),
  };
}

/** What `findMessage` returns for user message `message` committed to `task`: its ids and digest. */
export function indexEntry(task: TaskRef, message: Message): MessageIndexEntry {
  return { taskId: task.id, contextId: task.contextId, digest: messageDigest(message) };
}

/**
 * A copy of `slots` sorted by context, then position: a canonical order to compare lists whose
 * order across contexts the contract leaves open (`listWorkerTurns`, `ExpiredWorker.turns`).
 */
export function sortSlots(slots: readonly QueueSlot[]): QueueSlot[] {
  return [...slots].sort((a, b) =>
    a.contextId === b.contextId ? a.position - b.position : a.contextId < b.contextId ? -1 : 1,
  );
}

/** True when, within each context, the slots appear in increasing position ("queue order"). */
export function inQueueOrder(slots: readonly QueueSlot[]): boolean {
  const last = new Map<string, number>();
  for (const slot of slots) {
    const previous = last.get(slot.contextId);
    if (previous !== undefined && previous >= slot.position) return false;
    last.set(slot.contextId, slot.position);
  }
  return true;
}

// ---- Store helpers ----

/**
 * Creates `task` (expectedVersion 0) with `events` after the `task` event in the same commit, on
 * behalf of `owner` when given.
 */
export async function createTask(
  store: TaskStore,
  task: Task,
  events: TaskEvent[] = [],
  owner?: string,
): Promise<CommitResult> {
  const all: TaskEvent[] = [task, ...events];
  const request = { taskId: task.id, expectedVersion: 0, task: applyEvents(undefined, all), events: all };
  return store.commit(owner === undefined ? request : { ...request, owner });
}

/**
 * Creates `count` tasks one after another (each `taskFixture(options)`, at version 1), for tests
 * that then commit to many tasks at once.
 */
export async function createTasks(store: TaskStore, count: number, options: TaskFixtureOptions = {}): Promise<Task[]> {
  const tasks: Task[] = [];
  for (let i = 0; i < count; i++) {
    const task = taskFixture(options);
    await createTask(store, task);
    tasks.push(task);
  }
  return tasks;
}

/**
 * Reads the task, applies `events` and commits them with the version it read, once, on behalf of
 * `owner` when given.
 * @throws {VersionConflictError} when someone else wrote in between.
 */
export async function appendEvents(
  store: TaskStore,
  taskId: string,
  events: TaskEvent[],
  owner?: string,
): Promise<CommitResult> {
  const record = await store.getTask(taskId);
  if (record === undefined) throw new Error(`appendEvents: task "${taskId}" does not exist.`);
  const request = { taskId, expectedVersion: record.version, task: applyEvents(record.task, events), events };
  return store.commit(owner === undefined ? request : { ...request, owner });
}

export const isVersionConflict = (error: unknown): boolean => A2AError.is(error) && error.code === 'VERSION_CONFLICT';

/** True for the error a commit raises when a user message id is already indexed (`DuplicateMessageError`). */
export const isDuplicateMessage = (error: unknown): boolean => A2AError.is(error) && error.code === 'DUPLICATE_MESSAGE';

/** Waits for `promise` and returns why it rejected, or `undefined` when it resolved. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

/**
 * {@link appendEvents} in a read → apply → commit loop that retries on version conflicts, the way
 * the runtime writes. Gives up after `maxAttempts` conflicts.
 */
export async function appendWithRetry(
  store: TaskStore,
  taskId: string,
  events: TaskEvent[],
  maxAttempts = 100,
): Promise<{ result: CommitResult; attempts: number }> {
  for (let attempts = 1; ; attempts++) {
    try {
      return { result: await appendEvents(store, taskId, events), attempts };
    } catch (error) {
      if (!isVersionConflict(error) || attempts >= maxAttempts) throw error;
    }
  }
}

/**
 * Polls `check` until it returns true, every `interval` ms for at most `timeout` ms. For things
 * that happen "soon" (notifications); never a fixed sleep.
 * @throws {Error} naming `what` when time runs out.
 */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  { timeout = 3000, interval = 5 }: { timeout?: number; interval?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeout;
  for (;;) {
    if (await check()) return;
    if (Date.now() >= deadline) throw new Error(`Timed out after ${timeout} ms waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
