/**
 * Interfaces a listener beside Fastify adds while the server runs (`app.a2a.get().addInterface`,
 * what @fastify-a2a/grpc does for its gRPC port): 1.0 clients find each in `supportedInterfaces`;
 * one that speaks 0.3 is in the 0.3 card's `additionalInterfaces` too, as `{ url, transport }` (0.3
 * §5.6), with REST on or off, in the combined and the pure 0.3 card; removing it removes it.
 */
import { Ajv } from 'ajv';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { echoAgent } from '../../../test-support/agents.js';
import { type A2APluginOptions, a2aPlugin } from '../src/index.js';
import { listen, testCard } from './helpers.js';
import { agentCardSchema0_3 } from './regressions/card-schemas.js';

const validate0_3 = new Ajv({ allErrors: true, strict: false }).compile(agentCardSchema0_3);

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start(options: Partial<A2APluginOptions> = {}): Promise<{ base: string; app: FastifyInstance }> {
  app = Fastify();
  await app.register(a2aPlugin, { agentCard: testCard, executor: echoAgent, store: 'memory:', ...options });
  return { base: await listen(app), app };
}

type Card = {
  additionalInterfaces?: { url: string; transport: string }[];
  supportedInterfaces?: { url: string; protocolBinding: string; protocolVersion: string }[];
};

async function cardOf(base: string, headers: Record<string, string> = {}): Promise<Card> {
  return (await (await fetch(`${base}/.well-known/agent-card.json`, { headers })).json()) as Card;
}

const grpc = (protocolVersion: string) => ({ url: 'grpc.example:50051', protocolBinding: 'GRPC', protocolVersion });

describe('interfaces added beside Fastify', () => {
  it('a 0.3 interface joins additionalInterfaces after the plugin’s own; a 1.0 one does not', async () => {
    const { base, app } = await start();
    const agent = app.a2a.get();
    const remove = [agent.addInterface(grpc('1.0')), agent.addInterface(grpc('0.3'))];
    const card = await cardOf(base);
    expect(card.additionalInterfaces).toEqual([
      { url: `${base}/a2a`, transport: 'JSONRPC' },
      { url: base, transport: 'HTTP+JSON' },
      { url: 'grpc.example:50051', transport: 'GRPC' },
    ]);
    expect(card.supportedInterfaces?.slice(-2)).toEqual([grpc('1.0'), grpc('0.3')]);
    for (const undo of remove) undo();
    const after = await cardOf(base);
    expect(after.additionalInterfaces?.map((i) => i.transport)).toEqual(['JSONRPC', 'HTTP+JSON']);
    expect(after.supportedInterfaces?.map((i) => i.protocolBinding)).not.toContain('GRPC');
  });

  it('with REST off, the card gets additionalInterfaces for the 0.3 interface (and JSON-RPC, the preferred)', async () => {
    const { base, app } = await start({ rest: false });
    expect((await cardOf(base)).additionalInterfaces).toBeUndefined();
    app.a2a.get().addInterface(grpc('0.3'));
    expect((await cardOf(base)).additionalInterfaces).toEqual([
      { url: `${base}/a2a`, transport: 'JSONRPC' },
      { url: 'grpc.example:50051', transport: 'GRPC' },
    ]);
  });

  it('the pure 0.3 card lists it and stays a valid 0.3 card; the pure 1.0 card lists it in supportedInterfaces only', async () => {
    const { base, app } = await start({ agentCardVersions: ['0.3'] });
    app.a2a.get().addInterface(grpc('0.3'));
    const card = await cardOf(base);
    expect(card.additionalInterfaces).toContainEqual({ url: 'grpc.example:50051', transport: 'GRPC' });
    expect(validate0_3(card), JSON.stringify(validate0_3.errors)).toBe(true);
    await app.close();
    const other = await start({ agentCardVersions: ['1.0'] });
    other.app.a2a.get().addInterface(grpc('0.3'));
    const card1_0 = await cardOf(other.base);
    expect(card1_0.additionalInterfaces).toBeUndefined();
    expect(card1_0.supportedInterfaces).toContainEqual(grpc('0.3'));
  });
});
