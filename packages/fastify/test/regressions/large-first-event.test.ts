/**
 * The first event of a stream is written with the response head, both corked into one segment
 * (see sendFirst in src/sse.ts). A first event larger than the socket's buffer (a Task snapshot
 * with a long message) makes the write report backpressure; waiting for `drain` while the socket
 * was still corked waited for ever, and the stream hung after its head. Over a real socket, as
 * inject has no backpressure.
 */
import { afterEach, expect, it } from 'vitest';
import { buildApp, parseSse, rpcBody, type TestApp, userMessage } from '../helpers.js';

let t: TestApp;
afterEach(async () => {
  await t?.app.close();
});

it('a first event larger than the socket buffer is written, and the stream goes on', async () => {
  t = await buildApp(async (turn) => {
    await turn.working('Working.');
    await turn.complete('done');
  });
  const url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  const text = 'x'.repeat(256 * 1024);
  const response = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(rpcBody('message/stream', { message: userMessage(text) })),
    signal: AbortSignal.timeout(10_000),
  });
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const events = parseSse(await response.text());
  expect(events[0]?.data).toMatchObject({ result: { kind: 'task', history: [{ parts: [{ text }] }] } });
  expect(events.at(-1)?.data).toMatchObject({ result: { kind: 'status-update', final: true } });
});
