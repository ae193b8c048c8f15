/**
 * Intake: what an incoming user message becomes. A new message is recorded in its task (a new
 * task, or a follow-up on an existing one) by the commit that also takes its turn's slot in the
 * context's queue, and its turn goes to the scheduler; a message already received (a client
 * retrying after a lost answer) starts nothing and is answered from the task it started.
 */

import { A2AError, invalidParams, taskGenerationMismatch } from '../errors.js';
import type { Logger } from '../logger.js';
import { isTerminalState, type Message, type MessageSendParams, type Task, type TaskEvent } from '../model/types.js';
import { type CallContext, callerOf } from '../protocol/context.js';
import {
  type A2AStore,
  isOwnedBy,
  type MessageIndexEntry,
  messageDigest,
  ownerOf,
  type QueueSlot,
  type StoreCallContext,
  storeContextOf,
} from '../store/index.js';
import { noTelemetry, type Telemetry } from '../telemetry.js';
import type { Events } from './events.js';
import { readOwnTask } from './ownership.js';
import { TaskWriter } from './task-writer.js';
import { Turn } from './turn.js';

export interface AcceptOptions {
  /**
   * Write a new task in a new context together with its agent's first updates instead of before
   * the agent runs (see A2ARuntimeOptions.createTaskBeforeRun): only where no client is shown the
   * task before its turn ends or its first updates are written (a blocking message/send).
   */
  deferCreation?: boolean;
}

/** A message already received (a client retrying after a lost answer): the task it started. */
export interface Retry {
  kind: 'retry';
  taskId: string;
  messageId: string;
  task: Task;
  version: number;
}

/** What an incoming message led to: a turn started here, or a retry of a message already received. */
export type Accepted = { kind: 'turn'; turn: Turn } | Retry;

export interface IntakeOptions {
  readonly store: A2AStore;
  /** What a reused messageId with different content gets (see A2ARuntimeOptions.messageIdReuse). @default 'reject' */
  readonly messageIdReuse?: 'reject' | 'replay' | 'ignore';
  readonly events: Events;
  readonly log: Logger;
  /** The worker recorded as running the turns taken in. */
  readonly workerId: string;
  /** Where new turns go once their slot is taken (the scheduler). */
  readonly scheduler: { schedule(turn: Turn): void };
  /** Where the commits of the turns taken in are reported. @default noTelemetry */
  readonly telemetry?: Telemetry;
  /** The A2A 1.1 draft's generations are on: `ifGenerationMatch` is honoured, not refused. @default false */
  readonly generations?: boolean;
  /** Given to every turn (see A2ARuntimeOptions.streamCommitIntervalMs). @default 0 */
  readonly streamCommitIntervalMs?: number;
}

/**
 * The user message as the task keeps it, with its task and context ids. Copied field by field
 * (not a spread plus new keys, which gives the object a hidden class of its own).
 */
function storedMessage(incoming: Message, taskId: string, contextId: string): Message {
  const message: Message = Object.assign({}, incoming);
  message.kind = 'message';
  message.taskId = taskId;
  message.contextId = contextId;
  return message;
}

export class Intake {
  readonly #store: A2AStore;
  readonly #events: Events;
  readonly #log: Logger;
  readonly #workerId: string;
  readonly #scheduler: IntakeOptions['scheduler'];
  readonly #telemetry: Telemetry;
  readonly #messageIdReuse: 'reject' | 'replay' | 'ignore';
  readonly #generations: boolean;
  readonly #streamCommitIntervalMs: number;

  constructor(options: IntakeOptions) {
    this.#generations = options.generations === true;
    this.#streamCommitIntervalMs = options.streamCommitIntervalMs ?? 0;
    this.#store = options.store;
    this.#messageIdReuse = options.messageIdReuse ?? 'reject';
    this.#events = options.events;
    this.#log = options.log;
    this.#workerId = options.workerId;
    this.#scheduler = options.scheduler;
    this.#telemetry = options.telemetry ?? noTelemetry;
  }

