/**
 * The plugin's options: their type (with JSDoc), and one spec that gives each option its check and
 * default. Validation, defaults and the list of known options all come from the spec; the type is
 * tied to it so neither can gain an option the other lacks.
 */

import type {
  A2AStore,
  AccessRule,
  AgentCard,
  AgentExecutorLike,
  AuthorizeHook,
  Draft11Options,
  InterruptedExpiryOptions,
  Principal,
  PushOptions,
  RetentionOptions,
} from '@fastify-a2a/core';
import { A2AError, LONG_POLL_MAX_MS } from '@fastify-a2a/core';
import type { FastifyRequest } from 'fastify';
import type { AuthenticateOption } from './auth/authentication.js';
import { checkCardFields, readCardFile } from './card-file.js';
import type { AgentCardSigningOptions } from './card-signing.js';
import { checkMonitorOption, type MonitorOptions } from './monitor/options.js';
import { checkMetrics, checkTracing, type MetricsOptions, type TracingOptions } from './telemetry/options.js';
import type { TenantCheck } from './tenants.js';

/** The parts of an agent card the application decides; the plugin fills in the rest (§5.5). */
export type AgentCardInput = Omit<
  AgentCard,
  | 'protocolVersion'
  | 'url'
  | 'preferredTransport'
  | 'additionalInterfaces'
  | 'capabilities'
  | 'defaultInputModes'
  | 'defaultOutputModes'
  | 'skills'
> &
  Partial<Pick<AgentCard, 'defaultInputModes' | 'defaultOutputModes' | 'skills'>> & {
    capabilities?: Pick<AgentCard['capabilities'], 'extensions'>;
  };

/**
 * The authenticated extended card (A2A §5.5, §7.10): the fields that differ from the public card
 * (more skills, say); each replaces the public card's. Or a function of the caller returning them.
 */
export type ExtendedAgentCardOption =
  | Partial<AgentCardInput>
  | ((principal: Principal, request: FastifyRequest) => Partial<AgentCardInput> | Promise<Partial<AgentCardInput>>);

