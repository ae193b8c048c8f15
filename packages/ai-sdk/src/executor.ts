/**
 * `fromAiSdk`: an AI SDK `streamText` call, or an agent (`ToolLoopAgent` or any `Agent`), served
 * as an A2A executor. One A2A turn is one run of the SDK's tool loop:
 *
 * - text deltas become chunks of one artifact, coalesced (the agent kit's TextArtifactStream);
 * - reasoning, tool calls and tool results become `working` status updates;
 * - a tool call the loop leaves unanswered (a tool without `execute`) or one needing approval ends
 *   the turn `input-required` with the question; the answer resumes the loop, on any worker;
 * - the conversation (the SDK's messages) is kept in the context state and passed back next turn;
 * - `turn.signal` is the call's `abortSignal`; an error of the model or a tool fails the task with
 *   a readable message.
 */

import type { AgentExecutor, TurnContext } from '@fastify-a2a/core';
import {
  answersQuestion,
  askUser,
  readableErrorMessage,
  runAgentTurn,
  TextArtifactStream,
} from '@fastify-a2a/core/agent-kit';
import type { Agent, AgentStreamParameters, ModelMessage, StreamTextResult, TextStreamPart, ToolSet } from 'ai';
import {
  answerPending,
  type Conversation,
  conversationFromHistory,
  conversationSlot,
  type InputOptions,
  type PendingQuestion,
  toJsonMessages,
  toUserMessage,
  trimMessages,
} from './conversation.js';
import { jsonOf, type ProgressData, type ProgressMode, progressParts } from './progress.js';

// biome-ignore lint/suspicious/noExplicitAny: any tool set and output: the adapter reads only the parts common to all
type AnyStreamResult = StreamTextResult<any, any>;
// biome-ignore lint/suspicious/noExplicitAny: an agent of any call options, tools and output
type AnyAgent = Agent<any, any, any>;

/** What the adapter hands a `run` function for one turn. */
export interface AiSdkRunInput {
  /** The conversation so far, ending with this turn's user message (or the answer to the agent's question). */
  messages: ModelMessage[];
  /** The turn's signal: aborted on cancel, turn timeout or shutdown. Pass it to `streamText`. */
  abortSignal: AbortSignal;
  /** The turn, for anything else (the caller, the task). Report through the adapter, not through it. */
  turn: TurnContext;
}

/** Runs the model for one turn: `({ messages, abortSignal }) => streamText({ model, tools, messages, abortSignal })`. */
export type AiSdkRun = (input: AiSdkRunInput) => AnyStreamResult | PromiseLike<AnyStreamResult>;

/** A question for the user made from the tool call that asks it. */
export type QuestionOf = (call: { toolName: string; input: unknown; kind: PendingQuestion['kind'] }) => string;

export interface FromAiSdkOptions {
  /**
   * How reasoning, tool calls and tool results reach the client, as `working` status messages:
   * `text` (a sentence), `data` (a data part `{ type: 'tool-call' | 'tool-result' | 'tool-error' |
   * 'reasoning', … }`), `text+data` (both), or `none`. @default 'text+data'
   */
  progress?: ProgressMode;
  /** Whether reasoning text is shown (as progress). @default true */
  reasoning?: boolean;
  /** The answer's artifact: its name, and the coalescing bounds (the agent kit's TextArtifactStream). */
  artifact?: { name?: string; maxDelayMs?: number; maxChars?: number };
  /**
   * What a tool that throws does: `fail` ends the task `failed` with "Tool X failed: message";
   * `model` gives the error to the model as the tool's result and lets the loop go on (the SDK's
   * own behaviour). @default 'fail'
   */
  toolErrors?: 'fail' | 'model';
  /** The question asked when a tool call waits for the user. @default the input's `question` (or `prompt`, `message`) field, else a sentence naming the tool */
  question?: QuestionOf;
  /** Most messages kept in the context state; older ones are dropped at a user message. @default 200 */
  maxMessages?: number;
  /** What a file sent by URI becomes (see {@link InputOptions.fileUris}). @default 'text' */
  fileUris?: InputOptions['fileUris'];
  /** For an agent with call options (`callOptionsSchema`): the options of one turn's call. */
  agentOptions?: (turn: TurnContext) => unknown;
  /** Called with what the model or a tool threw before the task fails (e.g. to log its stack, which the client never sees). */
  onError?: (error: unknown, turn: TurnContext) => void;
}

