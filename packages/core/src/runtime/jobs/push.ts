/**
 * Push notification delivery (A2A 0.3 §9.5, 1.0 §3.3): a background job on every worker, with the
 * task's event log as the outbox.
 *
 * Each (task, config) has a delivery state in the store whose cursor is the task version last
 * delivered. Every `pollIntervalMs` the job claims deliveries that have work (the task moved past
 * the cursor, no retry wait pending, no live claim by another worker) — a claim is a lease with a
 * fencing id, renewed while the POST runs — reads the task, POSTs it, and completes (the cursor
 * moves up) or records the failure. A worker that dies leaves its claims to expire after
 * `claimTtlMs`; another worker then claims them and resumes from the cursor. So every state is
 * delivered at least once; a receiver may see a state twice (a worker that died after the POST and
 * before the complete), never none.
 *
 * What one POST carries: the task as it is now, so updates coalesce. Three rules shape the stream:
 * - non-final updates at most once per config per `throttleMs` (the store holds the delivery
 *   back until the window ends), each carrying the latest state;
 * - terminal and interrupted states (§6.3: `input-required`, `auth-required`) are not held back by
 *   the throttle, and are not coalesced away: when the task moved past one since the cursor (a
 *   follow-up message answered `input-required` before the delivery ran), that state is delivered
 *   first, as of its event, then the rest;
 * - each config's POSTs go out one after another, in version order (one claim at a time).
 *
 * Failures: a 2xx is a success; 408, 429, 5xx and network failures are retried after
 * `retryDelaysMs` (or the receiver's `Retry-After`); any other answer (3xx: redirects are not
 * followed; 4xx) and a URL the destination policy now refuses (its DNS changed) are not retried.
 * When no retry is left the delivery is marked failed (listed by `listPushDeliveries`) and logged.
 */

import { setMaxListeners } from 'node:events';
import { applyEvents } from '../../model/task-state.js';
import { isFinalState, type Task, type TaskEvent } from '../../model/types.js';
import type { DestinationPolicy } from '../../push/destination.js';
import { deliverJson, type WebhookResult } from '../../push/webhook.js';
import type { A2AStore, Clock, PushClaimKey, PushDelivery, PushStore, StoredPushConfig } from '../../store/index.js';
import { monotonicSeconds, noTelemetry, type PushTelemetry, type Telemetry } from '../../telemetry.js';
import type { PushNotificationEncoder, PushOptions, RuntimeLogger } from '../options.js';
import { destinationPolicy } from '../push-configs.js';
import type { JobSpec } from './background.js';

export const PUSH_DEFAULTS = {
  throttleMs: 1500,
  retryDelaysMs: [1000, 3000, 9000] as readonly number[],
  claimTtlMs: 15_000,
  pollIntervalMs: 250,
  concurrency: 16,
  connectTimeoutMs: 5000,
  timeoutMs: 10_000,
  maxResponseBytes: 65_536,
} as const;

/** The longest `Retry-After` honoured; a longer one waits this long (a receiver cannot park a config for days). */
const MAX_RETRY_AFTER_MS = 3_600_000;

export interface PushDeliveryOptions {
  readonly store: A2AStore & PushStore;
  readonly workerId: string;
  readonly clock: Clock;
  readonly log: RuntimeLogger;
  readonly options: PushOptions;
  /** Where each attempt is reported, and what it adds to the POST's headers (the trace). @default noTelemetry */
  readonly telemetry?: Telemetry;
}

/** What an attempt reports when telemetry is on. */
interface AttemptReport {
  /** When its delivery became due (epoch ms). */
  dueAt: number;
  /** The POST, once started. */
  push: PushTelemetry;
  /** The receiver's HTTP status, when it answered. */
  status: number | undefined;
}

/** What one delivery attempt led to, for tests and logs. */
export type DeliveryOutcome = 'sent' | 'skipped' | 'retry' | 'failed' | 'released' | 'lost';

export class PushDeliverer {
  readonly #store: A2AStore & PushStore;
  readonly #workerId: string;
  readonly #clock: Clock;
  readonly #log: RuntimeLogger;
  readonly #policy: DestinationPolicy;
  readonly #settings: Required<
    Omit<PushOptions, 'allowHosts' | 'allowCidrs' | 'allowCidrsName' | 'resolver' | 'ca' | 'encodeNotification'>
  >;
  readonly #ca: PushOptions['ca'];
  /** Each POST's body, by its config's version (injected: the runtime holds no codec). */
  readonly #encode: PushNotificationEncoder;
  readonly #telemetry: Telemetry;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #abort = new AbortController();
  #renewTimer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** A tick is claiming. */
  #ticking = false;
  /** The last claim filled every free slot: more may be due. */
  #backlog = false;

