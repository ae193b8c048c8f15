/**
 * Push notifications through the plugin: the option and the card, option checks at register,
 * ownership of configs between principals over HTTP, and the official client, @a2a-js/sdk 0.3.14,
 * setting, reading and deleting configs over JSON-RPC and HTTP+JSON and receiving notifications.
 * The receiver is on 127.0.0.1, allow-listed with `pushAllowedCidrs`.
 */

import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import type { A2AStore, StoreCapabilities, Task } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { echoAgent, echoCard } from '../../../../test-support/agents.js';
import { type A2APluginOptions, a2aPlugin, bearerTokens } from '../../src/index.js';
import { buildApp, listen, rpcBody, testCard, userMessage, waitFor } from '../helpers.js';
import { startWebhookReceiver, type WebhookReceiver } from './receiver.js';

const PUSH: Partial<A2APluginOptions> = {
  pushNotifications: true,
  pushAllowedCidrs: ['127.0.0.1/32'],
  pushPollIntervalMs: 20,
};

const apps: FastifyInstance[] = [];
const receivers: WebhookReceiver[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  for (const receiver of receivers.splice(0)) await receiver.close();
});

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver();
  receivers.push(r);
  return r;
}

async function registerError(options: Partial<A2APluginOptions>): Promise<Error> {
  const app = Fastify({ logger: false });
  apps.push(app);
  try {
    await app.register(a2aPlugin, { agentCard: testCard, executor: echoAgent, retention: false, ...options });
    await app.ready();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected register to fail');
}

describe('the pushNotifications option', () => {
  it('the card declares pushNotifications: true only when it is on', async () => {
    for (const on of [true, false]) {
      const t = await buildApp(echoAgent, on ? PUSH : {});
      apps.push(t.app);
      const card = (await t.app.inject({ url: '/.well-known/agent-card.json' })).json();
      expect(card.capabilities.pushNotifications).toBe(on);
    }
  });

  it('refuses push options without pushNotifications: true, bad allow-lists, and a store without push', async () => {
    expect((await registerError({ pushThrottleMs: 100 })).message).toBe(
      'fastify-a2a: "pushThrottleMs" needs "pushNotifications: true"; set it, or leave "pushThrottleMs" out.',
    );
    expect((await registerError({ ...PUSH, pushAllowedCidrs: ['10.0.0.1/8'] })).message).toMatch(
      /^fastify-a2a: Push destination policy: pushAllowedCidrs: "10\.0\.0\.1\/8" has bits set after its \/8 prefix; did you mean "10\.0\.0\.0\/8"\?$/,
    );
    expect((await registerError({ ...PUSH, pushAllowedHosts: ['fd00::1'] })).message).toMatch(
      /pushAllowedHosts.*in brackets/,
    );
    expect((await registerError({ ...PUSH, pushRetryDelaysMs: [1000, -1] })).message).toContain(
      '"pushRetryDelaysMs" must be an array of non-negative numbers of milliseconds',
    );
    class NoPushStore extends MemoryStore {
      override readonly supports: StoreCapabilities = { ...new MemoryStore().supports, push: false };
    }
    expect((await registerError({ ...PUSH, store: new NoPushStore() as A2AStore })).message).toContain(
      '"pushNotifications" needs a store that keeps push configs',
    );
  });

  it("another principal's task: every config operation answers task not found, on both bindings", async () => {
    const r = await receiver();
    const t = await buildApp(echoAgent, {
      ...PUSH,
      authenticate: bearerTokens({
        'token-of-ada-0123456789': { id: 'ada' },
        'token-of-bob-0123456789': { id: 'bob' },
      }),
    });
    apps.push(t.app);
    const as = (who: string) => ({ authorization: `Bearer token-of-${who}-0123456789` });
    const rpc = async (who: string, method: string, params: unknown) =>
      (await t.app.inject({ method: 'POST', url: '/a2a', headers: as(who), payload: rpcBody(method, params) })).json();
    const sent = await rpc('ada', 'message/send', {
      message: userMessage('hello'),
      configuration: { pushNotificationConfig: { id: 'p', url: r.url, token: 'ada-secret' } },
    });
    const taskId = sent.result.id as string;
    expect((await rpc('ada', 'tasks/pushNotificationConfig/list', { id: taskId })).result).toHaveLength(1);
    const asBob = [
      ['tasks/pushNotificationConfig/set', { taskId, pushNotificationConfig: { url: r.url } }],
      ['tasks/pushNotificationConfig/get', { id: taskId, pushNotificationConfigId: 'p' }],
      ['tasks/pushNotificationConfig/list', { id: taskId }],
      ['tasks/pushNotificationConfig/delete', { id: taskId, pushNotificationConfigId: 'p' }],
    ] as const;
    for (const [method, params] of asBob) {
      expect((await rpc('bob', method, params)).error).toMatchObject({ code: -32001 });
    }
    for (const [method, url] of [
      ['GET', `/v1/tasks/${taskId}/pushNotificationConfigs`],
      ['GET', `/v1/tasks/${taskId}/pushNotificationConfigs/p`],
      ['DELETE', `/v1/tasks/${taskId}/pushNotificationConfigs/p`],
    ] as const) {
      expect((await t.app.inject({ method, url, headers: as('bob') })).statusCode).toBe(404);
    }
    // Ada's config is untouched and delivers.
    expect(
      (await rpc('ada', 'tasks/pushNotificationConfig/get', { id: taskId, pushNotificationConfigId: 'p' })).result,
    ).toMatchObject({ taskId, pushNotificationConfig: { id: 'p', token: 'ada-secret' } });
    await waitFor(() => r.received.length > 0, 5000, 'the notification');
    expect(r.received[0]!.headers['x-a2a-notification-token']).toBe('ada-secret');
  });
});

const transports = [
  { name: 'JSON-RPC', factory: () => new ClientFactory() },
  {
    name: 'HTTP+JSON',
    factory: () =>
      new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: ['HTTP+JSON'] }),
      ),
  },
];

