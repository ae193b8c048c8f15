/**
 * fastify-a2a: one agent per registration, served over A2A 0.3 and 1.0 (the request's
 * `A2A-Version` picks one) on JSON-RPC and HTTP+JSON, streams as Server-Sent Events. The
 * plugin (fastify-plugin, so `fastify.a2a` is visible to the application) builds the runtime,
 * the service and the one dispatch; each binding then lives in an encapsulated scope of its own,
 * so its body parsers and error handlers never touch the application's other routes.
 */

import fastifySseModule, { type SSEPluginOptions } from '@fastify/sse';
import {
  A2AError,
  A2ARuntime,
  type A2AStore,
  type AgentCard,
  type AuthorizeHook,
  accessRules,
  allOf,
  type CallContext,
  canonicalCardPayload,
  checkPushOptions,
  Dispatcher,
  encodePushNotification,
  type JsonObject,
  JsonRpcBinding,
  jsonRpc0_3,
  jsonRpc1_0,
  jsonRpc1_0WithGenerations,
  LONG_POLL_DEFAULT_MS,
  RestBinding,
  RuntimeService,
  rest0_3,
  rest1_0,
  rest1_0WithGenerations,
  type SupportedInterface,
  taskGenerationExtension,
} from '@fastify-a2a/core';
import type { FastifyBaseLogger, FastifyInstance, FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { type A2AAgent, A2AAgents, addInterface, authenticateHeaders } from './agents.js';
import { Authentication } from './auth/authentication.js';
import { buildCard, CardCache, type CardFeatures, type InterfacePaths, publicBase } from './card.js';
import { CardSigner } from './card-signing.js';
import { RequestContext, requestOf } from './context.js';
import { inputModesCheck } from './input-modes.js';
import { resolveMonitorOptions } from './monitor/options.js';
import { monitorRoutes } from './monitor/routes.js';
import {
  type A2APluginOptions,
  type AgentCardInput,
  invalidOption,
  pushOptionsOf,
  type ResolvedOptions,
  resolveOptions,
} from './options.js';
import { cardRoutes } from './routes/card.js';
import { healthRoute } from './routes/health.js';
import { jsonRpcRoutes } from './routes/jsonrpc.js';
import { metricsRoute } from './routes/metrics.js';
import { restRoutes } from './routes/rest.js';
import { addShutdownHooks } from './shutdown.js';
import { StreamHub } from './sse.js';
import { createStoreFromUrl } from './store-url.js';
import { observabilityOf } from './telemetry/setup.js';
import { tenantHookOf } from './tenants.js';

// At run time the default import is the CommonJS module.exports, which is the fastify-plugin
// wrapped function (its `.default` and `.fastifySSE` are the unwrapped one, which would be
// encapsulated and never see our routes); the type declarations describe it differently.
const fastifySse = fastifySseModule as unknown as FastifyPluginAsync<SSEPluginOptions>;

/** The store the options name, and whether the plugin created it (and so closes it). */
async function storeOf(options: ResolvedOptions): Promise<{ store: A2AStore; owned: boolean }> {
  const { store, namespace } = options;
  if (typeof store === 'string') {
    return { store: await createStoreFromUrl(store, namespace === undefined ? {} : { namespace }), owned: true };
  }
  if (namespace !== undefined && store.namespace !== namespace) {
    throw invalidOption(
      store.namespace === undefined
        ? `"namespace" ("${namespace}") needs a store that keeps several agents apart; this store instance keeps one agent's data (supports.namespaces is false). Give each agent a store of its own.`
        : `"namespace" ("${namespace}") differs from the namespace of the store instance ("${store.namespace}"). A store instance serves the namespace it was created with: pass the namespace to its constructor and leave the option out.`,
    );
  }
  return { store, owned: false };
}

/** The `authenticate` option, checked; undefined when the agent is open. */
function authenticationOf(options: ResolvedOptions, log: FastifyBaseLogger): Authentication | undefined {
  if (options.authenticate === undefined) return undefined;
  let authentication: Authentication;
  try {
    authentication = new Authentication(options.authenticate, options.agentCard.securitySchemes, log);
  } catch (error) {
    throw invalidOption(`"authenticate" ${(error as Error).message}.`);
  }
  const authenticators = Array.isArray(options.authenticate) ? options.authenticate : [options.authenticate];
  if (authenticators.some((a) => (a as { audienceChecked?: boolean }).audienceChecked === false)) {
    log.warn(
      'fastify-a2a: jwtBearer has no "audience": tokens its issuer made for any other service are accepted too. Set audience to this agent\'s identifier.',
    );
  }
  return authentication;
}

/** The access rules and the application's hook, in that order. */
function authorizeHookOf(options: ResolvedOptions): AuthorizeHook | undefined {
  let rules: AuthorizeHook | undefined;
  try {
    rules = options.accessRules === undefined ? undefined : accessRules(options.accessRules);
  } catch (error) {
    throw invalidOption(`"accessRules": ${(error as Error).message}.`);
  }
  return allOf(tenantHookOf(options.tenants), rules, options.authorize);
}

/** The extended card for one call: the public card's fields with the option's over them, at the caller's base URL. */
function extendedCardOf(
  publicInput: AgentCardInput,
  option: NonNullable<ResolvedOptions['extendedAgentCard']>,
  paths: InterfacePaths,
  features: CardFeatures,
  baseUrl: string | undefined,
  signer: CardSigner | undefined,
  prefix: string,
): (ctx: CallContext) => Promise<AgentCard> {
  return async (ctx) => {
    const request = requestOf(ctx);
    const base = ctx instanceof RequestContext ? publicBase(ctx.request, baseUrl) : (baseUrl ?? 'http://localhost');
    let fields: Partial<AgentCardInput>;
    if (typeof option === 'function') {
      // Dispatch reaches here only for an authenticated caller: the routes refuse anyone else.
      if (ctx.principal === undefined || request === undefined) {
        throw new A2AError(
          'UNAUTHENTICATED',
          'Authentication required: the extended card is for authenticated callers.',
        );
      }
      fields = await option(ctx.principal, request);
      if (fields === null || typeof fields !== 'object') {
        throw new TypeError('the extendedAgentCard function must return the fields of the card (an object)');
      }
    } else {
      fields = option;
    }
    const card = buildCard({ ...publicInput, ...fields }, base, paths, features);
    // Signed per call: the fields may depend on the caller, and the shape on the call's version.
    return signer === undefined ? card : signer.signExtended(card, ctx, `${base}${prefix}`);
  };
}

const a2aPluginImpl: FastifyPluginAsync<A2APluginOptions> = async (fastify, opts) => {
  const options = resolveOptions(opts);
  const prefix = options.prefix.replace(/\/+$/, '');
  if (!fastify.hasDecorator('a2a')) fastify.decorate('a2a', new A2AAgents());
  const agents = fastify.a2a;
  if (agents.has(prefix)) {
    throw invalidOption(`an agent is already registered under prefix "${prefix}"; give each agent its own "prefix".`);
  }

  const push = pushOptionsOf(options);
  if (push !== undefined) {
    await checkPushOptions(push).catch((error: Error) => {
      throw invalidOption(
        error.message
          .replace(/\ballowHosts\b/g, 'pushAllowedHosts')
          .replace(/\ballowCidrs\b/g, 'pushAllowedCidrs')
          .replace(/\?\.$/, '?'),
      );
    });
  }
  // Read and tried before anything is opened, so a bad key fails the start with nothing to close.
  let signer: CardSigner | undefined;
  if (options.agentCardSigning !== undefined) {
    signer = await CardSigner.create(options.agentCardSigning).catch((error: Error) => {
      throw invalidOption(`"agentCardSigning"${error.message.startsWith('.') ? '' : ' '}${error.message}.`);
    });
    try {
      // The application's fields are what could hold a value JCS refuses (a lone surrogate): say so now.
      canonicalCardPayload(JSON.parse(JSON.stringify(options.agentCard)) as JsonObject, 'json');
    } catch (error) {
      throw invalidOption(`"agentCard" cannot be signed: ${(error as Error).message}.`);
    }
  }
  const { store, owned } = await storeOf(options);
  if (push !== undefined && store.supports.push !== true) {
    if (owned) await store.close().catch(() => undefined);
    throw invalidOption(
      '"pushNotifications" needs a store that keeps push configs (store.supports.push); the memory, SQLite and Postgres stores do.',
    );
  }
  // Metrics and traces (docs/operating.md): the runtime and the dispatch report to it.
  const observability = observabilityOf(options, () => runtime);
  const { telemetry } = observability;
  const runtime = new A2ARuntime({
    store,
    executor: options.executor,
    logger: fastify.log,
    closeStore: owned,
    followPollIntervalMs: options.followPollIntervalMs,
    leaseTtlMs: options.leaseTtlMs,
    drainTimeoutMs: options.drainTimeoutMs,
    messageIdReuse: options.messageIdReuse,
    createTaskBeforeRun: options.createTaskBeforeRun,
    turnPollIntervalMs: options.turnPollIntervalMs,
    ...(options.turnTimeoutMs !== undefined ? { turnTimeoutMs: options.turnTimeoutMs } : {}),
    ...(options.streamCommitIntervalMs !== undefined ? { streamCommitIntervalMs: options.streamCommitIntervalMs } : {}),
    ...(options.blockingSendMaxWaitMs !== undefined ? { blockingSendMaxWaitMs: options.blockingSendMaxWaitMs } : {}),
    ...(options.retention !== undefined ? { retention: options.retention } : {}),
    ...(options.interruptedExpiry !== undefined ? { interruptedExpiry: options.interruptedExpiry } : {}),
    ...(options.workerId !== undefined ? { workerId: options.workerId } : {}),
    ...(options.draft11 !== undefined ? { draft11: options.draft11 } : {}),
    // Push bodies are encoded by the protocol layer's codecs, passed in here where the bindings
    // are composed, so the runtime's delivery job holds no codec (docs/architecture.md).
    ...(push !== undefined ? { push: { ...push, encodeNotification: encodePushNotification } } : {}),
    ...(telemetry !== undefined ? { telemetry } : {}),
  });
  try {
    await runtime.start();
  } catch (error) {
    if (owned) await store.close().catch(() => undefined);
    throw error;
  }

  const generations = options.draft11?.generations === true;
  const authentication = authenticationOf(options, fastify.log);
  const authorize = authorizeHookOf(options);
  if (options.extendedAgentCard !== undefined && authentication === undefined) {
    throw invalidOption(
      '"extendedAgentCard" needs "authenticate": the extended card is for authenticated callers (A2A §5.5); without authentication every caller would get it, so put its fields in "agentCard" instead.',
    );
  }
  // Filled while the server runs by listeners beside Fastify (A2AAgent.addInterface).
  const extraInterfaces: SupportedInterface[] = [];
  const features: CardFeatures = {
    extraInterfaces,
    capabilities: Object.freeze({
      streaming: true,
      pushNotifications: push !== undefined,
      extendedAgentCard: options.extendedAgentCard !== undefined,
    }),
    security: authentication?.cardSecurity,
    // The A2A 1.1 draft's task generations (docs/interop.md): declared, so clients use them.
    extensions: generations
      ? [taskGenerationExtension(options.draft11?.longPollMaxWaitMs ?? LONG_POLL_DEFAULT_MS)]
      : [],
  };
  const paths: InterfacePaths = { jsonRpc: `${prefix}/a2a`, rest: options.rest ? prefix : undefined };
  const baseUrl = options.baseUrl?.replace(/\/+$/, '');
  const checkMessage = inputModesCheck(options.agentCard, options.validateInputModes);
  const dispatcher = new Dispatcher({
    service: new RuntimeService({
      runtime,
      ...(options.extendedAgentCard === undefined
        ? {}
        : {
            extendedAgentCard: extendedCardOf(
              options.agentCard,
              options.extendedAgentCard,
              paths,
              features,
              baseUrl,
              signer,
              prefix,
            ),
          }),
    }),
    capabilities: features.capabilities,
    logger: fastify.log,
    ...(authorize !== undefined ? { authorize } : {}),
    ...(telemetry !== undefined ? { telemetry } : {}),
    ...(checkMessage !== undefined ? { checkMessage } : {}),
  });
  const cards = new CardCache(options.agentCard, paths, features, signer, prefix);
  const agent: A2AAgent = {
    prefix,
    runtime,
    store,
    dispatcher,
    card: (baseUrl = options.baseUrl ?? 'http://localhost') => cards.get(baseUrl.replace(/\/+$/, '')).card,
    addInterface: (supportedInterface) => addInterface(extraInterfaces, cards, supportedInterface),
    authenticate: (headers, callId) => authenticateHeaders(authentication, headers, callId, fastify.log),
  };
  agents.add(agent);

  await fastify.register(
    async (scope: FastifyInstance) => {
      const streams = new StreamHub(options.heartbeatIntervalMs);
      addShutdownHooks(scope, {
        runtime,
        streams,
        log: fastify.log.child({ prefix: prefix || '/' }),
        drainTimeoutMs: options.drainTimeoutMs,
        pluginTimeoutMs: fastify.initialConfig.pluginTimeout ?? 0,
        onClosed: () => agents.delete(prefix),
      });
      await scope.register(fastifySse);
      await scope.register(cardRoutes, {
        cards,
        baseUrl,
        versions: options.agentCardVersions,
        maxAgeSeconds: options.agentCardMaxAgeSeconds,
        signer,
      });
      await scope.register(healthRoute, { store, runtime, telemetry });
      if (observability.metrics !== undefined) {
        await scope.register(metricsRoute, {
          metrics: observability.metrics.registry,
          options: observability.metrics.options,
        });
      }
      const log = fastify.log;
      await scope.register(jsonRpcRoutes, {
        binding: new JsonRpcBinding({
          dispatcher,
          mappings: { '0.3': jsonRpc0_3, '1.0': generations ? jsonRpc1_0WithGenerations : jsonRpc1_0 },
          logger: log,
        }),
        streams,
        bodyLimit: options.bodyLimit,
        bodyTimeoutMs: options.bodyTimeoutMs,
        authentication,
        agentPrefix: prefix,
      });
      if (options.rest) {
        await scope.register(restRoutes, {
          binding: new RestBinding({
            dispatcher,
            mappings: { '0.3': rest0_3, '1.0': generations ? rest1_0WithGenerations : rest1_0 },
            logger: log,
          }),
          streams,
          bodyLimit: options.bodyLimit,
          bodyTimeoutMs: options.bodyTimeoutMs,
          versions: ['0.3', '1.0'],
          prefix,
          authentication,
        });
      }
      const monitor = resolveMonitorOptions(options.monitor);
      if (monitor !== undefined) {
        const { heartbeatIntervalMs } = options;
        await scope.register(monitorRoutes, { prefix: monitor.prefix, monitor, agent, agents, heartbeatIntervalMs });
      }
    },
    { prefix },
  );
};

/** Serves one agent over A2A 0.3 and 1.0 (JSON-RPC and HTTP+JSON, with SSE). Register once per agent, each under its own `prefix`. */
export const a2aPlugin = fp(a2aPluginImpl, { fastify: '5.x', name: 'fastify-a2a' });
export default a2aPlugin;
