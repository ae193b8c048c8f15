/**
 * The task runtime: turns incoming messages into turns of the agent, writes every event through
 * the store (sequenced, versioned), and serves streams by reading the store's event log. Nothing
 * here keeps protocol state only in memory: a stream, a cancel or a follow-up message works from
 * whatever the store holds, which is what lets several processes share one store.
 */

import { randomUUID } from 'node:crypto';
import { A2AError, invalidParams, taskNotCancelable, taskNotFound } from './errors.js';
import {
  type AgentExecutor,
  type AgentExecutorLike,
  type MessageInput,
  type TurnContext,
  textOf,
  toAgentMessage,
  toArtifact,
  toExecutor,
} from './executor.js';
import type { A2AStore, Clock, StoredEvent, TaskEvent } from './store.js';
import { systemClock } from './store.js';
import { applyEvents, endsStream, withHistoryLength } from './task-state.js';
import {
  isFinalState,
  isTerminalState,
  type Message,
  type MessageSendParams,
  type Metadata,
  type StreamResult,
  type Task,
  type TaskIdParams,
  type TaskQueryParams,
  type TaskState,
  type TaskStatusUpdateEvent,
} from './types.js';

/** The subset of a pino / Fastify logger the runtime uses. */
export interface RuntimeLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const silentLogger: RuntimeLogger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Runs the turns of one context one after another (per-context turn order). The default runs them
 * in this process; a store-backed scheduler extends the guarantee across processes.
 */
export interface TurnScheduler {
  run(contextId: string, turn: () => Promise<void>): Promise<void>;
}

export class InProcessTurnScheduler implements TurnScheduler {
  readonly #tails = new Map<string, Promise<void>>();

  run(contextId: string, turn: () => Promise<void>): Promise<void> {
    const previous = this.#tails.get(contextId) ?? Promise.resolve();
    const current = previous.then(turn, turn);
    const tail = current.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(contextId, tail);
    void tail.then(() => {
      if (this.#tails.get(contextId) === tail) this.#tails.delete(contextId);
    });
    return current;
  }
}

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
   * Streams read the event log when notified; they also re-read it this often in case a
   * notification was lost. @default 2000
   */
  followPollIntervalMs?: number;
  /** @default Date.now */
  clock?: Clock;
  /** Ids for tasks, contexts, artifacts and agent messages. @default crypto.randomUUID */
  generateId?: () => string;
  /** @default new InProcessTurnScheduler() */
  scheduler?: TurnScheduler;
  /** Periodic purge of old terminal tasks; `false` disables it. @default {} (24 h TTL) */
  retention?: RetentionOptions | false;
  /**
   * At start, tasks left mid-turn by a previous process (non-terminal, last event not a turn end)
   * are failed with "interrupted by server restart". Only safe when one process uses the store.
   * @default true
   */
  failInterruptedOnStart?: boolean;
  /** How long close() waits for aborted turns to return before failing their tasks. @default 5000 */
  closeGraceMs?: number;
  /** close() also closes the store. Pass false for a store the application owns. @default true */
  closeStore?: boolean;
}

/** One SSE frame: a stream result and the event sequence number it corresponds to. */
export interface StreamFrame {
  seq: number;
  result: StreamResult;
}

export interface StreamOptions {
  /** Ends the stream (and stops waiting) when aborted, e.g. when the client disconnects. */
  signal?: AbortSignal;
  /** Resume after this event sequence (SSE Last-Event-ID) instead of starting with a snapshot. */
  afterSeq?: number;
  historyLength?: number;
}

interface TurnOutcome {
  task: Task;
  reply?: Message;
}

/** A task snapshot with the version it was read at, and version-checked writes with retry. */
class TaskWriter {
  task: Task;
  version: number;

  constructor(
    private readonly store: A2AStore,
    task: Task,
    version: number,
  ) {
    this.task = task;
    this.version = version;
  }

