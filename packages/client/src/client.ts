/**
 * `connect(reference)` and the client it returns: every A2A operation over whichever interface the
 * card offers, with one result model for both protocol versions (the internal model of
 * `@fastify-a2a/core`, which is A2A 0.3's JSON shape), and the reliability of `http.ts` beneath.
 *
 * Streams resume by themselves. When a stream drops before its final event, the client calls
 * SubscribeToTask (0.3 `tasks/resubscribe`) for the task with `Last-Event-ID` set to the id of the
 * last event it delivered, on whichever worker answers; events whose id it has already delivered
 * are skipped, so the caller sees each event once, in order. Against a server that sends no event
 * ids, a resumed stream starts again from the task's current state (1.0 §3.1.6 sends the Task
 * first): nothing is lost, but updates before the drop may be seen again.
 */

import { randomUUID } from 'node:crypto';
import {
  declaresTaskGenerations,
  INTERRUPTED_STATES,
  isFinalState,
  type ListTasksParams,
  type Message,
  type MessageSendParams,
  type Part,
  type PushNotificationConfig,
  type StreamResult,
  type Task,
  type TaskPushNotificationConfig,
  type TaskState,
} from '@fastify-a2a/core/protocol';
import {
  type AgentEndpoint,
  type CardCheck,
  type Json,
  type ResolvedCard,
  resolveCard,
  type SelectOptions,
  selectEndpoint,
} from './card.js';
import { type VerifyCardOptions, verifyCardSignatures } from './card-verify.js';
import { A2AClientError } from './errors.js';
import { type Credentials, HeaderSet } from './headers.js';
import { backoffMs, CallScope, HttpClient, type RetryOptions } from './http.js';
import { createTransport, type StreamItem, type Transport } from './transport.js';

export interface ConnectOptions extends Credentials, SelectOptions {
  retry?: RetryOptions | undefined;
  /** Each HTTP request, up to its answer (a stream: up to its first byte). @default 30000 */
  requestTimeoutMs?: number | undefined;
  /** The default whole-call timeout of every operation (each may pass its own). @default none */
  timeoutMs?: number | undefined;
  /** Largest SSE event accepted, in bytes. @default 16 MiB */
  maxEventBytes?: number | undefined;
  /** Skip the card cache. */
  freshCard?: boolean | undefined;
  /** How the card is checked before use (`checkCardSchema`: the full schema). @default checkCard */
  cardCheck?: CardCheck | undefined;
  /** One redacted line per request, retry and resume. */
  debug?: ((line: string) => void) | undefined;
  fetch?: typeof fetch | undefined;
  /**
   * Refuse a card whose signatures do not verify (A2A 1.0 §8.4.3) with one of these keys: a JWK
   * Set, public keys, or key-set URLs a signature's `jku` may name. The connection then fails with
   * a `card-unverified` error, before any call. @default undefined (cards are not verified)
   */
  verifyCard?: VerifyCardOptions | undefined;
}

