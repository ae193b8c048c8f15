/**
 * The official client of the A2A 0.3 line, @a2a-js/sdk 0.3.14, over gRPC: it reads the card's
 * `additionalInterfaces` from the HTTP card, picks the GRPC one (`host:port`, the target grpc-js
 * dials), and calls `a2a.v1.A2AService` on the listener serveGrpc started, the one that serves 1.0's
 * `lf.a2a.v1.A2AService` too, with its own generated protobuf code. Run on every store
 * (sdk-0.3-client.<store>.test.ts).
 */

import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  TaskNotCancelableError,
  TaskNotFoundError,
} from '@a2a-js/sdk/client';
import { GrpcTransport, GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import type { Message, Task } from '@fastify-a2a/core';
import { bearerTokens } from 'fastify-a2a';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoAgent } from '../../../test-support/agents.js';
import { nextId, type Served, type StoreFixture, serve, waitFor } from './helpers.js';

/** A 0.3 gRPC client made the way an application makes one: from the agent's URL, preferring GRPC. */
async function grpcClient(base: string): Promise<Client> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new GrpcTransportFactory()],
      preferredTransports: ['GRPC'],
    }),
  );
  const client = await factory.createFromUrl(base);
  expect(client.transport).toBeInstanceOf(GrpcTransport);
  return client;
}

function message(text: string, extra: Partial<Message> = {}): Message {
  return { kind: 'message', messageId: nextId('sdk03'), role: 'user', parts: [{ kind: 'text', text }], ...extra };
}

function asTask(result: unknown): Task {
  expect(result).toMatchObject({ kind: 'task' });
  return result as Task;
}

