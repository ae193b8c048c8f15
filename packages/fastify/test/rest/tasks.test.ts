/**
 * The HTTP+JSON (REST) binding of A2A 0.3 (§3.5.6 and the REST tabs of §7) through the plugin:
 * streaming, reading, canceling and subscribing to tasks.
 * Input as @a2a-js/sdk 0.3.14 and the A2A TCK send it (see the research notes rest-0.3.md and
 * tck.md §4), ProtoJSON output, SSE framing, and errors as HTTP status plus `{code, error, message}`.
 */
import { describe, expect, it } from 'vitest';
import { echoAgent } from '../../../../test-support/agents.js';
import { listen, waitFor } from '../helpers.js';
import {
  deferred,
  expectRestError,
  keysIn,
  parseRawSse,
  protoMessage,
  type RawEvent,
  readRestStream,
  rest,
  type Wire,
  wireText,
} from '../rest-helpers.js';
import { build, currentApp, sendTask, streamable, useRestApps } from './fixture.js';

useRestApps();

describe('POST /v1/message:stream', () => {
  it('streams bare ProtoJSON events, one single-line data: each, ids = event sequence, and closes after the final event', async () => {
    const { app, store } = await build(echoAgent);
    const base = await listen(app);
    const { response, text, events } = await readRestStream(`${base}/v1/message:stream`, {
      body: { message: protoMessage('one two three'), configuration: { blocking: true } },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    // Every event is exactly one `data:` line: the SDK's parser keeps only the last one.
    expect(events.length).toBeGreaterThan(2);
    expect(events.every((e) => e.dataLines.length === 1 && e.event === undefined)).toBe(true);
    expect(text).not.toMatch(/jsonrpc/);
    const members = events.map((e) => Object.keys(e.data));
    expect(members.every((keys) => keys.length === 1)).toBe(true);
    expect(members.map(([key]) => key)).toEqual([
      'task',
      'statusUpdate',
      'artifactUpdate',
      'artifactUpdate',
      'artifactUpdate',
      'artifactUpdate',
      'artifactUpdate',
      'statusUpdate',
    ]);
    const task = events[0]?.data.task;
    expect(task.status.state).toBe('TASK_STATE_SUBMITTED');
    expect(task.history[0].content).toEqual([{ text: 'one two three' }]);
    const last = events.at(-1)?.data.statusUpdate;
    expect(last).toMatchObject({ taskId: task.id, final: true, status: { state: 'TASK_STATE_COMPLETED' } });
    const chunks = events.filter((e) => 'artifactUpdate' in e.data).map((e) => e.data.artifactUpdate);
    expect(chunks.map((c: Wire) => wireText(c.artifact.parts)).join('')).toBe('one two three');
    expect(chunks.at(-1)).toMatchObject({ append: true, lastChunk: true });
    expect(keysIn(events.map((e) => e.data)).has('kind')).toBe(false);
    // ids: the snapshot's is the task version it shows, then each event's log sequence number
    const stored = await store.getTask(task.id);
    const log = streamable(await store.readEvents(task.id, 0));
    const ids = events.map((e) => Number(e.id));
    expect(ids.slice(1)).toEqual(log.filter((e) => e.seq > (ids[0] as number)).map((e) => e.seq));
    expect(ids.at(-1)).toBe(stored?.version);
  });

  it('a retried stream with Last-Event-ID continues after that event, without a second turn', async () => {
    const { app, store } = await build(echoAgent);
    const body = { message: protoMessage('x y', { contextId: 'rest-retry-ctx' }) };
    const first = parseRawSse((await rest(app, 'POST', '/v1/message:stream', body)).body);
    const cut = first[2]?.id as string;
    expect(cut).toMatch(/^\d+$/);
    const again = parseRawSse((await rest(app, 'POST', '/v1/message:stream', body, { 'last-event-id': cut })).body);
    expect(again.map((e) => e.id)).toEqual(first.slice(3).map((e) => e.id));
    expect(again.map((e) => e.data)).toEqual(first.slice(3).map((e) => e.data));
    expect(await store.listTasksByContext('rest-retry-ctx')).toHaveLength(1);
  });

  it('a follow-up to an input-required task streams to its final event', async () => {
    const { app } = await build(echoAgent);
    const base = await listen(app);
    const first = await readRestStream(`${base}/v1/message:stream`, { body: { message: protoMessage('ask:colour?') } });
    const task = first.events[0]?.data.task;
    expect(first.events.at(-1)?.data.statusUpdate).toMatchObject({
      final: true,
      status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { role: 'ROLE_AGENT', content: [{ text: 'colour?' }] } },
    });
    const second = await readRestStream(`${base}/v1/message:stream`, {
      body: { message: protoMessage('green', { taskId: task.id, contextId: task.contextId }) },
    });
    expect(second.events[0]?.data.task.id).toBe(task.id);
    expect(second.events.at(-1)?.data.statusUpdate).toMatchObject({
      final: true,
      status: { state: 'TASK_STATE_COMPLETED' },
    });
  });

  it('refuses a message for an unknown task with an HTTP error, not a stream', async () => {
    const { app } = await build(echoAgent);
    const res = await rest(
      app,
      'POST',
      '/v1/message:stream',
      { message: protoMessage('x', { taskId: 'no-such-task' }) },
      { accept: 'text/event-stream' },
    );
    expectRestError(res, 404, -32001, 'TaskNotFoundError');
  });
});

describe('GET /v1/tasks/{id}', () => {
  it('answers the bare Task and trims its history with historyLength or history_length', async () => {
    const { app } = await build(echoAgent);
    const sent = await sendTask(app, { message: protoMessage('ask:one?'), configuration: { blocking: true } });
    await sendTask(app, {
      message: protoMessage('two', { taskId: sent.id }),
      configuration: { blocking: true },
    });
    const full = await rest(app, 'GET', `/v1/tasks/${sent.id}`);
    expect(full.statusCode).toBe(200);
    const task = full.json();
    expect(task).toMatchObject({ id: sent.id, contextId: sent.contextId, status: { state: 'TASK_STATE_COMPLETED' } });
    expect(task.task).toBeUndefined();
    expect(task.history.length).toBeGreaterThan(1);
    for (const query of ['historyLength=1', 'history_length=1']) {
      const trimmed = (await rest(app, 'GET', `/v1/tasks/${sent.id}?${query}`)).json();
      expect(trimmed.history, query).toHaveLength(1);
      expect(trimmed.history[0], query).toEqual(task.history.at(-1));
    }
  });

  it('answers a history length that is not a non-negative integer with 400 naming it', async () => {
    const { app } = await build(echoAgent);
    const sent = await sendTask(app, { message: protoMessage('x'), configuration: { blocking: true } });
    for (const value of ['abc', '-1', '1.5']) {
      const body = expectRestError(
        await rest(app, 'GET', `/v1/tasks/${sent.id}?historyLength=${value}`),
        400,
        -32602,
        'InvalidParamsError',
      );
      expect(body.message, value).toMatch(/historyLength/);
    }
  });

  it('answers an unknown task with 404 TaskNotFoundError; an id is decoded from its path segment', async () => {
    const { app } = await build(echoAgent);
    const body = expectRestError(await rest(app, 'GET', '/v1/tasks/no-such-task'), 404, -32001, 'TaskNotFoundError');
    expect(body.data).toEqual({ taskId: 'no-such-task' });
    // `:` inside an id, as encodeURIComponent sends it and as it is
    const encoded = expectRestError(await rest(app, 'GET', '/v1/tasks/a%3Ab'), 404, -32001, 'TaskNotFoundError');
    expect(encoded.data).toEqual({ taskId: 'a:b' });
    const plain = expectRestError(await rest(app, 'GET', '/v1/tasks/a:b'), 404, -32001, 'TaskNotFoundError');
    expect(plain.data).toEqual({ taskId: 'a:b' });
  });
});

describe('POST /v1/tasks/{id}:cancel', () => {
  it('cancels with an empty JSON body, answering the bare Task; a second cancel is 409 TaskNotCancelableError', async () => {
    const { app } = await build(echoAgent);
    const sent = await sendTask(app, { message: protoMessage('sleep:20000') });
    await waitFor(async () => (await currentApp?.store.getTask(sent.id))?.task.status.state === 'working');
    const res = await rest(app, 'POST', `/v1/tasks/${sent.id}:cancel`);
    expect(res.statusCode, res.body).toBe(200);
    const task = res.json();
    expect(task).toMatchObject({ id: sent.id, status: { state: 'TASK_STATE_CANCELLED' } });
    expect(task.task).toBeUndefined();
    const again = expectRestError(
      await rest(app, 'POST', `/v1/tasks/${sent.id}:cancel`),
      409,
      -32002,
      'TaskNotCancelableError',
    );
    expect(again.message).toMatch(/cancel/);
  });

  it('reads the id before the suffix, `:` and %3A included', async () => {
    const { app } = await build(echoAgent);
    for (const [path, id] of [
      ['a:b:cancel', 'a:b'],
      ['a%3Ab:cancel', 'a:b'],
      ['x%3Acancel:cancel', 'x:cancel'],
    ]) {
      const body = expectRestError(await rest(app, 'POST', `/v1/tasks/${path}`), 404, -32001, 'TaskNotFoundError');
      expect(body.data, path).toEqual({ taskId: id });
    }
  });

  it('an unknown task is 404 TaskNotFoundError', async () => {
    const { app } = await build(echoAgent);
    expectRestError(await rest(app, 'POST', '/v1/tasks/nope:cancel'), 404, -32001, 'TaskNotFoundError');
  });
});

describe('/v1/tasks/{id}:subscribe', () => {
  for (const method of ['POST', 'GET'] as const) {
    it(`${method} follows a running task from its snapshot to the final event, then closes`, async () => {
      const { app } = await build(echoAgent);
      const base = await listen(app);
      const sent = await sendTask(app, { message: protoMessage('sleep:300') });
      const { response, events } = await readRestStream(`${base}/v1/tasks/${sent.id}:subscribe`, { method });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(events.every((e) => e.dataLines.length === 1)).toBe(true);
      expect(events[0]?.data.task).toMatchObject({ id: sent.id });
      expect(events.at(-1)?.data).toEqual({
        statusUpdate: expect.objectContaining({
          final: true,
          status: expect.objectContaining({ state: 'TASK_STATE_COMPLETED' }),
        }),
      });
    });
  }

  it('with Last-Event-ID resumes after that event, with no gap and no duplicate', async () => {
    const gates = [deferred(), deferred()] as const;
    const { app, store } = await build(async (turn) => {
      await turn.working();
      await gates[0].promise;
      await turn.artifact({ artifactId: 'a', text: 'first' });
      await gates[1].promise;
      await turn.artifact({ artifactId: 'a', text: ' second', append: true });
      await turn.artifact({ artifactId: 'a', text: ' third', append: true, lastChunk: true });
      await turn.complete();
    });
    const base = await listen(app);
    const sent = await sendTask(app, { message: protoMessage('go') });
    await waitFor(async () => (await store.getTask(sent.id))?.task.status.state === 'working');
    const controller = new AbortController();
    const response = await fetch(`${base}/v1/tasks/${sent.id}:subscribe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      signal: controller.signal,
    });
    // Read the snapshot, let the first artifact through, read it, then drop the connection.
    const seen: RawEvent[] = [];
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      const complete = buffer.lastIndexOf('\n\n');
      if (complete === -1) continue;
      seen.push(...parseRawSse(buffer.slice(0, complete + 2)));
      buffer = buffer.slice(complete + 2);
      if (seen.length > 0) gates[0].resolve();
      if (seen.some((e) => 'artifactUpdate' in e.data)) break;
    }
    expect(seen[0]?.data.task).toMatchObject({ id: sent.id });
    controller.abort();
    const lastId = seen.at(-1)?.id as string;
    expect(lastId).toMatch(/^\d+$/);
    gates[1].resolve();
    const resumed = await readRestStream(`${base}/v1/tasks/${sent.id}:subscribe`, {
      headers: { 'last-event-id': lastId },
    });
    // No snapshot on a resume: only events after Last-Event-ID.
    expect(resumed.events.every((e) => !('task' in e.data))).toBe(true);
    expect(resumed.events.every((e) => Number(e.id) > Number(lastId))).toBe(true);
    const all = [...seen.slice(1), ...resumed.events];
    const ids = all.map((e) => Number(e.id));
    expect(ids).toEqual(streamable(await store.readEvents(sent.id, Number(seen[0]?.id))).map((e) => e.seq));
    const texts = all
      .filter((e) => 'artifactUpdate' in e.data)
      .map((e) => wireText(e.data.artifactUpdate.artifact.parts));
    expect(texts).toEqual(['first', ' second', ' third']);
    expect(resumed.events.at(-1)?.data.statusUpdate).toMatchObject({
      final: true,
      status: { state: 'TASK_STATE_COMPLETED' },
    });
  });

  it('on a terminal task sends one {task} event and closes', async () => {
    const { app } = await build(echoAgent);
    const sent = await sendTask(app, { message: protoMessage('done'), configuration: { blocking: true } });
    for (const method of ['POST', 'GET'] as const) {
      const res = await rest(app, method, `/v1/tasks/${sent.id}:subscribe`, undefined, { accept: 'text/event-stream' });
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
      const events = parseRawSse(res.body);
      expect(events, method).toHaveLength(1);
      expect(events[0]?.data).toEqual({
        task: expect.objectContaining({
          id: sent.id,
          status: expect.objectContaining({ state: 'TASK_STATE_COMPLETED' }),
        }),
      });
    }
  });

  it('reads a path with an empty segment as the path without it, streams included', async () => {
    const { app } = await build(echoAgent);
    const sent = await sendTask(app, { message: protoMessage('done'), configuration: { blocking: true } });
    for (const url of [`/v1//tasks/${sent.id}:subscribe`, `/v1/tasks/${sent.id}:subscribe/`]) {
      const res = await rest(app, 'GET', url, undefined, { accept: 'text/event-stream' });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toMatch(/^text\/event-stream/);
      expect(
        parseRawSse(res.body).map((e) => e.data.task?.id),
        url,
      ).toEqual([sent.id]);
    }
    const got = await rest(app, 'GET', `/v1/tasks/${sent.id}/`);
    expect(got.json().id).toBe(sent.id);
  });

  it('refuses an unknown task with HTTP 404 JSON, not a stream', async () => {
    const { app } = await build(echoAgent);
    for (const method of ['POST', 'GET'] as const) {
      const res = await rest(app, method, '/v1/tasks/nope:subscribe', undefined, { accept: 'text/event-stream' });
      expectRestError(res, 404, -32001, 'TaskNotFoundError');
    }
  });
});
