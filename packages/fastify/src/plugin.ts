import fastifySseModule, { type SSEPluginOptions } from '@fastify/sse';
import {
  A2A_PROTOCOL_VERSION,
  A2AError,
  A2ARuntime,
  type A2AStore,
  type AgentCard,
  type AgentExecutorLike,
  createStoreFromUrl,
  errorResponse,
  JsonRpcErrorCode,
  JsonRpcHandler,
  type JsonRpcResponse,
  type RetentionOptions,
  type StreamSignal,
} from '@fastify-a2a/core';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

// At run time the default import is the CommonJS module.exports, which is the fastify-plugin
// wrapped function (its `.default` and `.fastifySSE` are the unwrapped one, which would be
// encapsulated and never see our routes); the type declarations describe it differently.
const fastifySse = fastifySseModule as unknown as FastifyPluginAsync<SSEPluginOptions>;

/** The parts of an agent card the application decides; the plugin fills in the rest (§5.5). */
export type AgentCardInput = Omit<
  AgentCard,
  | 'protocolVersion'
  | 'url'
  | 'preferredTransport'
  | 'capabilities'
  | 'defaultInputModes'
  | 'defaultOutputModes'
  | 'skills'
> &
  Partial<Pick<AgentCard, 'defaultInputModes' | 'defaultOutputModes' | 'skills'>> & {
    capabilities?: Pick<AgentCard['capabilities'], 'extensions'>;
  };

export interface A2APluginOptions {
  /** The agent's card: name, description, version, skills… `url`, `protocolVersion` and `capabilities` are filled in. */
  agentCard: AgentCardInput;
  /** Runs the agent's turns: an object with `execute(turn)` or that function itself. */
  executor: AgentExecutorLike;
  /**
   * A store instance (left open on close; you own it) or a URL — `memory:`, `sqlite:<path>`,
   * `postgres://…` — for a store the plugin creates, opens and closes.
   * @default 'memory:'
   */
  store?: A2AStore | string;
  /** Isolates this agent's rows when several agents share one database (URL stores only). @default 'default' */
  namespace?: string;
  /**
   * Route prefix. fastify-plugin plugins ignore Fastify's own `prefix` register option, so the
   * plugin reads it here and applies it to its routes. @default ''
   */
  prefix?: string;
  /** Public base URL for the card's `url` (e.g. behind a proxy). @default the request's protocol and host */
  baseUrl?: string;
  /** Fails a turn that runs longer than this many ms. @default undefined (no limit) */
  turnTimeoutMs?: number;
  /** SSE comment sent this often so proxies keep idle streams open. 0 disables it. @default 15000 */
  heartbeatIntervalMs?: number;
  /** Largest accepted JSON-RPC body in bytes. @default 10485760 (10 MiB) */
  bodyLimit?: number;
  /** Purge of terminal tasks; `false` disables it. @default { ttlMs: 86_400_000, sweepIntervalMs: 600_000 } */
  retention?: RetentionOptions | false;
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
}

const ALLOWED_OPTIONS = new Set<string>([
  'agentCard',
  'executor',
  'store',
  'namespace',
  'prefix',
  'baseUrl',
  'turnTimeoutMs',
  'heartbeatIntervalMs',
  'bodyLimit',
  'retention',
  'followPollIntervalMs',
  'workerId',
  'leaseTtlMs',
  'drainTimeoutMs',
  'turnPollIntervalMs',
  // Fastify's own register options
  'logLevel',
  'logSerializers',
]);

function invalidOption(message: string): A2AError {
  return new A2AError('INVALID_OPTIONS', `fastify-a2a: ${message}`);
}

function validateOptions(opts: A2APluginOptions): void {
  if (opts === null || typeof opts !== 'object') throw invalidOption('options are required: { agentCard, executor }.');
  for (const key of Object.keys(opts)) {
    if (!ALLOWED_OPTIONS.has(key)) throw invalidOption(`unknown option "${key}"; see the README's options table.`);
  }
  const executor = opts.executor as unknown;
  if (typeof executor !== 'function' && typeof (executor as { execute?: unknown } | null)?.execute !== 'function') {
    throw invalidOption('"executor" must be a function or an object with an execute(turn) method.');
  }
  const card = opts.agentCard as Partial<AgentCardInput> | undefined;
  if (!card || typeof card !== 'object')
    throw invalidOption('"agentCard" is required: { name, description, version, … }.');
  for (const field of ['name', 'description', 'version'] as const) {
    if (typeof card[field] !== 'string' || card[field] === '')
      throw invalidOption(`"agentCard.${field}" must be a non-empty string.`);
  }
  const store = opts.store as unknown;
  if (
    store !== undefined &&
    typeof store !== 'string' &&
    typeof (store as { commit?: unknown }).commit !== 'function'
  ) {
    throw invalidOption('"store" must be a store instance or a URL such as memory:, sqlite:./a2a.db or postgres://…');
  }
  for (const key of [
    'turnTimeoutMs',
    'heartbeatIntervalMs',
    'bodyLimit',
    'followPollIntervalMs',
    'leaseTtlMs',
    'drainTimeoutMs',
    'turnPollIntervalMs',
  ] as const) {
    const value = opts[key];
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value < 0)) {
      throw invalidOption(
        `"${key}" must be a non-negative number of ${key === 'bodyLimit' ? 'bytes' : 'milliseconds'}.`,
      );
    }
  }
  if (
    opts.prefix !== undefined &&
    (typeof opts.prefix !== 'string' || (opts.prefix !== '' && !opts.prefix.startsWith('/')))
  ) {
    throw invalidOption('"prefix" must start with "/" (e.g. "/agents/echo").');
  }
  if (opts.workerId !== undefined && (typeof opts.workerId !== 'string' || opts.workerId === '')) {
    throw invalidOption('"workerId" must be a non-empty string.');
  }
  if (opts.baseUrl !== undefined) {
    try {
      new URL(opts.baseUrl);
    } catch {
      throw invalidOption(
        `"baseUrl" must be an absolute URL such as https://agents.example.com; got "${opts.baseUrl}".`,
      );
    }
  }
}

