/**
 * Issue 14 (5): reconnecting with a Last-Event-ID at or past the last event. A finished task's
 * reconnect was an empty 200 (no event: the client never learns how the task ended); a running
 * task's reconnect with an id the server never sent hung with no headers; and a message/stream
 * re-sent for an input-required task's message with its last id hung for good. Each must answer
 * at once: the task snapshot and close, or -32602 naming the ids.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp, listen, parseSse, postSse, rpcBody, type SseEvent, type TestApp, userMessage } from '../helpers.js';
import { deferred, parseRawSse, protoMessage, readRestStream, rest } from '../rest-helpers.js';

let t: TestApp;
afterEach(async () => {
  await t?.app.close();
});

/** A JSON-RPC streaming call over real HTTP, failing instead of hanging when the server never ends it. */
async function streamCall(base: string, body: unknown, lastEventId: string) {
  const response = await postSse(`${base}/a2a`, body, { 'last-event-id': lastEventId }, AbortSignal.timeout(5000));
  const text = await response.text();
  return { response, events: parseSse(text) };
}

async function finishedTask(executor: Parameters<typeof buildApp>[0]) {
  t = await buildApp(executor);
  const base = await listen(t.app);
  const message = userMessage('go');
  const first = await t.app.inject({ method: 'POST', url: '/a2a', payload: rpcBody('message/stream', { message }) });
  const events = parseSse(first.body);
  const last = events.at(-1) as { id: string; data: { result: { taskId: string } } };
  return { base, message, lastId: Number(last.id), taskId: last.data.result.taskId };
}

describe('tasks/resubscribe with Last-Event-ID at or past the final event', () => {
  for (const past of [0, 1, 1000]) {
    it(`answers the task snapshot and closes (final id + ${past})`, async () => {
      const { base, lastId, taskId } = await finishedTask(async (turn) => turn.complete('done'));
      const { response, events } = await streamCall(
        base,
        rpcBody('tasks/resubscribe', { id: taskId }),
        String(lastId + past),
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(events).toHaveLength(1);
      expect(events[0]?.id).toBe(String(lastId));
      expect(events[0]?.data).toMatchObject({ result: { kind: 'task', id: taskId, status: { state: 'completed' } } });
    });
  }

  it('over HTTP+JSON :subscribe too', async () => {
    const { base, lastId, taskId } = await finishedTask(async (turn) => turn.complete('done'));
    for (const past of [0, 7]) {
      const { response, events } = await readRestStream(
        `${base}/v1/tasks/${taskId}:subscribe`,
        { headers: { 'last-event-id': String(lastId + past) } },
        5000,
      );
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(events).toHaveLength(1);
      expect(events[0]?.data.task).toMatchObject({ id: taskId, status: { state: 'TASK_STATE_COMPLETED' } });
    }
  });

  it('an input-required task is finished for a subscriber too', async () => {
    const { base, lastId, taskId } = await finishedTask(async (turn) => turn.requireInput('more?'));
    const { events } = await streamCall(base, rpcBody('tasks/resubscribe', { id: taskId }), String(lastId));
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toMatchObject({ result: { kind: 'task', status: { state: 'input-required' } } });
  });
});

describe('Last-Event-ID past the latest event of a running task', () => {
  it('tasks/resubscribe answers -32602 naming both ids, instead of hanging', async () => {
    const gate = deferred();
    t = await buildApp(async (turn) => {
      await turn.working();
      await gate.promise;
      await turn.complete('done');
    });
    const base = await listen(t.app);
    const sent = await t.call<{ id: string }>('message/send', {
      message: userMessage('go'),
      configuration: { blocking: false },
    });
    const taskId = (sent as { result: { id: string } }).result.id;
    try {
      const latest = (await t.store.getTask(taskId))?.version as number;
      const { response, events } = await streamCall(base, rpcBody('tasks/resubscribe', { id: taskId }), '99999');
      expect(response.status).toBe(200);
      expect(events).toHaveLength(1);
      const { error } = (events[0] as SseEvent).data as { error: { code: number; message: string } };
      expect(error.code).toBe(-32602);
      expect(error.message).toContain('99999');
      const named = Number(/latest event is (\d+)/.exec(error.message)?.[1]);
      expect(named).toBeGreaterThanOrEqual(latest);
      expect(named).toBeLessThan(99999);

      const res = await rest(t.app, 'POST', `/v1/tasks/${taskId}:subscribe`, undefined, {
        accept: 'text/event-stream',
        'last-event-id': '99999',
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: -32602 });
    } finally {
      gate.resolve();
    }
  });
});

describe('message/stream re-sent with its last event id', () => {
  it('for an input-required task answers the task and closes', async () => {
    const { base, message, lastId, taskId } = await finishedTask(async (turn) => turn.requireInput('more?'));
    const { events } = await streamCall(base, rpcBody('message/stream', { message }), String(lastId));
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toMatchObject({
      result: { kind: 'task', id: taskId, status: { state: 'input-required' } },
    });
  });

  it('for a completed task answers the task and closes (HTTP+JSON)', async () => {
    t = await buildApp(async (turn) => turn.complete('done'));
    const base = await listen(t.app);
    const body = { message: protoMessage('go') };
    const first = await readRestStream(`${base}/v1/message:stream`, { body }, 5000);
    const lastId = first.events.at(-1)?.id as string;
    const again = await readRestStream(
      `${base}/v1/message:stream`,
      { body, headers: { 'last-event-id': lastId } },
      5000,
    );
    expect(again.events).toHaveLength(1);
    expect(again.events[0]?.data.task).toMatchObject({ status: { state: 'TASK_STATE_COMPLETED' } });
    expect(parseRawSse(again.text)).toHaveLength(1);
  });
});
