/** `@fastify-a2a/langgraph`: serve a compiled LangGraph.js graph as an A2A agent. */

export {
  type A2AToolArtifact,
  type A2AToolOptions,
  a2aTool,
  type RemoteConversation,
  remoteConversationIn,
} from './a2a-tool.js';
export { LangGraphAdapterError, type LangGraphAdapterErrorCode } from './errors.js';
export {
  type ArtifactStreamOptions,
  type FromLangGraphOptions,
  fromLangGraph,
  INTERRUPTS_METADATA_KEY,
  type LangGraphRunnable,
  type StreamedMessage,
  type StreamedMessageMetadata,
} from './from-langgraph.js';
export { type HumanContentBlock, type HumanContentOptions, humanContent } from './input.js';
export {
  A2A_STATE_KEY,
  type AuthRequiredValue,
  authRequired,
  contentText,
  type GraphInterrupt,
  interruptState,
  questionParts,
  resumeValue,
} from './wire.js';