/** §5.5: what the card declares is exactly what this plugin implements. */
function buildCard(input: AgentCardInput, url: string): AgentCard {
  return {
    ...input,
    protocolVersion: A2A_PROTOCOL_VERSION,
    url,
    preferredTransport: 'JSONRPC',
    capabilities: {
      ...(input.capabilities?.extensions ? { extensions: input.capabilities.extensions } : {}),
      streaming: true,
      pushNotifications: false,
      stateTransitionHistory: false,
    },
    defaultInputModes: input.defaultInputModes ?? ['text/plain'],
    defaultOutputModes: input.defaultOutputModes ?? ['text/plain'],
    skills: input.skills ?? [],
    supportsAuthenticatedExtendedCard: false,
  };
}

function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  if (value === 'application/json') return true; // what nearly every client sends
  const type = value.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/**
 * Ends one stream when its client goes away or the server closes: the part of an AbortSignal the
 * runtime uses ({@link StreamSignal}), without an AbortController's weight (about 1 KB per held
 * stream).
 */
class StreamEnd implements StreamSignal {
  aborted = false;
  #listeners: (() => void)[] | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    this.#listeners ??= [];
    this.#listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const index = this.#listeners?.indexOf(listener) ?? -1;
    if (index >= 0) this.#listeners?.splice(index, 1);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    for (const listener of this.#listeners?.splice(0) ?? []) listener();
  }
}

