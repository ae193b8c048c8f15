export type { AgentExecutor, AgentExecutorLike, ArtifactInput, MessageInput, TurnContext } from '@fastify-a2a/core';
export { type A2APluginOptions, type AgentCardInput, a2aPlugin, a2aPlugin as default } from './plugin.js';
