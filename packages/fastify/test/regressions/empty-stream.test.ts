/**
 * A stream that ends before its first event, such as a message/stream reconnect whose Last-Event-ID
 * is the final event, was answered with an empty HTTP 200 without a Content-Type: EventSource and
 * @a2a-js/sdk ("Invalid response Content-Type for SSE stream") fail on that instead of seeing a
 * stream that ended. It must be a text/event-stream; since issue 14 (see reconnect-past-end.test.ts)
 * it carries the task as it stands, so the client also learns how the task ended.
 */
import { afterEach, expect, it } from 'vitest';
import { buildApp, parseSse, rpcBody, type TestApp, userMessage } from '../helpers.js';

let t: TestApp;
afterEach(async () => {
  await t?.app.close();
});

it('a reconnect after the final event is a text/event-stream, not an empty 200', async () => {
  t = await buildApp(async (turn) => turn.complete('done'));
  const request = rpcBody('message/stream', { message: userMessage('x') });
  const first = await t.app.inject({ method: 'POST', url: '/a2a', payload: request });
  const events = parseSse(first.body);
  expect(events.at(-1)?.data).toMatchObject({ result: { kind: 'status-update', final: true } });
  const again = await t.app.inject({
    method: 'POST',
    url: '/a2a',
    headers: { 'last-event-id': events.at(-1)?.id as string },
    payload: request,
  });
  expect(again.statusCode).toBe(200);
  expect(again.headers['content-type']).toMatch(/^text\/event-stream/);
  expect(parseSse(again.body)).toEqual([
    { id: events.at(-1)?.id, data: expect.objectContaining({ result: expect.objectContaining({ kind: 'task' }) }) },
  ]);
});
