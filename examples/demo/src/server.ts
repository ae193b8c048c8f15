/**
 * The demo: `npm start` serves the demo agent on HOST:PORT (default 127.0.0.1:41241).
 * Environment: DEMO_AGENT (echo | tck | delegate | ai-sdk | langgraph, default echo; delegate calls DEMO_DELEGATE_URL;
 * ai-sdk and langgraph read DEMO_TOKENS_PER_S, OPENAI_API_KEY, see ai-sdk-agent.ts and langgraph-agent.ts), A2A_STORE (memory:, sqlite:<path>,
 * postgres://…; default sqlite:./.data/a2a.db), A2A_BASE_URL (public URL for the card),
 * A2A_LEASE_TTL_MS (how soon a crashed worker's tasks are failed), LOG_LEVEL; authentication:
 * A2A_AUTH_TOKENS ("alice:tok-a,bob:tok-b"), A2A_JWKS_URL with A2A_JWT_ISSUER and A2A_JWT_AUDIENCE
 * (see auth.ts); push notifications: A2A_PUSH_ALLOWED_HOSTS, A2A_PUSH_ALLOWED_CIDRS,
 * A2A_PUSH_THROTTLE_MS (see push.ts); gRPC: A2A_GRPC_PORT serves A2A 1.0 and 0.3 over gRPC on
 * 127.0.0.1:<port> beside HTTP (see grpc.ts); the operators' monitor: A2A_MONITOR_TOKEN (see monitor.ts,
 * telemetry.ts); OTEL_EXPORTER_OTLP_ENDPOINT (see telemetry.ts); signed cards: A2A_CARD_SIGNING_KEY,
 * A2A_CARD_SIGNING_KID (see card-signing.ts); the A2A 1.1 draft's task generations: A2A_DRAFT_11=1.
 */

import type { AgentExecutor } from '@fastify-a2a/core';
import Fastify from 'fastify';
import { a2aChildLoggerFactory, a2aPlugin, redact } from 'fastify-a2a';
import {
  checkDemoAgentSettings,
  type DemoAgentName,
  demoAgentNames,
  demoAgents,
  demoCard,
  demoOptions,
} from './agents.js';
import { type DemoAuth, demoAuth, isLoopback } from './auth.js';
import { cardSigningSummary, demoCardSigning } from './card-signing.js';
import { demoGrpc } from './grpc.js';
import { createLangGraphAgent } from './langgraph-agent.js';
import { demoMonitor, monitorSummary } from './monitor.js';
import { demoPush, pushSummary } from './push.js';
import { demoMetrics, startDemoTracing, telemetrySummary } from './telemetry.js';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 41241);
const agentName = (process.env.DEMO_AGENT ?? 'echo') as DemoAgentName;
const store = process.env.A2A_STORE ?? 'sqlite:./.data/a2a.db';

if (!demoAgentNames.includes(agentName)) {
  console.error(`DEMO_AGENT must be one of ${demoAgentNames.join(', ')}; got "${agentName}".`);
  process.exit(1);
}

const card = demoCard(agentName);
const cardSigning = demoCardSigning(process.env);
// The A2A 1.1 draft's task generations on the 1.0 bindings (docs/interop.md): opt-in, as it tracks a draft.
const draft11 = process.env.A2A_DRAFT_11 === '1';
if (process.env.A2A_DRAFT_11 !== undefined && process.env.A2A_DRAFT_11 !== '1' && process.env.A2A_DRAFT_11 !== '0') {
  console.error(`Could not start the demo: A2A_DRAFT_11 must be 1 or 0; got "${process.env.A2A_DRAFT_11}".`);
  process.exit(1);
}
let auth: DemoAuth;
let push: ReturnType<typeof demoPush>;
let monitor: ReturnType<typeof demoMonitor>;
try {
  checkDemoAgentSettings(agentName, process.env);
  monitor = demoMonitor(process.env);
  auth = demoAuth(process.env, card);
  // The tck agent keeps push off: the A2A TCK's own push tests post to receivers it runs on
  // loopback, which the SSRF guard refuses, and its expectations of a push-less agent are tested.
  push = agentName === 'echo' ? demoPush(process.env) : { pushNotifications: false };
} catch (error) {
  console.error(`Could not start the demo: ${(error as Error).message}`);
  process.exit(1);
}

// Before the plugin registers: it traces when an SDK is installed by then.
const tracing = startDemoTracing(process.env);
// Request loggers made when a request first logs at an enabled level, not for every request
// (docs/configuration.md, "Logging").
const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'info' }, childLoggerFactory: a2aChildLoggerFactory });
if (tracing !== undefined) app.addHook('onClose', () => tracing.shutdown());
let grpcSummary = '';
let modelSummary = '';
try {
  let executor: AgentExecutor;
  if (agentName === 'langgraph') {
    // Its checkpointer connects to the store's database first (see langgraph-agent.ts).
    const langGraph = await createLangGraphAgent(store, process.env);
    app.addHook('onClose', () => langGraph.close());
    executor = langGraph.executor;
    modelSummary = `; ${langGraph.summary}`;
  } else executor = demoAgents[agentName];
  await app.register(a2aPlugin, {
    agentCard: card,
    executor,
    ...demoOptions(agentName),
    store,
    ...(auth.authenticate ? { authenticate: auth.authenticate } : {}),
    ...(auth.extendedAgentCard ? { extendedAgentCard: auth.extendedAgentCard } : {}),
    ...(process.env.A2A_BASE_URL ? { baseUrl: process.env.A2A_BASE_URL } : {}),
    ...(process.env.A2A_LEASE_TTL_MS ? { leaseTtlMs: Number(process.env.A2A_LEASE_TTL_MS) } : {}),
    ...push,
    ...demoMetrics(process.env),
    ...monitor,
    ...cardSigning,
    ...(draft11 ? { draft11: { generations: true } } : {}),
  });
  grpcSummary = await demoGrpc(app, process.env);
  await app.listen({ host, port });
} catch (error) {
  // Configuration and connection problems carry a message that names the fix; no stack needed.
  console.error(`Could not start the demo: ${(error as Error).message}`);
  process.exit(1);
}
const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
console.log(
  `A2A ${agentName} agent ready; card: http://${shown}:${port}/.well-known/agent-card.json (store ${redact(store)}; ${auth.summary}; ${pushSummary(push)}; ${monitorSummary(monitor)}; ${telemetrySummary(process.env, tracing)}; ${cardSigningSummary(cardSigning)}${draft11 ? '; A2A 1.1 draft: task generations' : ''}${grpcSummary}${modelSummary})`,
);
if (auth.authenticate === undefined && !isLoopback(host)) {
  console.warn(
    `Warning: listening on ${host} without authentication: anyone who can reach this port can read, cancel and continue every task. Set A2A_AUTH_TOKENS or A2A_JWKS_URL.`,
  );
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