function isAgent(source: AnyAgent | AiSdkRun): source is AnyAgent {
  return typeof source === 'object' && source !== null && typeof (source as AnyAgent).stream === 'function';
}

const QUESTION_FIELDS = ['question', 'prompt', 'message', 'text'];

const defaultQuestion: QuestionOf = ({ toolName, input, kind }) => {
  if (kind === 'approval') {
    return `May I run ${toolName} with ${JSON.stringify(jsonOf(input))}? Answer yes or no.`;
  }
  if (input !== null && typeof input === 'object') {
    for (const field of QUESTION_FIELDS) {
      const value = (input as Record<string, unknown>)[field];
      if (typeof value === 'string' && value.trim() !== '') return value;
    }
  }
  return `${toolName} needs your answer: ${JSON.stringify(jsonOf(input))}`;
};

/**
 * The messages the loop added (the assistant's, the tools' results). ai 6 has them on `response`;
 * ai 7 moved them to `responseMessages`, which is read when present.
 */
async function responseMessagesOf(result: AnyStreamResult): Promise<ModelMessage[]> {
  const moved = (result as { responseMessages?: PromiseLike<ModelMessage[]> }).responseMessages;
  if (moved !== undefined) return await moved;
  return (await result.response).messages;
}

/** Thrown inside the loop to fail the turn for a tool's error (`toolErrors: 'fail'`). */
class ToolFailure extends Error {}

/**
 * Serves an AI SDK agent or `streamText` call as an A2A executor.
 *
 * ```ts
 * const agent = new ToolLoopAgent({ model, tools, instructions });
 * app.register(a2aPlugin, { executor: fromAiSdk(agent), card, store });
 * // or
 * fromAiSdk(({ messages, abortSignal }) => streamText({ model, tools, messages, abortSignal, stopWhen: stepCountIs(5) }));
 * ```
 */
