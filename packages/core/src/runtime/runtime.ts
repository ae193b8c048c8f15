/**
 * The task runtime: turns incoming messages into turns of the agent, writes every event through
 * the store (sequenced, versioned), and serves streams by reading the store's event log. Nothing
 * here keeps protocol state only in memory: a stream, a cancel or a follow-up message works from
 * whatever the store holds, which is what lets several processes share one store.
 *
 * This class is the façade: it wires the parts and carries out each A2A operation with them.
 *   membership   the worker lease, reaping dead workers, leaving; background jobs (retention)
 *   intake       a new message (recorded with its turn's slot) or a retried one
 *   scheduler    turn slots in the context queue; how a cancel reaches a running turn
 *   runner       one run of the agent (RuntimeTurnContext is its TurnContext), closing the turn
 *   follower     streams: the task's log after a sequence, and the safety poll
 *   events       the status and turn-end events the runtime writes
 *   push-configs the push notification config operations, behind the SSRF guard
 *   jobs/push    push notification delivery, a background job on every worker
 */

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { A2AError, lastEventIdPastEnd, taskNotCancelable } from '../errors.js';
import { toExecutor } from '../executor.js';
import type { Logger } from '../logger.js';
import { withHistoryLength } from '../model/task-state.js';
import {
  type DeleteTaskPushNotificationConfigParams,
  type GetTaskPushNotificationConfigParams,
  isFinalState,
  isTerminalState,
  type ListTaskPushNotificationConfigParams,
  type ListTasksParams,
  type ListTasksResult,
  type Message,
  type MessageSendParams,
  type Task,
  type TaskIdParams,
  type TaskPushNotificationConfig,
  type TaskQueryParams,
} from '../model/types.js';
import { type CallContext, callContext } from '../protocol/context.js';
import type { StreamFrame } from '../protocol/operations.js';
import {
  type A2AStore,
  hasPushStore,
  ownerOf,
  storeContextOf,
  systemClock,
  type WorkerDescription,
} from '../store/index.js';
import { taskListRequest, taskListResult } from '../task-list.js';
import { noTelemetry } from '../telemetry.js';
import { Events } from './events.js';
import { Follower, followOptions } from './follower.js';
import { timeOrderedUuid } from './ids.js';
import { Intake, type Retry } from './intake.js';
import { runLogged } from './jobs/background.js';
import { InterruptedExpiry } from './jobs/interrupted-expiry.js';
import { PushDeliverer } from './jobs/push.js';
import { Retention } from './jobs/retention.js';
import { answersAfter, waitForGeneration } from './long-poll.js';
import { Membership } from './membership.js';
import { OperatorActions } from './operator.js';
import {
  type A2ARuntimeOptions,
  LONG_POLL_DEFAULT_MS,
  LONG_POLL_MAX_MS,
  type StreamOptions,
  silentLogger,
} from './options.js';
import { readOwnTask } from './ownership.js';
import { type CheckedPushConfig, PushConfigs } from './push-configs.js';
import { TurnRunner } from './runner.js';
import { type DrainSummary, Scheduler } from './scheduler.js';
import { TaskWriter } from './task-writer.js';

/** The context of calls made without one (an application or a test calling the runtime directly). */
const DIRECT_CALL: CallContext = Object.freeze(callContext());

