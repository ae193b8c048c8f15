/**
 * Server-Sent Events as the HTML standard defines them (§9.2 "Interpreting an event stream"):
 * `data:` lines joined by newlines, `id:` remembered, `event:` typed, comments (heartbeats)
 * ignored. An event larger than `maxEventBytes` ends the stream with an error instead of growing
 * the buffer without bound.
 */

import { A2AClientError } from './errors.js';

export interface SseEvent {
  /** The `id` this event carried itself, or undefined when it had no (or an empty) `id:` line. */
  id: string | undefined;
  /** `message` unless the server named another type. */
  event: string;
  data: string;
}

export const DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024;

export async function* readSse(
  body: AsyncIterable<Uint8Array>,
  maxEventBytes: number = DEFAULT_MAX_EVENT_BYTES,
): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let dataBytes = 0;
  let id: string | undefined;
  // Whether the event being read carried its own `id:` line. The standard's last event ID persists
  // across events, but reporting it on an event without one makes that event look like a replay of
  // the previous one (the client skips ids it has delivered): only an event's own id is reported.
  let ownId = false;
  let event = '';
  const tooLarge = () =>
    new A2AClientError(
      'invalid-response',
      `The agent sent a stream event over ${maxEventBytes} bytes; raise maxEventBytes if that is expected.`,
    );
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline = buffer.search(/\r\n|\r|\n/);
    while (newline !== -1) {
      const line = buffer.slice(0, newline);
      const width = buffer.startsWith('\r\n', newline) ? 2 : 1;
      // A lone \r at the end of a chunk may be the first half of \r\n: wait for the next chunk.
      if (buffer[newline] === '\r' && width === 1 && newline === buffer.length - 1) break;
      buffer = buffer.slice(newline + width);
      if (line === '') {
        if (data.length > 0)
          yield { id: ownId && id !== '' ? id : undefined, event: event || 'message', data: data.join('\n') };
        data = [];
        dataBytes = 0;
        event = '';
        ownId = false;
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') {
          dataBytes += value.length + 1;
          if (dataBytes > maxEventBytes) throw tooLarge();
          data.push(value);
        } else if (field === 'id' && !value.includes('\0')) {
          id = value;
          ownId = true;
        } else if (field === 'event') event = value;
      }
      newline = buffer.search(/\r\n|\r|\n/);
    }
    if (buffer.length + dataBytes > maxEventBytes) throw tooLarge();
  }
  // A stream that ends inside an event drops it (§9.2.6): it may be cut short.
}
