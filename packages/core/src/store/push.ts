import type { PushNotificationConfig } from '../model/types.js';
import type { StoreCallContext } from './call-context.js';

// ---- Push notifications (A2A 0.3 §6.8–6.10, §9.5; A2A 1.0 TaskPushNotificationConfig) ----

/** Which A2A version a config was set with; it decides the form of the notifications' bodies. */
export type PushProtocolVersion = '0.3' | '1.0';

/**
 * A push notification config as stored: the model's {@link PushNotificationConfig} with its `id`
 * required. The runtime assigns an id when the client gave none, so every stored config has one.
 * Both token shapes are kept as given: the top-level `token` (sent back as
 * `X-A2A-Notification-Token`) and `authentication` (`schemes`, and `credentials` when given).
 */
export interface StoredPushConfig extends PushNotificationConfig {
  id: string;
}

/** What {@link PushStore.savePushConfig} stores. */
export interface SavePushConfigRequest {
  taskId: string;
  /** Its `id` names the config within the task; saving the same id again replaces it. */
  config: StoredPushConfig;
  /** The A2A version of the call that set it: the delivery job writes that version's payload. */
  protocolVersion: PushProtocolVersion;
}

export interface PushConfigRecord {
  taskId: string;
  config: StoredPushConfig;
  protocolVersion: PushProtocolVersion;
  /** When the config was first saved, in epoch ms (the store's clock); a replace keeps it. */
  createdAt: number;
  /** When it was last saved (the store's clock). */
  updatedAt: number;
}

/**
 * Where the delivery of one config of one task stands. Fields without a value are `null` (not
 * left out), so a row of any store reads back the same.
 */
export interface PushDeliveryState {
  /**
   * The task version (the seq of its last event) whose state was last delivered; 0 until the first
   * successful POST. The delivery is due whenever the task's version is above it.
   */
  cursor: number;
  /** Failed attempts since the last success (0 after a success and for a new config). */
  attempts: number;
  /**
   * Not before this instant (epoch ms); `null`: as soon as there is something to deliver. After a
   * success it is the end of the throttle window the job asked for (`attempts` is then 0), after
   * a failure the time of the retry (`attempts` ≥ 1). See {@link PushStore.claimPushDeliveries}
   * for what each holds back.
   */
  nextAttemptAt: number | null;
  /** When the last successful POST was sent (the job's `sentAt`); `null` before the first. */
  lastSentAt: number | null;
  /** True once the job gave up (the last retry failed): never claimed again until the config is saved anew. */
  failed: boolean;
  /** What went wrong in the last failed attempt; `null` after a success. */
  lastError: string | null;
  /** The HTTP status of the last attempt, when it got an answer. */
  lastStatus: number | null;
  /** The worker holding the claim, or `null` when nobody does. */
  claimedBy: string | null;
  /** The id of the current claim (see {@link PushClaimKey}), or `null`. */
  claimId: string | null;
  /** When the current claim ends (epoch ms): another worker may take it over after this. */
  claimUntil: number | null;
}

/** One config of one task with its delivery state, and the task's current version. */
export interface PushDelivery {
  config: PushConfigRecord;
  state: PushDeliveryState;
  /** The task's version when this was read: `taskVersion - state.cursor` events are undelivered. */
  taskVersion: number;
}

/**
 * The claim a worker acts on: {@link PushStore.completePushDelivery}, `failPushAttempt`,
 * `releasePushClaim`. A claim is held from the claim until it is completed, failed or released, or
 * until another worker takes the delivery over once `claimUntil` has passed: an expired claim
 * nobody took yet is still held (its worker was only slow, and nobody else POSTed meanwhile).
 */
export interface PushClaimKey {
  taskId: string;
  configId: string;
  /**
   * The `state.claimId` of the claimed delivery. A fresh id per claim (a fencing token): a worker
   * whose claim was taken over, or whose config was replaced or deleted, holds an id the store no
   * longer has, even if it claimed the same delivery again since, so its late writes are refused.
   * Comparing worker ids would not do: the same worker may hold the delivery again by then.
   */
  claimId: string;
}