const routes: FastifyPluginAsync<A2APluginOptions> = async (fastify: FastifyInstance, opts: A2APluginOptions) => {
  const ownsStore = typeof opts.store !== 'object';
  const store =
    typeof opts.store === 'object'
      ? opts.store
      : await createStoreFromUrl(opts.store ?? 'memory:', opts.namespace ? { namespace: opts.namespace } : {});
  const runtime = new A2ARuntime({
    store,
    executor: opts.executor,
    logger: fastify.log,
    ...(opts.turnTimeoutMs !== undefined ? { turnTimeoutMs: opts.turnTimeoutMs } : {}),
    ...(opts.retention !== undefined ? { retention: opts.retention } : {}),
    ...(opts.followPollIntervalMs !== undefined ? { followPollIntervalMs: opts.followPollIntervalMs } : {}),
    ...(opts.workerId !== undefined ? { workerId: opts.workerId } : {}),
    ...(opts.leaseTtlMs !== undefined ? { leaseTtlMs: opts.leaseTtlMs } : {}),
    ...(opts.drainTimeoutMs !== undefined ? { drainTimeoutMs: opts.drainTimeoutMs } : {}),
    ...(opts.turnPollIntervalMs !== undefined ? { turnPollIntervalMs: opts.turnPollIntervalMs } : {}),
    closeStore: ownsStore,
  });
  try {
    await runtime.start();
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }

  const prefix = fastify.prefix;
  const rpcPath = `${prefix}/a2a`;
  const cards = new Map<string, { card: AgentCard; json: string }>();
  const cardFor = (request: FastifyRequest | undefined): { card: AgentCard; json: string } => {
    const base =
      opts.baseUrl?.replace(/\/$/, '') ?? (request ? `${request.protocol}://${request.host}` : 'http://localhost');
    let entry = cards.get(base);
    if (entry === undefined) {
      const card = buildCard(opts.agentCard, `${base}${rpcPath}`);
      entry = { card, json: JSON.stringify(card) };
      if (cards.size < 64) cards.set(base, entry); // bounded: the Host header is client-controlled
    }
    return entry;
  };
  const rpc = new JsonRpcHandler({ runtime, agentCard: () => cardFor(undefined).card, logger: fastify.log });

  const openStreams = new Map<StreamEnd, FastifyReply>();
  // One timer for every open stream rather than one per stream (@fastify/sse's own heartbeat, off
  // on the route below): an idle stream then costs no timer at all.
  const heartbeatMs = opts.heartbeatIntervalMs ?? 15_000;
  const heartbeat =
    heartbeatMs > 0
      ? setInterval(() => {
          for (const reply of openStreams.values()) {
            // Only once the response is committed as SSE, and never into a closed socket.
            if (reply.raw.headersSent && reply.sse.isConnected && !reply.raw.writableEnded) {
              reply.raw.write(': heartbeat\n\n');
            }
          }
        }, heartbeatMs)
      : undefined;
  heartbeat?.unref();
  fastify.addHook('preClose', async () => {
    clearInterval(heartbeat);
    for (const stream of openStreams.keys()) stream.abort();
  });
  fastify.addHook('onClose', async () => {
    await runtime.close();
  });

  await fastify.register(fastifySse);

  // The JSON-RPC route parses its body itself: a body that is not JSON must become a JSON-RPC
  // -32700 answer (§8.1), never Fastify's HTTP 400.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser(
    '*',
    { parseAs: 'string', bodyLimit: opts.bodyLimit ?? 10 * 1024 * 1024 },
    (_req, body, done) => {
      done(null, body);
    },
  );
  fastify.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    if (request.routeOptions.url !== rpcPath || request.method !== 'POST') {
      request.log.error({ err: error }, 'a2a: request failed');
      return reply
        .code(error.statusCode ?? 500)
        .send({ error: error.statusCode && error.statusCode < 500 ? error.message : 'Internal Server Error' });
    }
    const tooLarge = error.code === 'FST_ERR_CTP_BODY_TOO_LARGE';
    if (!tooLarge) request.log.error({ err: error }, 'a2a: JSON-RPC request failed');
    const response: JsonRpcResponse = {
      jsonrpc: '2.0',
      id: null,
      error: tooLarge
        ? {
            code: JsonRpcErrorCode.InvalidRequest,
            message: `Invalid Request: the body is larger than the ${opts.bodyLimit ?? 10 * 1024 * 1024}-byte limit.`,
          }
        : {
            code: JsonRpcErrorCode.InternalError,
            message: 'Internal error: the server failed to handle the request; see the server log.',
          },
    };
    return reply.code(tooLarge ? 413 : 200).send(response);
  });

  const sendCard = async (request: FastifyRequest, reply: FastifyReply) => {
    return reply.type('application/json; charset=utf-8').send(cardFor(request).json);
  };
  fastify.get('/.well-known/agent-card.json', sendCard);
  fastify.get('/.well-known/agent.json', sendCard);
  fastify.get('/a2a', sendCard);

  fastify.get('/a2a/health', async (_request, reply) => {
    try {
      await store.ping();
      return { status: 'ok' };
    } catch (error) {
      return reply.code(503).send({ status: 'unavailable', error: (error as Error).message });
    }
  });

  fastify.post(
    '/a2a',
    { sse: { kind: 'manual', heartbeat: false, serializer: (data: unknown) => data as string } },
    async (request, reply) => {
      if (!isJsonContentType(request.headers['content-type'])) {
        return {
          jsonrpc: '2.0',
          id: null,
          error: {
            code: JsonRpcErrorCode.InvalidRequest,
            message: `Invalid Request: Content-Type must be application/json (got ${request.headers['content-type'] ?? 'none'}).`,
          },
        };
      }
      const lastEventHeader = request.headers['last-event-id'];
      const lastEventId =
        typeof lastEventHeader === 'string' && /^\d+$/.test(lastEventHeader) ? Number(lastEventHeader) : undefined;
      // Created only if the method streams: a plain request needs none.
      let streamEnd: StreamEnd | undefined;
      const outcome = await rpc.handle(request.body ?? '', {
        get signal() {
          streamEnd ??= new StreamEnd();
          return streamEnd;
        },
        ...(lastEventId !== undefined ? { lastEventId } : {}),
      });
      if (outcome.type === 'response') return outcome.response;
      const stream = streamEnd ?? new StreamEnd();

      // §7.2: each SSE event's data is a JSON-RPC response carrying the request id; the SSE id is the
      // event's sequence number so a reconnect with Last-Event-ID resumes after it.
      openStreams.set(stream, reply);
      reply.sse.onClose(() => stream.abort());
      const { id, frames } = outcome;
      try {
        for await (const frame of frames) {
          if (!reply.sse.isConnected) break;
          await reply.sse.send({
            id: String(frame.seq),
            data: JSON.stringify({ jsonrpc: '2.0', id, result: frame.result }),
          });
        }
      } catch (error) {
        request.log.error({ err: error }, 'a2a: stream failed');
        if (reply.sse.isConnected)
          await reply.sse.send({ data: JSON.stringify(errorResponse(id, error)) }).catch(() => undefined);
      } finally {
        stream.abort();
        openStreams.delete(stream);
        await frames.return(undefined);
      }
    },
  );
};

const a2aPluginImpl: FastifyPluginAsync<A2APluginOptions> = async (fastify, opts) => {
  validateOptions(opts);
  await fastify.register(routes, { ...opts, prefix: opts.prefix ?? '' });
};

/** Serves one agent over A2A v0.3.0 JSON-RPC + SSE. Register once per agent, each under its own `prefix`. */
export const a2aPlugin = fp(a2aPluginImpl, { fastify: '5.x', name: 'fastify-a2a' });
export default a2aPlugin;