export interface A2APluginOptions {
  /**
   * The agent's card: name, description, version, skills… `url`, `protocolVersion` and
   * `capabilities` are filled in. Or the path of a JSON file holding those fields (relative to the
   * working directory), read and checked at `register`.
   */
  agentCard: AgentCardInput | string;
  /**
   * The card shapes served at the well-known URL (issue 23). `['1.0', '0.3']`: one card both
   * versions' clients read (0.3's fields with 1.0's beside them), and 1.0's card alone for a
   * request carrying `A2A-Version: 1.0` or later; `['1.0']`: 1.0's card alone, which a client
   * validating against 1.0's AgentCard schema accepts; `['0.3']`: 0.3's card alone. Both versions
   * are served on the bindings either way. @default ['1.0', '0.3']
   */
  agentCardVersions?: readonly ('1.0' | '0.3')[];
  /**
   * `Cache-Control: public, max-age=<this>` on the card (A2A 1.0 §8.6.1), with an `ETag` that a
   * client's `If-None-Match` turns into 304. 0 sends `no-cache` (caches revalidate every time).
   * @default 300
   */
  agentCardMaxAgeSeconds?: number;
  /**
   * Sign every card served (A2A 1.0 §8.4): the public card in each shape, and the extended card,
   * each with one JWS per key over that shape's canonical payload. `keys`: `{ key }` (PKCS#8 PEM,
   * a private JWK or a KeyObject) or `{ file }`, each with an optional `kid` and `alg`; several for
   * rotation. `jwks: true` (or a path) publishes the public keys at `<prefix>/.well-known/jwks.json`
   * and names that URL in each signature's `jku`. Keys are read and tried at `register`.
   * @default undefined (cards are not signed)
   */
  agentCardSigning?: AgentCardSigningOptions;
  /**
   * The versions whose messages are checked against the card's input modes: a part whose media
   * type is in neither the card's `defaultInputModes` nor any skill's `inputModes` is refused with
   * ContentTypeNotSupported (-32005; HTTP 415 on HTTP+JSON). Text parts count as `text/plain`, data
   * parts as `application/json`, unless they name another media type (1.0); a file part without
   * one is accepted. `[]` turns the check off. @default ['1.0']
   */
  validateInputModes?: readonly ('1.0' | '0.3')[];
  /** Runs the agent's turns: an object with `execute(turn)` or that function itself. */
  executor: AgentExecutorLike;
  /**
   * A store instance (left open on close; you own it) or a URL — `memory:`, `sqlite:<path>`,
   * `postgres://…` — for a store the plugin creates, opens and closes.
   * @default 'memory:'
   */
  store?: A2AStore | string;
  /**
   * Isolates this agent's rows when several agents share one database. With a store URL the plugin
   * passes it to the store; a store instance carries its own (give it to the store's constructor),
   * and a different value here fails `register`. @default 'default'
   */
  namespace?: string;
  /**
   * Route prefix. fastify-plugin plugins ignore Fastify's own `prefix` register option, so the
   * plugin reads it here and applies it to its routes. @default ''
   */
  prefix?: string;
  /**
   * Public base URL for the card's interface URLs (behind a proxy or load balancer). Without it the
   * card names the address the client connected to, or, when Fastify's `trustProxy` is set, the
   * `X-Forwarded-Proto`/`X-Forwarded-Host` the proxy sent; never a bare `Host` header.
   * @default the address the client connected to
   */
  baseUrl?: string;
  /** Serve the HTTP+JSON (REST) binding beside JSON-RPC, under `<prefix>/v1/…`. @default true */
  rest?: boolean;
  /**
   * Who is calling (A2A §4): `bearerTokens({...})`, `apiKeys({...})`, `jwtBearer({...})`, an array of
   * them (any one may accept a call), or your own `(request) => principal | null`. Every A2A route
   * but the public card and the health check then answers a call without valid credentials with
   * HTTP 401 and `WWW-Authenticate`; the card declares the schemes. @default undefined (open)
   */
  authenticate?: AuthenticateOption;
  /**
   * Declarative authorization: `[{ role?, scope?, principal?, allow: [operations or 'read' | 'write' | '*'] }]`.
   * A call is allowed when a rule for its caller allows its operation; anything else is refused
   * with PERMISSION_DENIED (HTTP 403). @default undefined (no rules)
   */
  accessRules?: readonly AccessRule[];
  /**
   * Decides, after validation, whether the caller may run an operation: return `false` (or throw an
   * A2AError) to refuse with PERMISSION_DENIED. Every binding calls it, after `accessRules`.
   * @default undefined (all allowed)
   */
  authorize?: AuthorizeHook;
  /**
   * The card authenticated callers get from `agent/getAuthenticatedExtendedCard` (1.0:
   * `GetExtendedAgentCard`): fields replacing the public card's, or a function of the caller
   * returning them. Needs `authenticate`. @default undefined (none: -32007)
   */
  extendedAgentCard?: ExtendedAgentCardOption;
  /**
   * What a message gets whose `messageId` its caller already used for different content: `'reject'`
   * (-32602; a retry must resend the message unchanged) or `'replay'` (the original task, like a
   * retry: what the A2A TCK's concurrency tests expect). `'ignore'`: message ids are not used to
   * recognise retries at all, every message is new (as the official SDKs behave; A2A 1.0 §3.3.1
   * makes deduplication a MAY), so a client retrying after a lost answer runs the agent twice.
   * @default 'reject'
   */
  messageIdReuse?: 'reject' | 'replay' | 'ignore';
  /**
   * `true`: every new task is written before its agent runs, so a messageId sent twice at the same
   * moment (a hedged request on two workers) never starts the agent twice. `false`: a blocking
   * message/send in a new context writes its task with the agent's first updates, one commit
   * instead of two (see docs/multi-worker.md, "What a send writes"). @default false
   */
  createTaskBeforeRun?: boolean;
  /** Fails a turn that runs longer than this many ms. @default undefined (no limit) */
  turnTimeoutMs?: number;
  /**
   * The longest a blocking message/send (1.0 SendMessage without `returnImmediately`) waits for
   * its turn; then it answers with the task as it is (`submitted`/`working`) and the client polls
   * (tasks/get) or subscribes for the rest. Set it below your load balancer's idle timeout. See
   * docs/lifecycle.md. @default undefined (wait until the turn settles, as A2A says)
   */
  blockingSendMaxWaitMs?: number;
  /**
   * Tenants (A2A 1.0 §11.4: `/{tenant}/…` on HTTP+JSON, the `tenant` field on JSON-RPC). `true`:
   * every tenant is served, each isolated (its tasks, contexts, push configs and listing are "not
   * found" from another tenant, as from another principal); `false`: a call naming a tenant is
   * refused (-32602 / HTTP 400) saying this agent does not use tenants; a function
   * `(tenant, ctx, request) => boolean` validates or authorises the tenant of each call (`false`:
   * PERMISSION_DENIED, HTTP 403). See docs/lifecycle.md. @default true
   */
  tenants?: boolean | TenantCheck;
  /**
   * Expiry of interrupted tasks: a task left in `input-required` or `auth-required` for longer than
   * `ttlMs` (since its status timestamp) is moved to `failed` with a status message saying so, and
   * its context is freed with it (retention purges both later). Each worker looks every
   * `sweepIntervalMs` (default: the smaller of ttlMs and 60 s); each task is expired once. See
   * docs/lifecycle.md. @default undefined (interrupted tasks wait for good)
   */
  interruptedExpiry?: InterruptedExpiryOptions;
  /**
   * Features of the A2A 1.1 draft (the specification's `dev-1.1` branch), opt-in and tracking a
   * draft that may still change. `generations: true` turns on task generations (§3.2.7) on the 1.0
   * JSON-RPC and HTTP+JSON bindings: `generation` on Task and on the update events, GetTask's
   * `currentGeneration` long-poll (held up to `longPollMaxWaitMs`, default 10000, at most 120000)
   * and SendMessageConfiguration's `ifGenerationMatch`; the card declares the extension
   * `https://fastify-a2a.dev/extensions/a2a-1.1-draft/task-generation`. See docs/interop.md. @default off
   */
  draft11?: Draft11Options;
  /** SSE comment sent this often so proxies keep idle streams open. 0 disables it. @default 15000 */
  heartbeatIntervalMs?: number;
  /** Largest accepted request body in bytes. @default 10485760 (10 MiB) */
  bodyLimit?: number;
  /**
   * A request's body must arrive within this many ms of its headers, or the client gets 408 and
   * the connection closes (a client trickling a body would hold its connection for minutes).
   * 0 turns it off. @default 30000
   */
  bodyTimeoutMs?: number;
  /** Purge of terminal tasks; `false` disables it. @default { ttlMs: 86_400_000, sweepIntervalMs: 600_000 } */
  retention?: RetentionOptions | false;
  /**
   * The artifact chunks an agent streams (`append: true`) are committed at most this often per
   * task; the chunks emitted meanwhile share one commit (each stays its own event on the stream).
   * Status updates, new artifacts and the turn's end never wait. Trades up to this much latency
   * per chunk for fewer transactions on a token-streaming agent (docs/operating.md).
   * @default the store's advice: 40 on Postgres, 0 on SQLite and memory
   */
  streamCommitIntervalMs?: number;
  /** Safety net for lost notifications: this often, one `store.getVersions` call checks every task this worker's streams wait on. @default 2000 */
  followPollIntervalMs?: number;
  /** This process's id in the store's worker leases. @default `<hostname>-<pid>-<random>` */
  workerId?: string;
  /**
   * A worker that has not renewed its lease for this long is dead to the others: one of them fails
   * the tasks it was running ("worker lost"). @default 15000
   */
  leaseTtlMs?: number;
  /** On close, running turns may finish for this long before they are aborted and failed. @default 10000 */
  drainTimeoutMs?: number;
  /** A turn queued behind another of its context re-checks the queue this often. @default 100 */
  turnPollIntervalMs?: number;
  /**
   * Push notifications (A2A 0.3 §9.5): the `tasks/pushNotificationConfig/*` methods (1.0:
   * `*TaskPushNotificationConfig*`), `configuration.pushNotificationConfig` on message/send and
   * message/stream, and their delivery from every worker; the card says `pushNotifications: true`.
   * Needs a store with push support (memory, SQLite, Postgres). @default false
   */
  pushNotifications?: boolean;
  /**
   * Host names (optionally `host:port`) whose webhooks may resolve to private, loopback or other
   * internal addresses: trusted internal receivers. Exact names, no wildcards. @default []
   */
  pushAllowedHosts?: readonly string[];
  /** Address blocks (`10.1.0.0/16`, `fd00:1::/64`, `127.0.0.1/32`) webhooks may reach though they are internal. @default [] */
  pushAllowedCidrs?: readonly string[];
  /** Non-final updates: at most one POST per config per this many ms, carrying the latest state. 0: no throttle. @default 1500 */
  pushThrottleMs?: number;
  /** The waits before each retry of a failed POST (its length is the number of retries). @default [1000, 3000, 9000] */
  pushRetryDelaysMs?: readonly number[];
  /** A worker's claim on a delivery lasts this long unrenewed: a dead worker's deliveries resume elsewhere after it. @default 15000 */
  pushClaimTtlMs?: number;
  /** Each worker looks for due deliveries this often. @default 250 */
  pushPollIntervalMs?: number;
  /** One POST may take this long, connection to last byte; keep it below pushClaimTtlMs. @default 10000 */
  pushTimeoutMs?: number;
  /** Per address tried, until the TCP (and TLS) connection is up. @default 5000 */
  pushConnectTimeoutMs?: number;
  /** The most response bytes read from a receiver. @default 65536 */
  pushMaxResponseBytes?: number;
  /** Deliveries one worker POSTs at a time. @default 16 */
  pushConcurrency?: number;
  /** CA certificates (PEM) to trust for https webhooks instead of Node's bundled ones. @default undefined */
  pushCa?: PushOptions['ca'];
  /** Resolves webhook host names, at set time and before each delivery. @default dns.promises.lookup, all addresses */
  pushResolver?: PushOptions['resolver'];
  /**
   * Prometheus metrics of this worker at `GET <prefix>/metrics` (docs/operating.md lists them);
   * `true` for the defaults, or `{ path, bearerToken, authorize, defaultMetrics }`. @default false
   */
  metrics?: boolean | MetricsOptions;
  /**
   * OpenTelemetry spans per A2A operation (docs/operating.md), through `@opentelemetry/api`: on
   * when the application registered an OpenTelemetry SDK before registering the plugin; `false`
   * turns them off even then; `{ activeContext: false }` keeps them without making each span the
   * active context (cheaper; see TracingOptions). @default true
   */
  tracing?: boolean | TracingOptions;
  /**
   * The operators' monitor: every owner's tasks, every worker of the store, a live events stream
   * and page, and actions (cancel, fail a stuck turn, release a queue slot, retry a push delivery)
   * at `<prefix>/monitor`. Off unless given; `authorize` (the operator check) is required. See
   * docs/monitor.md. @default undefined (off)
   */
  monitor?: MonitorOptions;
}