export interface CallOptions {
  /** The whole call, all retries (a stream: until its final event). */
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** What to send: text, parts, or a whole message; ids to continue an interaction. */
export interface SendInput {
  text?: string | undefined;
  parts?: Part[] | undefined;
  /** Continue this task (e.g. one waiting in input-required). */
  taskId?: string | undefined;
  /** Start a task in this context. */
  contextId?: string | undefined;
  /** Fixed by the caller to make a send idempotent across processes; otherwise chosen once per call. */
  messageId?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
  /** Extra message fields (extensions, referenceTaskIds). */
  message?: Partial<Message> | undefined;
  historyLength?: number | undefined;
  acceptedOutputModes?: string[] | undefined;
  pushNotificationConfig?: PushNotificationConfig | undefined;
  /**
   * A2A 1.1 draft (§3.2.7) `ifGenerationMatch`: the follow-up is refused (TaskGenerationMismatchError,
   * `a2aCode` TASK_GENERATION_MISMATCH) unless its task is at this generation. Only where the agent
   * declares task generations ({@link A2AClient.taskGenerations}); elsewhere the send is refused
   * here rather than sent without its precondition.
   */
  ifGenerationMatch?: number | undefined;
}

export interface SendOptions extends CallOptions {
  /**
   * `true` (default): the server answers when the task is final or interrupted. `false`: it
   * answers as soon as the task exists (1.0 `returnImmediately`).
   */
  blocking?: boolean | undefined;
  /**
   * Wait at most this long for a final or interrupted state, then return the task as it is (its
   * id and state, to poll with `getTask`/`waitForTask` or follow with `subscribe`).
   */
  maxWaitMs?: number | undefined;
  /** How often to poll while waiting (`maxWaitMs`). @default 500, backing off to 5000 */
  pollIntervalMs?: number | undefined;
}

export interface SendResult {
  /** The task, or the message when the agent answered without one. */
  result: Task | Message;
  /** The messageId sent (the same on every retry). */
  messageId: string;
  /** Whether the task is final or interrupted (always true for a message). */
  done: boolean;
}

export interface ClientStreamEvent {
  /** The SSE id of the event (undefined when the server sends none). */
  id: string | undefined;
  result: StreamResult;
}

export interface WaitOptions extends CallOptions {
  pollIntervalMs?: number | undefined;
  historyLength?: number | undefined;
}

export interface GetTaskOptions extends CallOptions {
  historyLength?: number | undefined;
  /**
   * A2A 1.1 draft (§3.2.7) long-poll: the agent answers once the task's generation is greater than
   * this (or after its bounded wait, with the task as it is). Where the agent does not declare task
   * generations ({@link A2AClient.taskGenerations}) it is a plain GetTask, answered at once.
   */
  waitForGenerationAfter?: number | undefined;
}

/** The state a stream item or answer leaves the task in, if it says. */
export function stateOf(result: StreamResult): TaskState | undefined {
  if (result.kind === 'task' || result.kind === 'status-update') return result.status.state;
  return undefined;
}

/** Whether this item ends a stream: a message, or a task or status in a final or interrupted state. */
export function endsStream(result: StreamResult): boolean {
  if (result.kind === 'message') return true;
  if (result.kind === 'status-update') return result.final || isFinalState(result.status.state);
  if (result.kind === 'task') return isFinalState(result.status.state);
  return false;
}

function httpClient(options: ConnectOptions): HttpClient {
  return new HttpClient({
    headers: new HeaderSet(options),
    retry: options.retry,
    requestTimeoutMs: options.requestTimeoutMs,
    debug: options.debug,
    fetch: options.fetch,
  });
}

/**
 * A client for one interface URL, without reading a card (the CLI's `-e/--endpoint`): the binding
 * and version are the caller's to say. Capabilities are unknown, so none is checked.
 */
export function connectEndpoint(endpoint: AgentEndpoint, options: ConnectOptions = {}): A2AClient {
  const resolved: ResolvedCard = {
    card: { name: endpoint.url, capabilities: { streaming: true, pushNotifications: true } },
    source: endpoint.url,
    endpoints: [endpoint],
  };
  return new A2AClient(resolved, endpoint, httpClient(options), options);
}

/** Connects to the agent a reference names (see `card.ts` for the forms), ready to call. */
export async function connect(reference: string, options: ConnectOptions = {}): Promise<A2AClient> {
  const http = httpClient(options);
  const resolved = await resolveCard(reference, {
    http,
    fresh: options.freshCard,
    timeoutMs: options.timeoutMs,
    cardCheck: options.cardCheck,
  }).catch((error: unknown) => {
    // No client is returned to redact with: the credentials read for the card are redacted here.
    if (error instanceof Error) error.message = http.headers.redact(error.message);
    throw error;
  });
  if (options.verifyCard !== undefined) {
    const verification = await verifyCardSignatures(
      resolved.card,
      { fetch: options.fetch, ...options.verifyCard },
      resolved.source,
    );
    http.debug(`card ${resolved.source}: signature verified (kid ${verification.kid}, ${verification.alg})`);
  }
  const endpoint = selectEndpoint(resolved, options);
  const schemes = (resolved.card.securitySchemes ?? {}) as Record<string, Json>;
  for (const scheme of Object.values(schemes)) {
    // 0.3 / OpenAPI form, then 1.0's `apiKeySecurityScheme` (our server's card carries both).
    const apiKey = (scheme?.type === 'apiKey' ? scheme : scheme?.apiKeySecurityScheme) as Json | undefined;
    const where = apiKey?.in ?? apiKey?.location;
    if (typeof apiKey?.name === 'string' && (where === undefined || where === 'header')) {
      http.headers.useApiKeyHeader(apiKey.name);
      break;
    }
  }
  http.debug(`card ${resolved.source}: using ${endpoint.binding} ${endpoint.version} at ${endpoint.url}`);
  return new A2AClient(resolved, endpoint, http, options);
}

export class A2AClient {
  readonly #transport: Transport;
  readonly #http: HttpClient;
  readonly #timeoutMs: number | undefined;

