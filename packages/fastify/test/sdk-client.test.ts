/**
 * The main flows driven by the official client, @a2a-js/sdk 0.3.14, over real HTTP: what a user's
 * client written against the SDK sees. Every scenario runs over both transports the card declares,
 * JSON-RPC and HTTP+JSON (the SDK's REST client, forced with `preferredTransports`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClientFactory, ClientFactoryOptions, TaskNotCancelableError, TaskNotFoundError } from '@a2a-js/sdk/client';
import type { AgentExecutorLike, Message, Task } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { echoAgent, echoCard } from '../../../test-support/agents.js';
import { a2aPlugin } from '../src/index.js';
import { listen, textParts, userMessage, waitFor } from './helpers.js';

let app: FastifyInstance;
let base: string;
const storeA = new MemoryStore();
/** `METHOD url` of every request the server received since the test began. */
let requests: string[] = [];

/** Records the requests an app receives, so a test can tell which transport the client used. */
function recordRequests(target: FastifyInstance, into: () => string[]): void {
  target.addHook('onRequest', async (request) => {
    into().push(`${request.method} ${request.url}`);
  });
}

beforeAll(async () => {
  app = Fastify();
  recordRequests(app, () => requests);
  await app.register(a2aPlugin, { agentCard: echoCard(), executor: echoAgent, store: storeA, retention: false });
  await app.register(a2aPlugin, {
    agentCard: { ...echoCard(), name: 'shouter' },
    executor: async (turn) => turn.complete(turn.text.toUpperCase()),
    store: 'memory:',
    prefix: '/agents/shouter',
  });
  base = await listen(app);
});
afterAll(async () => {
  await app.close();
});
beforeEach(() => {
  requests = [];
});

interface Transport {
  name: string;
  factory(): ClientFactory;
  /** Whether a request (`METHOD url`) went through this transport. */
  carries(request: string): boolean;
}

const transports: Transport[] = [
  {
    name: 'JSON-RPC',
    factory: () => new ClientFactory(),
    carries: (request) => /^POST \/(agents\/\w+\/)?a2a$/.test(request),
  },
  {
    name: 'HTTP+JSON',
    // §5 of the REST notes: the default factory, told to prefer REST among the card's interfaces.
    factory: () =>
      new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: ['HTTP+JSON'] }),
      ),
    carries: (request) => /^(GET|POST|DELETE) \/(agents\/\w+\/)?v1\//.test(request),
  },
];

