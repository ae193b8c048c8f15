/**
 * What the user sent, in a form every framework's message content maps from: text, files (inline
 * bytes or a URI) and data. A2A parts are data from a remote party: a file's name is a label, a
 * URI is a string the adapter decides whether to fetch (see the adapters' options), never a path.
 */

import type { TurnContext } from '../executor.js';
import type { DataPart, FilePart, Message, Part } from '../model/types.js';

/** One piece of a user's message as a model's input. */
export type InputContent =
  | { type: 'text'; text: string }
  | {
      type: 'file';
      /** The file's IANA media type; `application/octet-stream` when the part gave none. */
      mediaType: string;
      /** The name the sender gave, a label only. */
      filename?: string;
      /** base64 bytes (A2A `FileWithBytes`) … */
      base64?: string;
      /** … or a URI (A2A `FileWithUri`). Exactly one of the two is set. */
      uri?: string;
    }
  | {
      type: 'data';
      data: Record<string, unknown>;
      /** The data as JSON text, for a model that reads text only. */
      json: string;
    };

/** The default media type of a file part that names none (RFC 2046 §4.5.1). */
export const UNKNOWN_MEDIA_TYPE = 'application/octet-stream';

/** A message's parts as {@link InputContent}, in order. */
export function inputContentOf(message: Pick<Message, 'parts'>): InputContent[] {
  return message.parts.map(toInputContent);
}

/**
 * One part as {@link InputContent}. A file part whose `bytes` are not base64 (RFC 4648) becomes a
 * text saying it was left out, never a string a framework could take for a URL to fetch.
 */
export function toInputContent(part: Part): InputContent {
  if (part.kind === 'text') return { type: 'text', text: part.text };
  if (part.kind === 'data') return dataContent(part);
  return fileContent(part);
}

function dataContent(part: DataPart): InputContent {
  return { type: 'data', data: part.data, json: JSON.stringify(part.data) };
}

/** RFC 4648 §4 base64, padded or not: what `FileWithBytes.bytes` must be. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

function fileContent(part: FilePart): InputContent {
  const { file } = part;
  const content: InputContent = { type: 'file', mediaType: file.mimeType || UNKNOWN_MEDIA_TYPE };
  if (file.name !== undefined) content.filename = file.name;
  if ('bytes' in file) {
    // Checked, because frameworks take a string for either bytes or a URL and fetch what parses
    // as a URL: "bytes" a remote party set to a URL must not make the server fetch it.
    if (!BASE64.test(file.bytes)) {
      const name = file.name === undefined ? 'A file' : `The file ${JSON.stringify(file.name)}`;
      return { type: 'text', text: `${name} was left out: its bytes are not base64.` };
    }
    content.base64 = file.bytes;
  } else content.uri = file.uri;
  return content;
}

/**
 * The task's messages before this turn's (the task's history as the turn began, without the
 * message that started the turn), oldest first: what an adapter rebuilds a conversation from when
 * the context state holds none (e.g. its first turn after a deploy that changed the state's shape).
 * The task's history is kept as the server's `historyLength` allows, so it may be cut.
 */
export function priorMessages(turn: Pick<TurnContext, 'task' | 'message'>): Message[] {
  const history = turn.task.history ?? [];
  return history.filter((message) => message.messageId !== turn.message.messageId);
}
