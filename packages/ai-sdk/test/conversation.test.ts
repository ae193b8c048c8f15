/**
 * The conversation's pieces without a server: the user's parts as the SDK's user message, the
 * history fallback, answers to pending questions, the JSON the store keeps, trimming.
 */

import type { Message, Task } from '@fastify-a2a/core';
import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import {
  answerPending,
  approves,
  conversationFromHistory,
  toJsonMessages,
  toUserMessage,
  trimMessages,
} from '../src/conversation.js';

const message = (role: 'user' | 'agent', text: string, messageId: string): Message => ({
  kind: 'message',
  role,
  messageId,
  parts: [{ kind: 'text', text }],
});

describe('conversation', () => {
  it("rebuilds the model's messages from the task's history, without this turn's message", () => {
    const current = message('user', 'Lyon', 'm3');
    const task: Task = {
      kind: 'task',
      id: 't',
      contextId: 'c',
      status: { state: 'working' },
      history: [message('user', 'Book a train', 'm1'), message('agent', 'Which city?', 'm2'), current],
    };
    expect(conversationFromHistory({ task, message: current }, { fileUris: 'text' })).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Book a train' }] },
      { role: 'assistant', content: 'Which city?' },
    ]);
  });

  it("a file by http URI becomes a URL only with fileUris 'url'; other schemes never", () => {
    const file = { kind: 'file' as const, file: { uri: 'https://example.com/a.png', mimeType: 'image/png' } };
    const local = { kind: 'file' as const, file: { uri: 'file:///etc/passwd' } };
    expect(toUserMessage({ parts: [file] }, { fileUris: 'url' }).content).toEqual([
      { type: 'file', data: new URL('https://example.com/a.png'), mediaType: 'image/png' },
    ]);
    expect(toUserMessage({ parts: [local] }, { fileUris: 'url' }).content).toEqual([
      { type: 'text', text: 'A file (application/octet-stream) at file:///etc/passwd' },
    ]);
  });

  it('answers the first pending question with the reply, any other with an error; an unanswered one says so', () => {
    const pending = [
      { kind: 'tool-call' as const, toolCallId: 'a', toolName: 'askUser' },
      { kind: 'tool-call' as const, toolCallId: 'b', toolName: 'askUser' },
    ];
    const reply = {
      parts: [
        { kind: 'text' as const, text: 'Friday' },
        { kind: 'data' as const, data: { day: 5 } },
      ],
    };
    expect(answerPending(pending, reply, true).content).toEqual([
      {
        type: 'tool-result',
        toolCallId: 'a',
        toolName: 'askUser',
        output: { type: 'json', value: { text: 'Friday', data: [{ day: 5 }] } },
      },
      {
        type: 'tool-result',
        toolCallId: 'b',
        toolName: 'askUser',
        output: { type: 'error-text', value: 'Ask one question at a time: only the first was answered.' },
      },
    ]);
    expect(answerPending(pending.slice(0, 1), reply, false).content).toEqual([
      {
        type: 'tool-result',
        toolCallId: 'a',
        toolName: 'askUser',
        output: { type: 'error-text', value: 'The user did not answer.' },
      },
    ]);
  });

  it('reads an approval from a yes, or from a data part', () => {
    expect(approves({ parts: [{ kind: 'text', text: 'Yes please' }] })).toBe(true);
    expect(approves({ parts: [{ kind: 'text', text: 'no, yes is wrong' }] })).toBe(false);
    expect(approves({ parts: [{ kind: 'text', text: 'yesterday' }] })).toBe(false);
    expect(approves({ parts: [{ kind: 'data', data: { approved: true } }] })).toBe(true);
    const denied = answerPending(
      [{ kind: 'approval', approvalId: 'ap', toolCallId: 'c', toolName: 'rm' }],
      { parts: [{ kind: 'text', text: 'no' }] },
      true,
    );
    expect(denied.content).toEqual([
      { type: 'tool-approval-response', approvalId: 'ap', approved: false, reason: 'The user declined.' },
    ]);
  });

  it('keeps the messages as JSON: bytes become base64, URLs text', () => {
    const messages: ModelMessage[] = [
      {
        role: 'user',
        content: [
          { type: 'file', data: new Uint8Array([104, 105]), mediaType: 'text/plain' },
          { type: 'file', data: new URL('https://example.com/x'), mediaType: 'image/png' },
        ],
      },
    ];
    expect(toJsonMessages(messages)).toEqual([
      {
        role: 'user',
        content: [
          { type: 'file', data: 'aGk=', mediaType: 'text/plain' },
          { type: 'file', data: 'https://example.com/x', mediaType: 'image/png' },
        ],
      },
    ]);
  });

  it('trims to a user message, never between a tool call and its result', () => {
    const user = (text: string): ModelMessage => ({ role: 'user', content: text });
    const assistant: ModelMessage = {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: 'x', toolName: 't', input: {} }],
    };
    const tool: ModelMessage = {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'x', toolName: 't', output: { type: 'text', value: 'ok' } }],
    };
    const messages = [user('1'), assistant, tool, user('2'), assistant, tool];
    expect(trimMessages(messages, 10)).toEqual(messages);
    expect(trimMessages(messages, 4)).toEqual([user('2'), assistant, tool]);
    // No user message in the window: back to the last one before it.
    expect(trimMessages(messages, 2)).toEqual([user('2'), assistant, tool]);
  });
});
