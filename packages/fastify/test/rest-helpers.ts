/**
 * Helpers for the HTTP+JSON (REST) tests: requests the way REST clients send them, and an SSE
 * reader that keeps what `helpers.ts`'s parser drops (the `event:` type, and how many `data:` lines
 * an event had), since the REST binding's framing is part of what is under test.
 */
import type { Message } from '@fastify-a2a/core';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { nextId } from './helpers.js';

/** ProtoJSON as the REST binding writes it; tests read it without a schema. */
// biome-ignore lint/suspicious/noExplicitAny: wire JSON, checked field by field by the assertions
export type Wire = any;

/**
 * One REST call through `inject`. Like @a2a-js/sdk 0.3.14's REST client, every request carries
 * `Content-Type: application/json`, bodiless POSTs and DELETEs included.
 */
export function rest(
  app: FastifyInstance,
  method: 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH',
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return app.inject({
    method,
    url,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

/** A user message in the 0.3 ProtoJSON form @a2a-js/sdk 0.3.14 sends. */
export function protoMessage(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { messageId: nextId('msg'), role: 'ROLE_USER', content: [{ text }], ...extra };
}

/** The text parts of a ProtoJSON message's `content` or an artifact's `parts`, joined. */
export function wireText(parts: Wire[] | undefined): string {
  return (parts ?? []).map((p: Wire) => (typeof p.text === 'string' ? p.text : '')).join('');
}

/** Asserts an error answer has the body both kinds of REST client read (code, error name, message). */
export function expectRestError(res: LightMyRequestResponse, status: number, code: number, error: string): Wire {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json();
  expect(body).toMatchObject({ code, error });
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(0);
  return body;
}

/** The keys that appear anywhere in a JSON value. */
export function keysIn(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) keysIn(item, into);
  else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      into.add(key);
      keysIn(inner, into);
    }
  }
  return into;
}

export interface RawEvent {
  id: string | undefined;
  event: string | undefined;
  /** Every `data:` line of the event, in order. */
  dataLines: string[];
  /** The event's data, parsed (all lines joined, as the SSE specification reads them). */
  data: Wire;
}

/**
 * Parses a complete text/event-stream body. Comments (heartbeats) are dropped. Each event keeps its
 * `data:` lines apart, so a test can check that every event is one line: @a2a-js/sdk 0.3.14's
 * parser keeps only the last `data:` line of an event.
 */
export function parseRawSse(body: string): RawEvent[] {
  const events: RawEvent[] = [];
  for (const block of body.split(/\r?\n\r?\n/)) {
    let id: string | undefined;
    let event: string | undefined;
    const dataLines: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('id:')) id = line.slice(3).trim();
      else if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) dataLines.push(line.slice(5).replace(/^ /, ''));
    }
    if (dataLines.length > 0) events.push({ id, event, dataLines, data: JSON.parse(dataLines.join('\n')) });
  }
  return events;
}

/**
 * Opens a REST stream over real HTTP and reads it until the server closes it. The time limit turns a
 * stream the server never closes (a client following the SDK would hang) into a failure.
 */
export async function readRestStream(
  url: string,
  init: { method?: 'GET' | 'POST'; body?: unknown; headers?: Record<string, string> } = {},
  limitMs = 15_000,
): Promise<{ response: Response; text: string; events: RawEvent[] }> {
  const response = await fetch(url, {
    method: init.method ?? 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...init.headers },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    signal: AbortSignal.timeout(limitMs),
  });
  const text = await response.text();
  return { response, text, events: parseRawSse(text) };
}

/** What an agent received: the internal Message the runtime handed to the turn. */
export function recorder(): { messages: Message[]; record: (message: Message) => void } {
  const messages: Message[] = [];
  return { messages, record: (message) => messages.push(structuredClone(message)) };
}

/** A promise and its resolve function (Promise.withResolvers, which Node 20 lacks). */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
