/**
 * How LangGraph's values become A2A parts and back: an interrupt's value becomes the question of
 * an `input-required` (or `auth-required`) status, and the user's answer becomes the value the
 * graph resumes with (`Command({ resume })`).
 */

import { dataPart, dataValue, type Message, type Part } from '@fastify-a2a/core';

/** One pending `interrupt(value)` of a graph: its id (LangGraph 1.x) and the value it was raised with. */
export interface GraphInterrupt {
  readonly id?: string;
  readonly value?: unknown;
}

/**
 * The key of an interrupt value that asks for authentication rather than input: an interrupt raised
 * with `{ a2aState: 'auth-required', … }` (see {@link authRequired}) ends the turn `auth-required`
 * (A2A §6.3 TaskState), any other ends it `input-required`.
 */
export const A2A_STATE_KEY = 'a2aState';

/** What an `auth-required` interrupt carries: the question (what to authenticate for, and how) and any details. */
export type AuthRequiredValue = Record<string, unknown> & { a2aState: 'auth-required'; question: string };

/**
 * The value to raise an interrupt with when the graph needs the caller to authenticate:
 * `interrupt(authRequired('Sign in at https://… and send any message.'))`. The turn ends
 * `auth-required` with `question` as its text and the whole value as a data part; the next message on
 * the task resumes the graph, as for any interrupt.
 */
export function authRequired(question: string, details: Record<string, unknown> = {}): AuthRequiredValue {
  return { ...details, [A2A_STATE_KEY]: 'auth-required', question };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** `input-required`, or `auth-required` when any of the interrupts asks for it. */
export function interruptState(interrupts: readonly GraphInterrupt[]): 'input-required' | 'auth-required' {
  return interrupts.some((i) => isRecord(i.value) && i.value[A2A_STATE_KEY] === 'auth-required')
    ? 'auth-required'
    : 'input-required';
}

/**
 * The question's parts, for each interrupt in order: a string value is a text part; an object is a
 * text part of its `question` (or `message`) string when it has one, then a data part holding the
 * whole object, so a client that renders structured requests (a tool call to approve, a form) has
 * them; any other JSON value is a data part.
 */
export function questionParts(interrupts: readonly GraphInterrupt[]): Part[] {
  const parts: Part[] = [];
  for (const { value } of interrupts) {
    if (typeof value === 'string') {
      parts.push({ kind: 'text', text: value });
      continue;
    }
    if (isRecord(value)) {
      const text = typeof value.question === 'string' ? value.question : value.message;
      if (typeof text === 'string' && text !== '') parts.push({ kind: 'text', text });
    }
    if (value !== undefined) parts.push(dataPart(value));
  }
  // An interrupt raised without a value still has to ask something (a Message needs a part, §6.4).
  if (parts.length === 0) parts.push({ kind: 'text', text: 'The agent is waiting for your input.' });
  return parts;
}

/**
 * The value a message resumes the graph with: its text when it has any, else the value of its first
 * data part (so a client can answer a structured request with structured data), else "".
 */
export function resumeValue(message: Message, text: string): unknown {
  if (text !== '') return text;
  const data = message.parts.find((p) => p.kind === 'data');
  return data === undefined ? '' : dataValue(data);
}

/** The text of a LangChain message's content: a string, or the text blocks of a content array. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const block of content) {
    if (typeof block === 'string') text += block;
    else if (isRecord(block) && block.type === 'text' && typeof block.text === 'string') text += block.text;
  }
  return text;
}
