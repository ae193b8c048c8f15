/** The runtime's public option types, shared by the façade and its parts. */

import type { AgentExecutorLike } from '../executor.js';
import { type Logger, silentLogger } from '../logger.js';
import type { Task } from '../model/types.js';
import type { StreamSignal } from '../protocol/context.js';
import type { Resolver } from '../push/destination.js';
import type { TlsCa } from '../push/webhook.js';
import type { A2AStore, Clock, PushProtocolVersion } from '../store/index.js';
import type { Telemetry } from '../telemetry.js';

/**
 * The shared {@link Logger} under its earlier name (it lives in `logger.ts`, below the runtime and
 * the protocol layer): kept for the public export and for runtime/jobs; the runtime's parts name `Logger`.
 */
export type RuntimeLogger = Logger;
export { silentLogger };

/**
 * The A2A 1.1 draft's task generations (§3.2.7 "Task Generation Semantics" of the specification's
 * `dev-1.1` branch; docs/interop.md): tracking a draft, off unless asked for.
 */
export interface Draft11Options {
  /**
   * Task generations on the 1.0 bindings: `generation` on Task and on both update events,
   * GetTask's `currentGeneration` long-poll and SendMessageConfiguration's `ifGenerationMatch`
   * (refused with INVALID_PARAMS while off). Tasks count generations whatever this says.
   * @default false
   */
  generations?: boolean;
  /**
   * The longest a GetTask with `currentGeneration` is held waiting for a newer generation before it
   * answers the task as it is; 0 to 120000. @default 10000
   */
  longPollMaxWaitMs?: number;
}

/** The default and the bound of Draft11Options.longPollMaxWaitMs. */
export const LONG_POLL_DEFAULT_MS = 10_000;
export const LONG_POLL_MAX_MS = 120_000;

/** When interrupted tasks expire (see A2ARuntimeOptions.interruptedExpiry). */
export interface InterruptedExpiryOptions {
  /** A task waiting in input-required or auth-required for longer than this (since its status timestamp) is failed. */
  ttlMs: number;
  /** How often each worker looks for such tasks. @default the smaller of ttlMs and 60_000 */
  sweepIntervalMs?: number;
}

export interface RetentionOptions {
  /** Terminal tasks last updated longer ago than this are purged. @default 86_400_000 (24 h) */
  ttlMs?: number;
  /** How often the sweep runs. @default 600_000 (10 min) */
  sweepIntervalMs?: number;
}

/**
 * The JSON body of a push notification carrying `task`, by the version of the call that set its
 * config (A2A 0.3 §9.5: the Task; 1.0 §4.3.3: a StreamResponse). The runtime holds no codec: whoever
 * composes the bindings passes one, normally the protocol layer's `encodePushNotification` (the
 * Fastify plugin does).
 */
export type PushNotificationEncoder = (task: Task, protocolVersion: PushProtocolVersion) => unknown;

/** Where push notifications may go: what the SSRF guard lets through, checked at set time and at each delivery. */
export type PushDestinationOptions = Pick<PushOptions, 'allowHosts' | 'allowCidrs' | 'resolver' | 'allowCidrsName'>;

/**
 * Push notifications (A2A 0.3 §9.5, 1.0 §3.3): where they may go, and how they are delivered. The
 * delivery job runs on every worker; see `jobs/push.ts` for the guarantees.
 */