  constructor(options: PushDeliveryOptions) {
    this.#store = options.store;
    this.#workerId = options.workerId;
    this.#clock = options.clock;
    this.#log = options.log;
    this.#policy = destinationPolicy(options.options);
    const o = options.options;
    this.#settings = {
      throttleMs: o.throttleMs ?? PUSH_DEFAULTS.throttleMs,
      retryDelaysMs: o.retryDelaysMs ?? PUSH_DEFAULTS.retryDelaysMs,
      claimTtlMs: o.claimTtlMs ?? PUSH_DEFAULTS.claimTtlMs,
      pollIntervalMs: o.pollIntervalMs ?? PUSH_DEFAULTS.pollIntervalMs,
      concurrency: o.concurrency ?? PUSH_DEFAULTS.concurrency,
      connectTimeoutMs: o.connectTimeoutMs ?? PUSH_DEFAULTS.connectTimeoutMs,
      timeoutMs: o.timeoutMs ?? PUSH_DEFAULTS.timeoutMs,
      maxResponseBytes: o.maxResponseBytes ?? PUSH_DEFAULTS.maxResponseBytes,
    };
    this.#ca = o.ca;
    this.#encode = o.encodeNotification;
    this.#telemetry = options.telemetry ?? noTelemetry;
    // Every POST in flight listens on the one shutdown signal.
    setMaxListeners(this.#settings.concurrency + 10, this.#abort.signal);
  }

  /** The delivery as a background job of the worker's membership. */
  job(): JobSpec {
    return { name: 'push delivery', intervalMs: this.#settings.pollIntervalMs, run: () => this.tick() };
  }

  /**
   * Claims the deliveries that have work, up to the free delivery slots, and starts them; does not
   * wait for their POSTs (a slow receiver must not hold up the others). When the claim filled every
   * free slot there may be more work: the next tick then comes as soon as a delivery ends, not at
   * the next poll, so throughput is bounded by the POSTs, not by `concurrency / pollIntervalMs`.
   */
  async tick(): Promise<void> {
    if (this.#stopped || this.#ticking) return;
    this.#ticking = true;
    try {
      const free = this.#settings.concurrency - this.#inFlight.size;
      if (free <= 0) {
        this.#backlog = true;
        return;
      }
      const now = this.#clock();
      const claimed = await this.#store.claimPushDeliveries({
        workerId: this.#workerId,
        now,
        claimUntil: now + this.#settings.claimTtlMs,
        limit: free,
      });
      this.#backlog = claimed.length === free;
      for (const delivery of claimed) this.#start(delivery);
    } finally {
      this.#ticking = false;
    }
  }

  /** Runs a tick and waits for every delivery it started (tests, and the bench's drain). */
  async deliverDue(): Promise<void> {
    await this.tick();
    await this.settled();
  }