  /**
   * Builds events from the current snapshot and commits them; on a version conflict reloads and
   * builds again. Returns false when `build` decided there is nothing to write.
   */
  async commit(build: (task: Task) => TaskEvent[] | undefined, maxAttempts = 20): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      const events = build(this.task);
      if (events === undefined || events.length === 0) return false;
      const next = applyEvents(this.version === 0 ? undefined : this.task, events);
      try {
        const stored = await this.store.commit({
          taskId: this.task.id,
          expectedVersion: this.version,
          task: next,
          events,
        });
        this.task = next;
        this.version = (stored[stored.length - 1] as StoredEvent).seq;
        return true;
      } catch (error) {
        if (!(A2AError.is(error) && error.code === 'VERSION_CONFLICT') || attempt >= maxAttempts) throw error;
        await this.reload();
      }
    }
  }

  async reload(): Promise<void> {
    const record = await this.store.getTask(this.task.id);
    if (record === undefined) throw taskNotFound(this.task.id);
    this.task = record.task;
    this.version = record.version;
  }
}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

type AbortCause = 'canceled' | 'timeout' | 'shutdown';

class Turn {
  readonly writer: TaskWriter;
  readonly controller = new AbortController();
  readonly outcome = deferred<TurnOutcome>();
  /** Resolves when the executor has returned and the turn's writes are done. */
  readonly done = deferred<void>();
  abortCause: AbortCause | undefined;
  settled = false;
  reply: Message | undefined;
  emitError: unknown;
  chain: Promise<void> = Promise.resolve();
  unsubscribe: (() => void) | undefined;
  lastArtifactId: string | undefined;

  constructor(
    readonly id: string,
    readonly message: Message,
    readonly isNewTask: boolean,
    writer: TaskWriter,
  ) {
    this.writer = writer;
  }

  get taskId(): string {
    return this.writer.task.id;
  }

  /**
   * Runs `write` after every write queued before it. All writes of a turn go through here so they
   * keep the agent's order even when it does not await them, and so the cancellation watcher can
   * wait for the turn's own writes before it reads the task.
   */
  enqueue(write: () => Promise<void>): Promise<void> {
    const result = this.chain.then(write);
    this.chain = result.then(
      () => undefined,
      (error) => {
        this.emitError ??= error;
      },
    );
    return result;
  }

  settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.outcome.resolve(this.reply ? { task: this.writer.task, reply: this.reply } : { task: this.writer.task });
  }

  abort(cause: AbortCause): void {
    if (this.controller.signal.aborted) return;
    this.abortCause = cause;
    this.controller.abort(new A2AError('INTERNAL', `Turn aborted: ${cause}`));
  }
}

export class A2ARuntime {
  readonly store: A2AStore;
  readonly #executor: AgentExecutor;
  readonly #log: RuntimeLogger;
  readonly #clock: Clock;
  readonly #id: () => string;
  readonly #scheduler: TurnScheduler;
  readonly #options: A2ARuntimeOptions;
  readonly #turns = new Map<string, Turn>();
  #sweepTimer: NodeJS.Timeout | undefined;
  #started: Promise<void> | undefined;
  #closing = false;

  constructor(options: A2ARuntimeOptions) {
    this.#options = options;
    this.store = options.store;
    this.#executor = toExecutor(options.executor);
    this.#log = options.logger ?? silentLogger;
    this.#clock = options.clock ?? systemClock;
    this.#id = options.generateId ?? randomUUID;
    this.#scheduler = options.scheduler ?? new InProcessTurnScheduler();
  }

  /** Opens the store, recovers tasks interrupted by a previous process and starts the retention sweep. */
  start(): Promise<void> {
    this.#started ??= this.#start();
    return this.#started;
  }

  async #start(): Promise<void> {
    await this.store.open();
    if (this.#options.failInterruptedOnStart !== false) await this.#failInterruptedTasks();
    const retention = this.#options.retention;
    if (retention !== false) {
      const ttlMs = retention?.ttlMs ?? 86_400_000;
      const interval = retention?.sweepIntervalMs ?? 600_000;
      this.#sweepTimer = setInterval(() => void this.sweep(ttlMs), interval);
      this.#sweepTimer.unref();
    }
  }

