/**
 * The HTTP+JSON (REST) binding of A2A 0.3 (§3.5.6 and the REST tabs of §7) through the plugin:
 * every route, input as @a2a-js/sdk 0.3.14 and the A2A TCK send it (see the research notes
 * rest-0.3.md and tck.md §4), ProtoJSON output, SSE framing, and errors as HTTP status plus
 * `{code, error, message}`.
 */
import type { AgentExecutorLike, StoredEvent, TaskRecord, TurnContext } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { echoAgent } from '../../../test-support/agents.js';
import { a2aPlugin } from '../src/index.js';
import { buildApp, listen, nextId, rpcBody, type TestApp, testCard, userMessage, waitFor } from './helpers.js';
import {
  deferred,
  expectRestError,
  keysIn,
  parseRawSse,
  protoMessage,
  type RawEvent,
  readRestStream,
  recorder,
  rest,
  type Wire,
  wireText,
} from './rest-helpers.js';

let t: TestApp | undefined;
const extraApps: FastifyInstance[] = [];
afterEach(async () => {
  await t?.app.close();
  t = undefined;
  for (const app of extraApps.splice(0)) await app.close();
});

async function build(executor: AgentExecutorLike, options: Parameters<typeof buildApp>[1] = {}): Promise<TestApp> {
  t = await buildApp(executor, options);
  return t;
}

/** A turn that waits until the test opens its gate. */
function gated(): { open: () => void; running: () => boolean; executor: AgentExecutorLike } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let started = false;
  return {
    open,
    running: () => started,
    executor: async (turn) => {
      started = true;
      await turn.working();
      await gate;
      await turn.complete('opened');
    },
  };
}

/** Sends a message and returns the task, asserting a `{task}` answer. */
async function sendTask(app: FastifyInstance, body: unknown, prefix = ''): Promise<Wire> {
  const res = await rest(app, 'POST', `${prefix}/v1/message:send`, body);
  expect(res.statusCode, res.body).toBe(200);
  const answer = res.json();
  expect(Object.keys(answer)).toEqual(['task']);
  return answer.task;
}

/** The stored events a stream frame may carry (the task's log, without user messages and turn ends). */
function streamable(events: StoredEvent[]): StoredEvent[] {
  return events.filter((e) => e.event.kind === 'status-update' || e.event.kind === 'artifact-update');
}

