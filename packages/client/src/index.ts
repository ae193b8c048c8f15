export type { Artifact, Message, Part, StreamResult, Task, TaskState } from '@fastify-a2a/core/protocol';
export { type CallAgentOptions, type CallAgentResult, callAgent } from './call-agent.js';
export {
  type AgentEndpoint,
  type Binding,
  clearCardCache,
  DEFAULT_PREFERENCES,
  type InterfacePreference,
  type ResolvedCard,
  resolveCard,
  selectEndpoint,
  type Version,
} from './card.js';
export { type CardVerification, type VerifyCardOptions, verifyCardSignatures } from './card-verify.js';
export {
  A2AClient,
  type CallOptions,
  type ClientStreamEvent,
  type ConnectOptions,
  connect,
  connectEndpoint,
  endsStream,
  type SendInput,
  type SendOptions,
  type SendResult,
  stateOf,
  type WaitOptions,
} from './client.js';
export { A2AClientError, type ClientErrorKind } from './errors.js';
export { type Credentials, type HeaderValue, resolveHeaderValue } from './headers.js';
export { type RetryOptions, retryAfterMs } from './http.js';
