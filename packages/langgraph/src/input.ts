/**
 * The user's A2A message as the content of a LangChain `HumanMessage`: a plain string when it is
 * all text (what every chat model takes), else LangChain's standard content blocks.
 */

import type { Message } from '@fastify-a2a/core';
import { type InputContent, inputContentOf } from '@fastify-a2a/core/agent-kit';

/** A LangChain standard content block (`@langchain/core` 1.x `ContentBlock.Standard`), as far as the adapter builds them. */
export type HumanContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio' | 'video' | 'file'; mimeType: string; data: string }
  | { type: 'image' | 'audio' | 'video' | 'file'; mimeType: string; url: string };

export interface HumanContentOptions {
  /**
   * Pass a file sent by URI (A2A `FileWithUri`) to the model as a URL block. A URL is a string
   * a remote party chose: some providers and integrations fetch it (from their servers or from
   * yours), so this is off unless you trust your callers; off, the model reads a note naming the file.
   * @default false
   */
  fileUrls?: boolean;
}

/** The message's content: its text when every part is text, else one standard block per part. */
export function humanContent(
  message: Pick<Message, 'parts'>,
  text: string,
  options: HumanContentOptions = {},
): string | HumanContentBlock[] {
  if (message.parts.every((p) => p.kind === 'text')) return text;
  return inputContentOf(message).map((content) => block(content, options));
}

function block(content: InputContent, options: HumanContentOptions): HumanContentBlock {
  if (content.type === 'text') return { type: 'text', text: content.text };
  // Data as its JSON text: chat models read text, and the JSON keeps the structure visible.
  if (content.type === 'data') return { type: 'text', text: content.json };
  const type = kindOf(content.mediaType);
  if (content.base64 !== undefined) return { type, mimeType: content.mediaType, data: content.base64 };
  if (content.uri !== undefined && options.fileUrls === true)
    return { type, mimeType: content.mediaType, url: content.uri };
  const name = content.filename === undefined ? 'A file' : `The file ${JSON.stringify(content.filename)}`;
  return { type: 'text', text: `${name} (${content.mediaType}) was sent by URL and left out.` };
}

function kindOf(mediaType: string): 'image' | 'audio' | 'video' | 'file' {
  if (mediaType.startsWith('image/')) return 'image';
  if (mediaType.startsWith('audio/')) return 'audio';
  if (mediaType.startsWith('video/')) return 'video';
  return 'file';
}