describe('POST /v1/message:send', () => {
  const partsAgent = async (turn: TurnContext) => {
    await turn.artifact({
      artifactId: 'all-parts',
      name: 'parts',
      parts: [
        { kind: 'text', text: 'words' },
        { kind: 'data', data: { n: 1, nested: { ok: true } } },
        { kind: 'file', file: { uri: 'https://example.com/a.png', mimeType: 'image/png' } },
        { kind: 'file', file: { bytes: 'aGVsbG8=', mimeType: 'text/plain' } },
      ],
    });
    await turn.complete('done');
  };

  it('answers {task} in ProtoJSON: TASK_STATE_*, ROLE_*, message parts under content, proto part forms, no kind', async () => {
    const { app } = await build(partsAgent);
    const res = await rest(app, 'POST', '/v1/message:send', {
      message: protoMessage('hello'),
      configuration: { blocking: true },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['task']);
    const { task } = body;
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.status.message).toMatchObject({ role: 'ROLE_AGENT', content: [{ text: 'done' }] });
    expect(task.artifacts).toEqual([
      {
        artifactId: 'all-parts',
        name: 'parts',
        parts: [
          { text: 'words' },
          { data: { data: { n: 1, nested: { ok: true } } } },
          { file: { fileWithUri: 'https://example.com/a.png', mimeType: 'image/png' } },
          { file: { fileWithBytes: 'aGVsbG8=', mimeType: 'text/plain' } },
        ],
      },
    ]);
    expect(task.history[0]).toMatchObject({ role: 'ROLE_USER', content: [{ text: 'hello' }], taskId: task.id });
    const keys = keysIn(body);
    // No JSON-RPC discriminators, and messages carry `content`, never `parts`.
    expect(keys.has('kind')).toBe(false);
    expect([task.status.message, ...task.history].every((m: Wire) => !('parts' in m))).toBe(true);
  });

  it('answers {message} when the agent replies with a Message', async () => {
    const { app } = await build(async (turn) => turn.reply(`re: ${turn.text}`));
    const res = await rest(app, 'POST', '/v1/message:send', {
      message: protoMessage('hi'),
      configuration: { blocking: true },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['message']);
    expect(body.message).toMatchObject({ role: 'ROLE_AGENT', content: [{ text: 're: hi' }] });
    expect(keysIn(body).has('kind')).toBe(false);
  });

  it('reads the body @a2a-js/sdk 0.3.14 sends (captured on the wire)', async () => {
    const seen = recorder();
    const { app } = await build(async (turn) => {
      seen.record(turn.message);
      await turn.complete('ok');
    });
    const messageId = nextId('u');
    const task = await sendTask(app, {
      message: {
        messageId,
        role: 'ROLE_USER',
        content: [{ text: 'hello' }, { file: { fileWithBytes: 'aGVsbG8=', mimeType: 'text/plain' } }],
        metadata: { a: 1 },
      },
      configuration: { acceptedOutputModes: ['text/plain'], historyLength: 3, blocking: true },
    });
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(seen.messages[0]).toMatchObject({
      kind: 'message',
      messageId,
      role: 'user',
      parts: [
        { kind: 'text', text: 'hello' },
        { kind: 'file', file: { bytes: 'aGVsbG8=', mimeType: 'text/plain' } },
      ],
      metadata: { a: 1 },
    });
  });

  it('reads snake_case keys (message_id, context_id, task_id, file_with_uri, history_length)', async () => {
    const seen = recorder();
    const { app } = await build(async (turn) => {
      seen.record(turn.message);
      if (turn.isNewTask) await turn.requireInput('more?');
      else await turn.complete('thanks');
    });
    const asked = await sendTask(app, {
      message: { message_id: nextId('s'), role: 'ROLE_USER', content: [{ text: 'start' }] },
      configuration: { blocking: true },
    });
    expect(asked.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const followUpId = nextId('s');
    const done = await sendTask(app, {
      message: {
        message_id: followUpId,
        context_id: asked.contextId,
        task_id: asked.id,
        role: 'ROLE_USER',
        content: [{ file: { file_with_uri: 'https://example.com/x.txt', mime_type: 'text/plain' } }],
      },
      configuration: { blocking: true, history_length: 1, accepted_output_modes: ['text/plain'] },
    });
    expect(done.id).toBe(asked.id);
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(done.history).toHaveLength(1);
    expect(seen.messages[1]).toMatchObject({
      messageId: followUpId,
      taskId: asked.id,
      contextId: asked.contextId,
      parts: [{ kind: 'file', file: { uri: 'https://example.com/x.txt', mimeType: 'text/plain' } }],
    });
  });

  it("reads the TCK's shape: no role, parts instead of content, data as data.data, configuration keys at the top level", async () => {
    const seen = recorder();
    const { app } = await build(async (turn) => {
      seen.record(turn.message);
      await turn.complete('ok');
    });
    const task = await sendTask(app, {
      message: {
        message_id: nextId('tck'),
        parts: [
          { text: 'from the tck', metadata: { p: 1 } },
          { data: { data: { k: 'v' } } },
          // how the TCK writes an inline file: every member, the unused ones empty
          { file: { mime_type: '', file_with_uri: '', file_with_bytes: 'aGk=' } },
        ],
        metadata: { m: 2 },
      },
      blocking: true,
      history_length: 1,
    });
    // blocking read at the top level: the answer waited for the turn
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.history).toHaveLength(1);
    expect(seen.messages[0]).toMatchObject({
      role: 'user',
      metadata: { m: 2 },
    });
    expect(seen.messages[0]?.parts).toEqual([
      { kind: 'text', text: 'from the tck', metadata: { p: 1 } },
      { kind: 'data', data: { k: 'v' } },
      { kind: 'file', file: { bytes: 'aGk=' } },
    ]);
  });

  it('reads ROLE_UNSPECIFIED (the proto3 default) as the user, and a data part without its proto wrapper', async () => {
    const seen = recorder();
    const { app } = await build(async (turn) => {
      seen.record(turn.message);
      await turn.complete('ok');
    });
    const task = await sendTask(app, {
      message: protoMessage('x', { role: 'ROLE_UNSPECIFIED', content: [{ text: 'x' }, { data: { x: 1 } }] }),
      configuration: { blocking: true },
    });
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(seen.messages[0]).toMatchObject({
      role: 'user',
      parts: [
        { kind: 'text', text: 'x' },
        { kind: 'data', data: { x: 1 } },
      ],
    });
  });

  it('reads kind-tagged JSON-RPC-style messages and parts', async () => {
    const seen = recorder();
    const { app } = await build(async (turn) => {
      seen.record(turn.message);
      await turn.complete('ok');
    });
    const parts = [
      { kind: 'text', text: 'tagged' },
      { kind: 'data', data: { x: 1 } },
      { kind: 'file', file: { uri: 'https://example.com/f', mimeType: 'application/pdf', name: 'f.pdf' } },
    ];
    await sendTask(app, {
      message: { kind: 'message', messageId: nextId('k'), role: 'user', parts },
      configuration: { blocking: true },
    });
    expect(seen.messages[0]?.parts).toEqual(parts);
  });

  it('without blocking answers at once (proto3 default false); blocking: true waits for the turn to end', async () => {
    const first = gated();
    const { app } = await build(first.executor);
    let settled = false;
    const pending = rest(app, 'POST', '/v1/message:send', { message: protoMessage('no blocking key') }).then((res) => {
      settled = true;
      return res;
    });
    // The gate is still shut: only a non-blocking send can have answered.
    await waitFor(() => settled, 5000, 'a send without `blocking` to answer while its turn runs');
    const early = (await pending).json();
    expect(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']).toContain(early.task.status.state);
    first.open();
    await waitFor(async () => (await t?.store.getTask(early.task.id))?.task.status.state === 'completed');

    const second = gated();
    const other = await buildApp(second.executor);
    extraApps.push(other.app);
    const blocking = rest(other.app, 'POST', '/v1/message:send', {
      message: protoMessage('blocking'),
      configuration: { blocking: true },
    });
    await waitFor(second.running, 5000, 'the blocking turn to start');
    second.open();
    const late = (await blocking).json();
    expect(late.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(late.task.status.message.content).toEqual([{ text: 'opened' }]);
  });

  it('answers invalid params with 400 InvalidParamsError naming the field', async () => {
    const { app } = await build(echoAgent);
    const noId = expectRestError(
      await rest(app, 'POST', '/v1/message:send', { message: { role: 'ROLE_USER', content: [{ text: 'x' }] } }),
      400,
      -32602,
      'InvalidParamsError',
    );
    expect(noId.message).toMatch(/messageId/);
    const noMessage = expectRestError(
      await rest(app, 'POST', '/v1/message:send', { configuration: { blocking: true } }),
      400,
      -32602,
      'InvalidParamsError',
    );
    expect(noMessage.message).toMatch(/message/);
    const badRole = expectRestError(
      await rest(app, 'POST', '/v1/message:send', { message: protoMessage('x', { role: 'ROLE_BOSS' }) }),
      400,
      -32602,
      'InvalidParamsError',
    );
    expect(badRole.message).toMatch(/role/);
    // named as the client wrote them: `content` in ProtoJSON, `parts` from the TCK
    const emptyContent = expectRestError(
      await rest(app, 'POST', '/v1/message:send', { message: protoMessage('x', { content: [] }) }),
      400,
      -32602,
      'InvalidParamsError',
    );
    expect(emptyContent.message).toMatch(/message\.content\b/);
    expect(emptyContent.message).not.toMatch(/message\.parts/);
    const emptyParts = expectRestError(
      await rest(app, 'POST', '/v1/message:send', { message: { message_id: 'm', parts: [] } }),
      400,
      -32602,
      'InvalidParamsError',
    );
    expect(emptyParts.message).toMatch(/message\.parts\b/);
    const noBody = expectRestError(await rest(app, 'POST', '/v1/message:send'), 400, -32602, 'InvalidParamsError');
    expect(noBody.message).toMatch(/message:send/);
  });
});

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
    await waitFor(async () => (await t?.store.getTask(sent.id))?.task.status.state === 'working');
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

describe('push notification configs (not supported: the card says pushNotifications: false)', () => {
  it('every route answers 501 PushNotificationNotSupportedError', async () => {
    const { app } = await build(echoAgent);
    const sent = await sendTask(app, { message: protoMessage('x'), configuration: { blocking: true } });
    const base = `/v1/tasks/${sent.id}/pushNotificationConfigs`;
    const calls: [Parameters<typeof rest>[1], string, unknown?][] = [
      // what @a2a-js/sdk 0.3.14 sends: the bare TaskPushNotificationConfig
      [
        'POST',
        base,
        {
          name: `tasks/${sent.id}/pushNotificationConfigs/c1`,
          pushNotificationConfig: { id: 'c1', url: 'https://hook.example/a' },
        },
      ],
      // what the TCK and a2a-python send: the request, snake_case
      [
        'POST',
        base,
        {
          parent: `tasks/${sent.id}`,
          config_id: 'c2',
          config: { name: 'n', push_notification_config: { url: 'https://hook.example/b' } },
        },
      ],
      ['GET', base],
      ['GET', `${base}/c1`],
      ['DELETE', `${base}/c1`],
    ];
    for (const [method, url, body] of calls) {
      expectRestError(await rest(app, method, url, body), 501, -32003, 'PushNotificationNotSupportedError');
    }
  });

  it('still validates the parameters first', async () => {
    const { app } = await build(echoAgent);
    const body = expectRestError(
      await rest(app, 'POST', '/v1/tasks/t1/pushNotificationConfigs', { pushNotificationConfig: { token: 'x' } }),
      400,
      -32602,
      'InvalidParamsError',
    );
    expect(body.message).toMatch(/url/);
  });
});

describe('GET /v1/card', () => {
  it('answers 404 AuthenticatedExtendedCardNotConfiguredError (-32007): the card declares no extended card', async () => {
    const { app } = await build(echoAgent);
    expectRestError(await rest(app, 'GET', '/v1/card'), 404, -32007, 'AuthenticatedExtendedCardNotConfiguredError');
  });
});

describe('request errors', () => {
  it('malformed JSON is 400 -32700', async () => {
    const { app } = await build(echoAgent);
    expectRestError(await rest(app, 'POST', '/v1/message:send', '{"message": '), 400, -32700, 'JSONParseError');
  });

  it('a body that is not JSON by its Content-Type is 400; an empty one with any type is no body', async () => {
    const { app } = await build(echoAgent);
    const body = expectRestError(
      await rest(app, 'POST', '/v1/message:send', JSON.stringify({ message: protoMessage('x') }), {
        'content-type': 'text/plain',
      }),
      400,
      -32600,
      'InvalidRequestError',
    );
    expect(body.message).toMatch(/Content-Type/);
    expectRestError(
      await rest(app, 'POST', '/v1/tasks/nope:cancel', undefined, { 'content-type': 'text/plain' }),
      404,
      -32001,
      'TaskNotFoundError',
    );
  });

  it('a body over the limit is 413 with the binding error body', async () => {
    const { app } = await build(echoAgent, { bodyLimit: 1024 });
    const res = await rest(app, 'POST', '/v1/message:send', { message: protoMessage('x'.repeat(4096)) });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: -32600, error: 'InvalidRequestError' });
  });

  it("keeps the status of an error from the application's hooks (401 from authentication, 429 from a rate limiter, 503 from load shedding)", async () => {
    const app = Fastify();
    extraApps.push(app);
    app.addHook('onRequest', async (request, reply) => {
      if (request.headers['x-test-refuse'] === 'auth') {
        throw Object.assign(new Error('Missing bearer token.'), { statusCode: 401 });
      }
      if (request.headers['x-test-refuse'] === 'shed') {
        throw Object.assign(new Error('event loop delay 900 ms on host db-7'), { statusCode: 503 });
      }
      if (request.headers['x-test-refuse'] === 'rate') {
        reply.header('retry-after', '7');
        throw Object.assign(new Error('Rate limit exceeded, retry in 7 seconds.'), { statusCode: 429 });
      }
    });
    await app.register(a2aPlugin, {
      agentCard: testCard,
      executor: echoAgent,
      store: new MemoryStore(),
      retention: false,
    });
    await app.ready();
    const auth = expectRestError(
      await rest(app, 'GET', '/v1/tasks/t1', undefined, { 'x-test-refuse': 'auth' }),
      401,
      -32600,
      'InvalidRequestError',
    );
    expect(auth.message).toMatch(/Missing bearer token/);
    const limited = await rest(
      app,
      'POST',
      '/v1/message:send',
      { message: protoMessage('x') },
      { 'x-test-refuse': 'rate' },
    );
    expectRestError(limited, 429, -32600, 'InvalidRequestError');
    expect(limited.headers['retry-after']).toBe('7');
    // a server error keeps its status but not its message
    const shed = await rest(app, 'GET', '/v1/tasks/t1', undefined, { 'x-test-refuse': 'shed' });
    expectRestError(shed, 503, -32603, 'InternalError');
    expect(shed.body).not.toMatch(/db-7|900 ms/);
  });

  it('an unknown path or method under /v1 is 404 MethodNotFoundError', async () => {
    const { app } = await build(echoAgent);
    const cases: [Parameters<typeof rest>[1], string, RegExp][] = [
      ['GET', '/v1/nope', /not found/i],
      ['POST', '/v1/tasks/t1:frobnicate', /not allowed|not found/i],
      ['GET', '/v1/tasks/t1/nested/deeper', /not found/i],
      ['PUT', '/v1/tasks/t1', /not allowed/i],
      ['DELETE', '/v1/message:send', /not allowed/i],
      ['GET', '/v1/message:send', /not allowed/i],
    ];
    for (const [method, url, message] of cases) {
      const body = expectRestError(await rest(app, method, url), 404, -32601, 'MethodNotFoundError');
      expect(body.message, `${method} ${url}`).toMatch(message);
    }
  });
});

describe('a failing store', () => {
  const SECRET = 'connect ECONNREFUSED db.internal:5432 user=secret';

  /** A store that fails the way a database driver does, naming its host and user. */
  class FailingStore extends MemoryStore {
    failGetTask = false;
    failReadEvents = false;
    override async getTask(...args: Parameters<MemoryStore['getTask']>): Promise<TaskRecord | undefined> {
      if (this.failGetTask) throw new Error(SECRET);
      return super.getTask(...args);
    }
    override async readEvents(...args: Parameters<MemoryStore['readEvents']>): Promise<StoredEvent[]> {
      if (this.failReadEvents) throw new Error(SECRET);
      return super.readEvents(...args);
    }
  }

  it('answers a generic 500 -32603 that never carries the store message', async () => {
    const store = new FailingStore();
    const { app } = await build(echoAgent, { store });
    store.failGetTask = true;
    for (const [method, url] of [
      ['GET', '/v1/tasks/t1'],
      ['POST', '/v1/tasks/t1:cancel'],
      ['POST', '/v1/tasks/t1:subscribe'],
    ] as const) {
      const res = await rest(app, method, url);
      expectRestError(res, 500, -32603, 'InternalError');
      expect(res.body, `${method} ${url}`).not.toMatch(/db\.internal|secret|5432/);
    }
  });

  it('a failure after the stream started is an `event: error` with {code, message}, without the store message', async () => {
    const store = new FailingStore();
    // The turn ends with the task still working, so the stream waits on the log.
    const { app } = await build(async (turn) => turn.working('still going'), { store });
    const base = await listen(app);
    const sent = await sendTask(app, { message: protoMessage('x'), configuration: { blocking: true } });
    store.failReadEvents = true;
    const { response, text, events } = await readRestStream(`${base}/v1/tasks/${sent.id}:subscribe`);
    expect(response.status).toBe(200);
    expect(events[0]?.data.task).toMatchObject({ id: sent.id });
    const last = events.at(-1);
    expect(last?.event).toBe('error');
    expect(last?.dataLines).toHaveLength(1);
    expect(last?.data).toMatchObject({ code: -32603, error: 'InternalError' });
    expect(typeof last?.data.message).toBe('string');
    expect(text).not.toMatch(/db\.internal|secret|5432/);
  });
});

describe('under a prefix', () => {
  it('serves the routes under <prefix>/v1, and the card names <base><prefix> as the HTTP+JSON interface', async () => {
    const { app } = await build(echoAgent, { prefix: '/agents/echo', baseUrl: 'https://agents.example' });
    const card = (await app.inject({ method: 'GET', url: '/agents/echo/.well-known/agent-card.json' })).json();
    expect(card.additionalInterfaces).toContainEqual({
      url: 'https://agents.example/agents/echo',
      transport: 'HTTP+JSON',
    });
    const task = await sendTask(
      app,
      { message: protoMessage('prefixed'), configuration: { blocking: true } },
      '/agents/echo',
    );
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    const got = await rest(app, 'GET', `/agents/echo/v1/tasks/${task.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json().id).toBe(task.id);
    const body = expectRestError(
      await rest(app, 'POST', '/agents/echo/v1/tasks/a%3Ab:cancel'),
      404,
      -32001,
      'TaskNotFoundError',
    );
    expect(body.data).toEqual({ taskId: 'a:b' });
    expectRestError(await rest(app, 'GET', '/agents/echo/v1/nope'), 404, -32601, 'MethodNotFoundError');
    // nothing at the root
    expect((await rest(app, 'GET', `/v1/tasks/${task.id}`)).statusCode).toBe(404);
    expect((await rest(app, 'GET', `/v1/tasks/${task.id}`)).json().code).toBeUndefined();
  });

  it('keeps two agents apart, each under its own prefix', async () => {
    const app = Fastify();
    extraApps.push(app);
    for (const name of ['one', 'two']) {
      await app.register(a2aPlugin, {
        agentCard: { ...testCard, name },
        executor: async (turn) => turn.complete(`${name}: ${turn.text}`),
        store: new MemoryStore(),
        retention: false,
        prefix: `/agents/${name}`,
      });
    }
    await app.ready();
    const task = await sendTask(app, { message: protoMessage('hi'), configuration: { blocking: true } }, '/agents/two');
    expect(wireText(task.status.message.content)).toBe('two: hi');
    expectRestError(await rest(app, 'GET', `/agents/one/v1/tasks/${task.id}`), 404, -32001, 'TaskNotFoundError');
  });

  it('finds the route when the prefix has characters the URL percent-encodes', async () => {
    const { app } = await build(echoAgent, { prefix: '/agents/café' });
    const task = await sendTask(
      app,
      { message: protoMessage('accent'), configuration: { blocking: true } },
      '/agents/caf%C3%A9',
    );
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    const body = expectRestError(
      await rest(app, 'POST', '/agents/caf%C3%A9/v1/tasks/a%3Ab:cancel'),
      404,
      -32001,
      'TaskNotFoundError',
    );
    expect(body.data).toEqual({ taskId: 'a:b' });
  });
});

describe('encapsulation', () => {
  it("the application's own routes and content-type parsers beside the plugin keep working, untouched by the plugin's", async () => {
    const app = Fastify();
    extraApps.push(app);
    app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) =>
      done(null, `app parsed: ${body}`),
    );
    app.post('/echo', async (request) => ({ body: request.body }));
    await app.register(a2aPlugin, {
      agentCard: testCard,
      executor: echoAgent,
      store: new MemoryStore(),
      retention: false,
    });
    app.post('/after', async (request) => ({ body: request.body }));
    app.setNotFoundHandler(async (_request, reply) => reply.code(404).send({ app: 'not here' }));
    await app.ready();

    const echo = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'text/plain' },
      payload: 'hi',
    });
    expect(echo.json()).toEqual({ body: 'app parsed: hi' });
    const after = await app.inject({
      method: 'POST',
      url: '/after',
      headers: { 'content-type': 'text/plain' },
      payload: 'yo',
    });
    expect(after.json()).toEqual({ body: 'app parsed: yo' });
    // Fastify's own JSON parser still serves the application: the plugin's "empty body is no body"
    // and its error format stay inside its scope.
    const empty = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' } });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().code).toBe('FST_ERR_CTP_EMPTY_JSON_BODY');
    const json = await app.inject({ method: 'POST', url: '/after', payload: { a: 1 } });
    expect(json.json()).toEqual({ body: { a: 1 } });
    // The application's unknown routes keep the application's 404; the binding's covers /v1 only.
    const missing = await app.inject({ method: 'GET', url: '/nowhere' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ app: 'not here' });
    expectRestError(await rest(app, 'GET', '/v1/nowhere'), 404, -32601, 'MethodNotFoundError');
    // and the binding still reads its own requests its own way
    const sent = await rest(app, 'POST', '/v1/message:send', {
      message: protoMessage('x'),
      configuration: { blocking: true },
    });
    expect(sent.json().task.status.state).toBe('TASK_STATE_COMPLETED');
    expectRestError(await rest(app, 'POST', '/v1/tasks/nope:cancel'), 404, -32001, 'TaskNotFoundError');
  });
});

describe('beside an application that has its own /v1', () => {
  it("starts (the application's not-found handler under /v1 does not clash), and the application keeps its /v1 routes and its OPTIONS route", async () => {
    const app = Fastify();
    extraApps.push(app);
    await app.register(
      async (api) => {
        api.get('/users', async () => ['ada']);
        api.setNotFoundHandler(async (_request, reply) => reply.code(404).send({ api: 'no such resource' }));
      },
      { prefix: '/v1' },
    );
    // as @fastify/cors answers preflights
    app.options('*', async (_request, reply) => reply.code(204).header('access-control-allow-origin', '*').send());
    await app.register(a2aPlugin, {
      agentCard: testCard,
      executor: echoAgent,
      store: new MemoryStore(),
      retention: false,
    });
    await app.ready();
    expect((await app.inject({ method: 'GET', url: '/v1/users' })).json()).toEqual(['ada']);
    const preflight = await app.inject({ method: 'OPTIONS', url: '/v1/message:send' });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    const sent = await sendTask(app, { message: protoMessage('x'), configuration: { blocking: true } });
    expect(sent.status.state).toBe('TASK_STATE_COMPLETED');
    // with the agent at the root, unknown paths under /v1/ are the binding's
    expectRestError(await rest(app, 'GET', '/v1/nope'), 404, -32601, 'MethodNotFoundError');
  });
});

describe('rest: false', () => {
  it('serves no /v1 routes, and the card declares no HTTP+JSON interface', async () => {
    const { app, call } = await build(echoAgent, { rest: false });
    const res = await rest(app, 'POST', '/v1/message:send', { message: protoMessage('x') });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBeUndefined();
    const card = (await app.inject({ method: 'GET', url: '/.well-known/agent-card.json' })).json();
    expect(JSON.stringify(card)).not.toMatch(/HTTP\+JSON/);
    expect(card.preferredTransport).toBe('JSONRPC');
    // JSON-RPC still works
    const sent = await call('message/send', { message: userMessage('still here') });
    expect(sent).toMatchObject({ result: { kind: 'task' } });
  });

  it('with REST on, the card lists both interfaces', async () => {
    const { app } = await build(echoAgent, { baseUrl: 'https://a.example' });
    const card = (await app.inject({ method: 'GET', url: '/.well-known/agent-card.json' })).json();
    expect(card.additionalInterfaces).toEqual([
      { url: 'https://a.example/a2a', transport: 'JSONRPC' },
      { url: 'https://a.example', transport: 'HTTP+JSON' },
    ]);
    // both bindings reach the same tasks
    const task = await sendTask(app, { message: protoMessage('x'), configuration: { blocking: true } });
    const viaRpc = await app.inject({ method: 'POST', url: '/a2a', payload: rpcBody('tasks/get', { id: task.id }) });
    expect(viaRpc.json().result).toMatchObject({ kind: 'task', id: task.id, status: { state: 'completed' } });
  });
});