  /** Resolves when no delivery is in flight. */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  /**
   * Stops claiming, aborts the POSTs in flight and gives their claims back, so another worker
   * delivers them at once rather than after the claim TTL.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort(new Error('worker shutting down'));
    await this.settled();
    this.#stopRenewing();
  }

  #start(delivery: PushDelivery): void {
    const telemetry = this.#telemetry;
    const report: AttemptReport | undefined = telemetry.enabled
      ? { dueAt: this.#clock(), push: undefined, status: undefined }
      : undefined;
    const started = report === undefined ? 0 : monotonicSeconds();
    const running: Promise<void> = this.#deliver(delivery, report)
      .then((outcome) => {
        if (report === undefined) return;
        const backlogAge = Math.max(0, this.#clock() - report.dueAt) / 1000;
        telemetry.pushAttempted(report.push, outcome, monotonicSeconds() - started, backlogAge, report.status);
      })
      .catch((error: unknown) => {
        // A store failure mid-delivery: the claim expires and the delivery is retried from the cursor.
        this.#log.error(
          { err: error, taskId: delivery.config.taskId, configId: delivery.config.config.id },
          'a2a: push delivery failed (store); it will be retried when its claim expires',
        );
      })
      .finally(() => {
        this.#inFlight.delete(running);
        if (this.#inFlight.size === 0) this.#stopRenewing();
        if (this.#backlog && !this.#stopped) {
          this.tick().catch((error: unknown) =>
            this.#log.error({ err: error, job: 'push delivery' }, 'a2a: push delivery failed'),
          );
        }
      });
    this.#inFlight.add(running);
    this.#startRenewing();
  }

  /** The notification's headers, with the trace's (W3C traceparent) when telemetry adds them. */
  #headers(config: PushDelivery['config'], report: AttemptReport | undefined): Record<string, string> {
    const headers = notificationHeaders(config.config);
    const traced = report === undefined ? undefined : this.#telemetry.pushHeaders(report.push);
    return traced === undefined ? headers : Object.assign(headers, traced);
  }

  /** Keeps this worker's claims alive while POSTs run: a slow receiver is not a dead worker. */
  #startRenewing(): void {
    if (this.#renewTimer !== undefined) return;
    const every = Math.max(10, Math.floor(this.#settings.claimTtlMs / 3));
    this.#renewTimer = setInterval(() => {
      this.#store
        .renewPushClaims(this.#workerId, this.#clock() + this.#settings.claimTtlMs)
        .catch((error: unknown) => this.#log.warn({ err: error }, 'a2a: could not renew push delivery claims'));
    }, every);
    this.#renewTimer.unref();
  }

  #stopRenewing(): void {
    if (this.#renewTimer !== undefined) clearInterval(this.#renewTimer);
    this.#renewTimer = undefined;
  }

  /** One claimed delivery: what to send, the POST, and its outcome written back under the claim. */
  async #deliver(delivery: PushDelivery, report: AttemptReport | undefined): Promise<DeliveryOutcome> {
    const { config, state } = delivery;
    const key: PushClaimKey = { taskId: config.taskId, configId: config.config.id, claimId: state.claimId ?? '' };
    const record = await this.#store.getTask(config.taskId);
    // Due since its retry or throttle window ended, or else since the task last changed.
    if (report !== undefined && record !== undefined) report.dueAt = state.nextAttemptAt ?? record.updatedAt;
    if (record === undefined) {
      // Purged between the claim and now: its configs went with it, so the claim is gone too.
      await this.#store.releasePushClaim(key);
      return 'released';
    }
    const next = await this.#nextState(record.task, record.version, state.cursor);
    if (next === undefined) {
      // Only internal events (turn ends) since the last POST: nothing a client would see changed.
      const now = this.#clock();
      await this.#store.completePushDelivery({
        ...key,
        cursor: record.version,
        sentAt: state.lastSentAt ?? now,
        nextAttemptAt: state.nextAttemptAt,
        ...(state.lastStatus === null ? {} : { status: state.lastStatus }),
      });
      return 'skipped';
    }

    const body = JSON.stringify(this.#encode(next.task, config.protocolVersion));
    const sentAt = this.#clock();
    if (report !== undefined)
      report.push = this.#telemetry.pushStarted(next.task, record.traceContext, config.config.url);
    const result = await deliverJson(config.config.url, this.#policy, body, {
      headers: this.#headers(config, report),
      connectTimeoutMs: this.#settings.connectTimeoutMs,
      timeoutMs: this.#settings.timeoutMs,
      maxResponseBytes: this.#settings.maxResponseBytes,
      signal: this.#abort.signal,
      now: this.#clock,
      ...(this.#ca === undefined ? {} : { ca: this.#ca }),
    });
    const status = statusOf(result);
    if (report !== undefined) report.status = status;

    if (isSuccess(result)) {
      const held = await this.#store.completePushDelivery({
        ...key,
        cursor: next.version,
        sentAt,
        nextAttemptAt: this.#settings.throttleMs > 0 ? sentAt + this.#settings.throttleMs : null,
        ...(status === undefined ? {} : { status }),
      });
      this.#log.debug(
        { taskId: key.taskId, configId: key.configId, version: next.version, state: next.task.status.state, status },
        'a2a: push notification delivered',
      );
      return held ? 'sent' : 'lost';
    }
    if (result.type === 'failure' && result.kind === 'aborted') {
      await this.#store.releasePushClaim(key);
      return 'released';
    }

    const attempts = state.attempts + 1;
    const error = describeFailure(result);
    const retryable = isRetryable(result);
    const delay = this.#settings.retryDelaysMs[attempts - 1];
    const retryAfter = result.retryAfterMs;
    const nextAttemptAt =
      retryable && delay !== undefined
        ? this.#clock() + (retryAfter === undefined ? delay : Math.min(retryAfter, MAX_RETRY_AFTER_MS))
        : null;
    const held = await this.#store.failPushAttempt({
      ...key,
      nextAttemptAt,
      error,
      ...(status === undefined ? {} : { status }),
    });
    if (nextAttemptAt === null) {
      this.#log.warn(
        { taskId: key.taskId, configId: key.configId, attempts, status, error },
        'a2a: push notification delivery failed; the config is marked failed (save it again to retry)',
      );
      return held ? 'failed' : 'lost';
    }
    this.#log.info(
      { taskId: key.taskId, configId: key.configId, attempts, status, error, retryAt: nextAttemptAt },
      'a2a: push notification delivery failed; retrying',
    );
    return held ? 'retry' : 'lost';
  }

  /**
   * What to POST after `cursor`: the current task, unless a final state was passed since the
   * cursor (then that state, as of its event), or `undefined` when nothing visible changed. A new
   * config (cursor 0) gets the current task: the state after it was set.
   */
  async #nextState(task: Task, version: number, cursor: number): Promise<{ task: Task; version: number } | undefined> {
    if (cursor <= 0 || cursor >= version) return { task, version };
    const events = await this.#store.readEvents(task.id, cursor);
    const visible = events.filter((e) => e.event.kind !== 'turn-end');
    if (visible.length === 0) return undefined;
    const last = visible[visible.length - 1]!;
    const passed = visible.find((e) => e !== last && finalStateOf(e.event) !== undefined && e.seq < last.seq);
    if (passed === undefined) return { task, version };
    const history = await this.#store.readEvents(task.id, 0, passed.seq);
    return {
      task: applyEvents(
        undefined,
        history.map((e) => e.event),
      ),
      version: passed.seq,
    };
  }
}