function textOf(parts: readonly { kind: string; text?: string }[] | undefined): string {
  return (parts ?? []).map((part) => part.text ?? '').join('');
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

const asAlice = { serviceParameters: { authorization: 'Bearer alice-token' } };
const asBob = { serviceParameters: { authorization: 'Bearer bob-token' } };

export function sdk0_3GrpcSuite(store: StoreFixture): void {
  describe(`@a2a-js/sdk 0.3.14 gRPC client on ${store.name}`, () => {
    let served: Served;
    let client: Client;

    beforeAll(async () => {
      served = await serve(await store.create(), echoAgent, {
        pushNotifications: true,
        // The webhook URLs of these tests are never called: the tasks wait in input-required.
        pushAllowedHosts: ['127.0.0.1'],
      });
      client = await grpcClient(served.base);
    });
    afterAll(async () => {
      await served?.close();
    });

    it('the card lists the gRPC listener for 0.3 clients in additionalInterfaces, as host:port', async () => {
      const card = (await (await fetch(`${served.base}/.well-known/agent-card.json`)).json()) as {
        additionalInterfaces: { url: string; transport: string }[];
        supportedInterfaces: { url: string; protocolBinding: string; protocolVersion: string }[];
      };
      const target = `127.0.0.1:${served.grpc.port}`;
      expect(card.additionalInterfaces).toContainEqual({ url: target, transport: 'GRPC' });
      for (const protocolVersion of ['1.0', '0.3']) {
        expect(card.supportedInterfaces).toContainEqual({ url: target, protocolBinding: 'GRPC', protocolVersion });
      }
    });

    it('sends a blocking message and gets the completed task with its artifact and history', async () => {
      const task = asTask(await client.sendMessage({ message: message('hello over grpc 0.3') }));
      expect(task.status.state).toBe('completed');
      expect(textOf(task.artifacts?.[0]?.parts)).toBe('hello over grpc 0.3');
      expect(task.history?.[0]).toMatchObject({ role: 'user', parts: [{ kind: 'text', text: 'hello over grpc 0.3' }] });
    });

    it('streams a message: the Task first, then artifact chunks, through the final status', async () => {
      const events = [];
      for await (const event of client.sendMessageStream({ message: message('a b c') })) events.push(event);
      expect(events[0]).toMatchObject({ kind: 'task', status: { state: 'submitted' } });
      const chunks = events.filter((e) => e.kind === 'artifact-update');
      expect(chunks.map((e) => textOf(e.artifact.parts)).join('')).toBe('a b c');
      expect(chunks.at(-1)).toMatchObject({ lastChunk: true });
      expect(events.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
    });

    it('gets a task, with historyLength limiting its history; an unknown task is TaskNotFound', async () => {
      const sent = asTask(await client.sendMessage({ message: message('get me') }));
      const got = await client.getTask({ id: sent.id });
      expect(got).toMatchObject({
        kind: 'task',
        id: sent.id,
        contextId: sent.contextId,
        status: { state: 'completed' },
      });
      expect(got.status.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      const one = await client.getTask({ id: sent.id, historyLength: 1 });
      expect(one.history).toHaveLength(1);
      expect(await rejection(client.getTask({ id: nextId('nope') }))).toBeInstanceOf(TaskNotFoundError);
    });

    it('cancels a running task; canceling it again is TaskNotCancelable', async () => {
      const sent = asTask(
        await client.sendMessage({ message: message('sleep:5000'), configuration: { blocking: false } }),
      );
      await waitFor(async () => (await client.getTask({ id: sent.id })).status.state === 'working');
      const canceled = await client.cancelTask({ id: sent.id });
      expect(canceled).toMatchObject({ id: sent.id, status: { state: 'canceled' } });
      expect((await client.getTask({ id: sent.id })).status.state).toBe('canceled');
      expect(await rejection(client.cancelTask({ id: sent.id }))).toBeInstanceOf(TaskNotCancelableError);
      expect(await rejection(client.cancelTask({ id: nextId('nope') }))).toBeInstanceOf(TaskNotFoundError);
    });

    it('resubscribes to a running task: its current state, then the events through the final one', async () => {
      const sent = asTask(
        await client.sendMessage({ message: message('sleep:400'), configuration: { blocking: false } }),
      );
      const events = [];
      for await (const event of client.resubscribeTask({ id: sent.id })) events.push(event);
      expect(events[0]).toMatchObject({ kind: 'task', id: sent.id });
      expect(events.at(-1)).toMatchObject({ kind: 'status-update', taskId: sent.id, final: true });
      expect(events.at(-1)).toMatchObject({ status: { state: 'completed' } });
      // 0.3: a task that has finished answers one event, the task as it stands, and the stream ends.
      const again = [];
      for await (const event of client.resubscribeTask({ id: sent.id })) again.push(event);
      expect(again).toHaveLength(1);
      expect(again[0]).toMatchObject({ kind: 'task', id: sent.id, status: { state: 'completed' } });
    });

    it('input-required answers the send; a follow-up with the taskId completes the task', async () => {
      const asked = asTask(await client.sendMessage({ message: message('ask:Your name?') }));
      expect(asked.status.state).toBe('input-required');
      expect(textOf(asked.status.message?.parts)).toBe('Your name?');
      expect(asked.status.message?.role).toBe('agent');
      const answered = asTask(
        await client.sendMessage({ message: message('Ada', { taskId: asked.id, contextId: asked.contextId }) }),
      );
      expect(answered).toMatchObject({ id: asked.id, status: { state: 'completed' } });
      expect(textOf(answered.artifacts?.[0]?.parts)).toBe('You answered: Ada');
    });

    it('sets, gets, lists and deletes push notification configs', async () => {
      const task = asTask(await client.sendMessage({ message: message('ask:push?') }));
      const pushNotificationConfig = {
        id: 'hook-1',
        url: 'http://127.0.0.1:9/hook',
        token: 'secret-token',
        authentication: { schemes: ['Bearer'], credentials: 'push-credential' },
      };
      const created = await client.setTaskPushNotificationConfig({ taskId: task.id, pushNotificationConfig });
      expect(created).toEqual({ taskId: task.id, pushNotificationConfig });
      // The SDK's Client types the parameter as TaskIdParams; its gRPC transport reads the config id too.
      const hook1 = { id: task.id, pushNotificationConfigId: 'hook-1' };
      expect(await client.getTaskPushNotificationConfig(hook1)).toEqual({ taskId: task.id, pushNotificationConfig });
      const listed = await client.listTaskPushNotificationConfig({ id: task.id });
      expect(listed.map((c) => c.pushNotificationConfig.id)).toEqual(['hook-1']);
      await client.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: 'hook-1' });
      expect(await client.listTaskPushNotificationConfig({ id: task.id })).toEqual([]);
      expect(await rejection(client.getTaskPushNotificationConfig(hook1))).toBeInstanceOf(TaskNotFoundError);
    });
  });

  describe(`@a2a-js/sdk 0.3.14 gRPC client on ${store.name}, with authentication`, () => {
    let served: Served;
    let client: Client;

    beforeAll(async () => {
      served = await serve(await store.create(), echoAgent, {
        authenticate: bearerTokens({ 'alice-token': 'alice', 'bob-token': 'bob' }),
        extendedAgentCard: { description: 'The extended card, for callers we know.' },
      });
      client = await grpcClient(served.base);
    });
    afterAll(async () => {
      await served?.close();
    });

    it('refuses a call without credentials: UNAUTHENTICATED (16)', async () => {
      const error = (await rejection(client.sendMessage({ message: message('hi') }))) as { cause?: { code: number } };
      expect(error.cause?.code).toBe(16);
    });

    it('serves the caller: the agent sees the principal, and another principal’s task is not found', async () => {
      const mine = asTask(await client.sendMessage({ message: message('whoami') }, asAlice));
      expect(textOf(mine.status.message?.parts)).toBe('You are alice.');
      expect(await rejection(client.getTask({ id: mine.id }, asBob))).toBeInstanceOf(TaskNotFoundError);
    });

    it('gets the extended card over GetAgentCard, its gRPC interface listed', async () => {
      const card = await client.getAgentCard(asAlice);
      expect(card.description).toBe('The extended card, for callers we know.');
      expect(card.protocolVersion).toBe('0.3.0');
      expect(card.additionalInterfaces).toContainEqual({ url: served.grpc.url, transport: 'GRPC' });
    });
  });
}