export interface ClaimPushDeliveriesRequest {
  /** The claiming worker, recorded as `claimedBy` (what {@link PushStore.renewPushClaims} renews). */
  workerId: string;
  /** The caller's clock (epoch ms): what is due, and which claims have expired, is judged by it. */
  now: number;
  /** The end of the claims taken (epoch ms), normally `now` plus the claim TTL. */
  claimUntil: number;
  /** At most this many deliveries: an integer ≥ 1. */
  limit: number;
}

export interface CompletePushDeliveryRequest extends PushClaimKey {
  /**
   * The task version whose state was POSTed: the version of the snapshot sent (it may be above the
   * claim's `taskVersion` when the task moved since). The cursor never moves back: a lower value
   * leaves it where it is.
   */
  cursor: number;
  /** When the POST was sent (epoch ms, the job's clock): becomes `lastSentAt`. */
  sentAt: number;
  /** The end of the throttle window (epoch ms); absent or `null` for none. */
  nextAttemptAt?: number | null;
  /** The HTTP status the webhook answered. */
  status?: number;
}

export interface FailPushAttemptRequest extends PushClaimKey {
  /**
   * When to try again (epoch ms, the job's backoff); `null` gives up: the delivery is `failed` and
   * never claimed again.
   */
  nextAttemptAt: number | null;
  /** Why the attempt failed, for monitoring (it is listed, and may name hosts: never show it to clients). */
  error: string;
  /** The HTTP status, when the webhook answered (a 5xx, a 429…). */
  status?: number;
}

/** What {@link PushStore.listPushDeliveries} lists. Filters combine with AND. */
export interface PushDeliveryFilter {
  /** Only this task's configs. */
  taskId?: string;
  /** Only failed (`true`) or only not failed (`false`) deliveries. */
  failed?: boolean;
  /** At most this many. */
  limit?: number;
}

/**
 * Push notification configs and the state of their delivery, present when `supports.push`.
 *
 * Configs belong to their task: several per task, each named by its `id` (A2A 0.3 §6.8 and 1.0
 * allow several; the client chooses the id or the runtime does). They live as long as the task:
 * {@link A2AStore.purgeExpired} (and a memory store's eviction) removes a task's configs and their
 * delivery state in the same transaction as the task, and a task created again under the same id
 * starts without any. Secrets (`token`, `authentication.credentials`) are stored as given;
 * encrypting them at rest is the database's job.
 *
 * The event log is the outbox. Each (task, config) has a delivery state ({@link PushDeliveryState})
 * whose `cursor` says which task version was last delivered; a delivery is due while the task's
 * version is above it. A worker claims due deliveries (a lease, like the worker leases of
 * {@link CoordinationStore}), POSTs the task's current state, and completes (the cursor moves up) or
 * fails (a retry later, or `failed`). One claim at a time per delivery, so POSTs of one config go
 * out one after another, in version order; a worker that dies leaves its claims to expire, and
 * another worker takes them over at the cursor: at least once, never silently dropped.
 *
 * Every method is scoped to the store's namespace, like the rest of the contract. Data is copied
 * in and out.
 */
export interface PushStore {
  /**
   * Inserts the config, or replaces the one with the same (task, config id).
   *
   * Its delivery starts afresh, for a new config and for a replaced one alike: cursor 0, no
   * attempts, not failed, no error, no claim. Cursor 0 rather than the task's version at save
   * time, so the first POST carries the task's current state, the state after the config was
   * set, and nothing is missed when the task moved (or ended) between the call that created it and
   * this save (a `message/send` with a config races the agent's first events). A replace is a new
   * start on purpose: it is how a client points a failing config at a fixed URL or rotates its
   * token, and it drops the claim of a worker still POSTing with the old one (that worker's
   * complete is refused). A replace keeps `createdAt`, and so its place in the lists.
   *
   * @returns the stored record (`createdAt`, `updatedAt` from the store's clock).
   * @throws {A2AError} `TASK_NOT_FOUND` when the task does not exist (or was purged); nothing is
   *   stored. Checked in the same transaction as the write, so a config never outlives its task.
   * @throws {A2AError} `INTERNAL` for a malformed request (see {@link checkPushConfigRequest}).
   */
  savePushConfig(request: SavePushConfigRequest, ctx?: StoreCallContext): Promise<PushConfigRecord>;

