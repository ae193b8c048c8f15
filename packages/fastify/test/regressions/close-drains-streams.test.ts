/**
 * Issue 14 (7): closing the server (SIGTERM) cut every open stream at once in preClose, before the
 * turns drained: a client watching a turn that then finished (or was failed by the drain) never got
 * its final event. Streams now stay open while the turns drain and end with their final event, and
 * the drain is logged (what it waits for, and when it is done).
 */
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { afterEach, expect, it } from 'vitest';
import { a2aPlugin } from '../../src/index.js';
import { listen, postSse, readSse, rpcBody, type SseEvent, testCard, userMessage } from '../helpers.js';

let close: (() => Promise<unknown>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function serve(executor: Parameters<typeof a2aPlugin>[1]['executor']) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  const app = Fastify({ logger: { level: 'info', stream } });
  await app.register(a2aPlugin, {
    agentCard: testCard,
    executor,
    store: 'memory:',
    retention: false,
    drainTimeoutMs: 300,
  });
  const base = await listen(app);
  close = () => app.close();
  return { app, base, lines };
}

/** Opens a message/stream and reads it in the background; resolves with every event once it ends. */
async function openStream(base: string, text: string): Promise<{ first: SseEvent; rest: Promise<SseEvent[]> }> {
  const response = await postSse(`${base}/a2a`, rpcBody('message/stream', { message: userMessage(text) }));
  const events = readSse(response);
  const first = (await events.next()).value as SseEvent;
  const rest = (async () => {
    const all: SseEvent[] = [];
    for await (const event of events) all.push(event);
    return all;
  })();
  return { first, rest };
}

const resultOf = (event: SseEvent | undefined) =>
  (event?.data as { result: Record<string, unknown> } | undefined)?.result;

it('a stream open at close ends with its turn final event, not cut off mid-turn', async () => {
  const { app, base, lines } = await serve(async (turn) => {
    await new Promise((resolve) => setTimeout(resolve, 150));
    await turn.complete('finished during the drain');
  });
  const { first, rest } = await openStream(base, 'slow');
  expect(resultOf(first)).toMatchObject({ kind: 'task' });
  await app.close();
  close = undefined;
  const events = await rest;
  expect(resultOf(events.at(-1))).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
  const closing = lines.find((line) => line.msg === 'a2a: closing: draining running turns and open streams');
  expect(closing).toMatchObject({ level: 30, turns: 1, streams: 1 });
  const drained = lines.find((line) => line.msg === 'a2a: drained: turns finished or failed, streams ended');
  expect(drained).toMatchObject({ level: 30, turns: 1, interrupted: 0, streams: 1, streamsCut: 0 });
});

it('a turn the drain interrupts: its stream ends with the failed status naming the shutdown', async () => {
  const { app, base, lines } = await serve(async (turn) => {
    await new Promise<void>((resolve) => turn.signal.addEventListener('abort', () => resolve(), { once: true }));
  });
  const { rest } = await openStream(base, 'never ends');
  await app.close();
  close = undefined;
  const last = resultOf((await rest).at(-1));
  expect(last).toMatchObject({ kind: 'status-update', final: true, status: { state: 'failed' } });
  expect(JSON.stringify(last)).toMatch(/shut down before the turn finished/);
  expect(lines.find((line) => line.msg?.toString().startsWith('a2a: drained'))).toMatchObject({
    turns: 1,
    interrupted: 1,
  });
});
