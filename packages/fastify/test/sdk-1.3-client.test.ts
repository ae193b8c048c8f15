/**
 * The official client of the A2A 1.0 line, @a2a-js/sdk 1.3.0, out of the box (no `legacyCompat`),
 * over JSON-RPC and over HTTP+JSON: it reads the card's `supportedInterfaces`, sends
 * `A2A-Version: 1.0`, and speaks 1.0's method names and ProtoJSON. The same agent serves the
 * 0.3.14 client (sdk-client.test.ts) from the same store.
 */

import { ClientFactory as Client03Factory } from '@a2a-js/sdk/client';
import { TaskState } from '@a2a-js/sdk-1';
import { type Client, ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk-1/client';
import { TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk-1/errors';
import type { Task } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoAgent } from '../../../test-support/agents.js';
import { asSdkTask, message, rejection, request, streamedCases, textOf } from '../../../test-support/sdk-1.js';
import { a2aPlugin } from '../src/index.js';
import { listen, nextId, userMessage, waitFor } from './helpers.js';

let app: FastifyInstance;
let base: string;
const store = new MemoryStore();
/** Every request the server got: its method, path and A2A-Version header, to see which transport and version each call used. */
const seen: { method: string; url: string; version: string | undefined }[] = [];

beforeAll(async () => {
  app = Fastify();
  app.addHook('onRequest', async (request) => {
    const version = request.headers['a2a-version'];
    seen.push({ method: request.method, url: request.url, version: typeof version === 'string' ? version : undefined });
  });
  await app.register(a2aPlugin, {
    agentCard: { name: 'Echo 1.0', description: 'Echoes, for both protocol versions.', version: '1.0.0' },
    executor: echoAgent,
    store,
    retention: false,
  });
  base = await listen(app);
});
afterAll(async () => {
  await app.close();
});

describe.each(['JSONRPC', 'HTTP+JSON'] as const)(
  '@a2a-js/sdk 1.3.0 client over %s, no compatibility mode',
  (transport) => {
    let client: Client;
    beforeAll(async () => {
      const factory = new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [transport] }),
      );
      client = await factory.createFromUrl(base);
    });

    /** The calls since `from` used this transport and version 1.0 (no 0.3 path, no call without the header). */
    function expectTransport(from: number): void {
      const calls = seen.slice(from);
      expect(calls.length).toBeGreaterThan(0);
      for (const call of calls) {
        expect(call.version, `${call.method} ${call.url}`).toBe('1.0');
        if (transport === 'JSONRPC') expect(call.url).toBe('/a2a');
        else expect(call.url).not.toMatch(/^\/(a2a|v1)\b/);
      }
    }

    it('sends a blocking message and gets the completed task', async () => {
      const from = seen.length;
      const task = asSdkTask(await client.sendMessage(request({ message: message('hello from sdk 1.3') })));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(textOf(task.artifacts[0]?.parts)).toBe('hello from sdk 1.3');
      expectTransport(from);
    });

    it('streams a message: the Task first, then updates, through the final status', async () => {
      const from = seen.length;
      const { cases, last } = await streamedCases(client.sendMessageStream(request({ message: message('a b c') })));
      expect(cases[0]).toBe('task');
      expect(cases.filter((c) => c === 'artifactUpdate')).toHaveLength(5);
      expect(last).toMatchObject({
        $case: 'statusUpdate',
        value: { status: { state: TaskState.TASK_STATE_COMPLETED } },
      });
      expectTransport(from);
    });

    it('gets a task with historyLength', async () => {
      const sent = asSdkTask(await client.sendMessage(request({ message: message('remember me') })));
      const got = await client.getTask(request({ id: sent.id, historyLength: 1 }));
      expect(got.id).toBe(sent.id);
      expect(got.history).toHaveLength(1);
      expect(textOf(got.history[0]?.parts)).toBe('remember me');
    });

    it('lists a context’s tasks page by page, newest first', async () => {
      const contextId = nextId('sdk1-ctx');
      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push(asSdkTask(await client.sendMessage(request({ message: message(`n${i}`, { contextId }) }))).id);
      // `status: TASK_STATE_UNSPECIFIED` (0), as generated code sends an unset enum: no filter (proto3).
      const first = await client.listTasks(
        request({ contextId, pageSize: 2, status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '' }),
      );
      expect(first.totalSize).toBe(3);
      expect(first.tasks.map((t) => t.id)).toEqual([ids[2], ids[1]]);
      expect(first.tasks[0]?.artifacts).toEqual([]); // includeArtifacts defaults to false
      const second = await client.listTasks(
        request({ contextId, pageSize: 2, status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: first.nextPageToken }),
      );
      expect(second.tasks.map((t) => t.id)).toEqual([ids[0]]);
      expect(second.nextPageToken).toBe('');
    });

    it('cancels a running task; a second cancel is TaskNotCancelableError; an unknown task TaskNotFoundError', async () => {
      const sent = asSdkTask(
        await client.sendMessage(
          request({
            message: message('sleep:60000'),
            configuration: {
              acceptedOutputModes: [],
              taskPushNotificationConfig: undefined,
              returnImmediately: true,
            } as never,
          }),
        ),
      );
      await waitFor(async () => (await store.getTask(sent.id))?.task.status.state === 'working');
      const canceled = await client.cancelTask(request({ id: sent.id, metadata: undefined }));
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      expect(await rejection(client.cancelTask(request({ id: sent.id, metadata: undefined })))).toBeInstanceOf(
        TaskNotCancelableError,
      );
      expect(await rejection(client.getTask(request({ id: 'no-such-task' })))).toBeInstanceOf(TaskNotFoundError);
    });

    it('subscribes to a running task and follows it to the end; a finished task is UnsupportedOperationError (§3.1.6)', async () => {
      const sent = asSdkTask(
        await client.sendMessage(
          request({
            message: message('sleep:400'),
            configuration: {
              acceptedOutputModes: [],
              taskPushNotificationConfig: undefined,
              returnImmediately: true,
            } as never,
          }),
        ),
      );
      const { cases, last } = await streamedCases(client.resubscribeTask(request({ id: sent.id })));
      expect(cases[0]).toBe('task');
      expect(last).toMatchObject({
        $case: 'statusUpdate',
        value: { status: { state: TaskState.TASK_STATE_COMPLETED } },
      });
      const again = client.resubscribeTask(request({ id: sent.id }));
      expect(await rejection(again.next())).toBeInstanceOf(UnsupportedOperationError);
    });

    it('subscribes to an input-required task, answers it, and the subscription carries the outcome (§3.1.6, issue 31)', async () => {
      const asked = asSdkTask(await client.sendMessage(request({ message: message('ask:Which colour?') })));
      expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const subscription = client.resubscribeTask(request({ id: asked.id }));
      const first = await subscription.next();
      expect(first.value?.payload).toMatchObject({
        $case: 'task',
        value: { id: asked.id, status: { state: TaskState.TASK_STATE_INPUT_REQUIRED } },
      });
      const done = asSdkTask(await client.sendMessage(request({ message: message('blue', { taskId: asked.id }) })));
      expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const { cases, last } = await streamedCases({ [Symbol.asyncIterator]: () => subscription });
      expect(cases).toContain('artifactUpdate');
      expect(last).toMatchObject({
        $case: 'statusUpdate',
        value: { status: { state: TaskState.TASK_STATE_COMPLETED } },
      });
    });

    it('answers an input-required task with a follow-up carrying its taskId', async () => {
      const asked = asSdkTask(await client.sendMessage(request({ message: message('ask:What is your name?') })));
      expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      expect(textOf(asked.status?.message?.parts)).toBe('What is your name?');
      const done = asSdkTask(await client.sendMessage(request({ message: message('Ada', { taskId: asked.id }) })));
      expect(done.id).toBe(asked.id);
      expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(textOf(done.artifacts[0]?.parts)).toBe('You answered: Ada');
    });
  },
);

describe('the 0.3.14 client and the 1.3.0 client on one store', () => {
  it('a task created by one is read, continued and canceled by the other', async () => {
    const old = await new Client03Factory().createFromUrl(base);
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: ['HTTP+JSON'] }),
    );
    const current = await factory.createFromUrl(base);
    const created = (await old.sendMessage({ message: userMessage('ask:Colour?') })) as Task;
    expect(created.status.state).toBe('input-required');
    const read = await current.getTask(request({ id: created.id }));
    expect(read.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const answered = asSdkTask(
      await current.sendMessage(request({ message: message('teal', { taskId: created.id }) })),
    );
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const seenByOld = await old.getTask({ id: created.id });
    expect(seenByOld.status.state).toBe('completed');
    expect(seenByOld.history?.map((m) => m.role)).toEqual(['user', 'agent', 'user', 'agent']);
  });
});