interface OptionSpec<T> {
  /** Returns a problem ("must be …") or undefined when the value is acceptable. Not called for undefined. */
  check(value: unknown): string | undefined;
  default?: T;
  required?: true;
}

const nonNegativeMs = (value: unknown): string | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0
    ? undefined
    : 'must be a non-negative number of milliseconds';
const positiveMs = (value: unknown): string | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value > 0
    ? undefined
    : 'must be a positive number of milliseconds';
const nonEmptyString = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? undefined : 'must be a non-empty string';
const isFunction = (value: unknown): string | undefined =>
  typeof value === 'function' ? undefined : 'must be a function';

const stringList =
  (what: string) =>
  (value: unknown): string | undefined =>
    Array.isArray(value) && value.every((v) => typeof v === 'string' && v !== '')
      ? undefined
      : `must be an array of ${what} (non-empty strings)`;
const positiveInteger = (value: unknown): string | undefined =>
  Number.isSafeInteger(value) && (value as number) > 0 ? undefined : 'must be a positive whole number';

const versionList = (value: unknown): boolean =>
  Array.isArray(value) && value.every((v) => v === '1.0' || v === '0.3') && new Set(value).size === value.length;

function checkCard(value: unknown): string | undefined {
  if (typeof value === 'string')
    return value.trim() === '' ? 'must be the card (an object) or a JSON file path' : undefined;
  if (value === null || typeof value !== 'object') return 'is required: { name, description, version, … }';
  return checkCardFields(value as Record<string, unknown>);
}

