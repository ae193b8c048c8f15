/**
 * The official client of the A2A 1.0 line, @a2a-js/sdk 1.3.0, over gRPC: it reads the card's
 * `supportedInterfaces` from the HTTP card, picks the GRPC interface, and calls
 * `lf.a2a.v1.A2AService` on the listener serveGrpc started, with its own generated protobuf code.
 * Run on every store (sdk-client.<store>.test.ts).
 */

import { Role, TaskState } from '@a2a-js/sdk-1';
import { type Client, ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk-1/client';
import { GrpcTransportFactory } from '@a2a-js/sdk-1/client/grpc';
import { TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk-1/errors';
import { bearerTokens } from 'fastify-a2a';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoAgent } from '../../../test-support/agents.js';
import { asSdkTask, message, rejection, request, streamedCases, textOf } from '../../../test-support/sdk-1.js';
import { nextId, type Served, type StoreFixture, serve, waitFor } from './helpers.js';

/** A gRPC client made the way an application makes one: from the agent's URL, preferring GRPC. */
async function grpcClient(base: string): Promise<Client> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new GrpcTransportFactory()],
      preferredTransports: ['GRPC'],
    }),
  );
  const client = await factory.createFromUrl(base);
  expect(client.transport.protocolName).toBe('GRPC');
  return client;
}

const TOKENS = { 'alice-token': 'alice', 'bob-token': 'bob' };
const asAlice = { serviceParameters: { authorization: 'Bearer alice-token' } };
const asBob = { serviceParameters: { authorization: 'Bearer bob-token' } };

