/**
 * The conversation an AI SDK model continues: the messages so far (the SDK's own `ModelMessage`s:
 * the user's, and the response messages of every earlier step), kept in the context state under
 * the `ai-sdk` slot so the next turn — on any worker — passes them back to the model; and the
 * tool call that waits for the user's answer, if the last turn ended with a question.
 */

import type { Message, TurnContext } from '@fastify-a2a/core';
import {
  type ContextStateSlot,
  contextStateSlot,
  type InputContent,
  inputContentOf,
  priorMessages,
} from '@fastify-a2a/core/agent-kit';
import type { FilePart, ModelMessage, TextPart, ToolModelMessage, UserModelMessage } from 'ai';

/** A tool call the model made that only the user can answer (a tool without `execute`, or one needing approval). */
export interface PendingQuestion {
  kind: 'tool-call' | 'approval';
  toolCallId: string;
  toolName: string;
  /** For `approval`: the SDK's approval id, answered with a `tool-approval-response`. */
  approvalId?: string;
}

export interface Conversation {
  /** The model's messages so far, oldest first; JSON (see {@link toJsonMessages}). */
  messages: ModelMessage[];
  /** The question the last turn ended with, which this turn's message answers. */
  pending?: PendingQuestion[];
}

const STATE_KEY = 'ai-sdk';

function parseConversation(value: unknown): Conversation | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const { messages, pending } = value as Partial<Conversation>;
  if (!Array.isArray(messages)) return undefined;
  if (pending !== undefined && !Array.isArray(pending)) return undefined;
  return { messages, ...(pending ? { pending } : {}) };
}

/** The `ai-sdk` key of the context state. */
export const conversationSlot: ContextStateSlot<Conversation> = contextStateSlot(STATE_KEY, parseConversation);

export interface InputOptions {
  /**
   * What a file part sent by URI becomes. `text` (default): a text line naming the file and its
   * URI, so the SDK never fetches a URL a remote party chose (the SDK downloads URLs a provider
   * cannot take itself). `url`: a file part with the URL (http and https only), for a deployment
   * that trusts its clients.
   */
  fileUris: 'text' | 'url';
}

/** A user's A2A message as the SDK's user message: text parts, file parts, and data parts as JSON text. */
export function toUserMessage(message: Pick<Message, 'parts'>, options: InputOptions): UserModelMessage {
  const content = inputContentOf(message).map((item) => toUserContent(item, options));
  return { role: 'user', content };
}

function toUserContent(item: InputContent, options: InputOptions): TextPart | FilePart {
  switch (item.type) {
    case 'text':
      return { type: 'text', text: item.text };
    case 'data':
      // The SDK's messages have no data part: the model reads the JSON.
      return { type: 'text', text: `Data: ${item.json}` };
    case 'file': {
      if (item.base64 !== undefined) {
        const file: FilePart = { type: 'file', data: item.base64, mediaType: item.mediaType };
        if (item.filename !== undefined) file.filename = item.filename;
        return file;
      }
      const uri = item.uri ?? '';
      if (options.fileUris === 'url' && /^https?:\/\//i.test(uri)) {
        const file: FilePart = { type: 'file', data: new URL(uri), mediaType: item.mediaType };
        if (item.filename !== undefined) file.filename = item.filename;
        return file;
      }
      const label = item.filename === undefined ? 'A file' : `A file named ${JSON.stringify(item.filename)}`;
      return { type: 'text', text: `${label} (${item.mediaType}) at ${uri}` };
    }
  }
}

/**
 * The conversation from the task's history, for a context whose state holds none (its first
 * turn, or a state written by something else): the user's messages and the agent's status
 * messages, as text. The answers the agent streamed as artifacts are not in the history.
 */
export function conversationFromHistory(
  turn: Pick<TurnContext, 'task' | 'message'>,
  options: InputOptions,
): ModelMessage[] {
  return priorMessages(turn).map((message): ModelMessage => {
    if (message.role === 'user') return toUserMessage(message, options);
    const text = message.parts
      .map((part) => (part.kind === 'text' ? part.text : part.kind === 'data' ? JSON.stringify(part.data) : ''))
      .filter((piece) => piece !== '')
      .join('\n');
    return { role: 'assistant', content: text };
  });
}

/** Whether the user's answer approves: a data part `{ approved: boolean }`, else text starting with yes/ok/approve/allow. */
export function approves(message: Pick<Message, 'parts'>): boolean {
  for (const part of message.parts) {
    if (part.kind === 'data' && typeof part.data.approved === 'boolean') return part.data.approved;
  }
  const text = message.parts
    .map((part) => (part.kind === 'text' ? part.text : ''))
    .join(' ')
    .trim();
  return /^(y|yes|ok|okay|approve|approved|allow|go ahead|sure)\b/i.test(text);
}

/**
 * The tool message that answers the pending questions with the user's message: the first one
 * gets the answer (its text, data as JSON), any other an error result (the model asked several
 * things at once). An approval gets a `tool-approval-response`.
 */
export function answerPending(
  pending: readonly PendingQuestion[],
  message: Pick<Message, 'parts'>,
  answered: boolean,
): ToolModelMessage {
  const content: ToolModelMessage['content'] = pending.map((question, index) => {
    if (question.kind === 'approval') {
      const approved = answered && index === 0 && approves(message);
      return {
        type: 'tool-approval-response',
        approvalId: question.approvalId ?? '',
        approved,
        ...(approved ? {} : { reason: answered && index === 0 ? 'The user declined.' : 'The user did not answer.' }),
      };
    }
    if (!answered || index > 0) {
      return {
        type: 'tool-result',
        toolCallId: question.toolCallId,
        toolName: question.toolName,
        output: {
          type: 'error-text',
          value: answered ? 'Ask one question at a time: only the first was answered.' : 'The user did not answer.',
        },
      };
    }
    const data = message.parts.filter((part) => part.kind === 'data').map((part) => part.data);
    const text = message.parts
      .map((part) => (part.kind === 'text' ? part.text : ''))
      .filter((piece) => piece !== '')
      .join('\n');
    return {
      type: 'tool-result',
      toolCallId: question.toolCallId,
      toolName: question.toolName,
      output:
        data.length === 0
          ? { type: 'text', value: text }
          : { type: 'json', value: JSON.parse(JSON.stringify({ text, data })) },
    };
  });
  return { role: 'tool', content };
}

/**
 * The messages as JSON, as the store keeps them: bytes (a `Uint8Array` in a file part) become
 * base64 text, which the SDK reads back as the same bytes; a URL its text; undefined fields vanish.
 */
export function toJsonMessages(messages: readonly ModelMessage[]): ModelMessage[] {
  return JSON.parse(
    JSON.stringify(messages, (_key, value: unknown) =>
      value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value,
    ),
  ) as ModelMessage[];
}

/**
 * Keeps at most `max` messages, dropping the oldest; the kept ones start at a user message, so a
 * tool result never loses the tool call it answers. Fewer than `max` may remain, never none of
 * the last user message onwards.
 */
export function trimMessages(messages: readonly ModelMessage[], max: number): ModelMessage[] {
  if (messages.length <= max) return [...messages];
  let start = messages.length - max;
  while (start < messages.length && messages[start]?.role !== 'user') start += 1;
  if (start === messages.length) {
    // No user message in the window: keep from the last one before it.
    start = messages.length - max;
    while (start > 0 && messages[start]?.role !== 'user') start -= 1;
  }
  return messages.slice(start);
}
