/**
 * The main flows driven by the official client, @a2a-js/sdk 0.3.14, over real HTTP: what a user's
 * client written against the SDK sees.
 */
import { ClientFactory, TaskNotCancelableError, TaskNotFoundError } from '@a2a-js/sdk/client';
import type { Message, Task } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCard, echoAgent } from '../../../examples/demo/src/agents.js';
import { a2aPlugin } from '../src/index.js';
import { listen, textParts, userMessage, waitFor } from './helpers.js';

let app: FastifyInstance;
let base: string;
const storeA = new MemoryStore();

beforeAll(async () => {
  app = Fastify();
  await app.register(a2aPlugin, { agentCard: demoCard('echo'), executor: echoAgent, store: storeA, retention: false });
  await app.register(a2aPlugin, {
    agentCard: { ...demoCard('echo'), name: 'shouter' },
    executor: async (turn) => turn.complete(turn.text.toUpperCase()),
    store: 'memory:',
    prefix: '/agents/shouter',
  });
  base = await listen(app);
});
afterAll(async () => {
  await app.close();
});

const client = () => new ClientFactory().createFromUrl(base);

describe('@a2a-js/sdk 0.3.14 client', () => {
  it('reads the card and sends a blocking message', async () => {
    const c = await client();
    const result = (await c.sendMessage({ message: userMessage('hello from the sdk') })) as Task;
    expect(result.kind).toBe('task');
    expect(result.status.state).toBe('completed');
    expect(textParts(result.artifacts?.[0]?.parts)).toBe('hello from the sdk');
  });

  it('streams a message to its final event', async () => {
    const c = await client();
    const kinds: string[] = [];
    let last: unknown;
    for await (const event of c.sendMessageStream({ message: userMessage('a b c') })) {
      kinds.push(event.kind);
      last = event;
    }
    expect(kinds[0]).toBe('task');
    expect(kinds.filter((k) => k === 'artifact-update')).toHaveLength(5);
    expect(last).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
  });

  it('gets a task with historyLength', async () => {
    const c = await client();
    const sent = (await c.sendMessage({ message: userMessage('remember me') })) as Task;
    const got = await c.getTask({ id: sent.id, historyLength: 1 });
    expect(got.id).toBe(sent.id);
    expect(got.history).toHaveLength(1);
  });

  it('cancels a running task, and a second cancel is TaskNotCancelable', async () => {
    const c = await client();
    const sent = (await c.sendMessage({
      message: userMessage('sleep:20000'),
      configuration: { blocking: false },
    })) as Task;
    await waitFor(async () => (await c.getTask({ id: sent.id })).status.state === 'working');
    const canceled = await c.cancelTask({ id: sent.id });
    expect(canceled.status.state).toBe('canceled');
    await expect(c.cancelTask({ id: sent.id })).rejects.toBeInstanceOf(TaskNotCancelableError);
  });

  it('maps an unknown task to TaskNotFoundError', async () => {
    const c = await client();
    await expect(c.getTask({ id: 'no-such-task' })).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('resubscribes to a running task and follows it to completion', async () => {
    const c = await client();
    const sent = (await c.sendMessage({
      message: userMessage('sleep:400'),
      configuration: { blocking: false },
    })) as Task;
    const events: { kind: string }[] = [];
    for await (const event of c.resubscribeTask({ id: sent.id })) events.push(event);
    expect(events[0]?.kind).toBe('task');
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
  });

  it('resumes an input-required task with a follow-up message', async () => {
    const c = await client();
    const asked = (await c.sendMessage({ message: userMessage('ask:Favourite colour?') })) as Task;
    expect(asked.status.state).toBe('input-required');
    const events = [];
    for await (const event of c.sendMessageStream({
      message: userMessage('green', { taskId: asked.id, contextId: asked.contextId }),
    })) {
      events.push(event);
    }
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
    const done = await c.getTask({ id: asked.id });
    expect(textParts(done.artifacts?.[0]?.parts)).toBe('You answered: green');
  });

  it('talks to a second agent under its own prefix', async () => {
    const c = await new ClientFactory().createFromUrl(`${base}/agents/shouter/.well-known/agent-card.json`, '');
    const task = (await c.sendMessage({ message: userMessage('quiet please') })) as Task;
    expect(textParts(task.status.message?.parts)).toBe('QUIET PLEASE');
    // the first agent does not know this task
    await expect((await client()).getTask({ id: task.id })).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('receives a Message when the agent replies with one', async () => {
    const replyApp = Fastify();
    await replyApp.register(a2aPlugin, {
      agentCard: demoCard('echo'),
      executor: async (turn) => turn.reply(`re: ${turn.text}`),
    });
    try {
      const c = await new ClientFactory().createFromUrl(await listen(replyApp));
      const reply = (await c.sendMessage({ message: userMessage('hi') })) as Message;
      expect(reply.kind).toBe('message');
      expect(textParts(reply.parts)).toBe('re: hi');
    } finally {
      await replyApp.close();
    }
  });
});
