/**
 * The official clients against an agent that authenticates: @a2a-js/sdk 0.3.14 (its
 * AuthenticationHandler adding a bearer token) over JSON-RPC and HTTP+JSON, and 1.3.0 with the
 * token in its fetch. Without credentials each reports the server's refusal; with them, the main
 * flows work and `getAgentCard()` brings the extended card.
 */

import {
  type AuthenticationHandler,
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import {
  ClientFactory as Client1Factory,
  ClientFactoryOptions as Client1FactoryOptions,
  JsonRpcTransportFactory as JsonRpc1TransportFactory,
} from '@a2a-js/sdk-1/client';
import type { Task } from '@fastify-a2a/core';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoAgent, echoCard } from '../../../test-support/agents.js';
import { a2aPlugin, bearerTokens } from '../src/index.js';
import { listen, nextId, textParts, userMessage } from './helpers.js';

let app: FastifyInstance;
let base: string;
const card = echoCard();
const memberSkill = { id: 'whoami', name: 'Who am I', description: 'Says who you are.', tags: ['auth'] };

beforeAll(async () => {
  app = Fastify();
  await app.register(a2aPlugin, {
    agentCard: card,
    executor: echoAgent,
    store: 'memory:',
    retention: false,
    authenticate: bearerTokens({ 'sdk-token-alice-0123456789': 'alice' }),
    extendedAgentCard: { skills: [...(card.skills ?? []), memberSkill] },
  });
  base = await listen(app);
});
afterAll(async () => {
  await app.close();
});

/** An AuthenticationHandler sending `token` on every request (none: no header). */
function handler(token: string | undefined): AuthenticationHandler {
  return {
    headers: async (): Promise<Record<string, string>> =>
      token === undefined ? {} : { Authorization: `Bearer ${token}` },
    shouldRetryWithHeaders: async () => undefined,
  };
}

function factory03(transport: 'JSONRPC' | 'HTTP+JSON', token: string | undefined): ClientFactory {
  const fetchImpl = createAuthenticatingFetchWithRetry(fetch, handler(token));
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      preferredTransports: [transport],
    }),
  );
}

describe.each(['JSONRPC', 'HTTP+JSON'] as const)('@a2a-js/sdk 0.3.14 over %s with a bearer token', (transport) => {
  it('without a token the card is public but every call is refused with the server’s reason', async () => {
    const client = await factory03(transport, undefined).createFromUrl(base);
    await expect(client.sendMessage({ message: userMessage('hi') })).rejects.toThrow(/Authentication required/);
  });

  it('with a wrong token the call is refused, saying the token is not accepted', async () => {
    const client = await factory03(transport, 'wrong-token').createFromUrl(base);
    await expect(client.getTask({ id: 'x' })).rejects.toThrow(/bearer token is not one this agent accepts/);
  });

  it('with the token: send, stream, get, and the extended card from getAgentCard()', async () => {
    const client = await factory03(transport, 'sdk-token-alice-0123456789').createFromUrl(base);
    const sent = (await client.sendMessage({ message: userMessage('whoami') })) as Task;
    expect(sent.status.state).toBe('completed');
    expect(textParts(sent.status.message?.parts)).toBe('You are alice.');
    const kinds: string[] = [];
    for await (const event of client.sendMessageStream({ message: userMessage('one two') })) kinds.push(event.kind);
    expect(kinds.at(-1)).toBe('status-update');
    expect((await client.getTask({ id: sent.id })).id).toBe(sent.id);
    const extended = await client.getAgentCard();
    expect(extended.skills.map((s) => s.id)).toEqual(['echo', 'whoami']);
  });
});

describe('@a2a-js/sdk 1.3.0 with a bearer token', () => {
  function factory1(token: string | undefined) {
    const authFetch: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
      return fetch(input, { ...init, headers });
    };
    return new Client1Factory(
      Client1FactoryOptions.createFrom(Client1FactoryOptions.default, {
        transports: [new JsonRpc1TransportFactory({ fetchImpl: authFetch })],
      }),
    );
  }

  it('sends with the token and is refused without it', async () => {
    const message = {
      messageId: nextId('sdk1'),
      contextId: '',
      taskId: '',
      role: 1,
      parts: [
        { content: { $case: 'text' as const, value: 'whoami' }, metadata: undefined, filename: '', mediaType: '' },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    const client = await factory1('sdk-token-alice-0123456789').createFromUrl(base);
    const result = (await client.sendMessage({ message } as never)) as {
      status?: { message?: { parts: { content: { value: string } }[] } };
    };
    expect(result.status?.message?.parts[0]?.content.value).toBe('You are alice.');
    const anonymous = await factory1(undefined).createFromUrl(base);
    await expect(
      anonymous.sendMessage({ message: { ...message, messageId: nextId('sdk1') } } as never),
    ).rejects.toThrow(/Authentication required|401/);
  });
});
