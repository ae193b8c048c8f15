/**
 * Prometheus metrics of one worker (prom-client), fed by the plugin's Telemetry. Names follow
 * Prometheus conventions: the `a2a_` prefix, base units (`_seconds`), `_total` counters, histograms
 * for durations. Labels are low-cardinality only (method, binding, version, outcome, state): never
 * a task or context id. docs/operating.md lists every metric.
 */

import type { A2AError, BindingName, PushAttemptOutcome, TaskState } from '@fastify-a2a/core';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** A request's series: its counter and histogram children, found once per label set. */
interface RequestSeries {
  count: ReturnType<Counter['labels']>;
  duration: ReturnType<Histogram['labels']>;
}

/** Request and turn durations: 1 ms to 2 min. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Store commits and notification hops: 0.1 ms to 5 s. */
const FAST_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];
/** Events per commit. */
const SIZE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];
/** Push lateness: 10 ms to 10 min. */
const BACKLOG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];

/**
 * prom-client's process and Node.js metrics, collected once per process: collectDefaultMetrics
 * starts a GC observer and an event-loop monitor that nothing stops, so one per agent (or per app
 * registered and closed) would pile up. Each agent's scrape merges this registry into its own.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export interface MetricsSources {
  /** This worker's id in the store's leases (the `worker` label of `a2a_worker_info`), read at scrape time. */
  workerId: () => string;
  /** Turns this worker accepted and has not finished, read at scrape time. */
  runningTurns: () => number;
  /** Also export prom-client's process and Node.js metrics (`process_*`, `nodejs_*`). */
  defaultMetrics: boolean;
}

/** The outcome label of a request: `ok`, or the error's code in lower case (`task_not_found`). */
export function outcomeOf(error: A2AError | undefined): string {
  return error === undefined ? 'ok' : error.code.toLowerCase();
}

