import type { Message, TaskEvent } from '../model/types.js';
import { messageDigest } from './message-digest.js';

/**
 * The sort key {@link TaskStore.listTasks} uses for a task without a status timestamp, or with
 * one `Date.parse` cannot read: below every date (`Date` ends at ±8.64e15 ms), so such tasks sort
 * after all others and no `statusTimestampAfter` selects them. A number rather than SQL NULL, so
 * the keyset comparison and its index need no special case.
 */
export const NO_STATUS_TIMESTAMP: number = Number.MIN_SAFE_INTEGER;

/**
 * A task's status timestamp as listTasks sorts and filters it: `status.timestamp` (ISO 8601) in
 * epoch milliseconds, or {@link NO_STATUS_TIMESTAMP}. Stores compute it with this function when
 * they commit, so every adapter agrees on the order.
 */
export function statusTimestampOf(task: { status: { timestamp?: string | undefined } }): number {
  const timestamp = task.status.timestamp;
  const parsed = typeof timestamp === 'string' ? Date.parse(timestamp) : Number.NaN;
  return Number.isFinite(parsed) ? parsed : NO_STATUS_TIMESTAMP;
}

/**
 * The user messages a commit indexes (see {@link CoordinationStore.findMessage}), in event order:
 * every `message` event, and the first history message of a `task` event when the user sent it.
 */
function indexedMessageList(events: readonly TaskEvent[]): Message[] {
  const messages: Message[] = [];
  for (const event of events) {
    if (event.kind === 'message') messages.push(event);
    else if (event.kind === 'task' && event.history?.[0]?.role === 'user') messages.push(event.history[0]);
  }
  return messages;
}

/** The ids of the user messages a commit indexes, in event order (see {@link indexedMessages}). */
export function indexedMessageIds(events: readonly TaskEvent[]): string[] {
  return indexedMessageList(events).map((message) => message.messageId);
}

/** One entry a commit adds to the message index. */
export interface IndexedMessage {
  messageId: string;
  /** {@link messageDigest} of the message. */
  digest: string;
}

/**
 * The user messages a commit indexes (see {@link CoordinationStore.findMessage}), in event order,
 * each with its {@link messageDigest}: every `message` event, and the first history message of a
 * `task` event when the user sent it. Stores call it at commit so that they all index the same
 * messages with the same digests.
 */
export function indexedMessages(events: readonly TaskEvent[]): IndexedMessage[] {
  return indexedMessageList(events).map((message) => ({
    messageId: message.messageId,
    digest: messageDigest(message),
  }));
}
