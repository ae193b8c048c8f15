import type { A2AStore, AgentCard } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { echoAgent } from '../../../examples/demo/src/agents.js';
import { a2aPlugin } from '../src/index.js';
import { buildApp, rpcBody, type TestApp, testCard, userMessage } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

describe('agent card', () => {
  it.each(['/.well-known/agent-card.json', '/.well-known/agent.json', '/a2a'])(
    'GET %s serves the card',
    async (url) => {
      t = await buildApp(echoAgent);
      const res = await t.app.inject({ method: 'GET', url, headers: { host: 'agents.test:8080' } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      const card = res.json() as AgentCard;
      expect(card).toMatchObject({
        name: testCard.name,
        description: testCard.description,
        version: testCard.version,
        protocolVersion: '0.3.0',
        preferredTransport: 'JSONRPC',
        url: 'http://agents.test:8080/a2a',
        capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
        skills: [],
        supportsAuthenticatedExtendedCard: false,
      });
    },
  );

  it('uses baseUrl when given and keeps securitySchemes from the application', async () => {
    const app = Fastify();
    await app.register(a2aPlugin, {
      agentCard: {
        ...testCard,
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
        security: [{ bearer: [] }],
      },
      executor: echoAgent,
      store: 'memory:',
      baseUrl: 'https://agents.example.com/',
      prefix: '/agents/echo',
    });
    try {
      const card = (
        await app.inject({ method: 'GET', url: '/agents/echo/.well-known/agent-card.json' })
      ).json() as AgentCard;
      expect(card.url).toBe('https://agents.example.com/agents/echo/a2a');
      expect(card.securitySchemes).toEqual({ bearer: { type: 'http', scheme: 'bearer' } });
      expect(card.security).toEqual([{ bearer: [] }]);
    } finally {
      await app.close();
    }
  });
});

describe('health', () => {
  it('is 200 while the store answers and 503 when it does not', async () => {
    t = await buildApp(echoAgent);
    const ok = await t.app.inject({ method: 'GET', url: '/a2a/health' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ status: 'ok' });
    await t.store.close();
    const down = await t.app.inject({ method: 'GET', url: '/a2a/health' });
    expect(down.statusCode).toBe(503);
    expect(down.json().status).toBe('unavailable');
  });
});

describe('registration', () => {
  it('serves two agents under two prefixes, each with its own card, tasks and store', async () => {
    const app = Fastify();
    const storeA = new MemoryStore();
    const storeB = new MemoryStore();
    await app.register(a2aPlugin, {
      agentCard: { ...testCard, name: 'A' },
      executor: async (turn) => turn.complete('from A'),
      store: storeA,
      prefix: '/a',
    });
    await app.register(a2aPlugin, {
      agentCard: { ...testCard, name: 'B' },
      executor: async (turn) => turn.complete('from B'),
      store: storeB,
      prefix: '/b',
    });
    try {
      expect((await app.inject({ method: 'GET', url: '/a/.well-known/agent-card.json' })).json().name).toBe('A');
      expect((await app.inject({ method: 'GET', url: '/b/.well-known/agent-card.json' })).json().name).toBe('B');
      const a = (
        await app.inject({
          method: 'POST',
          url: '/a/a2a',
          payload: rpcBody('message/send', { message: userMessage('x') }),
        })
      ).json();
      expect(a.result.status.message.parts[0].text).toBe('from A');
      const b = (
        await app.inject({ method: 'POST', url: '/b/a2a', payload: rpcBody('tasks/get', { id: a.result.id }) })
      ).json();
      expect(b.error.code).toBe(-32001);
      expect(await storeA.getTask(a.result.id)).toBeDefined();
    } finally {
      await app.close();
    }
  });

  it.each([
    ['no executor', { agentCard: testCard }, /executor/],
    ['no card', { executor: echoAgent }, /agentCard/],
    ['a card without name', { executor: echoAgent, agentCard: { ...testCard, name: '' } }, /agentCard\.name/],
    ['an unknown option', { executor: echoAgent, agentCard: testCard, storage: 'memory:' }, /unknown option "storage"/],
    ['a bad store', { executor: echoAgent, agentCard: testCard, store: 42 }, /"store"/],
    ['a bad prefix', { executor: echoAgent, agentCard: testCard, prefix: 'agents' }, /prefix/],
    ['a bad baseUrl', { executor: echoAgent, agentCard: testCard, baseUrl: 'not a url' }, /baseUrl/],
    ['a negative timeout', { executor: echoAgent, agentCard: testCard, turnTimeoutMs: -1 }, /turnTimeoutMs/],
    [
      'an unsupported store URL',
      { executor: echoAgent, agentCard: testCard, store: 'redis://localhost' },
      /Unsupported store URL/,
    ],
    ['an empty sqlite URL', { executor: echoAgent, agentCard: testCard, store: 'sqlite:' }, /names no file/],
  ])('fails at register with %s, naming the problem', async (_name, options, pattern) => {
    const app = Fastify();
    await expect(app.register(a2aPlugin, options as never).ready()).rejects.toThrow(pattern);
    await app.close();
  });

  it('closes a store it created from a URL but leaves an instance it was given open', async () => {
    const given: A2AStore = new MemoryStore();
    const app = Fastify();
    await app.register(a2aPlugin, { agentCard: testCard, executor: echoAgent, store: given });
    await app.ready();
    await app.close();
    await expect(given.ping()).resolves.toBeUndefined();
  });

  it('ends open streams when the server closes', async () => {
    t = await buildApp(async (turn) => {
      await turn.working();
      if (!turn.signal.aborted)
        await new Promise<void>((resolve) => turn.signal.addEventListener('abort', () => resolve()));
    });
    const sent = await t.call<{ id: string }>('message/send', {
      message: userMessage('x'),
      configuration: { blocking: false },
    });
    if (!('result' in sent)) throw new Error('no result');
    const stream = t.app.inject({
      method: 'POST',
      url: '/a2a',
      payload: rpcBody('tasks/resubscribe', { id: sent.result.id }),
    });
    await new Promise((r) => setTimeout(r, 100));
    const closing = t.app.close();
    const res = await stream;
    await closing;
    t = undefined;
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('"kind":"task"');
  });
});
