/** `@fastify-a2a/langgraph`: serve a compiled LangGraph.js graph as an A2A agent. */

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