export function sdkGrpcSuite(store: StoreFixture): void {
  describe(`@a2a-js/sdk 1.3.0 gRPC client on ${store.name}`, () => {
    let served: Served;
    let client: Client;

    beforeAll(async () => {
      served = await serve(await store.create(), echoAgent, {
        pushNotifications: true,
        // The webhook URLs of these tests are never called: the tasks finish before any push.
        pushAllowedHosts: ['127.0.0.1'],
      });
      client = await grpcClient(served.base);
    });
    afterAll(async () => {
      await served?.close();
    });

    it('the card lists the gRPC interface, for A2A 1.0, at the address it listens on', async () => {
      const card = (await (await fetch(`${served.base}/.well-known/agent-card.json`)).json()) as {
        supportedInterfaces: { url: string; protocolBinding: string; protocolVersion: string }[];
      };
      expect(card.supportedInterfaces).toContainEqual({
        url: `127.0.0.1:${served.grpc.port}`,
        protocolBinding: 'GRPC',
        protocolVersion: '1.0',
      });
    });

    it('sends a blocking message and gets the completed task with its artifact', async () => {
      const task = asSdkTask(await client.sendMessage(request({ message: message('hello over grpc') })));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(textOf(task.artifacts[0]?.parts)).toBe('hello over grpc');
      expect(task.history[0]?.role).toBe(Role.ROLE_USER);
    });

    it('streams a message: the Task first, then artifact chunks, through the final status', async () => {
      const { cases, last } = await streamedCases(client.sendMessageStream(request({ message: message('a b c') })));
      expect(cases[0]).toBe('task');
      expect(cases.filter((c) => c === 'artifactUpdate').length).toBe(5);
      expect(last).toMatchObject({
        $case: 'statusUpdate',
        value: { status: { state: TaskState.TASK_STATE_COMPLETED } },
      });
    });

    it('gets a task, with historyLength limiting its history', async () => {
      const sent = asSdkTask(await client.sendMessage(request({ message: message('get me') })));
      const got = await client.getTask(request({ id: sent.id }));
      expect(got).toMatchObject({ id: sent.id, contextId: sent.contextId });
      expect(got.status?.timestamp).toBeDefined();
      const none = await client.getTask(request({ id: sent.id, historyLength: 0 }));
      expect(none.history).toEqual([]);
      expect(await rejection(client.getTask(request({ id: nextId('nope') })))).toBeInstanceOf(TaskNotFoundError);
    });

    it('lists a context’s tasks page by page, newest first', async () => {
      const contextId = nextId('ctx');
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push(asSdkTask(await client.sendMessage(request({ message: message(`t${i}`, { contextId }) }))).id);
      }
      const seen: string[] = [];
      let pageToken = '';
      let pages = 0;
      do {
        const page = await client.listTasks(
          request({ contextId, pageSize: 2, pageToken, status: TaskState.TASK_STATE_UNSPECIFIED }),
        );
        expect(page.totalSize).toBe(5);
        expect(page.tasks.length).toBeLessThanOrEqual(2);
        seen.push(...page.tasks.map((t) => t.id));
        pageToken = page.nextPageToken;
        pages++;
      } while (pageToken !== '');
      expect(pages).toBe(3);
      expect(seen).toEqual([...ids].reverse());
      const completed = await client.listTasks(
        request({ contextId, status: TaskState.TASK_STATE_COMPLETED, pageSize: 100, pageToken: '' }),
      );
      expect(completed.tasks).toHaveLength(5);
    });

    it('cancels a running task; canceling it again is TaskNotCancelable', async () => {
      const sent = asSdkTask(
        await client.sendMessage(
          request({
            message: message('sleep:5000'),
            configuration: { returnImmediately: true, acceptedOutputModes: [] },
          }),
        ),
      );
      await waitFor(
        async () => (await client.getTask(request({ id: sent.id }))).status?.state === TaskState.TASK_STATE_WORKING,
      );
      const canceled = await client.cancelTask(request({ id: sent.id }));
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      expect(await rejection(client.cancelTask(request({ id: sent.id })))).toBeInstanceOf(TaskNotCancelableError);
    });

    it('subscribes to a running task: its current state, then the events through the final one', async () => {
      const sent = asSdkTask(
        await client.sendMessage(
          request({
            message: message('sleep:400'),
            configuration: { returnImmediately: true, acceptedOutputModes: [] },
          }),
        ),
      );
      const events = [];
      for await (const event of client.resubscribeTask(request({ id: sent.id }))) events.push(event.payload);
      expect(events[0]).toMatchObject({ $case: 'task', value: { id: sent.id } });
      expect(events.at(-1)).toMatchObject({
        $case: 'statusUpdate',
        value: { taskId: sent.id, status: { state: TaskState.TASK_STATE_COMPLETED } },
      });
      // §9.4.6 (1.0): a terminal task cannot be subscribed to.
      const again = await rejection(
        (async () => {
          for await (const _ of client.resubscribeTask(request({ id: sent.id }))) {
            // drained
          }
        })(),
      );
      expect(again).toBeInstanceOf(UnsupportedOperationError);
    });

    it('input-required answers the send; a follow-up with the taskId resumes and completes the task', async () => {
      const asked = asSdkTask(await client.sendMessage(request({ message: message('ask:Your name?') })));
      expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      expect(textOf(asked.status?.message?.parts)).toBe('Your name?');
      const answered = asSdkTask(
        await client.sendMessage(
          request({ message: message('Ada', { taskId: asked.id, contextId: asked.contextId }) }),
        ),
      );
      expect(answered.id).toBe(asked.id);
      expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(textOf(answered.artifacts[0]?.parts)).toBe('You answered: Ada');
    });

    it('creates, gets, lists and deletes push notification configs', async () => {
      const task = asSdkTask(await client.sendMessage(request({ message: message('ask:push?') })));
      const config = {
        tenant: '',
        id: 'hook-1',
        taskId: task.id,
        url: 'http://127.0.0.1:9/hook',
        token: 'secret-token',
        authentication: undefined,
      };
      const created = await client.createTaskPushNotificationConfig(config);
      expect(created).toMatchObject({ id: 'hook-1', taskId: task.id, url: config.url, token: 'secret-token' });
      expect(await client.getTaskPushNotificationConfig(request({ taskId: task.id, id: 'hook-1' }))).toMatchObject({
        id: 'hook-1',
        url: config.url,
      });
      const listed = await client.listTaskPushNotificationConfig(
        request({ taskId: task.id, pageSize: 0, pageToken: '' }),
      );
      expect(listed.configs.map((c) => c.id)).toEqual(['hook-1']);
      await client.deleteTaskPushNotificationConfig(request({ taskId: task.id, id: 'hook-1' }));
      const after = await client.listTaskPushNotificationConfig(
        request({ taskId: task.id, pageSize: 0, pageToken: '' }),
      );
      expect(after.configs).toEqual([]);
    });
  });

  describe(`@a2a-js/sdk 1.3.0 gRPC client on ${store.name}, with authentication`, () => {
    let served: Served;
    let client: Client;

    beforeAll(async () => {
      served = await serve(await store.create(), echoAgent, {
        authenticate: bearerTokens(TOKENS),
        extendedAgentCard: { description: 'The extended card, for callers we know.' },
      });
      client = await grpcClient(served.base);
    });
    afterAll(async () => {
      await served?.close();
    });

    it('refuses a call without credentials or with a wrong token: UNAUTHENTICATED (16) with its ErrorInfo', async () => {
      for (const options of [{}, { serviceParameters: { authorization: 'Bearer wrong' } }]) {
        const error = (await rejection(client.sendMessage(request({ message: message('hi') }), options))) as {
          status: number;
          message: string;
        };
        expect(error.status).toBe(16);
        expect(error.message).toMatch(/Authentication (required|failed)/);
      }
    });

    it('serves the caller: the agent sees the principal, and another principal’s task is not found', async () => {
      const mine = asSdkTask(await client.sendMessage(request({ message: message('whoami') }), asAlice));
      expect(textOf(mine.status?.message?.parts)).toBe('You are alice.');
      expect(await rejection(client.getTask(request({ id: mine.id }), asBob))).toBeInstanceOf(TaskNotFoundError);
    });

    it('gets the extended card, authenticated; refuses it without credentials', async () => {
      const card = await client.getAgentCard(asAlice);
      expect(card.description).toBe('The extended card, for callers we know.');
      expect(card.supportedInterfaces.map((i) => i.protocolBinding)).toContain('GRPC');
      expect(card.capabilities?.extendedAgentCard).toBe(true);
      const refused = (await rejection(client.getAgentCard())) as { status: number };
      expect(refused.status).toBe(16);
    });
  });
}