describe.each(transports)('@a2a-js/sdk 0.3.14 client over $name', (transport) => {
  const client = () => transport.factory().createFromUrl(base);
  const other = transports.find((t) => t !== transport) as Transport;

  /** The calls of the test went through this transport, and none through the other. */
  function expectTransport(seen: readonly string[] = requests): void {
    expect(seen.filter(transport.carries).length, seen.join('\n')).toBeGreaterThan(0);
    expect(seen.filter(other.carries), seen.join('\n')).toEqual([]);
  }

  it('reads the card and sends a blocking message', async () => {
    const c = await client();
    const result = (await c.sendMessage({ message: userMessage('hello from the sdk') })) as Task;
    expect(result.kind).toBe('task');
    expect(result.status.state).toBe('completed');
    expect(textParts(result.artifacts?.[0]?.parts)).toBe('hello from the sdk');
    expect(requests).toContain('GET /.well-known/agent-card.json');
    expectTransport();
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
    expectTransport();
  });

  it('gets a task with historyLength', async () => {
    const c = await client();
    const sent = (await c.sendMessage({ message: userMessage('ask:first?') })) as Task;
    await c.sendMessage({ message: userMessage('second', { taskId: sent.id, contextId: sent.contextId }) });
    const full = await c.getTask({ id: sent.id });
    expect(full.history?.length).toBeGreaterThan(1);
    const got = await c.getTask({ id: sent.id, historyLength: 1 });
    expect(got.id).toBe(sent.id);
    expect(got.history).toHaveLength(1);
    expect(got.history?.[0]).toEqual(full.history?.at(-1));
    expectTransport();
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
    expectTransport();
  });

  it('maps an unknown task to TaskNotFoundError', async () => {
    const c = await client();
    await expect(c.getTask({ id: 'no-such-task' })).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(c.cancelTask({ id: 'no-such-task' })).rejects.toBeInstanceOf(TaskNotFoundError);
    expectTransport();
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
    expectTransport();
  });

  it('resumes an input-required task with a follow-up message', async () => {
    const c = await client();
    const asked = (await c.sendMessage({ message: userMessage('ask:Favourite colour?') })) as Task;
    expect(asked.status.state).toBe('input-required');
    expect(textParts(asked.status.message?.parts)).toBe('Favourite colour?');
    const events = [];
    for await (const event of c.sendMessageStream({
      message: userMessage('green', { taskId: asked.id, contextId: asked.contextId }),
    })) {
      events.push(event);
    }
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
    const done = await c.getTask({ id: asked.id });
    expect(textParts(done.artifacts?.[0]?.parts)).toBe('You answered: green');
    expectTransport();
  });

  it('talks to a second agent under its own prefix', async () => {
    const c = await transport.factory().createFromUrl(`${base}/agents/shouter/.well-known/agent-card.json`, '');
    const task = (await c.sendMessage({ message: userMessage('quiet please') })) as Task;
    expect(textParts(task.status.message?.parts)).toBe('QUIET PLEASE');
    expect(requests.some((r) => r.startsWith('POST /agents/shouter/'))).toBe(true);
    // the first agent does not know this task
    await expect((await client()).getTask({ id: task.id })).rejects.toBeInstanceOf(TaskNotFoundError);
    expectTransport();
  });

  it('receives a Message when the agent replies with one', async () => {
    const replyApp = Fastify();
    const seen: string[] = [];
    recordRequests(replyApp, () => seen);
    await replyApp.register(a2aPlugin, {
      agentCard: echoCard(),
      executor: async (turn) => turn.reply(`re: ${turn.text}`),
    });
    try {
      const c = await transport.factory().createFromUrl(await listen(replyApp));
      const reply = (await c.sendMessage({ message: userMessage('hi') })) as Message;
      expect(reply.kind).toBe('message');
      expect(reply.role).toBe('agent');
      expect(textParts(reply.parts)).toBe('re: hi');
      expectTransport(seen);
    } finally {
      await replyApp.close();
    }
  });

  it('a stream resumed on another worker (one SQLite file) reaches the final event', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'a2a-sdk-workers-'));
    const storeUrl = `sqlite:${join(dir, 'a2a.db')}`;
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    // Runs on worker A only: the test sends there, and opens the gate once B's stream is open.
    const executor: AgentExecutorLike = async (turn) => {
      await turn.working('started on A');
      await gate;
      await turn.artifact({ name: 'result', text: 'written by A' });
      await turn.complete('done');
    };
    const workers: { app: FastifyInstance; seen: string[] }[] = [];
    try {
      for (const workerId of ['worker-a', 'worker-b']) {
        const worker = Fastify();
        const seen: string[] = [];
        recordRequests(worker, () => seen);
        await worker.register(a2aPlugin, {
          agentCard: echoCard(),
          executor,
          store: storeUrl,
          workerId,
          retention: false,
          followPollIntervalMs: 200,
        });
        workers.push({ app: worker, seen });
      }
      const [a, b] = workers as [(typeof workers)[0], (typeof workers)[0]];
      const onA = await transport.factory().createFromUrl(await listen(a.app));
      const onB = await transport.factory().createFromUrl(await listen(b.app));
      const sent = (await onA.sendMessage({
        message: userMessage('long job'),
        configuration: { blocking: false },
      })) as Task;
      const events: { kind: string }[] = [];
      for await (const event of onB.resubscribeTask({ id: sent.id })) {
        events.push(event);
        if (events.length === 1) openGate();
      }
      expect(events[0]).toMatchObject({ kind: 'task', id: sent.id });
      expect((events[0] as Task).status.state).not.toBe('completed');
      const artifact = events.find((e) => e.kind === 'artifact-update') as
        | { artifact: { parts: Parameters<typeof textParts>[0] } }
        | undefined;
      expect(textParts(artifact?.artifact.parts)).toBe('written by A');
      expect(events.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
      // the stream was B's: A served the send and nothing else
      expectTransport(b.seen);
      expect(a.seen.filter(transport.carries)).toHaveLength(1);
    } finally {
      openGate();
      for (const { app: worker } of workers) await worker.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
