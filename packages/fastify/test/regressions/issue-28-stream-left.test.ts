/**
 * Issue 28, item 8 (the sweep): a stream whose client left before the stream was set up. The
 * stream hub learns that a client went away from a 'close' listener it adds when the stream
 * starts, which a client that left earlier (while the call was being authorized) has fired
 * already. The stream still ends at once, rather than holding its task subscription and its place
 * in the heartbeat and the shutdown drain until the task's next event: every stream's first frame
 * comes at once (the task, or its snapshot on a resubscribe, even with a Last-Event-ID at the
 * newest event), and each frame is written only to a connected client. This pins that down.
 */
import { afterEach, describe, it } from 'vitest';
import { buildApp, listen, postSse, readSse, rpcBody, type TestApp, userMessage, waitFor } from '../helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

async function streamsOpen(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = /^a2a_streams_open(?:\{[^}]*\})? (\d+)/m.exec(text);
  if (line === null) throw new Error(`no a2a_streams_open in:\n${text}`);
  return Number(line[1]);
}

describe('a stream whose client left before it started', () => {
  it('ends at once instead of waiting for the task’s next event', async () => {
    const turnGate = gate();
    const authorizeGate = gate();
    let holdSubscribe = false;
    let subscribeHeld!: () => void;
    const held = new Promise<void>((resolve) => {
      subscribeHeld = resolve;
    });
    t = await buildApp(
      async (turn) => {
        await turn.working();
        await turnGate.promise;
        await turn.complete('done');
      },
      {
        metrics: true,
        // A slow authorization check for the resubscribe (a policy service call, say).
        authorize: async (_ctx, operation) => {
          if (operation === 'subscribeToTask' && holdSubscribe) {
            subscribeHeld();
            await authorizeGate.promise;
          }
          return true;
        },
      },
    );
    const base = await listen(t.app);
    try {
      // A running task, and the id of the last event its stream carried.
      const first = new AbortController();
      const response = await postSse(
        `${base}/a2a`,
        rpcBody('message/stream', { message: userMessage('go') }),
        {},
        first.signal,
      );
      let taskId = '';
      let lastId = '';
      for await (const event of readSse(response)) {
        const result = (
          event.data as { result: { kind: string; id?: string; taskId?: string; status?: { state: string } } }
        ).result;
        taskId = result.taskId ?? result.id ?? taskId;
        lastId = event.id ?? lastId;
        if (result.kind === 'status-update' && result.status?.state === 'working') break;
      }
      first.abort();
      await waitFor(async () => (await streamsOpen(base)) === 0, 5000, 'the first stream to close');

      // The reconnect: its client leaves while the call is being authorized.
      holdSubscribe = true;
      const second = new AbortController();
      const resubscribe = postSse(
        `${base}/a2a`,
        rpcBody('tasks/resubscribe', { id: taskId }),
        { 'last-event-id': lastId },
        second.signal,
      ).catch(() => undefined);
      await held;
      second.abort();
      await resubscribe;
      await new Promise((resolve) => setTimeout(resolve, 100));
      authorizeGate.open();

      // Nothing happens to the task meanwhile: the stream must end by itself.
      await waitFor(async () => (await streamsOpen(base)) === 0, 2000, 'the stream of the client that left to close');
    } finally {
      turnGate.open();
    }
  });
});