export class A2AMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'method' | 'binding' | 'version' | 'outcome'>;
  readonly #requestDuration: Histogram<'method' | 'binding' | 'version'>;
  readonly #turnsStarted: Counter;
  readonly #turnsFinished: Counter<'state'>;
  readonly #turnDuration: Histogram<'state'>;
  readonly #queueWait: Histogram;
  readonly #streams: Gauge;
  readonly #commitDuration: Histogram;
  readonly #commitEvents: Histogram;
  readonly #storeErrors: Counter<'operation'>;
  readonly #notificationLag: Histogram;
  readonly #pushDeliveries: Counter<'outcome'>;
  readonly #pushDuration: Histogram;
  readonly #pushBacklog: Histogram;
  readonly #leaseRenewals: Counter<'outcome'>;
  readonly #workersReaped: Counter;
  readonly #turnsReaped: Counter;
  /**
   * The request series by label values: prom-client hashes a label object on every inc() and
   * observe(); its children do not. Bounded: methods × bindings × versions × outcomes.
   */
  readonly #requestSeries = new Map<string, RequestSeries>();
  readonly #defaultMetrics: boolean;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    this.#defaultMetrics = sources.defaultMetrics;
    // Started now, not at the first scrape: the event-loop monitor needs samples before it has a value.
    if (sources.defaultMetrics) processMetrics();
    new Gauge({
      name: 'a2a_worker_info',
      help: 'This worker: always 1, with its id in the store leases as the worker label.',
      labelNames: ['worker'],
      registers,
      collect() {
        this.reset();
        this.set({ worker: sources.workerId() }, 1);
      },
    });
    this.#requests = new Counter({
      name: 'a2a_requests_total',
      help: 'A2A operations handled, by method (SendMessage, GetTask, …), binding, protocol version and outcome (ok or the error code).',
      labelNames: ['method', 'binding', 'version', 'outcome'],
      registers,
    });
    this.#requestDuration = new Histogram({
      name: 'a2a_request_duration_seconds',
      help: 'Time to answer an A2A operation; for a stream, until the stream ended.',
      labelNames: ['method', 'binding', 'version'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#turnsStarted = new Counter({
      name: 'a2a_turns_started_total',
      help: 'Turns of the agent this worker started.',
      registers,
    });
    this.#turnsFinished = new Counter({
      name: 'a2a_turns_finished_total',
      help: "Turns of the agent this worker finished, by the task's state after the turn.",
      labelNames: ['state'],
      registers,
    });
    this.#turnDuration = new Histogram({
      name: 'a2a_turn_duration_seconds',
      help: 'Time from the start of a turn to its end, by the task state it ended in.',
      labelNames: ['state'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#queueWait = new Histogram({
      name: 'a2a_turn_queue_wait_seconds',
      help: "Time from a message's acceptance (submitted) to the start of its turn (its context's earlier turns ran first).",
      buckets: DURATION_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'a2a_turns_running',
      help: 'Turns this worker accepted and has not finished (waiting for their context, or running).',
      registers,
      collect() {
        this.set(sources.runningTurns());
      },
    });
    this.#streams = new Gauge({
      name: 'a2a_streams_open',
      help: 'Streams (message/stream, tasks/resubscribe) this worker is serving.',
      registers,
    });
    this.#commitDuration = new Histogram({
      name: 'a2a_store_commit_duration_seconds',
      help: 'Time of one store commit of task events (including its wait in the group commit).',
      buckets: FAST_BUCKETS,
      registers,
    });
    this.#commitEvents = new Histogram({
      name: 'a2a_store_commit_events',
      help: 'Task events written per store commit (the batch size).',
      buckets: SIZE_BUCKETS,
      registers,
    });
    this.#storeErrors = new Counter({
      name: 'a2a_store_errors_total',
      help: 'Store operations that failed (version conflicts included), by operation.',
      labelNames: ['operation'],
      registers,
    });
    this.#notificationLag = new Histogram({
      name: 'a2a_notification_lag_seconds',
      help: "Time from an event's commit (on any worker) to a stream on this worker reading it after the store's notification.",
      buckets: FAST_BUCKETS,
      registers,
    });
    this.#pushDeliveries = new Counter({
      name: 'a2a_push_deliveries_total',
      help: 'Push notification delivery attempts, by outcome (sent, skipped, retry, failed, released, lost).',
      labelNames: ['outcome'],
      registers,
    });
    this.#pushDuration = new Histogram({
      name: 'a2a_push_delivery_duration_seconds',
      help: 'Time of one push delivery attempt, its POST included.',
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#pushBacklog = new Histogram({
      name: 'a2a_push_backlog_age_seconds',
      help: 'How late a push delivery attempt ran: time since it became due (the task changed, or its retry or throttle time came).',
      buckets: BACKLOG_BUCKETS,
      registers,
    });
    this.#leaseRenewals = new Counter({
      name: 'a2a_lease_renewals_total',
      help: "Renewals of this worker's lease, by outcome (ok, failed).",
      labelNames: ['outcome'],
      registers,
    });
    this.#workersReaped = new Counter({
      name: 'a2a_workers_reaped_total',
      help: 'Dead workers (lease run out) this worker reaped.',
      registers,
    });
    this.#turnsReaped = new Counter({
      name: 'a2a_reaped_turns_total',
      help: 'Turns left running by dead workers that this worker failed.',
      registers,
    });
  }

  request(method: string, binding: BindingName, version: string, outcome: string, seconds: number): void {
    const key = `${method} ${binding} ${version} ${outcome}`;
    let series = this.#requestSeries.get(key);
    if (series === undefined) {
      series = {
        count: this.#requests.labels(method, binding, version, outcome),
        duration: this.#requestDuration.labels(method, binding, version),
      };
      this.#requestSeries.set(key, series);
    }
    series.count.inc();
    series.duration.observe(seconds);
  }

  turnStarted(queueWaitSeconds: number): void {
    this.#turnsStarted.inc();
    this.#queueWait.observe(queueWaitSeconds);
  }

  turnEnded(state: TaskState, seconds: number): void {
    this.#turnsFinished.inc({ state });
    this.#turnDuration.observe({ state }, seconds);
  }

  commitEnded(seconds: number, events: number, failed: boolean): void {
    this.#commitDuration.observe(seconds);
    this.#commitEvents.observe(events);
    if (failed) this.#storeErrors.inc({ operation: 'commit' });
  }

  streamOpened(): void {
    this.#streams.inc();
  }

  streamClosed(): void {
    this.#streams.dec();
  }

  notificationLag(seconds: number): void {
    this.#notificationLag.observe(Math.max(0, seconds));
  }

  pushAttempted(outcome: PushAttemptOutcome, seconds: number, backlogAgeSeconds: number): void {
    this.#pushDeliveries.inc({ outcome });
    this.#pushDuration.observe(seconds);
    this.#pushBacklog.observe(backlogAgeSeconds);
  }

  leaseRenewed(ok: boolean): void {
    this.#leaseRenewals.inc({ outcome: ok ? 'ok' : 'failed' });
  }

  workerReaped(turns: number): void {
    this.#workersReaped.inc();
    this.#turnsReaped.inc(turns);
  }

  /** The exposition, in the Prometheus text format. */
  exposition(): Promise<string> {
    if (!this.#defaultMetrics) return this.registry.metrics();
    return Registry.merge([processMetrics(), this.registry]).metrics();
  }
}