function checkStore(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() === '' ? 'must not be an empty URL' : undefined;
  return typeof (value as { commit?: unknown } | null)?.commit === 'function'
    ? undefined
    : 'must be a store instance or a URL such as memory:, sqlite:./a2a.db or postgres://…';
}

function checkRetention(value: unknown): string | undefined {
  if (value === false) return undefined;
  if (value === null || typeof value !== 'object') return 'must be false or { ttlMs?, sweepIntervalMs? }';
  const { ttlMs, sweepIntervalMs } = value as RetentionOptions;
  if (ttlMs !== undefined && positiveMs(ttlMs)) return '.ttlMs must be a positive number of milliseconds';
  if (sweepIntervalMs !== undefined && positiveMs(sweepIntervalMs)) {
    return '.sweepIntervalMs must be a positive number of milliseconds';
  }
  return undefined;
}

function checkInterruptedExpiry(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return 'must be { ttlMs, sweepIntervalMs? }';
  const { ttlMs, sweepIntervalMs } = value as InterruptedExpiryOptions;
  if (positiveMs(ttlMs)) return '.ttlMs must be a positive number of milliseconds';
  if (sweepIntervalMs !== undefined && positiveMs(sweepIntervalMs)) {
    return '.sweepIntervalMs must be a positive number of milliseconds';
  }
  return undefined;
}

