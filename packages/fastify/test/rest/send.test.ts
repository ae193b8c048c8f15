/**
 * The HTTP+JSON (REST) binding of A2A 0.3 (§3.5.6 and the REST tabs of §7) through the plugin:
 * sending a message (POST /v1/message:send).
 * Input as @a2a-js/sdk 0.3.14 and the A2A TCK send it (see the research notes rest-0.3.md and
 * tck.md §4), ProtoJSON output, SSE framing, and errors as HTTP status plus `{code, error, message}`.
 */
import type { TurnContext } from '@fastify-a2a/core';
import { describe, expect, it } from 'vitest';
import { echoAgent } from '../../../../test-support/agents.js';
import { buildApp, nextId, waitFor } from '../helpers.js';
import { expectRestError, keysIn, protoMessage, recorder, rest, type Wire } from '../rest-helpers.js';
import { build, currentApp, extraApps, gated, sendTask, useRestApps } from './fixture.js';

useRestApps();

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
    await waitFor(async () => (await currentApp?.store.getTask(early.task.id))?.task.status.state === 'completed');

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