export class A2ARuntime {
  readonly store: A2AStore;
  /** This process's id in the store's worker leases. */
  readonly workerId: string;
  readonly #options: A2ARuntimeOptions;
  readonly #log: Logger;
  readonly #events: Events;
  readonly #membership: Membership;
  readonly #retention: Retention;
  /** Present when interrupted tasks expire (`options.interruptedExpiry`). */
  readonly #interruptedExpiry: InterruptedExpiry | undefined;
  readonly #intake: Intake;
  readonly #scheduler: Scheduler;
  readonly #follower: Follower;
  /** Present when push notifications are on (`options.push`). */
  readonly #pushConfigs: PushConfigs | undefined;
  readonly #pushDeliverer: PushDeliverer | undefined;
  #operator: OperatorActions | undefined;
  #started: Promise<void> | undefined;
  /** start() resolved: a send need not await it (one await, and its promise, fewer per send). */
  #ready = false;
  #draining: Promise<DrainSummary> | undefined;
  #closing: Promise<void> | undefined;
  /** The A2A 1.1 draft's task generations are on (options.draft11.generations). */
  readonly #generations: boolean;
  /** How long a GetTask long-poll waits at most (options.draft11.longPollMaxWaitMs, clamped). */
  readonly #longPollMaxWaitMs: number;
  /** Aborted when draining starts: held long-polls answer at once instead of holding the close up. */
  readonly #stopLongPolls = new AbortController();