  /** The config, or `undefined` when the task has no config with that id (or no such task). */
  getPushConfig(taskId: string, configId: string, ctx?: StoreCallContext): Promise<PushConfigRecord | undefined>;

  /** The task's configs, oldest first (by `createdAt`, then save order); `[]` for an unknown task. */
  listPushConfigs(taskId: string, ctx?: StoreCallContext): Promise<PushConfigRecord[]>;

  /**
   * Deletes the config and its delivery state; a claim on it is gone too (its holder's complete is
   * refused).
   * @returns whether there was such a config.
   */
  deletePushConfig(taskId: string, configId: string, ctx?: StoreCallContext): Promise<boolean>;

  /**
   * Atomically claims up to `limit` deliveries that have work now, for `workerId` until
   * `claimUntil`, each with a fresh `claimId`. A delivery is claimed when all hold:
   * - it is not `failed`;
   * - nobody holds its claim, or the claim ended strictly before `now` (`claimUntil < now`, the
   *   rule of worker leases): a dead worker's claims are taken over once they expire;
   * - its task's version is above its cursor (a failed attempt leaves the cursor behind, so a
   *   retry is this case too);
   * - `nextAttemptAt` is `null` or ≤ `now`, with one exception: the throttle window (the wait
   *   after a success, `attempts` 0) does not hold back a task whose state is terminal or
   *   interrupted (A2A §6.3): that state goes out at once. A retry wait (`attempts` ≥ 1) holds
   *   back everything.
   *
   * Of several concurrent claimants (calls on one instance, instances on one database) exactly one
   * gets each delivery. The order of the claims is left open.
   *
   * @returns the claimed deliveries with their config, their state (now showing the claim) and the
   *   task's version; `[]` when nothing has work.
   */
  claimPushDeliveries(request: ClaimPushDeliveriesRequest, ctx?: StoreCallContext): Promise<PushDelivery[]>;

  /**
   * Moves the end of every claim `workerId` still holds to `claimUntil` (a heartbeat while slow
   * POSTs run). A claim that expired but was not taken over yet is still held, and renewed.
   * @returns how many claims were renewed.
   */
  renewPushClaims(workerId: string, claimUntil: number, ctx?: StoreCallContext): Promise<number>;

  /**
   * Records a successful POST and releases the claim: the cursor moves up to `cursor`, `attempts`
   * goes back to 0, `lastSentAt` is `sentAt`, `lastError` is cleared, `lastStatus` is `status`,
   * and `nextAttemptAt` is the throttle window's end (or `null`).
   * @returns false, writing nothing, when the claim is no longer held: taken over by another
   *   worker, released, or its config replaced or deleted (or its task purged).
   */
  completePushDelivery(request: CompletePushDeliveryRequest, ctx?: StoreCallContext): Promise<boolean>;

  /**
   * Records a failed attempt and releases the claim: `attempts` grows by one (the store counts),
   * `lastError` and `lastStatus` (or `null`) are recorded, the cursor stays. With a `nextAttemptAt`
   * the delivery is due again then; with `null` it is `failed`: listed, never claimed again.
   * @returns false, writing nothing, when the claim is no longer held (as for complete).
   */
  failPushAttempt(request: FailPushAttemptRequest, ctx?: StoreCallContext): Promise<boolean>;

  /**
   * Gives the claim back without an attempt (a worker shutting down): the delivery is claimable
   * again at once, its state otherwise unchanged.
   * @returns false when the claim was not held (nothing changes).
   */
  releasePushClaim(key: PushClaimKey, ctx?: StoreCallContext): Promise<boolean>;

  /**
   * Deliveries with their state, for monitoring: failed ones included, claims shown. Oldest config
   * first (by `createdAt`, then save order).
   */
  listPushDeliveries(filter?: PushDeliveryFilter, ctx?: StoreCallContext): Promise<PushDelivery[]>;
}
