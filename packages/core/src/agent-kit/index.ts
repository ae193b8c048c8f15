/**
 * `@fastify-a2a/core/agent-kit`: what every agent-framework adapter needs, on top of the executor
 * contract only (`TurnContext`): text deltas coalesced into the chunks of one artifact, a question
 * ending the turn `input-required`, a readable message from whatever the framework threw,
 * conversation state kept in the context state, and the user's message as model input. An adapter
 * for a new framework maps the framework's events onto these and stays a thin file.
 *
 * Cancellation needs no helper: `turn.signal` is an AbortSignal, which is what the frameworks take
 * (`abortSignal`, `signal`); {@link runAgentTurn} keeps the abort's throw from failing the task.
 */

export { type ContextStateSlot, contextStateSlot } from './context-state.js';
export { type InputContent, inputContentOf, priorMessages, toInputContent, UNKNOWN_MEDIA_TYPE } from './input.js';
export {
  DEFAULT_MAX_CHARS,
  DEFAULT_MAX_DELAY_MS,
  splitText,
  type TextArtifactOptions,
  TextArtifactStream,
} from './text-stream.js';
export {
  answersQuestion,
  askUser,
  MAX_ERROR_MESSAGE_LENGTH,
  type Question,
  type RunAgentTurnOptions,
  readableErrorMessage,
  runAgentTurn,
} from './turn-end.js';
