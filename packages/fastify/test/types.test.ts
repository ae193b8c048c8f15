/**
 * Type-level checks, enforced by `npm run typecheck` (tsc over the tests): what the options accept
 * and refuse, and the executor's turn API. Each `@ts-expect-error` fails the type check if the line
 * below it ever compiles.
 */
import type {
  A2ARuntime,
  A2AStore,
  Caller,
  Message,
  MessageInput,
  OperationName,
  Task,
  TurnContext,
} from '@fastify-a2a/core';
import Fastify from 'fastify';
import { describe, expectTypeOf, it } from 'vitest';
import { type A2AAgent, type A2AAgents, type A2APluginOptions, a2aPlugin } from '../src/index.js';

const card = { name: 'n', description: 'd', version: '1' };

describe('types', () => {
  it('options: required fields, store forms, and unknown options refused', () => {
    expectTypeOf<A2APluginOptions['store']>().toEqualTypeOf<A2AStore | string | undefined>();
    const ok: A2APluginOptions = { agentCard: card, executor: async () => {}, store: 'memory:', leaseTtlMs: 1000 };
    expectTypeOf(ok).toMatchTypeOf<A2APluginOptions>();
    // @ts-expect-error executor is required
    const noExecutor: A2APluginOptions = { agentCard: card };
    // @ts-expect-error an unknown option does not compile
    const unknown: A2APluginOptions = { agentCard: card, executor: async () => {}, storage: 'memory:' };
    const tooMuch: A2APluginOptions = {
      // @ts-expect-error the plugin fills in the card's url and protocolVersion
      agentCard: { ...card, url: 'x', protocolVersion: '0.3.0' },
      executor: async () => {},
    };
    const withHook: A2APluginOptions = {
      agentCard: card,
      executor: async () => {},
      rest: false,
      authorize: (ctx, operation) => ctx.principal !== undefined || operation === 'getTask',
    };
    expectTypeOf<Parameters<NonNullable<A2APluginOptions['authorize']>>[1]>().toEqualTypeOf<OperationName>();
    // @ts-expect-error rest is a boolean
    const restString: A2APluginOptions = { agentCard: card, executor: async () => {}, rest: 'yes' };
    void [noExecutor, unknown, tooMuch, withHook, restString];
  });

  it('issue 23 options: card shapes, input modes, message id reuse, the card as a file path', () => {
    const interop: A2APluginOptions = {
      agentCard: './card.json',
      executor: async () => {},
      agentCardVersions: ['1.0'],
      agentCardMaxAgeSeconds: 0,
      validateInputModes: ['0.3', '1.0'],
      messageIdReuse: 'ignore',
    };
    // @ts-expect-error only the versions served name a card shape
    const badShape: A2APluginOptions = { agentCard: card, executor: async () => {}, agentCardVersions: ['2.0'] };
    // @ts-expect-error messageIdReuse is one of three names
    const badReuse: A2APluginOptions = { agentCard: card, executor: async () => {}, messageIdReuse: 'skip' };
    void [interop, badShape, badReuse];
  });

  it('fastify.a2a is declared on every Fastify instance', async () => {
    const app = Fastify();
    await app.register(a2aPlugin, { agentCard: card, executor: async () => {} });
    expectTypeOf(app.a2a).toEqualTypeOf<A2AAgents>();
    expectTypeOf<ReturnType<A2AAgents['get']>>().toEqualTypeOf<A2AAgent>();
    expectTypeOf<A2AAgent['runtime']>().toEqualTypeOf<A2ARuntime>();
    expectTypeOf<A2AAgents['store']>().toEqualTypeOf<A2AStore>();
    await app.close();
  });

  it('register accepts the options', async () => {
    const app = Fastify();
    await app.register(a2aPlugin, { agentCard: card, executor: { execute: async (turn) => turn.complete() } });
    await app.close();
  });

  it('the turn API', () => {
    expectTypeOf<TurnContext['signal']>().toEqualTypeOf<AbortSignal>();
    expectTypeOf<TurnContext['task']>().toEqualTypeOf<Task>();
    expectTypeOf<TurnContext['message']>().toEqualTypeOf<Message>();
    expectTypeOf<TurnContext['artifact']>().returns.toEqualTypeOf<Promise<string>>();
    expectTypeOf<TurnContext['requireInput']>().parameter(0).toEqualTypeOf<MessageInput>();
    expectTypeOf<TurnContext['caller']>().toEqualTypeOf<Caller>();
    expectTypeOf<Caller['version']>().toEqualTypeOf<'0.3' | '1.0'>();
  });
});