export interface PushOptions {
  /**
   * Each notification's body, by the version its config was set with: pass
   * `encodePushNotification` from `@fastify-a2a/core` (or `@fastify-a2a/core/protocol`).
   */
  encodeNotification: PushNotificationEncoder;
  /**
   * Host names whose addresses skip the SSRF range check (trusted internal receivers): exact names,
   * optionally with a port (`hooks.internal:8443`). Unspecified, multicast and broadcast addresses
   * are refused anyway. @default []
   */
  allowHosts?: readonly string[];
  /** Address blocks that pass the range check (`10.1.0.0/16`, `fd00:1::/64`, `127.0.0.1/32`). @default [] */
  allowCidrs?: readonly string[];
  /** Resolves webhook host names, at set time and before each delivery. @default dns.promises.lookup (all addresses) */
  resolver?: Resolver;
  /** What refusals call {@link allowCidrs}, so they name the option its user sets. @default 'allowCidrs' */
  allowCidrsName?: string;
  /**
   * At most one POST per config per this many ms while the task is in a non-final state, carrying
   * the latest state; terminal and interrupted states go out at once. 0 turns throttling off.
   * @default 1500
   */
  throttleMs?: number;
  /**
   * The waits before each retry of a failed POST; its length is the number of retries. After the
   * last one fails the delivery is marked failed. A receiver's `Retry-After` replaces the wait.
   * @default [1000, 3000, 9000]
   */
  retryDelaysMs?: readonly number[];
  /**
   * How long a worker's claim on a delivery lasts without renewal (renewed every third of it while
   * its POST runs): a dead worker's deliveries resume on another worker after at most this long.
   * Keep it above `timeoutMs`. @default 15000
   */
  claimTtlMs?: number;
  /** How often each worker looks for due deliveries: the bulk of the delivery latency. @default 250 */
  pollIntervalMs?: number;
  /** Deliveries one worker POSTs at a time. @default 16 */
  concurrency?: number;
  /** Per address tried, until the TCP (and TLS) connection is up. @default 5000 */
  connectTimeoutMs?: number;
  /** One POST, from the first connection attempt to the answer's last byte. @default 10000 */
  timeoutMs?: number;
  /** The most response bytes read from a receiver. @default 65536 */
  maxResponseBytes?: number;
  /** CA certificates to trust instead of Node's bundled ones, for receivers with a private CA. */
  ca?: TlsCa;
}

