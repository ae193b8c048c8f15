/**
 * Push notification configs (A2A 0.3 §7.5–7.8 `tasks/pushNotificationConfig/*`, 1.0 §3.1.7–3.1.10):
 * set, get, list, delete, and the config a `message/send` or `message/stream` carries in its
 * `configuration` (§7.1). Every call reads the task through {@link readOwnTask} first, so another
 * principal's task is "not found" here too, and every URL passes the destination policy (the SSRF
 * guard) before it is stored: a refused URL is INVALID_PARAMS (-32602) naming why.
 */

import { A2AError } from '../errors.js';
import type { PushNotificationConfig, TaskPushNotificationConfig } from '../model/types.js';
import type { CallContext } from '../protocol/context.js';
import { checkDestination, type DestinationPolicy } from '../push/destination.js';
import {
  type A2AStore,
  ownerOf,
  type PushConfigRecord,
  type PushStore,
  type StoreCallContext,
  type StoredPushConfig,
  storeContextOf,
} from '../store/index.js';
import type { PushDestinationOptions, PushOptions } from './options.js';
import { readOwnTask } from './ownership.js';

/** A config whose URL passed the policy, ready to be saved for a task. */
export interface CheckedPushConfig {
  readonly config: PushNotificationConfig;
}

export class PushConfigs {
  readonly #store: A2AStore & PushStore;
  readonly #policy: DestinationPolicy;

  constructor(store: A2AStore & PushStore, options: PushOptions) {
    this.#store = store;
    this.#policy = destinationPolicy(options);
  }

