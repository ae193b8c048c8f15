/**
 * What a client sees of the model's work before the answer: reasoning, tool calls and tool
 * results, as `working` status updates (§7.2.2 TaskStatusUpdateEvent). Each is a text part a
 * person reads, a data part a client renders, or both (the `progress` option).
 */

import type { Part } from '@fastify-a2a/core';

export type ProgressMode = 'text' | 'data' | 'text+data' | 'none';

/** The data part of a progress update: `type` names the SDK event it comes from. */
export type ProgressData =
  | { type: 'reasoning'; text: string }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool-result'; toolCallId: string; toolName: string; output: unknown }
  | { type: 'tool-error'; toolCallId: string; toolName: string; error: string };

/** Longest tool input or output quoted in a progress text. */
const MAX_QUOTED = 200;

function quote(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  } catch {
    text = String(value);
  }
  return text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED - 1)}…` : text;
}

/** What a tool's input or output becomes in a data part: JSON, or its text when it is not JSON. */
export function jsonOf(value: unknown): unknown {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? null : JSON.parse(text);
  } catch {
    return String(value);
  }
}

function describe(data: ProgressData): string {
  switch (data.type) {
    case 'reasoning':
      return data.text;
    case 'tool-call':
      return `Calling ${data.toolName}(${quote(data.input)})`;
    case 'tool-result':
      return `${data.toolName} returned ${quote(data.output)}`;
    case 'tool-error':
      return `${data.toolName} failed: ${data.error}`;
  }
}

/** The parts of a progress update in `mode`; none for `none`. */
export function progressParts(data: ProgressData, mode: ProgressMode): Part[] {
  const parts: Part[] = [];
  if (mode === 'text' || mode === 'text+data') parts.push({ kind: 'text', text: describe(data) });
  if (mode === 'data' || mode === 'text+data') parts.push({ kind: 'data', data: { ...data } });
  return parts;
}