function checkDraft11(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return 'must be { generations?: boolean, longPollMaxWaitMs?: number }';
  }
  const { generations, longPollMaxWaitMs, ...rest } = value as Draft11Options;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) return `.${unknown} is not an option (draft11 has generations and longPollMaxWaitMs)`;
  if (generations !== undefined && typeof generations !== 'boolean') return '.generations must be true or false';
  if (
    longPollMaxWaitMs !== undefined &&
    (typeof longPollMaxWaitMs !== 'number' ||
      !Number.isFinite(longPollMaxWaitMs) ||
      longPollMaxWaitMs < 0 ||
      longPollMaxWaitMs > LONG_POLL_MAX_MS)
  ) {
    return `.longPollMaxWaitMs must be a number of milliseconds from 0 to ${LONG_POLL_MAX_MS}`;
  }
  return undefined;
}

/** Every option: its check and default. Adding an option to the type without a row here does not compile. */
export const OPTION_SPEC = {
  agentCard: { required: true, check: checkCard },
  agentCardVersions: {
    default: ['1.0', '0.3'],
    check: (value) =>
      versionList(value) && (value as unknown[]).length > 0
        ? undefined
        : "must be a non-empty array of '1.0' and '0.3'",
  },
  agentCardMaxAgeSeconds: {
    default: 300,
    check: (value) =>
      Number.isSafeInteger(value) && (value as number) >= 0
        ? undefined
        : 'must be a whole number of seconds, 0 or more',
  },
  agentCardSigning: {
    check: (value) =>
      value !== null && typeof value === 'object' && (value as { keys?: unknown }).keys !== undefined
        ? undefined
        : 'must be { keys: { key } | { file } | [...], jwks? }',
  },
  validateInputModes: {
    default: ['1.0'],
    check: (value) => (versionList(value) ? undefined : "must be an array of '1.0' and '0.3' (or [] for none)"),
  },
  executor: {
    required: true,
    check: (value) =>
      typeof value === 'function' || typeof (value as { execute?: unknown } | null)?.execute === 'function'
        ? undefined
        : 'must be a function or an object with an execute(turn) method',
  },
  store: { default: 'memory:', check: checkStore },
  namespace: { check: nonEmptyString },
  prefix: {
    default: '',
    check: (value) =>
      typeof value === 'string' && (value === '' || value.startsWith('/'))
        ? undefined
        : 'must start with "/" (e.g. "/agents/echo")',
  },
  baseUrl: {
    check: (value) => {
      try {
        const url = new URL(value as string);
        return url.protocol === 'http:' || url.protocol === 'https:' ? undefined : 'must be an http(s) URL';
      } catch {
        return `must be an absolute URL such as https://agents.example.com; got ${JSON.stringify(value)}`;
      }
    },
  },
  rest: { default: true, check: (value) => (typeof value === 'boolean' ? undefined : 'must be true or false') },
  authenticate: {
    check: (value) =>
      typeof value === 'function' || (value !== null && typeof value === 'object')
        ? undefined
        : 'must be bearerTokens(…), apiKeys(…), jwtBearer(…), an array of them, or a function (request) => principal | null',
  },
  accessRules: {
    check: (value) => (Array.isArray(value) ? undefined : 'must be an array of { role?, scope?, principal?, allow }'),
  },
  authorize: { check: isFunction },
  extendedAgentCard: {
    check: (value) =>
      typeof value === 'function' || (value !== null && typeof value === 'object' && !Array.isArray(value))
        ? undefined
        : 'must be the fields of the extended card (an object) or a function (principal, request) => fields',
  },
  messageIdReuse: {
    default: 'reject',
    check: (value) =>
      value === 'reject' || value === 'replay' || value === 'ignore'
        ? undefined
        : "must be 'reject', 'replay' or 'ignore'",
  },
  createTaskBeforeRun: {
    default: false,
    check: (value) => (typeof value === 'boolean' ? undefined : 'must be true or false'),
  },
  turnTimeoutMs: { check: nonNegativeMs },
  blockingSendMaxWaitMs: { check: positiveMs },
  interruptedExpiry: { check: checkInterruptedExpiry },
  draft11: { check: checkDraft11 },
  tenants: {
    default: true,
    check: (value) =>
      typeof value === 'boolean' || typeof value === 'function'
        ? undefined
        : 'must be true, false or a function (tenant, ctx, request) => boolean',
  },
  heartbeatIntervalMs: { default: 15_000, check: nonNegativeMs },
  bodyLimit: {
    default: 10 * 1024 * 1024,
    check: (value) =>
      Number.isSafeInteger(value) && (value as number) > 0 ? undefined : 'must be a positive whole number of bytes',
  },
  bodyTimeoutMs: { default: 30_000, check: nonNegativeMs },
  retention: { check: checkRetention },
  followPollIntervalMs: { default: 2000, check: positiveMs },
  streamCommitIntervalMs: {
    check: (value) =>
      typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1000
        ? undefined
        : 'must be a number of milliseconds from 0 to 1000',
  },
  workerId: { check: nonEmptyString },
  leaseTtlMs: { default: 15_000, check: positiveMs },
  drainTimeoutMs: { default: 10_000, check: nonNegativeMs },
  turnPollIntervalMs: { default: 100, check: positiveMs },
  pushNotifications: {
    default: false,
    check: (value) => (typeof value === 'boolean' ? undefined : 'must be true or false'),
  },
  pushAllowedHosts: { check: stringList('host names') },
  pushAllowedCidrs: { check: stringList('CIDR blocks') },
  pushThrottleMs: { check: nonNegativeMs },
  pushRetryDelaysMs: {
    check: (value) =>
      Array.isArray(value) && value.every((v) => nonNegativeMs(v) === undefined)
        ? undefined
        : 'must be an array of non-negative numbers of milliseconds',
  },
  pushClaimTtlMs: { check: positiveMs },
  pushPollIntervalMs: { check: positiveMs },
  pushTimeoutMs: { check: positiveMs },
  pushConnectTimeoutMs: { check: positiveMs },
  pushMaxResponseBytes: { check: positiveInteger },
  pushConcurrency: { check: positiveInteger },
  pushCa: {
    check: (value) =>
      typeof value === 'string' || Buffer.isBuffer(value) || Array.isArray(value)
        ? undefined
        : 'must be PEM text, a Buffer, or an array of them',
  },
  pushResolver: { check: isFunction },
  metrics: { default: false, check: checkMetrics },
  tracing: { default: true, check: checkTracing },
  monitor: { check: checkMonitorOption },
} satisfies { [K in keyof A2APluginOptions]-?: OptionSpec<A2APluginOptions[K]> };

