/**
 * A client that stops reading for a while fills the socket buffers of both ends: the stream's next
 * write waits for `drain` (sse.ts, StreamPump). Once the client reads on it must get every frame,
 * whole and in order, and the stream its end (disconnect-during-backpressure.test.ts covers the
 * client that never comes back). Over a real socket, as inject has no backpressure.
 */
import { afterEach, expect, it } from 'vitest';
import { buildApp, openRawStream, parseSse, type TestApp } from '../helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  void t?.app.close();
  t = undefined;
});

const ARTIFACTS = 40;
// 10 MB in all: more than the socket buffers of both ends of a loopback connection hold.
const textOf = (i: number): string => String.fromCharCode(97 + (i % 26)).repeat(256 * 1024);

it('a client that pauses past the socket buffers, then reads on, gets every frame whole and in order', async () => {
  let written!: () => void;
  const allWritten = new Promise<void>((resolve) => {
    written = resolve;
  });
  const app = await buildApp(async (turn) => {
    for (let i = 0; i < ARTIFACTS; i++) await turn.artifact({ artifactId: `a${i}`, text: textOf(i) });
    written();
    await turn.complete('done');
  });
  t = app;
  const url = new URL(`${await app.app.listen({ host: '127.0.0.1', port: 0 })}/a2a`);

  const { response } = await openRawStream(url, 'slow reader');
  response.setEncoding('utf8');
  response.pause();
  // The agent is done producing while the client reads nothing: the server's frames wait on drain.
  await allWritten;
  await new Promise((resolve) => setTimeout(resolve, 200));
  let body = '';
  response.on('data', (chunk: string) => {
    body += chunk;
  });
  const ended = new Promise<void>((resolve) => response.on('end', resolve));
  response.resume();
  await ended;

  const events = parseSse(body);
  const ids = events.map((event) => Number(event.id));
  expect(ids).toEqual([...ids].sort((a, b) => a - b));
  expect(new Set(ids).size).toBe(ids.length);
  const artifacts = events
    .map(
      (event) =>
        (event.data as { result?: { kind?: string; artifact?: { artifactId: string; parts: { text?: string }[] } } })
          .result,
    )
    .filter((result) => result?.kind === 'artifact-update')
    .map((result) => result?.artifact);
  expect(artifacts.map((artifact) => artifact?.artifactId)).toEqual(
    Array.from({ length: ARTIFACTS }, (_, i) => `a${i}`),
  );
  for (const [i, artifact] of artifacts.entries()) expect(artifact?.parts[0]?.text === textOf(i)).toBe(true);
  const last = events.at(-1)?.data as { result?: { kind?: string; final?: boolean; status?: { state?: string } } };
  expect(last.result).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
}, 30_000);
