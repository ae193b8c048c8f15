/** `@fastify-a2a/langgraph`: serve a compiled LangGraph.js graph as an A2A agent. */

export { LangGraphAdapterError, type LangGraphAdapterErrorCode } from './errors.js';
export {
  type FromLangGraphOptions,
  fromLangGraph,
  type LangGraphRunnable,
  type StreamedMessage,
  type StreamedMessageMetadata,
} from './from-langgraph.js';
export {
  A2A_STATE_KEY,
  type AuthRequiredValue,
  authRequired,
  type GraphInterrupt,
  interruptState,
  questionParts,
  resumeValue,
} from './wire.js';