  /**
   * Records the message and hands its turn to the scheduler, or recognises a retry.
   * @throws {A2AError} TASK_NOT_FOUND for an unknown taskId; INVALID_PARAMS for a message to a
   *   terminal task (§6.3), a contextId that is not the task's, or a messageId used in another context.
   */
  accept(params: MessageSendParams, ctx: CallContext, options: AcceptOptions = {}): Promise<Accepted> {
    if (params.configuration?.ifGenerationMatch !== undefined && !this.#generations) {
      // A precondition the client relies on is never dropped silently.
      return Promise.reject(
        invalidParams(
          'configuration.ifGenerationMatch is a feature of the A2A 1.1 draft (§3.2.7), which this agent does not enable (its draft11.generations option is off). Send the message without it.',
          { field: 'configuration.ifGenerationMatch' },
        ),
      );
    }
    if (this.#messageIdReuse === 'ignore') return this.#acceptAsNew(params, ctx);
    const { message } = params;
    if (options.deferCreation === true && message.taskId === undefined && message.contextId === undefined) {
      return this.#acceptDeferred(params, ctx);
    }
    return this.#accept(params, ctx, true);
  }

  /**
   * A new task in a new context whose creation is deferred (most blocking sends). No other turn can
   * be queued in the context (its id is made here), so the turn runs at once and the task is
   * written with the agent's first updates, in one commit that also indexes the message and takes
   * no slot when those updates end the turn. A retry is recognised by a read first (no commit
   * refuses it before the agent runs): only a retry racing the original between this read and its
   * commit starts the agent a second time. Not an async function: the turn is scheduled in a
   * reaction on that read, with no frame suspended on it.
   */
  #acceptDeferred(params: MessageSendParams, ctx: CallContext): Promise<Accepted> {
    try {
      const storeContext = storeContextOf(ctx);
      const owner = ownerOf(ctx);
      const incoming = params.message;
      const { message, writer } = this.#newTask(params, ctx, storeContext);
      return this.#knownRetry(incoming, owner, storeContext).then((retry): Accepted => {
        if (retry !== undefined) return retry;
        const turn = new Turn({
          messageId: incoming.messageId,
          message,
          isNewTask: true,
          isNewContext: true,
          writer,
          slot: undefined,
          caller: callerOf(ctx),
          storeContext,
          creation: { owner, takeSlot: { messageId: incoming.messageId, workerId: this.#workerId } },
          streamCommitIntervalMs: this.#streamCommitIntervalMs,
        });
        this.#scheduler.schedule(turn);
        return { kind: 'turn', turn };
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** A new task for the message, in its context or a new one, with its writer (nothing written yet). */
  #newTask(
    params: MessageSendParams,
    ctx: CallContext,
    storeContext: StoreCallContext | undefined,
  ): { task: Task; message: Message; writer: TaskWriter } {
    const incoming = params.message;
    const contextId = incoming.contextId ?? this.#events.newId();
    const taskId = this.#events.newId();
    const message = storedMessage(incoming, taskId, contextId);
    const task: Task = {
      kind: 'task',
      id: taskId,
      contextId,
      status: { state: 'submitted', timestamp: this.#events.now() },
      history: [message],
    };
    if (params.metadata !== undefined) task.metadata = params.metadata;
    const writer = new TaskWriter(this.#store, task, 0, storeContext, this.#telemetry);
    if (this.#telemetry.enabled) writer.traceContext = this.#telemetry.callTraceContext(ctx);
    return { task, message, writer };
  }

  /**
   * {@link accept} with the task written before its agent runs; with `recogniseRetries` false, a
   * known message id is refused by the store rather than answered as a retry.
   */
  async #accept(params: MessageSendParams, ctx: CallContext, recogniseRetries: boolean): Promise<Accepted> {
    const store = this.#store;
    const storeContext = storeContextOf(ctx);
    const owner = ownerOf(ctx);
    const incoming = params.message;
    // A retried message is recognised by the store's message index when its commit is refused
    // (DUPLICATE_MESSAGE below), so the usual path costs no extra read; a deferred creation has
    // no commit before its agent runs, so it reads the index first (#acceptDeferred).
    let writer: TaskWriter;
    let firstEvents: (task: Task) => TaskEvent[];
    let message: Message;
    if (incoming.taskId !== undefined) {
      // Another principal's task is "not found", as one that never existed.
      const record = await readOwnTask(store, incoming.taskId, owner, storeContext);
      if (recogniseRetries && isTerminalState(record.task.status.state)) {
        // A retry of the message that finished the task gets the task, not "terminal" (-32602).
        const retry = await this.#knownRetry(incoming, owner, storeContext);
        if (retry !== undefined) return retry;
      }
      const taskId = incoming.taskId;
      const contextId = record.task.contextId;
      if (incoming.contextId !== undefined && incoming.contextId !== contextId) {
        throw invalidParams(
          `message.contextId "${incoming.contextId}" does not match task "${taskId}", which belongs to context "${contextId}". Omit contextId or send the task's.`,
          { taskId, contextId },
        );
      }
      message = storedMessage(incoming, taskId, contextId);
      writer = new TaskWriter(store, record.task, record.version, storeContext, this.#telemetry);
      if (this.#telemetry.enabled) writer.traceContext = this.#telemetry.callTraceContext(ctx);
      const followUp = message;
      const expected = params.configuration?.ifGenerationMatch;
      firstEvents = (task) => {
        // A2A 1.1 draft §3.2.7, checked against the task as this commit expects it to be: the commit
        // carries the version read, so a change by anyone since (any worker) fails the store's
        // version check, and the writer reads the task again and comes back here. Before the
        // terminal check: a client that lost the race learns that, even when the winner finished the task.
        if (expected !== undefined && (task.generation ?? 0) !== expected) {
          throw taskGenerationMismatch(task.id, expected, task.generation ?? 0);
        }
        if (isTerminalState(task.status.state)) {
          throw invalidParams(
            `Task "${task.id}" is ${task.status.state}, a terminal state (A2A §6.3): it accepts no more messages. Send the message without taskId to start a new task.`,
            { taskId: task.id, state: task.status.state },
          );
        }
        return [followUp];
      };
    } else {
      if (incoming.contextId !== undefined) await this.#checkContextOwner(incoming.contextId, owner, storeContext);
      const created = this.#newTask(params, ctx, storeContext);
      message = created.message;
      writer = created.writer;
      const { task } = created;
      firstEvents = () => [task];
    }

    // Record the message and take the turn's slot in its context's queue in one commit: the slot's
    // position is the turn's place in the context's arrival order, across every worker sharing the
    // store. A refused commit (retried message, terminal task) took no slot.
    let slot: QueueSlot | undefined;
    try {
      slot = (
        await writer.commit(firstEvents, {
          owner,
          takeSlot: { messageId: incoming.messageId, workerId: this.#workerId },
        })
      )?.turn;
    } catch (error) {
      if (recogniseRetries && A2AError.is(error) && error.code === 'DUPLICATE_MESSAGE') {
        // The same message reached another worker at the same moment; answer like a retry.
        const retry = await this.#knownRetry(incoming, owner, storeContext);
        if (retry !== undefined) return retry;
      }
      if (recogniseRetries && A2AError.is(error) && error.code === 'TASK_GENERATION_MISMATCH') {
        // A client retrying a follow-up that was recorded (its answer lost) finds the generation
        // its own message moved: it is a retry, answered with its task, not a lost race.
        const retry = await this.#knownRetry(incoming, owner, storeContext);
        if (retry !== undefined) return retry;
      }
      throw error;
    }
    if (slot === undefined) throw new A2AError('INTERNAL', 'The store did not return the enqueued turn.');
    const isNewContext = incoming.contextId === undefined && incoming.taskId === undefined;
    const turn = new Turn({
      messageId: incoming.messageId,
      message,
      isNewTask: incoming.taskId === undefined,
      isNewContext,
      writer,
      slot,
      caller: callerOf(ctx),
      storeContext,
      streamCommitIntervalMs: this.#streamCommitIntervalMs,
    });
    this.#scheduler.schedule(turn);
    return { kind: 'turn', turn };
  }

  /**
   * `messageIdReuse: 'ignore'`: the message is new whatever its id (A2A 1.0 §3.3.1 makes
   * deduplication a MAY; clients that build ids per session send one id for many requests). The
   * store's message index still holds one entry per id and caller, so a message whose id is taken
   * is kept under a new one (`<id>#<uuid>`, what its task's history shows), and is never taken
   * for a retry. The task is written before its agent runs (no deferred creation): a deferred
   * commit refused for its id would be answered as a retry.
   */
  async #acceptAsNew(params: MessageSendParams, ctx: CallContext): Promise<Accepted> {
    const { message } = params;
    const taken = (await this.#store.findMessage(message.messageId, storeContextOf(ctx), ownerOf(ctx))) !== undefined;
    const renamed = (): MessageSendParams => ({
      ...params,
      message: { ...message, messageId: `${message.messageId}#${this.#events.newId()}` },
    });
    const asNew = taken ? renamed() : params;
    try {
      return await this.#accept(asNew, ctx, false);
    } catch (error) {
      // The same id reached the store at the same moment from another request: a new id, once
      // (a generated one cannot be taken).
      if (!taken && A2AError.is(error) && error.code === 'DUPLICATE_MESSAGE') {
        return this.#accept(renamed(), ctx, false);
      }
      throw error;
    }
  }

  /**
   * A message naming a context without a task starts a task in that context: only in a context of
   * the caller's own (whose tasks it owns), so that no one adds turns to another caller's
   * conversation or runs the agent on its context state. A context nobody used yet is the
   * caller's to start.
   */
  async #checkContextOwner(
    contextId: string,
    owner: string | undefined,
    storeContext: StoreCallContext | undefined,
  ): Promise<void> {
    const [first] = await this.#store.listTasksByContext(contextId, { limit: 1 }, storeContext);
    if (first !== undefined && !isOwnedBy(first, owner)) {
      throw invalidParams(
        `message.contextId "${contextId}" is not a conversation of this caller; omit contextId to start a new one, or send one of your own.`,
        { contextId },
      );
    }
  }

  /**
   * The answer to a message whose deferred creating commit was refused because another worker
   * recorded the same messageId first (a retry racing the original): the other's task, as for
   * any retry.
   */
  recogniseRetry(message: Message, ctx: CallContext): Promise<Retry | undefined> {
    return this.#knownRetry(message, ownerOf(ctx), storeContextOf(ctx));
  }

  /** The retry `message` is, when the caller's message index already holds its id. */
  #knownRetry(
    message: Message,
    owner: string | undefined,
    ctx: StoreCallContext | undefined,
  ): Promise<Retry | undefined> {
    // A reaction on the store's answer rather than an async frame awaiting it: every deferred
    // creation (most blocking sends) asks, and nearly always hears "unknown".
    return this.#store
      .findMessage(message.messageId, ctx, owner)
      .then((entry) => (entry === undefined ? undefined : this.#retry(message, entry, owner, ctx)));
  }

  /**
   * A message id the index already holds for this caller: the same message again (a client
   * retrying after a lost answer), unless it names another context or carries other content.
   */
  async #retry(
    message: Message,
    entry: MessageIndexEntry,
    owner: string | undefined,
    ctx: StoreCallContext | undefined,
  ): Promise<Retry> {
    if (message.contextId !== undefined && message.contextId !== entry.contextId) {
      throw invalidParams(
        `messageId "${message.messageId}" was already used in context "${entry.contextId}"; message ids must be unique — send a new one.`,
        { messageId: message.messageId, contextId: entry.contextId },
      );
    }
    // Entries indexed before digests existed have none: they are taken for retries, as before.
    if (this.#messageIdReuse === 'reject' && entry.digest !== undefined && entry.digest !== messageDigest(message)) {
      throw new A2AError(
        'DUPLICATE_MESSAGE',
        `messageId "${message.messageId}" was already used for a different message (task "${entry.taskId}"): a retry must resend the message unchanged, and a new message needs a new messageId.`,
        { data: { messageId: message.messageId, taskId: entry.taskId } },
      );
    }
    const record = await readOwnTask(this.#store, entry.taskId, owner, ctx);
    this.#log.info(
      { messageId: message.messageId, taskId: entry.taskId },
      'a2a: retried message answered with its task',
    );
    return {
      kind: 'retry',
      taskId: entry.taskId,
      messageId: message.messageId,
      task: record.task,
      version: record.version,
    };
  }
}