  constructor(
    readonly resolvedCard: ResolvedCard,
    readonly endpoint: AgentEndpoint,
    http: HttpClient,
    options: ConnectOptions = {},
  ) {
    this.#http = http;
    this.#transport = createTransport(endpoint, { http, maxEventBytes: options.maxEventBytes });
    this.#timeoutMs = options.timeoutMs;
  }

  /** The agent card as the agent sent it. */
  get card(): Json {
    return this.resolvedCard.card;
  }

  get capabilities(): { streaming: boolean; pushNotifications: boolean; extendedAgentCard: boolean } {
    const capabilities = (this.card.capabilities ?? {}) as Json;
    return {
      streaming: capabilities.streaming === true,
      pushNotifications: capabilities.pushNotifications === true,
      extendedAgentCard:
        capabilities.extendedAgentCard === true || this.card.supportsAuthenticatedExtendedCard === true,
    };
  }

  /**
   * Whether the A2A 1.1 draft's task generations (§3.2.7) can be used here: the card declares the
   * extension (`https://fastify-a2a.dev/extensions/a2a-1.1-draft/task-generation`) and this client
   * speaks A2A 1.0 to the agent (the generation fields are on the 1.0 JSON-RPC and HTTP+JSON bindings).
   */
  get taskGenerations(): boolean {
    return this.endpoint.version === '1.0' && declaresTaskGenerations(this.card as never);
  }

  /** Replaces credential values in `text` with `***`. */
  redact(text: string): string {
    return this.#http.headers.redact(text);
  }

  #scope(options: CallOptions = {}, slowAnswer = false): CallScope {
    return new CallScope({ timeoutMs: options.timeoutMs ?? this.#timeoutMs, signal: options.signal, slowAnswer });
  }

  #params(input: SendInput, blocking: boolean, messageId: string): MessageSendParams {
    const parts: Part[] = [...(input.parts ?? [])];
    if (input.text !== undefined) parts.unshift({ kind: 'text', text: input.text });
    if (parts.length === 0) throw new A2AClientError('usage', 'A message needs at least one part: give text or parts.');
    const message: Message = { ...input.message, kind: 'message', role: 'user', messageId, parts };
    if (input.taskId !== undefined) message.taskId = input.taskId;
    if (input.contextId !== undefined) message.contextId = input.contextId;
    const params: MessageSendParams = { message, configuration: { blocking } };
    if (input.historyLength !== undefined) (params.configuration as Json).historyLength = input.historyLength;
    if (input.acceptedOutputModes !== undefined)
      (params.configuration as Json).acceptedOutputModes = input.acceptedOutputModes;
    if (input.pushNotificationConfig !== undefined)
      (params.configuration as Json).pushNotificationConfig = input.pushNotificationConfig;
    if (input.ifGenerationMatch !== undefined) {
      // A precondition is never dropped: an agent that does not declare it would ignore the field.
      if (!this.taskGenerations) {
        throw new A2AClientError(
          'usage',
          `ifGenerationMatch needs an agent that declares the A2A 1.1 draft's task generations, spoken over A2A 1.0; ${this.card.name ?? 'this agent'} ${this.endpoint.version === '1.0' ? 'does not declare them' : `is reached over A2A ${this.endpoint.version}`}.`,
        );
      }
      (params.configuration as Json).ifGenerationMatch = input.ifGenerationMatch;
    }
    if (input.metadata !== undefined) params.metadata = input.metadata;
    return params;
  }