export interface A2ARuntimeOptions {
  store: A2AStore;
  executor: AgentExecutorLike;
  logger?: Logger;
  /** Fails a turn that runs longer than this (its signal is aborted). @default undefined (no limit) */
  turnTimeoutMs?: number;
  /**
   * Streams read the event log when notified. In case a notification was lost, this process also
   * checks the versions of every task its streams wait on this often (one `getVersions` call for
   * all of them) and wakes the streams whose task moved on. @default 2000
   */
  followPollIntervalMs?: number;
  /** A turn waiting for its context re-checks the queue this often between notifications. @default 100 */
  turnPollIntervalMs?: number;
  /**
   * The artifact chunks an agent streams (`append: true` updates) are committed at most this often
   * per task: a chunk emitted less than this long after its task's previous commit waits for the
   * rest of the interval, and the chunks emitted meanwhile go in one commit (each stays its own
   * event in the log and on the stream, so nothing is merged or lost). A status update, a new
   * artifact or the turn's end is never held, and takes waiting chunks with it. On a durable store
   * every commit is a transaction, a notification and a read by each follower on every worker:
   * a token-streaming agent otherwise pays that per token. The cost is up to this much latency
   * on a chunk. 0 commits every batch as soon as the previous one is written.
   * @default the store's advice (`supports.streamCommitIntervalMs`: 40 on Postgres, where in
   * `npm run bench:tokens` it halved the database's CPU per chunk at 300 streams and kept the p99
   * under 100 ms; 25 on a SQLite file, whose every transaction runs on the event loop: there it
   * cut the bytes written per chunk by a fifth), else 0
   */
  streamCommitIntervalMs?: number;
  /** @default Date.now */
  clock?: Clock;
  /**
   * Ids for tasks, contexts, artifacts and agent messages. The default is a UUID version 7: time
   * first, then 74 random bits, so that new tasks' rows go next to each other in every store index
   * keyed by task or context id (see runtime/ids.ts for what it measured).
   * @default a time-ordered UUID v7
   */
  generateId?: () => string;
  /** Periodic purge of old terminal tasks; `false` disables it. @default {} (24 h TTL) */
  retention?: RetentionOptions | false;
  /**
   * Expiry of interrupted tasks: a task left in `input-required` or `auth-required` longer than
   * `ttlMs` is moved to `failed` with a status message saying why, so it stops holding its context
   * (retention then purges both like any terminal task). Every worker sweeps; each task is expired
   * once (a version-checked commit), and a task whose follow-up message was recorded in time is
   * spared. Needs `store.supports.interruptedTasks`. @default undefined (interrupted tasks wait for good)
   */
  interruptedExpiry?: InterruptedExpiryOptions;
  /** This process's identity in the store's worker leases. @default `<hostname>-<pid>-<random>` */
  workerId?: string;
  /**
   * What a message whose `messageId` the caller already used, with different content, gets:
   * `'reject'` (-32602: a message id names one message; a retry resends it unchanged) or
   * `'replay'` (the original task, as for a retry; the A2A TCK's concurrency tests reuse one id
   * for different texts). `'ignore'`: message ids do not identify retries at all (A2A 1.0 §3.3.1
   * makes deduplication a MAY): every message is new, as the official SDKs behave, and one whose
   * id its caller already used is kept as `<id>#<uuid>`; a client retrying after a lost answer
   * then runs the agent twice. @default 'reject'
   */
  messageIdReuse?: 'reject' | 'replay' | 'ignore';
  /**
   * When a blocking message/send starts a new task in a new context, the task is written together
   * with the agent's first updates (one commit instead of two; for an agent that finishes at once,
   * the whole task in one commit, with no queue slot taken or released). Before that commit nobody
   * can see the task, and nobody needs to: the client waits for the answer, and the context is new.
   * The cost: the same messageId sent twice at the same moment (a hedged request on two workers)
   * may start the agent twice before one of them records it; the other is aborted at its first
   * write and answers with the recorded task. `true` writes every new task before its agent runs,
   * so a messageId never starts the agent twice. Streams, non-blocking sends, sends with a push
   * config and messages in an existing context or task are always written first. @default false
   */
  createTaskBeforeRun?: boolean;
  /**
   * The longest a blocking message/send waits for its turn to settle; then it answers with the
   * task as it is (`submitted` or `working`), and the client follows up with tasks/get (GetTask)
   * or tasks/resubscribe (SubscribeToTask), as after a non-blocking send. Keeps a long turn from
   * holding the request past a load balancer's idle timeout. A2A 1.0 (§3.2.2,
   * `returnImmediately: false`) says a blocking send waits for a terminal or interrupted state:
   * setting this trades that for answers that arrive. With it set, a blocking send writes its
   * task before its agent runs (see `createTaskBeforeRun`), so the task can be read when the answer
   * comes early. Neither version's SendMessageConfiguration has a field for a per-request wait.
   * @default undefined (wait until the turn settles)
   */
  blockingSendMaxWaitMs?: number;
  /**
   * Features of the A2A 1.1 draft (the specification's `dev-1.1` branch), opt-in and tracking a
   * draft that may still change: see {@link Draft11Options}. @default off
   */
  draft11?: Draft11Options;
  /**
   * A worker that has not renewed its lease for this long is considered dead: another worker
   * fails its running tasks ("worker lost"). Leases are renewed every quarter of this. @default 15000
   */
  leaseTtlMs?: number;
  /**
   * On close, running turns may finish for this long; then they are aborted and their tasks failed.
   * @default 10000
   */
  drainTimeoutMs?: number;
  /** close() also closes the store. Pass false for a store the application owns. @default true */
  closeStore?: boolean;
  /**
   * Push notifications: the config operations and the delivery job. Needs a store with
   * `supports.push`. @default undefined (off: the operations answer PUSH_NOTIFICATION_NOT_SUPPORTED)
   */
  push?: PushOptions;
  /**
   * Where the runtime reports turns, commits, streams, push deliveries and its lease (metrics,
   * traces): see `Telemetry`. The Fastify plugin passes its own. @default noTelemetry (nothing)
   */
  telemetry?: Telemetry;
}

export interface StreamOptions {
  /** Ends the stream (and stops waiting) when aborted, e.g. when the client disconnects. */
  signal?: StreamSignal;
  /** Resume after this event sequence (SSE Last-Event-ID) instead of starting with a snapshot. */
  afterSeq?: number;
  historyLength?: number;
  /**
   * Subscribing (without `afterSeq`) to a task that is already terminal is an error rather than a
   * stream of its one snapshot: A2A 1.0's SubscribeToTask (§3.1.6: UnsupportedOperationError).
   */
  terminalIsError?: boolean;
  /**
   * The stream ends only when the task reaches a terminal state, not at `input-required` or
   * `auth-required`: A2A 1.0's SubscribeToTask (§3.1.6). Otherwise it also ends at an interrupted
   * state (0.3's `tasks/resubscribe`, whose `final` flag marks that end).
   */
  untilTerminal?: boolean;
  /**
   * The caller never changes the frames the stream yields (nor anything they reference): the
   * runtime may then hand it the store's own event objects, shared with the task's other streams,
   * instead of a copy each (the store's `readEvents` option `shared`; issue 30). The A2A service
   * behind the plugin's and the gRPC server's routes sets it: they only encode frames.
   */
  sharedFrames?: boolean;
}
