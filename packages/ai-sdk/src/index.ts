export {
  type A2AToolInput,
  type A2AToolOptions,
  type A2AToolOutput,
  a2aTool,
  a2aToolFor,
  type RemoteConversation,
  remoteConversationIn,
} from './a2a-tool.js';
export { type Conversation, conversationSlot, type PendingQuestion } from './conversation.js';
export { type AiSdkRun, type AiSdkRunInput, type FromAiSdkOptions, fromAiSdk, type QuestionOf } from './executor.js';
export type { ProgressData, ProgressMode } from './progress.js';