// The spec has no option the type lacks (the `satisfies` above covers the other direction).
type ExtraSpecKeys = Exclude<keyof typeof OPTION_SPEC, keyof A2APluginOptions>;
const noExtraSpecKeys: [ExtraSpecKeys] extends [never] ? true : never = true;
void noExtraSpecKeys;

/** Fastify's own register options, which reach the plugin with its options. */
const FASTIFY_REGISTER_OPTIONS = new Set(['logLevel', 'logSerializers']);

type Defaulted = {
  [K in keyof typeof OPTION_SPEC as (typeof OPTION_SPEC)[K] extends { default: unknown } ? K : never]-?: Exclude<
    A2APluginOptions[K],
    undefined
  >;
};

/** The options with every default filled in, and the card read when it was given as a file. */
export type ResolvedOptions = Omit<A2APluginOptions, keyof Defaulted | 'agentCard'> &
  Defaulted & { agentCard: AgentCardInput };

export function invalidOption(message: string): A2AError {
  return new A2AError('INVALID_OPTIONS', `fastify-a2a: ${message}`);
}

/**
 * Checks the options against the spec and fills in defaults; `opts` is not modified.
 * @throws {A2AError} INVALID_OPTIONS naming the option and what it must be.
 */
export function resolveOptions(opts: unknown): ResolvedOptions {
  if (opts === null || typeof opts !== 'object') throw invalidOption('options are required: { agentCard, executor }.');
  const given = opts as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!Object.hasOwn(OPTION_SPEC, key) && !FASTIFY_REGISTER_OPTIONS.has(key)) {
      throw invalidOption(`unknown option "${key}"; see the options table in docs/configuration.md.`);
    }
  }
  const resolved: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(OPTION_SPEC) as [string, OptionSpec<unknown>][]) {
    const value = given[key];
    if (value === undefined) {
      if (spec.required) throw invalidOption(`"${key}" is required.`);
      if (spec.default !== undefined) resolved[key] = spec.default;
      continue;
    }
    const problem = spec.check(value);
    if (problem !== undefined) {
      // A problem with a member (".ttlMs must be …") names it: "retention.ttlMs" must be …
      const member = problem.startsWith('.') ? problem.slice(0, problem.indexOf(' ')) : '';
      throw invalidOption(`"${key}${member}" ${problem.slice(member.length).trimStart()}.`);
    }
    resolved[key] = value;
  }
  if (typeof resolved.agentCard === 'string') {
    try {
      resolved.agentCard = readCardFile(resolved.agentCard);
    } catch (error) {
      throw invalidOption(`"agentCard" ${(error as Error).message}`);
    }
  }
  if (resolved.pushNotifications !== true) {
    const stray = Object.keys(resolved).find((key) => key.startsWith('push') && key !== 'pushNotifications');
    if (stray !== undefined)
      throw invalidOption(`"${stray}" needs "pushNotifications: true"; set it, or leave "${stray}" out.`);
  }
  return resolved as ResolvedOptions;
}

