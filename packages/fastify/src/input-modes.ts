/**
 * The card's input modes enforced (issue 23): a message part whose media type the agent does not
 * accept is refused with ContentTypeNotSupported (A2A 1.0 §3.3.1, -32005; HTTP 415 on HTTP+JSON,
 * 1.0 §11.6) instead of reaching an agent that cannot read it.
 */

import { A2AError, type MessageCheck, type MessageSendParams, type ProtocolVersion } from '@fastify-a2a/core';
import type { AgentCardInput } from './options.js';

/** `type/subtype`, lower case, without parameters (`Text/Plain; charset=utf-8` is `text/plain`). */
function essence(mediaType: string): string {
  return (mediaType.split(';')[0] ?? '').trim().toLowerCase();
}

/** Whether `mediaType` is one of `accepted`, which may hold `*\/*` and `type/*` ranges. */
function isAccepted(mediaType: string, accepted: readonly string[]): boolean {
  const type = essence(mediaType);
  const major = type.split('/')[0];
  return accepted.some((mode) => mode === '*/*' || mode === type || mode === `${major}/*`);
}

/**
 * The media type each part names: a file part's (0.3 `mimeType`, 1.0 `mediaType`), and for 1.0
 * any part's `mediaType` on the wire (the internal model, 0.3's shape, keeps none for text and
 * data parts). Undefined for a part that names none.
 */
function namedMediaTypes(
  params: MessageSendParams,
  wireParams: unknown,
  version: ProtocolVersion,
): (string | undefined)[] {
  const wireParts = (wireParams as { message?: { parts?: unknown } } | undefined)?.message?.parts;
  return params.message.parts.map((part, i) => {
    if (version === '1.0' && Array.isArray(wireParts)) {
      const wire = wireParts[i] as Record<string, unknown> | undefined;
      const named = wire?.mediaType ?? wire?.media_type;
      if (typeof named === 'string' && named !== '') return named;
    }
    if (part.kind === 'file' && typeof part.file.mimeType === 'string' && part.file.mimeType !== '') {
      return part.file.mimeType;
    }
    return undefined;
  });
}

/**
 * The check of every message against the card's `defaultInputModes` and its skills' `inputModes`
 * (a message names no skill, so any skill's mode is accepted), for the versions listed. A part
 * that names no media type is accepted, as the official SDK's `validateInputModes` does: a text
 * part is text, a data part JSON, and a file without a type is the agent's to judge. Undefined
 * when nothing is checked (no versions, or a card listing no modes).
 */
export function inputModesCheck(card: AgentCardInput, versions: readonly ProtocolVersion[]): MessageCheck | undefined {
  const modes = new Set((card.defaultInputModes ?? ['text/plain']).map(essence));
  for (const skill of card.skills ?? []) for (const mode of skill.inputModes ?? []) modes.add(essence(mode));
  if (versions.length === 0 || modes.size === 0) return undefined;
  const accepted = [...modes];
  return (params, wireParams, ctx) => {
    if (!versions.includes(ctx.version)) return;
    const named = namedMediaTypes(params, wireParams, ctx.version);
    for (const [i, mediaType] of named.entries()) {
      if (mediaType === undefined || isAccepted(mediaType, accepted)) continue;
      throw new A2AError(
        'CONTENT_TYPE_NOT_SUPPORTED',
        `Content type not supported: message.parts[${i}] is ${mediaType}, which this agent does not accept; its card accepts ${accepted.join(', ')} (defaultInputModes and its skills' inputModes).`,
        { data: { mediaType, accepted: accepted.join(', ') } },
      );
    }
  };
}