  /** Purges terminal tasks older than `ttlMs`; the periodic sweep calls this. */
  async sweep(ttlMs: number): Promise<void> {
    try {
      const purged = await this.store.purgeExpired(this.#clock() - ttlMs);
      if (purged.tasks > 0 || purged.contexts > 0) this.#log.info({ purged }, 'a2a: purged expired tasks');
    } catch (error) {
      this.#log.error({ err: error }, 'a2a: retention sweep failed');
    }
  }

  async #failInterruptedTasks(): Promise<void> {
    for (const record of await this.store.listActiveTasks()) {
      const last = await this.store.readEvents(record.task.id, record.version - 1, 1);
      if (last[0]?.event.kind === 'turn-end') continue;
      const writer = new TaskWriter(this.store, record.task, record.version);
      await writer.commit((task) =>
        isFinalState(task.status.state)
          ? undefined
          : [this.#statusEvent(task, 'failed', 'Interrupted by server restart.')],
      );
      this.#log.warn({ taskId: record.task.id }, 'a2a: failed a task interrupted by a restart');
    }
  }

  /** Aborts running turns, waits up to `closeGraceMs` for them, fails what is left and closes the store. */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    if (this.#sweepTimer) clearInterval(this.#sweepTimer);
    const turns = [...this.#turns.values()];
    for (const turn of turns) turn.abort('shutdown');
    const grace = this.#options.closeGraceMs ?? 5000;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(turns.map((t) => t.done.promise)),
      new Promise((r) => {
        timer = setTimeout(r, grace);
      }),
    ]);
    clearTimeout(timer);
    for (const turn of turns) {
      await this.#finishTurn(turn, 'Interrupted: the server shut down during this turn.').catch(() => undefined);
    }
    if (this.#options.closeStore !== false) await this.store.close();
  }

  // ---- message/send, message/stream (§7.1, §7.2) ----

  /** §7.1 message/send: the task (or the agent's reply Message) when the turn settles, or at once when non-blocking. */
  async sendMessage(params: MessageSendParams): Promise<Task | Message> {
    const turn = await this.#acceptMessage(params);
    const historyLength = params.configuration?.historyLength;
    if (params.configuration?.blocking === false) return withHistoryLength(turn.writer.task, historyLength);
    const outcome = await turn.outcome.promise;
    return outcome.reply ?? withHistoryLength(outcome.task, historyLength);
  }

  /** §7.2 message/stream: the Task first, then its events until a final one or the end of this turn. */
  async streamMessage(params: MessageSendParams, options: StreamOptions = {}): Promise<AsyncGenerator<StreamFrame>> {
    const turn = await this.#acceptMessage(params);
    const { task, version } = turn.writer;
    return this.#framesFrom(task, version, {
      ...options,
      turnId: turn.id,
      historyLength: options.historyLength ?? params.configuration?.historyLength,
    });
  }

  /**
   * A message/stream retried with SSE Last-Event-ID: continues the stream of the turn that message
   * started, after `afterSeq`, without starting a second turn.
   */
  async resumeMessageStream(
    params: MessageSendParams,
    afterSeq: number,
    options: StreamOptions = {},
  ): Promise<AsyncGenerator<StreamFrame> | undefined> {
    const taskId = params.message.taskId ?? (await this.#findTaskByMessage(params.message));
    if (taskId === undefined) return undefined;
    if ((await this.store.getTask(taskId)) === undefined) return undefined;
    return this.#follow(taskId, afterSeq, { ...options, turnId: params.message.messageId });
  }

  async #findTaskByMessage(message: Message): Promise<string | undefined> {
    if (message.contextId === undefined) return undefined;
    const tasks = await this.store.listTasksByContext(message.contextId);
    return tasks.find((r) => r.task.history?.some((m) => m.messageId === message.messageId))?.task.id;
  }

  async #acceptMessage(params: MessageSendParams): Promise<Turn> {
    await this.start();
    if (this.#closing) throw new A2AError('INTERNAL', 'The server is shutting down; retry on another instance.');
    const incoming = params.message;
    let turn: Turn;
    if (incoming.taskId !== undefined) {
      const record = await this.store.getTask(incoming.taskId);
      if (record === undefined) throw taskNotFound(incoming.taskId);
      const contextId = record.task.contextId;
      if (incoming.contextId !== undefined && incoming.contextId !== contextId) {
        throw invalidParams(
          `message.contextId "${incoming.contextId}" does not match task "${incoming.taskId}", which belongs to context "${contextId}". Omit contextId or send the task's.`,
          { taskId: incoming.taskId, contextId },
        );
      }
      const message: Message = { ...incoming, kind: 'message', taskId: incoming.taskId, contextId };
      const writer = new TaskWriter(this.store, record.task, record.version);
      await writer.commit((task) => {
        if (isTerminalState(task.status.state)) {
          throw invalidParams(
            `Task "${task.id}" is ${task.status.state}, a terminal state (A2A §6.3): it accepts no more messages. Send the message without taskId to start a new task.`,
            { taskId: task.id, state: task.status.state },
          );
        }
        return [message];
      });
      turn = new Turn(incoming.messageId, message, false, writer);
    } else {
      const contextId = incoming.contextId ?? this.#id();
      const taskId = this.#id();
      const message: Message = { ...incoming, kind: 'message', taskId, contextId };
      const task: Task = {
        kind: 'task',
        id: taskId,
        contextId,
        status: { state: 'submitted', timestamp: this.#now() },
        history: [message],
      };
      if (params.metadata !== undefined) task.metadata = params.metadata;
      const writer = new TaskWriter(this.store, task, 0);
      await writer.commit(() => [task]);
      turn = new Turn(incoming.messageId, message, true, writer);
    }
    this.#watch(turn);
    this.#turns.set(turn.taskId, turn);
    void this.#scheduler
      .run(turn.writer.task.contextId, () => this.#runTurn(turn))
      .catch((error) => this.#log.error({ err: error, taskId: turn.taskId }, 'a2a: turn failed unexpectedly'))
      .finally(() => {
        if (this.#turns.get(turn.taskId) === turn) this.#turns.delete(turn.taskId);
        turn.unsubscribe?.();
        turn.settle();
        turn.done.resolve();
      });
    return turn;
  }

  /**
   * Watches the task's log for a terminal state written by someone else — a tasks/cancel on any
   * worker — and aborts the running executor (§7.4: cancel reaches the agent wherever it runs).
   */
  #watch(turn: Turn): void {
    let checking = false;
    let pending = false;
    const check = async (): Promise<void> => {
      if (checking) {
        pending = true;
        return;
      }
      checking = true;
      try {
        do {
          pending = false;
          await turn.chain;
          const record = await this.store.getTask(turn.taskId);
          if (record === undefined || record.version <= turn.writer.version) continue;
          if (isTerminalState(record.task.status.state)) {
            turn.writer.task = record.task;
            turn.writer.version = record.version;
            turn.abort('canceled');
            turn.settle();
          }
        } while (pending);
      } catch (error) {
        this.#log.warn({ err: error, taskId: turn.taskId }, 'a2a: could not check the task for cancellation');
      } finally {
        checking = false;
      }
    };
    turn.unsubscribe = this.store.subscribe(turn.taskId, (seq) => {
      if (seq > turn.writer.version && !turn.controller.signal.aborted) void check();
    });
  }

  async #runTurn(turn: Turn): Promise<void> {
    if (turn.settled) return; // canceled while it waited for its context
    await turn.writer.reload();
    const previousState = turn.writer.task.status.state;
    if (isTerminalState(previousState)) return;
    await turn.enqueue(async () => {
      await turn.writer.commit((task) =>
        isTerminalState(task.status.state) ? undefined : [this.#statusEvent(task, 'working')],
      );
    });
    const contextRecord = await this.store.getContext(turn.writer.task.contextId);
    const context = this.#turnContext(turn, previousState, contextRecord?.state);

    let timer: NodeJS.Timeout | undefined;
    const timeoutMs = this.#options.turnTimeoutMs;
    const timedOut = new Promise<'timeout'>((resolve) => {
      if (timeoutMs !== undefined && timeoutMs > 0) {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
        timer.unref();
      }
    });
    let thrown: unknown;
    const execution = (async () => {
      try {
        await this.#executor.execute(context);
      } catch (error) {
        thrown = error;
      }
      await turn.chain;
      return 'returned' as const;
    })();
    const how = await Promise.race([execution, timedOut]);
    clearTimeout(timer);

    if (how === 'timeout') {
      turn.abort('timeout');
      await this.#finishTurn(turn, `Turn timed out after ${timeoutMs} ms.`);
      return;
    }
    if (turn.abortCause === 'canceled') {
      await turn.writer.reload(); // settle with the canceled task, not the snapshot before the cancel
      return;
    }
    if (turn.abortCause === 'shutdown') {
      await this.#finishTurn(turn, 'Interrupted: the server shut down during this turn.');
      return;
    }
    if (thrown !== undefined) {
      const reason = thrown instanceof Error ? thrown.message : String(thrown);
      this.#log.warn({ err: thrown, taskId: turn.taskId }, 'a2a: agent failed the turn');
      await this.#finishTurn(turn, reason || 'The agent failed without a message.');
      return;
    }
    if (turn.emitError !== undefined) {
      const reason = turn.emitError instanceof Error ? turn.emitError.message : String(turn.emitError);
      await this.#finishTurn(turn, `The agent sent an invalid update: ${reason}`);
      return;
    }
    await this.#finishTurn(turn, undefined);
  }

  /**
   * Ends a turn: fails the task with `failure` when given and the task is not already final;
   * otherwise records a turn end when the task is left non-final. Then settles the turn.
   */
  async #finishTurn(turn: Turn, failure: string | undefined): Promise<void> {
    await turn.enqueue(async () => {
      await turn.writer.commit((task) => {
        if (isTerminalState(task.status.state)) return undefined;
        if (failure !== undefined) return [this.#statusEvent(task, 'failed', failure)];
        if (isFinalState(task.status.state)) return undefined;
        return [{ kind: 'turn-end', taskId: task.id, contextId: task.contextId, turnId: turn.id }];
      });
    });
    turn.settle();
  }

  #turnContext(turn: Turn, previousState: TaskState, contextState: unknown): TurnContext {
    const { task } = turn.writer;
    const ids = () => ({ taskId: task.id, contextId: task.contextId, messageId: this.#id() });
    const emit = (build: (current: Task) => TaskEvent[] | undefined, after?: () => void): Promise<void> =>
      turn.enqueue(async () => {
        const written = await turn.writer.commit((current) => {
          // Canceled (or finished) already: the agent's late updates are dropped, by §6.3.
          if (isTerminalState(current.status.state)) return undefined;
          return build(current);
        });
        if (written) after?.();
        else this.#log.debug({ taskId: task.id }, 'a2a: dropped an update for a terminal task');
      });
    const status = (state: TaskState, message?: MessageInput, metadata?: Metadata): Promise<void> =>
      emit(
        (current) => [
          this.#statusEvent(
            current,
            state,
            message === undefined ? undefined : toAgentMessage(message, ids()),
            metadata,
          ),
        ],
        () => {
          if (isFinalState(state)) turn.settle();
        },
      );
    return {
      message: turn.message,
      task: structuredClone(task),
      taskId: task.id,
      contextId: task.contextId,
      isNewTask: turn.isNewTask,
      previousState,
      text: textOf(turn.message),
      contextState,
      signal: turn.controller.signal,
      setContextState: (state) => this.store.setContext(task.contextId, state),
      status,
      working: (message, metadata) => status('working', message, metadata),
      complete: (message, metadata) => status('completed', message, metadata),
      fail: (message, metadata) => status('failed', message, metadata),
      reject: (message, metadata) => status('rejected', message, metadata),
      requireInput: (message, metadata) => status('input-required', message, metadata),
      requireAuth: (message, metadata) => status('auth-required', message, metadata),
      reply: (message) => {
        const reply = toAgentMessage(message, ids());
        return emit(
          (current) => [this.#statusEvent(current, 'completed', reply)],
          () => {
            turn.reply = reply;
            turn.settle();
          },
        );
      },
      artifact: async (chunk) => {
        const artifactId = chunk.artifactId ?? (chunk.append ? turn.lastArtifactId : undefined) ?? this.#id();
        turn.lastArtifactId = artifactId;
        await emit((current) => {
          const event: TaskEvent = {
            kind: 'artifact-update',
            taskId: current.id,
            contextId: current.contextId,
            artifact: toArtifact(chunk, artifactId),
          };
          if (chunk.append !== undefined) event.append = chunk.append;
          if (chunk.lastChunk !== undefined) event.lastChunk = chunk.lastChunk;
          return [event];
        });
        return artifactId;
      },
    };
  }

  #now(): string {
    return new Date(this.#clock()).toISOString();
  }

  #statusEvent(task: Task, state: TaskState, message?: Message | string, metadata?: Metadata): TaskStatusUpdateEvent {
    const status: TaskStatusUpdateEvent['status'] = { state, timestamp: this.#now() };
    if (message !== undefined) {
      status.message =
        typeof message === 'string'
          ? toAgentMessage(message, { taskId: task.id, contextId: task.contextId, messageId: this.#id() })
          : message;
    }
    const event: TaskStatusUpdateEvent = {
      kind: 'status-update',
      taskId: task.id,
      contextId: task.contextId,
      status,
      final: isFinalState(state),
    };
    if (metadata !== undefined) event.metadata = metadata;
    return event;
  }

  // ---- tasks/get, tasks/cancel, tasks/resubscribe (§7.3–7.9) ----

  async getTask(params: TaskQueryParams): Promise<Task> {
    await this.start();
    const record = await this.store.getTask(params.id);
    if (record === undefined) throw taskNotFound(params.id);
    return withHistoryLength(record.task, params.historyLength);
  }

  /** §7.4: moves the task to `canceled`; the worker running its turn sees it in the log and aborts. */
  async cancelTask(params: TaskIdParams): Promise<Task> {
    await this.start();
    const record = await this.store.getTask(params.id);
    if (record === undefined) throw taskNotFound(params.id);
    const writer = new TaskWriter(this.store, record.task, record.version);
    await writer.commit((task) => {
      if (isTerminalState(task.status.state)) throw taskNotCancelable(task.id, task.status.state);
      return [this.#statusEvent(task, 'canceled')];
    });
    // Abort a local turn at once rather than waiting for the notification round trip.
    const local = this.#turns.get(params.id);
    local?.abort('canceled');
    return writer.task;
  }

  /**
   * §7.9 tasks/resubscribe: the current Task, then its events until a final one. For a task already
   * in a final state (terminal or interrupted) the stream is that one Task and ends. With `afterSeq`
   * (SSE Last-Event-ID) it resumes after that event instead, with no snapshot.
   */
  async resubscribe(params: TaskIdParams, options: StreamOptions = {}): Promise<AsyncGenerator<StreamFrame>> {
    await this.start();
    const record = await this.store.getTask(params.id);
    if (record === undefined) throw taskNotFound(params.id);
    if (options.afterSeq !== undefined) return this.#follow(params.id, options.afterSeq, options);
    return this.#framesFrom(record.task, record.version, { ...options, endIfFinal: true });
  }

  async *#framesFrom(
    task: Task,
    version: number,
    options: StreamOptions & { turnId?: string; endIfFinal?: boolean },
  ): AsyncGenerator<StreamFrame> {
    yield { seq: version, result: withHistoryLength(task, options.historyLength) };
    if (options.endIfFinal && isFinalState(task.status.state)) return;
    yield* this.#follow(task.id, version, options);
  }

  /**
   * Reads the task's log after `afterSeq`, waking on store notifications (and a slow poll as a
   * safety net), until a final status event, the end of turn `turnId`, or `signal` aborts.
   */
  async *#follow(
    taskId: string,
    afterSeq: number,
    options: StreamOptions & { turnId?: string },
  ): AsyncGenerator<StreamFrame> {
    const { signal, turnId } = options;
    const pollMs = this.#options.followPollIntervalMs ?? 2000;
    let last = afterSeq;
    let notified = false;
    let wake: (() => void) | undefined;
    const unsubscribe = this.store.subscribe(taskId, (seq) => {
      if (seq > last) {
        notified = true;
        wake?.();
      }
    });
    const onAbort = (): void => wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      let checkTask = true;
      while (!signal?.aborted) {
        notified = false;
        const events = await this.store.readEvents(taskId, last, 256);
        for (const stored of events) {
          last = stored.seq;
          const { event } = stored;
          if (event.kind === 'turn-end') {
            if (event.turnId === turnId) return;
            continue;
          }
          if (event.kind === 'message') continue; // user follow-ups are in the next Task snapshot, not stream items
          yield { seq: stored.seq, result: event };
          if (endsStream(event)) return;
        }
        if (events.length > 0) continue;
        if (checkTask) {
          // Nothing new: the task may be gone (purged) or already past its final event.
          const record = await this.store.getTask(taskId);
          if (record === undefined) return;
          if (record.version <= last && isFinalState(record.task.status.state) && turnId === undefined) return;
        }
        if (notified || signal?.aborted) continue;
        let timer: NodeJS.Timeout | undefined;
        const woke = await new Promise<boolean>((resolve) => {
          wake = () => resolve(true);
          timer = setTimeout(() => resolve(false), pollMs);
        });
        clearTimeout(timer);
        wake = undefined;
        checkTask = !woke;
      }
    } finally {
      unsubscribe();
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

export function isStreamTerminal(result: StreamResult): boolean {
  return result.kind === 'status-update' && result.final;
}