/** The final state an event moves the task into, if any. */
function finalStateOf(event: TaskEvent): string | undefined {
  if (event.kind === 'status-update' && isFinalState(event.status.state)) return event.status.state;
  if (event.kind === 'task' && isFinalState(event.status.state)) return event.status.state;
  return undefined;
}

/**
 * The headers a notification carries. The receiver authenticates the notification with the secret
 * the client gave (A2A 0.3 §9.5 "Security"): `token` (top-level) or `authentication.credentials`
 * (with its `schemes`). Both are sent in two places so either check works: `Authorization`
 * (`Bearer <secret>`, or the first scheme the client named when it is not Bearer) and
 * `X-A2A-Notification-Token`.
 */
export function notificationHeaders(config: StoredPushConfig): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const credentials = config.authentication?.credentials;
  const token = config.token ?? credentials;
  const secret = credentials ?? config.token;
  if (secret !== undefined && secret !== '') {
    const scheme = config.authentication?.schemes.find((s) => s !== '') ?? 'Bearer';
    headers.authorization = `${/^bearer$/i.test(scheme) ? 'Bearer' : scheme} ${secret}`;
  }
  if (token !== undefined && token !== '') headers['x-a2a-notification-token'] = token;
  return headers;
}

function statusOf(result: WebhookResult): number | undefined {
  return result.type === 'response' ? result.status : result.status;
}

function isSuccess(result: WebhookResult): boolean {
  const status = statusOf(result);
  if (status === undefined || status < 200 || status > 299) return false;
  // A receiver that took the POST and answered 2xx with an oversized body did receive it.
  return result.type === 'response' || result.kind === 'too-large';
}

/** 408 and 429 (RFC 9110 §15.5.9, RFC 6585 §4) and 5xx may pass; other answers will not change. */
function isRetryable(result: WebhookResult): boolean {
  if (result.type === 'failure') {
    if (result.kind === 'refused') return false;
    if (result.status === undefined) return true;
  }
  const status = statusOf(result)!;
  return status === 408 || status === 429 || status >= 500;
}

function describeFailure(result: WebhookResult): string {
  if (result.type === 'failure') return result.error.message;
  const snippet = result.bodySnippet.length > 200 ? `${result.bodySnippet.slice(0, 200)}…` : result.bodySnippet;
  return `the receiver answered HTTP ${result.status}${snippet === '' ? '' : `: ${snippet}`}`;
}