describe.each(transports)('@a2a-js/sdk 0.3.14 push API over $name', (transport) => {
  it('sets, gets, lists and deletes configs, and the receiver gets the task with its token', async () => {
    const r = await receiver();
    const app = Fastify({ logger: false });
    apps.push(app);
    await app.register(a2aPlugin, {
      agentCard: echoCard(),
      executor: echoAgent,
      store: 'memory:',
      retention: false,
      ...PUSH,
    });
    const client = await transport.factory().createFromUrl(await listen(app));
    const task = (await client.sendMessage({
      message: userMessage('ask:Which colour?'),
      configuration: { pushNotificationConfig: { id: 'on-send', url: r.url, token: 'send-token' } },
    })) as Task;
    expect(task.status.state).toBe('input-required');

    const set = await client.setTaskPushNotificationConfig({
      taskId: task.id,
      pushNotificationConfig: {
        id: 'second',
        url: r.url,
        authentication: { schemes: ['Bearer'], credentials: 'second-credentials' },
      },
    });
    expect(set).toEqual({
      taskId: task.id,
      pushNotificationConfig: {
        id: 'second',
        url: r.url,
        authentication: { schemes: ['Bearer'], credentials: 'second-credentials' },
      },
    });
    // The SDK's Client types this parameter as TaskIdParams, yet its transports read the config id.
    const getParams = { id: task.id, pushNotificationConfigId: 'on-send' };
    const got = await client.getTaskPushNotificationConfig(getParams);
    expect(got.pushNotificationConfig).toMatchObject({ id: 'on-send', url: r.url, token: 'send-token' });
    const listed = await client.listTaskPushNotificationConfig({ id: task.id });
    expect(listed.map((c) => c.pushNotificationConfig.id)).toEqual(['on-send', 'second']);

    // Both configs get the interrupted state.
    await waitFor(() => r.received.length >= 2, 5000, 'two notifications');
    const tokens = r.received.map((n) => n.headers['x-a2a-notification-token']).sort();
    expect(tokens).toEqual(['second-credentials', 'send-token']);
    for (const n of r.received) expect((n.body as Task).status.state).toBe('input-required');

    await client.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: 'second' });
    await client.sendMessage({ message: userMessage('blue', { taskId: task.id }) });
    await waitFor(
      () => r.received.some((n) => (n.body as Task).status.state === 'completed'),
      5000,
      'the completed notification',
    );
    const completed = r.received.filter((n) => (n.body as Task).status.state === 'completed');
    expect(completed.map((n) => n.headers['x-a2a-notification-token'])).toEqual(['send-token']);
    expect(completed[0]!.headers.authorization).toBe('Bearer send-token');
  });
});