  /** SendMessage (1.0 §3.1.1; 0.3 `message/send`). */
  async send(input: SendInput, options: SendOptions = {}): Promise<SendResult> {
    // Chosen once, before the first try: every retry is the same message (1.0 §3.3.1).
    const messageId = input.messageId ?? randomUUID();
    const waitBounded = options.maxWaitMs !== undefined;
    const blocking = waitBounded ? false : options.blocking !== false;
    // A blocking send is answered when the agent is done, however long that takes.
    const scope = this.#scope(options, blocking);
    const result = await this.#transport.call('sendMessage', this.#params(input, blocking, messageId), scope);
    if (result.kind === 'message') return { result, messageId, done: true };
    if (!waitBounded || isFinalState(result.status.state)) {
      return { result, messageId, done: isFinalState(result.status.state) };
    }
    const task = await this.#poll(result, scope, options.pollIntervalMs, Date.now() + (options.maxWaitMs ?? 0));
    return { result: task, messageId, done: isFinalState(task.status.state) };
  }

  /** Polls until the task is final or interrupted, or `until` passes; returns the last task read. */
  async #poll(
    task: Task,
    scope: CallScope,
    pollIntervalMs = 500,
    until = Number.POSITIVE_INFINITY,
    historyLength?: number,
  ): Promise<Task> {
    let current = task;
    for (let round = 0; !isFinalState(current.status.state); round++) {
      const left = until - Date.now();
      if (left <= 0) return current;
      // Bounded backoff from the interval asked for: 1×, 2×… up to 10× (at most 5 s more).
      const delay = Math.min(left, pollIntervalMs * Math.min(10, 2 ** Math.floor(round / 3)));
      await scope.sleep(delay);
      const params = historyLength === undefined ? { id: current.id } : { id: current.id, historyLength };
      current = await this.#transport.call('getTask', params, scope);
    }
    return current;
  }

  /**
   * GetTask, repeated until the task is final or interrupted (or the timeout): `task get --wait`.
   * Where the agent declares task generations ({@link taskGenerations}), each GetTask long-polls
   * for the next generation (A2A 1.1 draft §3.2.7): a change is seen as it happens, and an idle
   * task costs one request per the agent's bounded wait, not one per poll interval.
   */
  async waitForTask(taskId: string, options: WaitOptions = {}): Promise<Task> {
    const longPoll = this.taskGenerations;
    // A long-poll is answered when the agent's bounded wait ends: no per-request timeout cuts it.
    const scope = this.#scope(options, longPoll);
    const params =
      options.historyLength === undefined ? { id: taskId } : { id: taskId, historyLength: options.historyLength };
    let task = await this.#transport.call('getTask', params, scope);
    if (!longPoll) return this.#poll(task, scope, options.pollIntervalMs, undefined, options.historyLength);
    while (!isFinalState(task.status.state)) {
      task = await this.#transport.call('getTask', { ...params, currentGeneration: task.generation ?? 0 }, scope);
    }
    return task;
  }

  /** GetTask (1.0 §3.1.3; 0.3 `tasks/get`); with `waitForGenerationAfter`, the draft's long-poll. */
  getTask(taskId: string, options: GetTaskOptions = {}): Promise<Task> {
    const params: { id: string; historyLength?: number; currentGeneration?: number } = { id: taskId };
    if (options.historyLength !== undefined) params.historyLength = options.historyLength;
    const longPoll = options.waitForGenerationAfter !== undefined && this.taskGenerations;
    if (longPoll) params.currentGeneration = options.waitForGenerationAfter;
    return this.#transport.call('getTask', params, this.#scope(options, longPoll));
  }

