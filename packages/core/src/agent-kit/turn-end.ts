/**
 * How an adapter ends a turn the framework did not finish: a question for the user
 * (`input-required`, `auth-required`: §6.3, the task pauses and the next message carrying its
 * taskId resumes it, on any worker), or an error (`failed`) with a message a user can read.
 */

import type { TurnContext } from '../executor.js';
import type { Metadata, Part } from '../model/types.js';

export interface Question {
  /** What the user reads: the question, as a text part of the status message. */
  text: string;
  /** Structured detail for a client that renders it (e.g. the tool's arguments), as a data part. */
  data?: Record<string, unknown>;
  /** `auth`: the user must authenticate first (`auth-required`). @default 'input' */
  kind?: 'input' | 'auth';
  /** The status update's metadata. */
  metadata?: Metadata;
}

/**
 * Ends the turn with a question for the user: status `input-required` (or `auth-required`) whose
 * message carries the question. Resolves once that status is in the store. Write any context
 * state the next turn needs (what was asked, which tool call waits) before calling this: the
 * final status frees the context for its next turn, which may start at once on another worker.
 */
export function askUser(turn: Pick<TurnContext, 'requireInput' | 'requireAuth'>, question: Question): Promise<void> {
  const parts: Part[] = [{ kind: 'text', text: question.text }];
  if (question.data !== undefined) parts.push({ kind: 'data', data: question.data });
  return question.kind === 'auth'
    ? turn.requireAuth(parts, question.metadata)
    : turn.requireInput(parts, question.metadata);
}

/** Whether this turn's message answers a question the agent asked (the task was `input-required` or `auth-required`). */
export function answersQuestion(turn: Pick<TurnContext, 'previousState'>): boolean {
  return turn.previousState === 'input-required' || turn.previousState === 'auth-required';
}

/** Longest error message shown to a client; the rest is cut (with an ellipsis). */
export const MAX_ERROR_MESSAGE_LENGTH = 500;

/** C0/C1 control characters other than tab and newline, and DEL: a message must not carry terminal sequences. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * A message a user can read, from whatever was thrown: an Error's `message` (never its stack or
 * cause chain), a string, or an object's string `message`; control characters removed, at most
 * {@link MAX_ERROR_MESSAGE_LENGTH} characters. `fallback` when none of these gives any text.
 */
export function readableErrorMessage(error: unknown, fallback = 'The agent failed without a message.'): string {
  let text: string | undefined;
  if (typeof error === 'string') text = error;
  else if (error !== null && typeof error === 'object' && 'message' in error && typeof error.message === 'string') {
    text = error.message;
  }
  const clean = (text ?? '').replace(CONTROL, '').trim();
  if (clean === '') return fallback;
  return clean.length > MAX_ERROR_MESSAGE_LENGTH ? `${clean.slice(0, MAX_ERROR_MESSAGE_LENGTH - 1)}…` : clean;
}

export interface RunAgentTurnOptions {
  /** Turns what the framework threw into the failed status's message. @default {@link readableErrorMessage} */
  describeError?: (error: unknown) => string;
  /**
   * Called with what the framework threw before the task fails, e.g. to log it with its stack
   * (which never reaches the client). Not called when the turn was aborted.
   */
  onError?: (error: unknown) => void;
}

/**
 * Runs an adapter's turn body. If it throws, the turn ends `failed` with a readable message
 * (§6.3: `failed` is terminal), unless the turn's signal is aborted: then the throw is the
 * framework reacting to the abort (a cancel, the turn timing out, the server closing) and the
 * runtime ends the task itself (`canceled`, or `failed` with the reason), so nothing is sent.
 */
export async function runAgentTurn(
  turn: Pick<TurnContext, 'signal' | 'fail'>,
  body: () => Promise<void>,
  options: RunAgentTurnOptions = {},
): Promise<void> {
  try {
    await body();
  } catch (error) {
    if (turn.signal.aborted) return;
    options.onError?.(error);
    await turn.fail((options.describeError ?? readableErrorMessage)(error));
  }
}
