/**
 * An agent with the A2A 1.1 draft's task generations on still serves the official 1.0 client,
 * @a2a-js/sdk 1.3.0, on both bindings: it reads past the `generation` members it does not know.
 */

import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk-1/client';
import { MemoryStore } from '@fastify-a2a/store-memory';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoAgent } from '../../../../test-support/agents.js';
import { asSdkTask, message, request, textOf } from '../../../../test-support/sdk-1.js';
import { a2aPlugin } from '../../src/index.js';
import { listen } from '../helpers.js';

const app = Fastify();
let base: string;

beforeAll(async () => {
  await app.register(a2aPlugin, {
    agentCard: { name: 'Echo', description: 'Echoes.', version: '1.0.0' },
    executor: echoAgent,
    store: new MemoryStore(),
    retention: false,
    draft11: { generations: true },
  });
  base = await listen(app);
});
afterAll(() => app.close());

describe.each(['JSONRPC', 'HTTP+JSON'] as const)('@a2a-js/sdk 1.3.0 over %s, generations on', (transport) => {
  it('sends, streams and gets tasks whose JSON carries generation', async () => {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [transport] }),
    );
    const client = await factory.createFromUrl(base);
    const task = asSdkTask(await client.sendMessage(request({ message: message('hello') })));
    expect(textOf(task.artifacts[0]?.parts)).toContain('hello');
    const events: unknown[] = [];
    for await (const event of client.sendMessageStream(request({ message: message('again') }))) events.push(event);
    expect(events.length).toBeGreaterThan(1);
    expect((await client.getTask(request({ id: task.id }))).id).toBe(task.id);
    // The wire did carry it: the field is there for a client that reads it.
    const raw = await fetch(`${base}/tasks/${task.id}`, { headers: { 'a2a-version': '1.0' } });
    expect(((await raw.json()) as { generation?: number }).generation).toBeGreaterThan(1);
  });
});