  /**
   * Checks the config's URL against the destination policy: at set time, before anything is
   * stored (and, for a message/send, before its task is created).
   * @throws {A2AError} PUSH_URL_REFUSED (-32602) saying why.
   */
  async check(config: PushNotificationConfig): Promise<CheckedPushConfig> {
    try {
      await checkDestination(config.url, this.#policy);
    } catch (error) {
      // A name that does not resolve *yet* (a transient DNS failure, a receiver being deployed) is
      // no reason to lose the client's webhook: every delivery runs the whole check again, and
      // connects only to the addresses it checked (issue 23). What resolves to a refused range,
      // and every literal address, is refused here.
      if (!(A2AError.is(error) && (error.data as { reason?: unknown } | undefined)?.reason === 'unresolvable')) {
        throw error;
      }
    }
    return { config };
  }

  /** §7.5 set: stores the config for the caller's task (replacing one with the same id). */
  async set(params: TaskPushNotificationConfig, ctx: CallContext): Promise<TaskPushNotificationConfig> {
    const storeContext = storeContextOf(ctx);
    await readOwnTask(this.#store, params.taskId, ownerOf(ctx), storeContext);
    const checked = await this.check(params.pushNotificationConfig);
    return this.save(params.taskId, checked, ctx, storeContext);
  }

  /**
   * Saves a checked config for a task the caller owns (the runtime has just created it, or read it
   * through {@link readOwnTask}).
   */
  async save(
    taskId: string,
    checked: CheckedPushConfig,
    ctx: CallContext,
    storeContext: StoreCallContext | undefined = storeContextOf(ctx),
  ): Promise<TaskPushNotificationConfig> {
    const record = await this.#store.savePushConfig(
      { taskId, config: storedConfig(taskId, checked.config), protocolVersion: ctx.version },
      storeContext,
    );
    return wireConfig(record);
  }

  /** Whether the task already has a config with this config's id (a retried message/send). */
  async has(taskId: string, config: PushNotificationConfig, ctx: CallContext): Promise<boolean> {
    const id = configIdOf(taskId, config);
    return (await this.#store.getPushConfig(taskId, id, storeContextOf(ctx))) !== undefined;
  }

  /**
   * §7.6 get. Without a config id, the config an id-less set stored (its id is the task's id, as
   * 0.3 clients expect: `tasks/pushNotificationConfig/get` with only `id` reads it back).
   */
  async get(taskId: string, configId: string | undefined, ctx: CallContext): Promise<TaskPushNotificationConfig> {
    const storeContext = storeContextOf(ctx);
    await readOwnTask(this.#store, taskId, ownerOf(ctx), storeContext);
    const id = configId === undefined || configId === '' ? taskId : configId;
    const record = await this.#store.getPushConfig(taskId, id, storeContext);
    if (record === undefined) throw configNotFound(taskId, id);
    return wireConfig(record);
  }

  /** §7.7 list: the task's configs, oldest first. */
  async list(taskId: string, ctx: CallContext): Promise<TaskPushNotificationConfig[]> {
    const storeContext = storeContextOf(ctx);
    await readOwnTask(this.#store, taskId, ownerOf(ctx), storeContext);
    return (await this.#store.listPushConfigs(taskId, storeContext)).map(wireConfig);
  }

  /**
   * §7.8 delete (1.0 §3.1.10: "MUST be idempotent - multiple deletions of the same config have the
   * same effect"): once the caller's task is found, deleting a config it no longer has (or never
   * had: without tombstones the two look alike) succeeds as the first deletion did, for both
   * versions, as @a2a-js/sdk's servers answer. An unknown task, or another caller's, is still
   * TASK_NOT_FOUND.
   */
  async delete(taskId: string, configId: string, ctx: CallContext): Promise<void> {
    const storeContext = storeContextOf(ctx);
    await readOwnTask(this.#store, taskId, ownerOf(ctx), storeContext);
    await this.#store.deletePushConfig(taskId, configId, storeContext);
  }
}

/**
 * Checks the allow-lists of `options` (they are otherwise compiled on first use), so a typo fails
 * at startup rather than at the first set.
 * @throws {A2AError} INVALID_OPTIONS naming the entry and how to write it.
 */
export async function checkPushOptions(options: PushDestinationOptions): Promise<void> {
  try {
    // An unspecified address is refused whatever the lists say, and is never resolved or dialled:
    // only the policy's own checks run.
    await checkDestination('http://0.0.0.0/', destinationPolicy(options));
  } catch (error) {
    if (A2AError.is(error) && error.code === 'PUSH_URL_REFUSED') return;
    throw error;
  }
}

/** The store-level policy from the runtime's push options. */
export function destinationPolicy(options: PushDestinationOptions): DestinationPolicy {
  return {
    ...(options.allowHosts === undefined ? {} : { allowHosts: options.allowHosts }),
    ...(options.allowCidrs === undefined ? {} : { allowCidrs: options.allowCidrs }),
    ...(options.resolver === undefined ? {} : { resolver: options.resolver }),
    ...(options.allowCidrsName === undefined ? {} : { allowCidrsName: options.allowCidrsName }),
  };
}

/**
 * The id a config is stored under: the client's, or the task's id for a config without one. The
 * task id (not a random one) so that setting an id-less config twice replaces it rather than
 * adding a second, and so that 0.3's get without `pushNotificationConfigId` finds it (what
 * @a2a-js/sdk's server does too).
 */
export function configIdOf(taskId: string, config: PushNotificationConfig): string {
  return config.id === undefined || config.id === '' ? taskId : config.id;
}

function storedConfig(taskId: string, config: PushNotificationConfig): StoredPushConfig {
  const stored: StoredPushConfig = { id: configIdOf(taskId, config), url: config.url };
  if (config.token !== undefined) stored.token = config.token;
  if (config.authentication !== undefined) {
    const { schemes, credentials } = config.authentication;
    stored.authentication =
      credentials === undefined ? { schemes: [...schemes] } : { schemes: [...schemes], credentials };
  }
  return stored;
}

function wireConfig(record: PushConfigRecord): TaskPushNotificationConfig {
  return { taskId: record.taskId, pushNotificationConfig: record.config };
}

function configNotFound(taskId: string, configId: string): A2AError {
  // §8.2 has no "config not found" error; -32001 TaskNotFound is what @a2a-js/sdk answers, and it
  // keeps one answer for "no such task" and "no such config of yours".
  return new A2AError(
    'TASK_NOT_FOUND',
    `Task "${taskId}" has no push notification config "${configId}"; list its configs with tasks/pushNotificationConfig/list.`,
    { data: { taskId, configId } },
  );
}
