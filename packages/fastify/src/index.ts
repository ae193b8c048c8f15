export type {
  AccessRule,
  AgentExecutor,
  AgentExecutorLike,
  ArtifactInput,
  AuthorizeHook,
  CallContext,
  Caller,
  MessageInput,
  OperationGroup,
  OperationName,
  Principal,
  TurnContext,
} from '@fastify-a2a/core';
export { permissionDenied } from '@fastify-a2a/core';
export { type A2AAgent, A2AAgents } from './agents.js';
export { type AuthenticateFunction, type AuthenticateOption, principalOfRequest } from './auth/authentication.js';
export {
  type ApiKeyOptions,
  type Authenticator,
  apiKeys,
  type BearerTokensOptions,
  bearerTokens,
  CredentialsRejected,
  type PrincipalInput,
} from './auth/authenticators.js';
export { type JwtOptions, jwtBearer } from './auth/jwt.js';
export type { AgentCardSigningOptions, CardSigningKey } from './card-signing.js';
export { type MonitorOptions, type OperatorCheck, operatorTokens } from './monitor/options.js';
export { type A2APluginOptions, type AgentCardInput, type ExtendedAgentCardOption, OPTION_SPEC } from './options.js';
export { a2aPlugin, a2aPlugin as default } from './plugin.js';
export { a2aChildLoggerFactory } from './request-logger.js';
export { createStoreFromUrl, redact, type StoreUrlOptions } from './store-url.js';
export type { MetricsAuthorize, MetricsOptions, TracingOptions } from './telemetry/options.js';
export { parentContextOf } from './telemetry/tracing.js';
export type { TenantCheck } from './tenants.js';