  constructor(options: A2ARuntimeOptions) {
    this.#options = options;
    const store = options.store;
    const log = options.logger ?? silentLogger;
    const clock = options.clock ?? systemClock;
    const telemetry = options.telemetry ?? noTelemetry;
    this.store = store;
    this.workerId = options.workerId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.#log = log;
    const events = new Events(clock, options.generateId ?? timeOrderedUuid);
    this.#events = events;
    this.#generations = options.draft11?.generations === true;
    const maxWait = options.draft11?.longPollMaxWaitMs ?? LONG_POLL_DEFAULT_MS;
    this.#longPollMaxWaitMs = Number.isFinite(maxWait)
      ? Math.min(Math.max(maxWait, 0), LONG_POLL_MAX_MS)
      : LONG_POLL_DEFAULT_MS;
    const runner = new TurnRunner({
      services: { store, log, events },
      executor: toExecutor(options.executor),
      workerId: this.workerId,
      turnTimeoutMs: options.turnTimeoutMs,
      drainTimeoutMs: options.drainTimeoutMs ?? 10_000,
    });
    const scheduler = new Scheduler({
      store,
      runner,
      log,
      pollIntervalMs: options.turnPollIntervalMs ?? 100,
      onAbandoned: (slot) => this.#membership.abandon(slot),
      telemetry,
    });
    this.#scheduler = scheduler;
    this.#intake = new Intake({
      store,
      events,
      log,
      workerId: this.workerId,
      scheduler,
      messageIdReuse: options.messageIdReuse ?? 'reject',
      telemetry,
      generations: this.#generations,
      streamCommitIntervalMs: streamCommitInterval(options),
    });
    this.#follower = new Follower(store, log, options.followPollIntervalMs ?? 2000, telemetry);
    this.#membership = new Membership({
      store,
      workerId: this.workerId,
      clock,
      log,
      events,
      leaseTtlMs: options.leaseTtlMs ?? 15_000,
      onLeaseLost: () => scheduler.abortAll('lease-lost'),
      telemetry,
    });
    this.#retention = new Retention(store, clock, log);
    if (options.retention !== false) this.#membership.jobs.add(this.#retention.job(options.retention));
    this.#interruptedExpiry =
      options.interruptedExpiry === undefined
        ? undefined
        : new InterruptedExpiry(store, clock, events, log, options.interruptedExpiry);
    if (this.#interruptedExpiry !== undefined) this.#membership.jobs.add(this.#interruptedExpiry.job());
    if (options.push !== undefined) {
      if (!hasPushStore(store)) {
        throw new A2AError(
          'INVALID_OPTIONS',
          'Push notifications need a store that keeps push configs (store.supports.push); the memory, SQLite and Postgres stores do. Use one of them, or leave push off.',
        );
      }
      this.#pushConfigs = new PushConfigs(store, options.push);
      this.#pushDeliverer = new PushDeliverer({
        store,
        workerId: this.workerId,
        clock,
        log,
        options: options.push,
        telemetry,
      });
      this.#membership.jobs.add(this.#pushDeliverer.job());
    }
  }

  /** Whether push notifications are on: the config operations work and the delivery job runs. */
  get pushEnabled(): boolean {
    return this.#pushConfigs !== undefined;
  }

  /**
   * Claims the push deliveries that are due and waits for their POSTs; the delivery job does this
   * every `push.pollIntervalMs`. Tests and scripts may call it directly.
   */
  async deliverPushNotifications(): Promise<void> {
    await this.start();
    await this.#pushDeliverer?.deliverDue();
  }

  /** Opens the store, takes this worker's lease and starts the lease and retention timers. */
  /** Actions of an operator (the plugin's monitor) on any task, whoever owns it; see OperatorActions. */
  get operator(): OperatorActions {
    this.#operator ??= new OperatorActions({
      store: this.store,
      events: this.#events,
      abortTask: (taskId) => this.#scheduler.abortTask(taskId),
    });
    return this.#operator;
  }

  /** This process start as recorded with its lease (stores with `supports.cluster`). */
  get worker(): WorkerDescription {
    return this.#membership.description;
  }

  start(): Promise<void> {
    this.#started ??= this.#start();
    return this.#started;
  }

  async #start(): Promise<void> {
    await this.store.open();
    await this.#membership.join();
    this.#ready = true;
  }

  /**
   * Renews this worker's lease, then claims workers whose lease ran out and fails the tasks their
   * turns left running ("worker lost"), so their streams on every worker end. The lease timer
   * calls this; tests may call it directly.
   */
  renewLeaseAndReap(): Promise<void> {
    return this.#membership.renewAndReap();
  }

  /** Purges terminal tasks older than `ttlMs`; the periodic sweep calls this. */
  sweep(ttlMs: number): Promise<void> {
    return runLogged(this.#log, 'retention sweep', () => this.#retention.sweep(ttlMs));
  }

  /**
   * Whether this worker's lease is current: renewed within `leaseTtlMs` (false once it ran out and
   * was not renewed since, when the worker's turns were aborted). False before start().
   */
  get leaseCurrent(): boolean {
    return this.#started !== undefined && !this.#membership.leaseLost && this.#draining === undefined;
  }

  /**
   * Fails the interrupted tasks that waited longer than `interruptedExpiry.ttlMs` and resolves with
   * how many; the expiry job calls this every `sweepIntervalMs`. 0 when the option is off.
   */
  async expireInterruptedTasks(): Promise<number> {
    await this.start();
    return this.#interruptedExpiry === undefined ? 0 : this.#interruptedExpiry.sweep();
  }

  /** Turns this worker accepted and has not finished (queued behind their context, or running). */
  get runningTurns(): number {
    return this.#scheduler.running.size;
  }

  /**
   * The first half of close(): takes no new turns, lets running ones finish for up to
   * `drainTimeoutMs`, then aborts the rest and fails their tasks, and gives up this worker's lease.
   * The store stays open, so streams still being served can read and send the turns' final events
   * (the Fastify plugin drains before it ends its streams). Idempotent.
   */
  drain(): Promise<DrainSummary> {
    this.#draining ??= this.#drain();
    return this.#draining;
  }

  async #drain(): Promise<DrainSummary> {
    this.#stopLongPolls.abort();
    const started = this.#started;
    if (started === undefined) return { turns: 0, interrupted: 0 };
    let summary: DrainSummary = { turns: 0, interrupted: 0 };
    await this.#membership.leave(async () => {
      await started.catch(() => undefined);
      summary = await this.#scheduler.drain(this.#options.drainTimeoutMs ?? 10_000);
      // Then POSTs in flight are aborted and their claims given back: another worker (or this one,
      // restarted) delivers them, the draining turns' final states included.
      await this.#pushDeliverer?.stop();
    });
    return summary;
  }

  /** Graceful shutdown: drain(), then closes the store (when `closeStore` is not false). */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const drained = this.drain();
    const started = this.#started;
    await drained;
    this.#follower.stop();
    if (started === undefined) return;
    if (this.#options.closeStore !== false) await this.store.close();
  }

  /** New turns are refused once closing: the client retries, and another worker takes it. */
  #refuseWhenClosing(): void {
    if (this.#draining) {
      throw new A2AError(
        'UNAVAILABLE',
        'This worker is shutting down; retry the request (another worker will take it).',
      );
    }
  }

  // ---- message/send, message/stream (§7.1, §7.2) ----

  /** §7.1 message/send: the task (or the agent's reply Message) when the turn settles, or at once when non-blocking. */
  async sendMessage(params: MessageSendParams, ctx: CallContext = DIRECT_CALL): Promise<Task | Message> {
    if (!this.#ready) await this.start();
    this.#refuseWhenClosing();
    // Without a push config to handle, no call and no await for it (the usual send).
    const push = this.#sendsPushConfig(params) ? await this.#checkSendPushConfig(params) : undefined;
    const historyLength = params.configuration?.historyLength;
    const blocking = params.configuration?.blocking !== false;
    // A blocking send shows the task to no one before its answer: its task may be written with the
    // agent's first updates (see A2ARuntimeOptions.createTaskBeforeRun).
    // With a max wait the answer may come before the turn's first write: the task must exist by then.
    const maxWaitMs = this.#options.blockingSendMaxWaitMs;
    const deferCreation =
      blocking && push === undefined && this.#options.createTaskBeforeRun !== true && maxWaitMs === undefined;
    const accepted = await this.#intake.accept(params, ctx, { deferCreation });
    if (push !== undefined) await this.#saveSendPushConfig(push, accepted, ctx);
    if (accepted.kind === 'retry') return this.#answerRetry(accepted, blocking, historyLength, ctx);
    const { turn } = accepted;
    if (!blocking) return withHistoryLength(turn.writer.task, historyLength);
    const outcome =
      maxWaitMs === undefined ? await turn.outcome.promise : await settledWithin(turn.outcome.promise, maxWaitMs);
    // Waited long enough: the task as last written; the client polls or subscribes for the rest.
    if (outcome === undefined) return withHistoryLength(turn.writer.task, historyLength);
    if (turn.abortCause === 'superseded') {
      // The same message was recorded first by another send racing this one: answer as its retry.
      const retried = await this.#intake.recogniseRetry(params.message, ctx);
      if (retried !== undefined) return this.#answerRetry(retried, blocking, historyLength, ctx);
      throw new A2AError(
        'INTERNAL',
        `messageId "${params.message.messageId}" was recorded by another send that could not be found.`,
      );
    }
    return outcome.reply ?? withHistoryLength(outcome.task, historyLength);
  }

  /** A retried send: answered with the original task, once its turn settled (wherever it runs). */
  async #answerRetry(
    accepted: Retry,
    blocking: boolean,
    historyLength: number | undefined,
    ctx: CallContext,
  ): Promise<Task> {
    if (blocking) {
      const maxWaitMs = this.#options.blockingSendMaxWaitMs;
      const { taskId, messageId } = accepted;
      await this.#follower.waitForTurnEnd(taskId, messageId, storeContextOf(ctx), maxWaitMs);
    }
    return this.getTask({ id: accepted.taskId, ...(historyLength !== undefined ? { historyLength } : {}) }, ctx);
  }

  /** §7.2 message/stream: the Task first, then its events until a final one or the end of this turn. */
  async streamMessage(
    params: MessageSendParams,
    options: StreamOptions = {},
    ctx: CallContext = DIRECT_CALL,
  ): Promise<AsyncGenerator<StreamFrame>> {
    await this.start();
    this.#refuseWhenClosing();
    const push = this.#sendsPushConfig(params) ? await this.#checkSendPushConfig(params) : undefined;
    const accepted = await this.#intake.accept(params, ctx);
    if (push !== undefined) await this.#saveSendPushConfig(push, accepted, ctx);
    const historyLength = options.historyLength ?? params.configuration?.historyLength;
    const storeContext = storeContextOf(ctx);
    if (accepted.kind === 'retry') {
      const { taskId, messageId } = accepted;
      const ended = (await this.#follower.turnEndSeq(taskId, messageId, storeContext)) !== undefined;
      return this.#follower.follow(
        taskId,
        accepted.version,
        followOptions(options, storeContext, {
          historyLength,
          messageId,
          onlySnapshot: ended,
          generations: this.#generations,
        }),
        accepted.task,
      );
    }
    const { turn } = accepted;
    const { task, version } = turn.writer;
    return this.#follower.follow(
      task.id,
      version,
      followOptions(options, storeContext, {
        historyLength,
        messageId: turn.messageId,
        generations: this.#generations,
      }),
      task,
    );
  }

  /**
   * The push config a message/send or message/stream carries (§7.1 `configuration`), checked
   * against the destination policy before the task is created, so a refused URL creates nothing.
   * Ignored when push is off, as before push existed (the card says `pushNotifications: false`).
   */
  async #checkSendPushConfig(params: MessageSendParams): Promise<CheckedPushConfig | undefined> {
    const config = params.configuration?.pushNotificationConfig;
    if (config === undefined || this.#pushConfigs === undefined) return undefined;
    return this.#pushConfigs.check(config);
  }

  /** Whether a message/send or message/stream carries a push config to check and save (push on). */
  #sendsPushConfig(params: MessageSendParams): boolean {
    return this.#pushConfigs !== undefined && params.configuration?.pushNotificationConfig !== undefined;
  }

  /**
   * Saves the message's push config for its task. For a retried message only when the task does
   * not have it yet: saving again would restart its delivery (a duplicate POST, harmless but noise).
   */
  async #saveSendPushConfig(
    push: CheckedPushConfig | undefined,
    accepted: Awaited<ReturnType<Intake['accept']>>,
    ctx: CallContext,
  ): Promise<void> {
    if (push === undefined || this.#pushConfigs === undefined) return;
    const taskId = accepted.kind === 'retry' ? accepted.taskId : accepted.turn.writer.task.id;
    if (accepted.kind === 'retry' && (await this.#pushConfigs.has(taskId, push.config, ctx))) return;
    await this.#pushConfigs.save(taskId, push, ctx);
  }

  /**
   * A message/stream retried with SSE Last-Event-ID: continues the stream of the turn that message
   * started, after `afterSeq`, without starting a second turn. Undefined when the message is unknown.
   */
  async resumeMessageStream(
    params: MessageSendParams,
    afterSeq: number,
    options: StreamOptions = {},
    ctx: CallContext = DIRECT_CALL,
  ): Promise<AsyncGenerator<StreamFrame> | undefined> {
    await this.start();
    const storeContext = storeContextOf(ctx);
    const { messageId } = params.message;
    // The caller's own messages only: the index is scoped by owner.
    const entry = await this.store.findMessage(messageId, storeContext, ownerOf(ctx));
    if (entry === undefined) return undefined;
    const { taskId } = entry;
    const record = await this.store.getTask(taskId, storeContext);
    if (record !== undefined) {
      const endSeq = await this.#follower.turnEndSeq(taskId, messageId, storeContext);
      if (endSeq !== undefined && afterSeq >= endSeq) {
        // The client already has the turn's last event: there is nothing left of this stream to
        // send, and a follower would wait for the end of a turn that ended (for ever, when the task
        // is input-required and no one answers). Answer with the task as it stands, and close.
        return this.#follower.follow(
          taskId,
          record.version,
          followOptions(options, storeContext, { onlySnapshot: true, generations: this.#generations }),
          record.task,
        );
      }
      if (endSeq === undefined && afterSeq > record.version) throw lastEventIdPastEnd(taskId, afterSeq, record.version);
    }
    return this.#follower.follow(
      taskId,
      afterSeq,
      followOptions(options, storeContext, { messageId, generations: this.#generations }),
    );
  }

  // ---- tasks/get, tasks/list, tasks/cancel, tasks/resubscribe (§7.3–7.9) ----

  /**
   * §7.3 tasks/get. With `currentGeneration` and the A2A 1.1 draft's generations on (§3.2.7), a
   * long-poll: answered once the task's generation is greater (at once if it already is, or if the
   * task is terminal), else when `draft11.longPollMaxWaitMs` passed or the caller went away, with
   * the task as it then is. Off, `currentGeneration` is ignored: the task is answered at once.
   */
  async getTask(params: TaskQueryParams, ctx: CallContext = DIRECT_CALL): Promise<Task> {
    await this.start();
    const storeContext = storeContextOf(ctx);
    let record = await readOwnTask(this.store, params.id, ownerOf(ctx), storeContext);
    const after = params.currentGeneration;
    if (after !== undefined && this.#generations && !answersAfter(record, after)) {
      record = await waitForGeneration({
        store: this.store,
        taskId: params.id,
        after,
        record,
        maxWaitMs: this.#longPollMaxWaitMs,
        pollIntervalMs: this.#options.followPollIntervalMs ?? 2000,
        signal: ctx.holdSignal,
        stop: this.#stopLongPolls.signal,
        ctx: storeContext,
      });
    }
    return withHistoryLength(record.task, params.historyLength);
  }

  /**
   * ListTasks (A2A 1.0; A2A 0.3's HTTP+JSON `GET /v1/tasks`): one page of the caller's tasks, newest
   * status timestamp first, with the total and the token of the next page (`""` on the last).
   * @throws {A2AError} UNSUPPORTED_OPERATION when the store cannot list tasks; INVALID_PARAMS naming
   *   the field (a page size outside 1–100, a token this agent did not issue for these filters, …).
   */
  async listTasks(params: ListTasksParams, ctx: CallContext = DIRECT_CALL): Promise<ListTasksResult> {
    await this.start();
    const { store } = this;
    if (store.supports.listTasks !== true || store.listTasks === undefined) {
      throw new A2AError(
        'UNSUPPORTED_OPERATION',
        'Listing tasks is not supported by this agent: its store cannot list tasks (store.supports.listTasks is not true). Use a store that can, such as the memory, SQLite or Postgres store, or get each task by id.',
      );
    }
    const request = taskListRequest(params, ctx);
    return taskListResult(await store.listTasks(request.query, storeContextOf(ctx)), request);
  }

  /** §7.4: moves the task to `canceled`; the worker running its turn sees it in the log and aborts. */
  async cancelTask(params: TaskIdParams, ctx: CallContext = DIRECT_CALL): Promise<Task> {
    await this.start();
    const storeContext = storeContextOf(ctx);
    const record = await readOwnTask(this.store, params.id, ownerOf(ctx), storeContext);
    const writer = new TaskWriter(this.store, record.task, record.version, storeContext);
    await writer.commit((task) => {
      if (isTerminalState(task.status.state)) throw taskNotCancelable(task.id, task.status.state);
      return [this.#events.status(task, 'canceled')];
    });
    // Abort this process's turns of the task at once rather than waiting for the notification
    // round trip; with a store not shared across processes (memory), this is how a cancel reaches
    // the turn, whichever runtime on the store runs it (see TurnRegistry).
    this.#scheduler.abortTask(params.id);
    return writer.task;
  }

  /**
   * §7.9 tasks/resubscribe: the current Task, then its events until a final one. For a task already
   * in a final state (terminal or interrupted) the stream is that one Task and ends. With `afterSeq`
   * (SSE Last-Event-ID) it resumes after that event instead, with no snapshot. With
   * `options.untilTerminal` (A2A 1.0 SubscribeToTask, §3.1.6) only a terminal state ends it: an
   * interrupted task's stream stays open through the next turns until the task is terminal or the
   * client leaves.
   */
  async resubscribe(
    params: TaskIdParams,
    options: StreamOptions = {},
    ctx: CallContext = DIRECT_CALL,
  ): Promise<AsyncGenerator<StreamFrame>> {
    await this.start();
    const storeContext = storeContextOf(ctx);
    const record = await readOwnTask(this.store, params.id, ownerOf(ctx), storeContext);
    const { afterSeq } = options;
    const untilTerminal = options.untilTerminal === true;
    if (afterSeq !== undefined) {
      // SSE Last-Event-ID (§7.9 resumes a stream that broke): past the task's latest event, a
      // running task would be followed from an event that does not exist yet, and the stream
      // would hang with no headers; refuse. A finished task answers its snapshot (see follow).
      const finished = untilTerminal ? isTerminalState : isFinalState;
      if (afterSeq > record.version && !finished(record.task.status.state)) {
        throw lastEventIdPastEnd(params.id, afterSeq, record.version);
      }
      return this.#follower.follow(
        params.id,
        afterSeq,
        followOptions(options, storeContext, { untilTerminal, generations: this.#generations }),
      );
    }
    const { state } = record.task.status;
    if (options.terminalIsError === true && isTerminalState(state)) {
      throw new A2AError(
        'UNSUPPORTED_OPERATION',
        `Task "${params.id}" is ${state}, a terminal state: it has no more events to subscribe to. Read it with GetTask.`,
        { data: { taskId: params.id, state } },
      );
    }
    return this.#follower.follow(
      params.id,
      record.version,
      followOptions(options, storeContext, { endIfFinal: true, untilTerminal, generations: this.#generations }),
      record.task,
    );
  }

  // ---- tasks/pushNotificationConfig/{set,get,list,delete} (§7.5–7.8) ----

  /** §7.5: stores a push config for the caller's task; the URL must pass the destination policy. */
  async setPushConfig(
    params: TaskPushNotificationConfig,
    ctx: CallContext = DIRECT_CALL,
  ): Promise<TaskPushNotificationConfig> {
    await this.start();
    return this.#requirePush().set(params, ctx);
  }

  /** §7.6; without `pushNotificationConfigId`, the config set without an id. */
  async getPushConfig(
    params: GetTaskPushNotificationConfigParams,
    ctx: CallContext = DIRECT_CALL,
  ): Promise<TaskPushNotificationConfig> {
    await this.start();
    return this.#requirePush().get(params.id, params.pushNotificationConfigId, ctx);
  }

  /** §7.7: the task's configs, oldest first. */
  async listPushConfigs(
    params: ListTaskPushNotificationConfigParams,
    ctx: CallContext = DIRECT_CALL,
  ): Promise<TaskPushNotificationConfig[]> {
    await this.start();
    return this.#requirePush().list(params.id, ctx);
  }

  /** §7.8: deletes the config and its delivery state. */
  async deletePushConfig(
    params: DeleteTaskPushNotificationConfigParams,
    ctx: CallContext = DIRECT_CALL,
  ): Promise<void> {
    await this.start();
    await this.#requirePush().delete(params.id, params.pushNotificationConfigId, ctx);
  }

  #requirePush(): PushConfigs {
    if (this.#pushConfigs === undefined) {
      throw new A2AError(
        'PUSH_NOTIFICATION_NOT_SUPPORTED',
        'Push notifications are not enabled on this agent; use message/stream or tasks/resubscribe instead.',
      );
    }
    return this.#pushConfigs;
  }
}

/** The promise's value if it settles within `ms`, else undefined (it keeps running). */
async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The runtime's `streamCommitIntervalMs`, checked: as given, else what the store advises
 * (`supports.streamCommitIntervalMs`: the Postgres store's 40, a SQLite file's 25), else 0.
 */
function streamCommitInterval(options: A2ARuntimeOptions): number {
  const given = options.streamCommitIntervalMs;
  if (given === undefined) {
    const advised = options.store.supports.streamCommitIntervalMs;
    return typeof advised === 'number' && Number.isFinite(advised) && advised > 0 ? Math.min(advised, 1000) : 0;
  }
  if (typeof given !== 'number' || !Number.isFinite(given) || given < 0 || given > 1000) {
    throw new A2AError(
      'INVALID_OPTIONS',
      `streamCommitIntervalMs must be a number of milliseconds from 0 to 1000; got ${String(given)}.`,
    );
  }
  return given;
}