  /** CancelTask (1.0 §3.1.5; 0.3 `tasks/cancel`). */
  cancelTask(taskId: string, options: CallOptions = {}): Promise<Task> {
    return this.#transport.call('cancelTask', { id: taskId }, this.#scope(options));
  }

  /** ListTasks (1.0 §3.1.4), one page. */
  listTasksPage(params: ListTasksParams = {}, options: CallOptions = {}) {
    return this.#transport.call('listTasks', params, this.#scope(options));
  }

  /** ListTasks, every page in turn: an async iterator over the tasks. */
  async *listTasks(params: ListTasksParams = {}, options: CallOptions = {}): AsyncGenerator<Task> {
    let pageToken = params.pageToken;
    for (;;) {
      const page = await this.listTasksPage(pageToken === undefined ? params : { ...params, pageToken }, options);
      yield* page.tasks;
      if (page.nextPageToken === '' || page.nextPageToken === pageToken) return;
      pageToken = page.nextPageToken;
    }
  }

  setPushConfig(taskId: string, config: PushNotificationConfig, options: CallOptions = {}) {
    return this.#transport.call(
      'setTaskPushNotificationConfig',
      { taskId, pushNotificationConfig: config },
      this.#scope(options),
    );
  }

  getPushConfig(
    taskId: string,
    configId: string | undefined,
    options: CallOptions = {},
  ): Promise<TaskPushNotificationConfig> {
    const params = configId === undefined ? { id: taskId } : { id: taskId, pushNotificationConfigId: configId };
    return this.#transport.call('getTaskPushNotificationConfig', params, this.#scope(options));
  }

  listPushConfigs(taskId: string, options: CallOptions = {}): Promise<TaskPushNotificationConfig[]> {
    return this.#transport.call('listTaskPushNotificationConfig', { id: taskId }, this.#scope(options));
  }

  async deletePushConfig(taskId: string, configId: string, options: CallOptions = {}): Promise<void> {
    await this.#transport.call(
      'deleteTaskPushNotificationConfig',
      { id: taskId, pushNotificationConfigId: configId },
      this.#scope(options),
    );
  }

  /** GetExtendedAgentCard (1.0 §3.1.11; 0.3 `agent/getAuthenticatedExtendedCard`), as the agent sent it. */
  async getExtendedCard(options: CallOptions = {}): Promise<Json> {
    return (await this.#transport.call('getExtendedAgentCard', {}, this.#scope(options))) as unknown as Json;
  }

  /** SendStreamingMessage (1.0 §3.1.2; 0.3 `message/stream`), resumed after a drop. */
  stream(input: SendInput, options: CallOptions = {}): AsyncGenerator<ClientStreamEvent> {
    const messageId = input.messageId ?? randomUUID();
    const params = this.#params(input, true, messageId);
    return this.#follow({ operation: 'sendStreamingMessage', params }, options);
  }

  /** SubscribeToTask (1.0 §3.1.6; 0.3 `tasks/resubscribe`), resumed after a drop. */
  subscribe(taskId: string, options: CallOptions & { lastEventId?: string | undefined } = {}) {
    return this.#follow({ operation: 'subscribeToTask', params: { id: taskId }, taskId }, options, options.lastEventId);
  }

  /**
   * A stream that reopens itself until its final event: the first request again while nothing has
   * arrived (same messageId), then SubscribeToTask with `Last-Event-ID`. Consecutive failures
   * without a new event are bounded by the retry attempts; any progress resets the count.
   */
  async *#follow(
    start: {
      operation: 'sendStreamingMessage' | 'subscribeToTask';
      params: MessageSendParams | { id: string };
      taskId?: string;
    },
    options: CallOptions,
    resumeAfter?: string,
  ): AsyncGenerator<ClientStreamEvent> {
    const scope = this.#scope(options);
    const retry = this.#http.retry;
    let taskId = start.taskId;
    let lastId = resumeAfter;
    const delivered = new Set<string>();
    let failures = 0;
    let continuing =
      start.operation === 'sendStreamingMessage' && (start.params as MessageSendParams).message.taskId !== undefined;
    for (let round = 0; ; round++) {
      scope.check();
      let open: { items: AsyncGenerator<StreamItem>; close(): void } | undefined;
      let progressed = false;
      const resuming = round > 0;
      try {
        // Until an event names the task, only the first request can be made again (a send with the
        // same messageId); after that, the task is followed wherever the next request lands.
        open =
          taskId === undefined
            ? await this.#transport.stream(start.operation, start.params as never, scope, lastId)
            : await this.#transport.stream('subscribeToTask', { id: taskId }, scope, lastId);
        const closeOnAbort = () => open?.close();
        scope.signal.addEventListener('abort', closeOnAbort, { once: true });
        try {
          for await (const item of open.items) {
            if (item.id !== undefined) {
              if (delivered.has(item.id)) continue;
              delivered.add(item.id);
              lastId = item.id;
            }
            taskId ??=
              item.result.kind === 'task'
                ? item.result.id
                : item.result.kind === 'message'
                  ? undefined
                  : item.result.taskId;
            progressed = true;
            failures = 0;
            yield { id: item.id, result: item.result };
            // A send that continues an interrupted task opens with the task as it was (still
            // input-required): that snapshot does not end the stream; the turn's own updates will.
            const snapshotBeforeTurn =
              continuing && item.result.kind === 'task' && INTERRUPTED_STATES.has(item.result.status.state);
            continuing = false;
            if (endsStream(item.result) && !snapshotBeforeTurn) return;
          }
        } finally {
          scope.signal.removeEventListener('abort', closeOnAbort);
          open.close();
        }
        if (scope.signal.aborted) throw scope.reason();
        // The stream ended without a final event: the connection was cut (or the worker died).
        this.#http.debug(`stream ended before its final event (last event ${lastId ?? 'none'}); resuming`);
      } catch (error) {
        if (scope.signal.aborted) throw scope.reason();
        if (resuming && taskId !== undefined && A2AClientError.is(error) && error.a2aCode === 'UNSUPPORTED_OPERATION') {
          // The task ended while the stream was down, and this server does not replay a finished
          // task's events (1.0 §3.1.6 refuses a subscription to a terminal task): its final state
          // is still the caller's answer, so read it.
          this.#http.debug(`resuming was refused (${this.redact(error.message)}); reading the task`);
          const task = await this.#transport.call('getTask', { id: taskId }, scope);
          if (!endsStream(task)) throw error;
          yield { id: undefined, result: task };
          return;
        }
        const resumable =
          !A2AClientError.is(error) ||
          error.kind === 'unreachable' ||
          (error.kind === 'timeout' && !scope.signal.aborted);
        if (!resumable) throw error;
        this.#http.debug(`stream failed (${this.redact((error as Error).message)}); resuming`);
        if (!progressed) failures++;
        if (failures >= retry.attempts) {
          throw A2AClientError.is(error)
            ? error
            : new A2AClientError(
                'unreachable',
                `The stream dropped and could not be resumed: ${(error as Error).message}`,
                {
                  cause: error,
                },
              );
        }
        await scope.sleep(backoffMs(failures, retry));
        continue;
      }
      if (!progressed) failures++;
      if (failures >= retry.attempts) {
        throw new A2AClientError('unreachable', 'The stream kept ending before its final event; giving up.');
      }
      if (taskId === undefined) {
        // Nothing told us the task: send again (same messageId: the server knows it).
        continue;
      }
      await scope.sleep(progressed ? 0 : backoffMs(failures, retry));
    }
  }
}
