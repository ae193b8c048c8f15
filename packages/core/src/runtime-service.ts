/**
 * The A2A service backed by the task runtime: each operation of `protocol/operations.ts` as a call
 * on the runtime. Dispatch reaches it only after validation, authorization and the capability gate.
 *
 * It lives outside `protocol/` because it names the runtime: the protocol layer knows only the
 * `A2AService` interface it defines, so a client can load that layer without the runtime. Most
 * methods forward; the ones that add something are the stream resume (Last-Event-ID), the
 * version-dependent answer to subscribing to a terminal task, and the extended card.
 */

import { A2AError } from './errors.js';
import type { AgentCard } from './model/types.js';
import type { CallContext } from './protocol/context.js';
import type {
  A2AService,
  OperationParams,
  OperationResult,
  OperationTypes,
  StreamFrame,
} from './protocol/operations.js';
import type { A2ARuntime } from './runtime/runtime.js';

export interface RuntimeServiceOptions {
  runtime: A2ARuntime;
  /**
   * The extended card for an authenticated caller (§7.10), when the agent has one. Dispatch refuses
   * the operation before it gets here unless the card declares `supportsAuthenticatedExtendedCard`.
   */
  extendedAgentCard?: (ctx: CallContext) => AgentCard | Promise<AgentCard>;
}

export class RuntimeService implements A2AService {
  readonly #runtime: A2ARuntime;
  readonly #extendedCard: RuntimeServiceOptions['extendedAgentCard'];

  constructor(options: RuntimeServiceOptions) {
    this.#runtime = options.runtime;
    this.#extendedCard = options.extendedAgentCard;
  }

  sendMessage(params: OperationParams<'sendMessage'>, ctx: CallContext): Promise<OperationResult<'sendMessage'>> {
    return this.#runtime.sendMessage(params, ctx);
  }

  /** §7.2; with Last-Event-ID, a retried stream continues the turn its message started. */
  async sendStreamingMessage(
    params: OperationParams<'sendStreamingMessage'>,
    ctx: CallContext,
  ): Promise<AsyncGenerator<StreamFrame>> {
    // The dispatcher and the bindings only encode frames: the streams may share the store's events.
    const options = ctx.signal === undefined ? { sharedFrames: true } : { signal: ctx.signal, sharedFrames: true };
    if (ctx.lastEventId !== undefined) {
      const resumed = await this.#runtime.resumeMessageStream(params, ctx.lastEventId, options, ctx);
      if (resumed !== undefined) return resumed;
    }
    return this.#runtime.streamMessage(params, options, ctx);
  }

  getTask(params: OperationParams<'getTask'>, ctx: CallContext): Promise<OperationResult<'getTask'>> {
    return this.#runtime.getTask(params, ctx);
  }

  /** A2A 1.0 ListTasks (and 0.3's HTTP+JSON `GET /v1/tasks`). */
  listTasks(
    params: OperationTypes['listTasks']['params'],
    ctx: CallContext,
  ): Promise<OperationTypes['listTasks']['result']> {
    return this.#runtime.listTasks(params, ctx);
  }

  cancelTask(params: OperationParams<'cancelTask'>, ctx: CallContext): Promise<OperationResult<'cancelTask'>> {
    return this.#runtime.cancelTask(params, ctx);
  }

  subscribeToTask(params: OperationParams<'subscribeToTask'>, ctx: CallContext): Promise<AsyncGenerator<StreamFrame>> {
    const { signal, lastEventId } = ctx;
    return this.#runtime.resubscribe(
      params,
      {
        ...(signal === undefined ? {} : { signal }),
        ...(lastEventId === undefined ? {} : { afterSeq: lastEventId }),
        // 0.3 answers a terminal task with its snapshot and closes; 1.0 refuses (§3.1.6).
        terminalIsError: ctx.version !== '0.3',
        // 1.0 (§3.1.6): the stream ends when the task reaches a terminal state, so a subscription
        // to a task waiting for input stays open across the next turns. 0.3's stays as its
        // `final` flag says: a status in `input-required` is the last event of its stream
        // (§7.2.2), and its clients stop reading there (docs/bindings-and-versions.md).
        untilTerminal: ctx.version !== '0.3',
        sharedFrames: true,
      },
      ctx,
    );
  }

  // Push notification configs (§7.5–7.8). Dispatch refuses them (-32003) unless the card declares
  // pushNotifications; the runtime refuses them the same way when push is off.
  setTaskPushNotificationConfig(
    params: OperationParams<'setTaskPushNotificationConfig'>,
    ctx: CallContext,
  ): Promise<OperationResult<'setTaskPushNotificationConfig'>> {
    return this.#runtime.setPushConfig(params, ctx);
  }

  getTaskPushNotificationConfig(
    params: OperationParams<'getTaskPushNotificationConfig'>,
    ctx: CallContext,
  ): Promise<OperationResult<'getTaskPushNotificationConfig'>> {
    return this.#runtime.getPushConfig(params, ctx);
  }

  listTaskPushNotificationConfig(
    params: OperationParams<'listTaskPushNotificationConfig'>,
    ctx: CallContext,
  ): Promise<OperationResult<'listTaskPushNotificationConfig'>> {
    return this.#runtime.listPushConfigs(params, ctx);
  }

  async deleteTaskPushNotificationConfig(
    params: OperationParams<'deleteTaskPushNotificationConfig'>,
    ctx: CallContext,
  ): Promise<OperationResult<'deleteTaskPushNotificationConfig'>> {
    await this.#runtime.deletePushConfig(params, ctx);
    return null;
  }

  async getExtendedAgentCard(
    _params: OperationParams<'getExtendedAgentCard'>,
    ctx: CallContext,
  ): Promise<OperationResult<'getExtendedAgentCard'>> {
    if (this.#extendedCard === undefined) {
      throw new A2AError('EXTENDED_CARD_NOT_CONFIGURED', 'This agent has no authenticated extended card.');
    }
    return this.#extendedCard(ctx);
  }
}