export function fromAiSdk(source: AnyAgent | AiSdkRun, options: FromAiSdkOptions = {}): AgentExecutor {
  const run: AiSdkRun = isAgent(source)
    ? ({ messages, abortSignal, turn }) => {
        const call = { messages, abortSignal } as AgentStreamParameters<unknown, ToolSet>;
        // An agent declaring call options gets them from the turn.
        if (options.agentOptions) (call as { options?: unknown }).options = options.agentOptions(turn);
        return source.stream(call);
      }
    : source;
  const progress = options.progress ?? 'text+data';
  const showReasoning = options.reasoning ?? true;
  const toolErrors = options.toolErrors ?? 'fail';
  const questionOf = options.question ?? defaultQuestion;
  const maxMessages = options.maxMessages ?? 200;
  const inputOptions: InputOptions = { fileUris: options.fileUris ?? 'text' };
  if (!Number.isInteger(maxMessages) || maxMessages < 1) {
    throw new RangeError(`fromAiSdk: maxMessages must be an integer >= 1, got ${maxMessages}.`);
  }

  return {
    execute: (turn) =>
      runAgentTurn(turn, () => runTurn(turn), {
        describeError: (error) => readableErrorMessage(error, 'The model failed without a message.'),
        ...(options.onError ? { onError: (error: unknown) => options.onError?.(error, turn) } : {}),
      }),
  };

  async function runTurn(turn: TurnContext): Promise<void> {
    const saved = conversationSlot.read(turn);
    const history = saved?.messages ?? conversationFromHistory(turn, inputOptions);
    const input: ModelMessage[] = [...history];
    if (saved?.pending && saved.pending.length > 0) {
      // The last turn asked; this message answers it, or (a new task in the context) moves on.
      const answered = answersQuestion(turn);
      input.push(answerPending(saved.pending, turn.message, answered));
      if (!answered) input.push(toUserMessage(turn.message, inputOptions));
    } else {
      input.push(toUserMessage(turn.message, inputOptions));
    }

    const text = new TextArtifactStream(turn, {
      name: options.artifact?.name ?? 'response',
      ...(options.artifact?.maxDelayMs !== undefined ? { maxDelayMs: options.artifact.maxDelayMs } : {}),
      ...(options.artifact?.maxChars !== undefined ? { maxChars: options.artifact.maxChars } : {}),
    });
    const show = async (data: ProgressData): Promise<void> => {
      const parts = progressParts(data, progress);
      if (parts.length === 0) return;
      await text.flush(); // the text written before this step reaches the client first
      await turn.working(parts);
    };

    const result = await run({ messages: input, abortSignal: turn.signal, turn });
    const calls = new Map<string, { toolName: string; input: unknown; providerExecuted: boolean }>();
    const settled = new Set<string>();
    const approvals: PendingQuestion[] = [];
    const reasoning = new Map<string, string>();
    let streamError: { error: unknown } | undefined;
    try {
      for await (const part of result.fullStream as AsyncIterable<TextStreamPart<ToolSet>>) {
        switch (part.type) {
          case 'text-delta':
            await text.write(part.text);
            break;
          case 'reasoning-delta':
            if (showReasoning) reasoning.set(part.id, (reasoning.get(part.id) ?? '') + part.text);
            break;
          case 'reasoning-end': {
            const thought = reasoning.get(part.id);
            reasoning.delete(part.id);
            if (thought?.trim()) await show({ type: 'reasoning', text: thought });
            break;
          }
          case 'tool-call':
            calls.set(part.toolCallId, {
              toolName: part.toolName,
              input: part.input,
              providerExecuted: part.providerExecuted === true,
            });
            await show({
              type: 'tool-call',
              toolCallId: part.toolCallId,
              toolName: part.toolName,
              input: jsonOf(part.input),
            });
            break;
          case 'tool-result':
            if (part.preliminary) break;
            settled.add(part.toolCallId);
            await show({
              type: 'tool-result',
              toolCallId: part.toolCallId,
              toolName: part.toolName,
              output: jsonOf(part.output),
            });
            break;
          case 'tool-error': {
            settled.add(part.toolCallId);
            const message = readableErrorMessage(part.error, 'failed without a message');
            await show({ type: 'tool-error', toolCallId: part.toolCallId, toolName: part.toolName, error: message });
            if (toolErrors === 'fail') throw new ToolFailure(`Tool ${part.toolName} failed: ${message}`);
            break;
          }
          case 'tool-output-denied':
            settled.add(part.toolCallId);
            break;
          case 'tool-approval-request':
            approvals.push({
              kind: 'approval',
              approvalId: part.approvalId,
              toolCallId: part.toolCall.toolCallId,
              toolName: part.toolCall.toolName,
            });
            break;
          case 'file':
            // A file the model generated (an image…): an artifact of its own, after the text before it.
            await text.flush();
            await turn.artifact({
              name: 'file',
              parts: [{ kind: 'file', file: { bytes: part.file.base64, mimeType: part.file.mediaType } }],
            });
            break;
          case 'error':
            // The SDK reports a model's failure as a stream part and ends the stream.
            streamError ??= { error: part.error };
            break;
          default:
            break;
        }
      }
    } catch (error) {
      text.discard();
      throw error;
    }
    if (turn.signal.aborted) {
      // Canceled (or timed out): the runtime ends the task; nothing more is sent.
      text.discard();
      return;
    }
    if (streamError) {
      text.discard();
      throw streamError.error;
    }

    const responseMessages = await responseMessagesOf(result);
    const questions: PendingQuestion[] = [...approvals];
    for (const [toolCallId, call] of calls) {
      if (settled.has(toolCallId) || call.providerExecuted) continue;
      if (approvals.some((approval) => approval.toolCallId === toolCallId)) continue;
      questions.push({ kind: 'tool-call', toolCallId, toolName: call.toolName });
    }
    const conversation: Conversation = {
      messages: trimMessages(toJsonMessages([...input, ...responseMessages]), maxMessages),
    };
    if (questions.length > 0) conversation.pending = questions;
    // The state first: the final status frees the context, whose next turn may start at once elsewhere.
    await conversationSlot.write(turn, conversation);
    await text.close();
    const first = questions[0];
    if (first) {
      const call = calls.get(first.toolCallId);
      await askUser(turn, {
        text: questionOf({ toolName: first.toolName, input: call?.input, kind: first.kind }),
        data: {
          type: first.kind === 'approval' ? 'tool-approval-request' : 'tool-call',
          toolCallId: first.toolCallId,
          toolName: first.toolName,
          input: jsonOf(call?.input) ?? null,
        },
      });
      return;
    }
    await turn.complete();
  }
}
