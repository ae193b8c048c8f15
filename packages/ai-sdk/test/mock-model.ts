/**
 * The AI SDK's own mock language model (`MockLanguageModelV3` from `ai/test`), scripted: each call
 * answers with the stream parts `script` returns for the prompt it was given, one part every
 * `delayMs` (the SDK's `simulateReadableStream`). A model that answers from what it is sent is how
 * these tests see what the adapter passed to it (the conversation, a tool result, a file).
 */

import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';

// The provider interface's types, as the mock model names them (no import of @ai-sdk/provider).
type CallOptions = Parameters<MockLanguageModelV3['doStream']>[0];
type StreamResult = Awaited<ReturnType<MockLanguageModelV3['doStream']>>;
export type Prompt = CallOptions['prompt'];
export type LanguageModelV3StreamPart = StreamResult['stream'] extends ReadableStream<infer T> ? T : never;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
};

/** A text answer as deltas of about `tokenChars` characters each, then `finish`. */
export function textAnswer(text: string, tokenChars = 4): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: 'text-start', id: 'text' }];
  for (let i = 0; i < text.length; i += tokenChars) {
    parts.push({ type: 'text-delta', id: 'text', delta: text.slice(i, i + tokenChars) });
  }
  parts.push({ type: 'text-end', id: 'text' }, finish('stop'));
  return parts;
}

/** One tool call, then `finish` with reason tool-calls (the loop runs the tool and calls the model again). */
export function toolCall(
  toolName: string,
  input: unknown,
  toolCallId = `call-${toolName}`,
): LanguageModelV3StreamPart[] {
  return [{ type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) }, finish('tool-calls')];
}

export function finish(reason: 'stop' | 'tool-calls'): LanguageModelV3StreamPart {
  return { type: 'finish', finishReason: { unified: reason, raw: undefined }, usage };
}

/** The text of the prompt's last message of `role`, or undefined. */
export function lastText(prompt: Prompt, role: 'user' | 'assistant' = 'user'): string | undefined {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i];
    if (message?.role !== role) continue;
    return message.content
      .map((part) => (part.type === 'text' ? part.text : ''))
      .filter(Boolean)
      .join(' ');
  }
  return undefined;
}

export interface ScriptedModel {
  model: MockLanguageModelV3;
  /** Every call's prompt, in order. */
  prompts: Prompt[];
  /** Every call's abort signal, in order. */
  signals: Array<AbortSignal | undefined>;
}

export function scriptedModel(
  script: (prompt: Prompt, call: number) => LanguageModelV3StreamPart[],
  delayMs = 0,
): ScriptedModel {
  const prompts: Prompt[] = [];
  const signals: Array<AbortSignal | undefined> = [];
  const model = new MockLanguageModelV3({
    doStream: async (options) => {
      prompts.push(structuredClone(options.prompt));
      signals.push(options.abortSignal);
      const chunks = script(options.prompt, prompts.length);
      return { stream: simulateReadableStream({ chunks, initialDelayInMs: delayMs, chunkDelayInMs: delayMs }) };
    },
  });
  return { model, prompts, signals };
}