/** The runtime's push options from the plugin's, or undefined when push is off. */
export function pushOptionsOf(options: ResolvedOptions): Omit<PushOptions, 'encodeNotification'> | undefined {
  if (!options.pushNotifications) return undefined;
  const push: Omit<PushOptions, 'encodeNotification'> = {};
  if (options.pushAllowedHosts !== undefined) push.allowHosts = options.pushAllowedHosts;
  if (options.pushAllowedCidrs !== undefined) push.allowCidrs = options.pushAllowedCidrs;
  if (options.pushThrottleMs !== undefined) push.throttleMs = options.pushThrottleMs;
  if (options.pushRetryDelaysMs !== undefined) push.retryDelaysMs = options.pushRetryDelaysMs;
  if (options.pushClaimTtlMs !== undefined) push.claimTtlMs = options.pushClaimTtlMs;
  if (options.pushPollIntervalMs !== undefined) push.pollIntervalMs = options.pushPollIntervalMs;
  if (options.pushTimeoutMs !== undefined) push.timeoutMs = options.pushTimeoutMs;
  if (options.pushConnectTimeoutMs !== undefined) push.connectTimeoutMs = options.pushConnectTimeoutMs;
  if (options.pushMaxResponseBytes !== undefined) push.maxResponseBytes = options.pushMaxResponseBytes;
  if (options.pushConcurrency !== undefined) push.concurrency = options.pushConcurrency;
  if (options.pushCa !== undefined) push.ca = options.pushCa;
  if (options.pushResolver !== undefined) push.resolver = options.pushResolver;
  push.allowCidrsName = 'pushAllowedCidrs';
  return push;
}
