/**
 * A stream whose client stops reading fills the socket's buffer, and @fastify/sse's write then
 * waits for `drain` (or an `error` on the response). A client that goes away at that point closes
 * the response without either: the write's promise never settled, the stream's pump waited on it
 * for ever, and the stream stayed open in the plugin, so closing the server hung on it. Over a real
 * socket, as inject has no backpressure.
 */
import { afterEach, expect, it } from 'vitest';
import { buildApp, openRawStream, type TestApp } from '../helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  // Not awaited when the test failed by a hang: the server would hang this hook too.
  void t?.app.close();
  t = undefined;
});

const ARTIFACTS = 48;
const ARTIFACT_TEXT = 'x'.repeat(256 * 1024);

function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
    }),
  ]);
}

it('a client that goes away while a write waits for drain ends its stream, and the server closes', async () => {
  let written!: () => void;
  const allWritten = new Promise<void>((resolve) => {
    written = resolve;
  });
  const app = await buildApp(async (turn) => {
    // 12 MB of events, more than the socket buffers on both sides of a loopback connection hold.
    for (let i = 0; i < ARTIFACTS; i++) await turn.artifact({ artifactId: `a${i}`, text: ARTIFACT_TEXT });
    written();
    await turn.complete('done');
  });
  t = app;
  const url = new URL(`${await app.app.listen({ host: '127.0.0.1', port: 0 })}/a2a`);

  const { clientRequest, response } = await openRawStream(url, 'fill the buffer');
  expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
  // The client reads nothing more: the server's writes back up until one waits for drain.
  response.pause();
  await allWritten;
  await new Promise((resolve) => setTimeout(resolve, 200));
  clientRequest.on('error', () => {});
  clientRequest.destroy();

  // The plugin ends the stream once its client is gone; closing the server waits for every open
  // stream to end, so it hung with the stream's pump.
  await within(5_000, app.app.close(), 'closing the server');
}, 20_000);
