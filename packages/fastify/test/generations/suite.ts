/**
 * The A2A 1.1 draft's task generations (§3.2.7, opt-in `draft11.generations`) through the plugin
 * over real HTTP, on the 1.0 JSON-RPC and HTTP+JSON bindings, run on every store
 * (generations.<store>.test.ts): the values on Task and on each streamed event, GetTask's
 * `currentGeneration` long-poll, `ifGenerationMatch` and its error on each binding, and that no
 * `generation` reaches a 0.3 client, nor anyone when the option is off. The same scenarios across
 * worker processes are in ../generations-multi-worker/.
 */

import type { A2AStore, TurnContext } from '@fastify-a2a/core';
import { TASK_GENERATION_EXTENSION } from '@fastify-a2a/core';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { type A2APluginOptions, a2aPlugin } from '../../src/index.js';
import { listen, nextId, postSse, readSse, rpcBody, testCard } from '../helpers.js';

export interface StoreFixture {
  readonly name: string;
  create(): A2AStore | Promise<A2AStore>;
}

type Json = Record<string, unknown>;
type Binding = 'JSONRPC' | 'HTTP+JSON';

/**
 * The test agent: a new task works, streams three chunks of one artifact and asks for input; a
 * follow-up completes it, unless it says `again` (asks again). Every change is a generation.
 */
async function agent(turn: TurnContext): Promise<void> {
  if (turn.previousState === 'input-required' && turn.text !== 'again') {
    await turn.complete('done');
    return;
  }
  await turn.working();
  for (let i = 0; i < 3; i++) await turn.artifact({ artifactId: 'answer', text: `c${i}`, append: i > 0 });
  await turn.requireInput('more?');
}

const message1_0 = (text: string, taskId?: string): Json => ({
  messageId: nextId(),
  role: 'ROLE_USER',
  parts: [{ text }],
  ...(taskId === undefined ? {} : { taskId }),
});

/** A raw 1.0 client of one binding: wire JSON in and out, nothing normalised (the test reads `generation` as sent). */
class Client1_0 {
  constructor(
    readonly base: string,
    readonly binding: Binding,
  ) {}

  async #rpc(method: string, params: unknown): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${this.base}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify(rpcBody(method, params)),
    });
    return { status: res.status, body: (await res.json()) as Json };
  }

  async #rest(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: { 'a2a-version': '1.0', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  }

  /** SendMessage: `{ ok, value }` with the task, or the error as the binding sent it. */
  async send(request: Json): Promise<{ ok: true; task: Json } | { ok: false; status: number; error: Json }> {
    if (this.binding === 'JSONRPC') {
      const { status, body } = await this.#rpc('SendMessage', request);
      if (body.error !== undefined) return { ok: false, status, error: body.error as Json };
      return { ok: true, task: (body.result as Json).task as Json };
    }
    const { status, body } = await this.#rest('POST', '/message:send', request);
    if (status !== 200) return { ok: false, status, error: body.error as Json };
    return { ok: true, task: body.task as Json };
  }

  async getTask(id: string, currentGeneration?: number | string): Promise<Json> {
    if (this.binding === 'JSONRPC') {
      const params = currentGeneration === undefined ? { id } : { id, currentGeneration };
      const { body } = await this.#rpc('GetTask', params);
      if (body.error !== undefined) throw new Error(`GetTask failed: ${JSON.stringify(body.error)}`);
      return body.result as Json;
    }
    const query = currentGeneration === undefined ? '' : `?currentGeneration=${currentGeneration}`;
    const { status, body } = await this.#rest('GET', `/tasks/${id}${query}`);
    if (status !== 200) throw new Error(`GetTask failed: ${status} ${JSON.stringify(body)}`);
    return body;
  }

  /** SendStreamingMessage: every stream item as sent (`{ task }`, `{ statusUpdate }`, `{ artifactUpdate }`). */
  async stream(request: Json): Promise<Json[]> {
    const response =
      this.binding === 'JSONRPC'
        ? await postSse(`${this.base}/a2a`, rpcBody('SendStreamingMessage', request), { 'a2a-version': '1.0' })
        : await postSse(`${this.base}/message:stream`, request, { 'a2a-version': '1.0' });
    const items: Json[] = [];
    for await (const event of readSse(response)) {
      const data = event.data as Json;
      items.push(this.binding === 'JSONRPC' ? (data.result as Json) : data);
    }
    return items;
  }
}

/** The generation an item carries, whichever member it is under. */
const generationOf = (item: Json): unknown =>
  ((item.task ?? item.statusUpdate ?? item.artifactUpdate ?? item) as Json).generation;

/** Every `"generation"` member anywhere in a JSON answer. */
const mentionsGeneration = (value: unknown): boolean => JSON.stringify(value).includes('"generation"');

/** The error's ErrorInfo (1.0 §9.5 / §11.6: `data` on JSON-RPC, `details` on HTTP+JSON). */
function errorInfo(error: Json): Json | undefined {
  const details = (Array.isArray(error.data) ? error.data : error.details) as Json[] | undefined;
  return details?.find((detail) => String(detail['@type']).endsWith('google.rpc.ErrorInfo'));
}

export function generationSuite(store: StoreFixture): void {
  describe(`A2A 1.1 draft task generations on ${store.name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    async function serve(options: Partial<A2APluginOptions> = {}): Promise<string> {
      const instance = await store.create();
      cleanups.push(() => instance.close());
      const app = Fastify({ logger: false, forceCloseConnections: true });
      cleanups.push(() => app.close());
      await app.register(a2aPlugin, {
        agentCard: testCard,
        executor: agent,
        store: instance,
        retention: false,
        drainTimeoutMs: 200,
        followPollIntervalMs: 200,
        ...options,
      });
      return listen(app);
    }

    const on = { draft11: { generations: true, longPollMaxWaitMs: 5000 } } as const;

    for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
      describe(`A2A 1.0 over ${binding}`, () => {
        it('numbers the task and every streamed event consecutively, a follow-up message counting one', async () => {
          const client = new Client1_0(await serve(on), binding);
          const first = await client.stream({ message: message1_0('go') });
          const [snapshot, ...events] = first;
          const taskId = ((snapshot as Json).task as Json).id as string;
          expect(generationOf(snapshot as Json)).toBe(1);
          // status and artifact updates, each one change: 2, 3, 4…, no gap.
          expect(events.length).toBeGreaterThanOrEqual(5);
          expect(events.map(generationOf)).toEqual(events.map((_, i) => 2 + i));
          const stored = await client.getTask(taskId);
          expect(stored.generation).toBe(1 + events.length);

          // The follow-up's own message is one change (not streamed): the next snapshot is one
          // past, and its events go on from there.
          const second = await client.stream({ message: message1_0('again', taskId) });
          const [again, ...more] = second;
          const before = stored.generation as number;
          expect(generationOf(again as Json)).toBe(before + 1);
          expect(more.map(generationOf)).toEqual(more.map((_, i) => before + 2 + i));
          expect((await client.getTask(taskId)).generation).toBe(before + 1 + more.length);
        });

        it('answers GetTask with currentGeneration at once when the task is already past it', async () => {
          const client = new Client1_0(await serve(on), binding);
          const sent = await client.send({ message: message1_0('go') });
          if (!sent.ok) throw new Error(JSON.stringify(sent));
          const generation = sent.task.generation as number;
          expect(generation).toBeGreaterThan(1);
          const started = Date.now();
          const answer = await client.getTask(sent.task.id as string, generation - 1);
          expect(answer.generation).toBe(generation);
          // Well inside the 5 s bound: it was not held.
          expect(Date.now() - started).toBeLessThan(2500);
          // The int64 as ProtoJSON writes it (a string) is read too.
          expect((await client.getTask(sent.task.id as string, String(generation - 1))).generation).toBe(generation);
        });

        it('holds GetTask with currentGeneration until a change, then answers the changed task', async () => {
          const client = new Client1_0(await serve(on), binding);
          const sent = await client.send({ message: message1_0('go') });
          if (!sent.ok) throw new Error(JSON.stringify(sent));
          const taskId = sent.task.id as string;
          const generation = sent.task.generation as number;
          let answered = false;
          const held = client.getTask(taskId, generation).then((task) => {
            answered = true;
            return task;
          });
          await new Promise((resolve) => setTimeout(resolve, 300));
          expect(answered).toBe(false);
          const followUp = await client.send({ message: message1_0('finish', taskId) });
          expect(followUp.ok).toBe(true);
          const task = await held;
          expect(task.generation as number).toBeGreaterThan(generation);
        });

        it('answers a held GetTask with the task as it is when the bounded wait ends', async () => {
          const client = new Client1_0(
            await serve({ draft11: { generations: true, longPollMaxWaitMs: 400 } }),
            binding,
          );
          const sent = await client.send({ message: message1_0('go') });
          if (!sent.ok) throw new Error(JSON.stringify(sent));
          const generation = sent.task.generation as number;
          const started = Date.now();
          const task = await client.getTask(sent.task.id as string, generation);
          expect(Date.now() - started).toBeGreaterThanOrEqual(350);
          expect(task.generation).toBe(generation);
          expect((task.status as Json).state).toBe('TASK_STATE_INPUT_REQUIRED');
        });

        it('refuses a follow-up whose ifGenerationMatch is not the task generation, and takes one that is', async () => {
          const client = new Client1_0(await serve(on), binding);
          const sent = await client.send({ message: message1_0('go') });
          if (!sent.ok) throw new Error(JSON.stringify(sent));
          const taskId = sent.task.id as string;
          const generation = sent.task.generation as number;
          const stale = await client.send({
            message: message1_0('finish', taskId),
            configuration: { ifGenerationMatch: generation - 1 },
          });
          expect(stale.ok).toBe(false);
          if (stale.ok) return;
          if (binding === 'JSONRPC') {
            expect(stale.error.code).toBe(-32010);
          } else {
            expect(stale.status).toBe(409);
            expect(stale.error.code).toBe(409);
            expect(stale.error.status).toBe('ABORTED');
          }
          const info = errorInfo(stale.error);
          expect(info?.reason).toBe('TASK_GENERATION_MISMATCH');
          expect(info?.metadata).toEqual({
            taskId,
            expectedGeneration: String(generation - 1),
            currentGeneration: String(generation),
          });
          // Refused before anything was written: the task is as it was.
          expect((await client.getTask(taskId)).generation).toBe(generation);

          const matching = await client.send({
            message: message1_0('finish', taskId),
            configuration: { ifGenerationMatch: String(generation) },
          });
          expect(matching.ok).toBe(true);
          if (matching.ok) expect((matching.task.status as Json).state).toBe('TASK_STATE_COMPLETED');
          // The loser of a race learns it lost, even once the winner finished the task.
          const late = await client.send({
            message: message1_0('finish', taskId),
            configuration: { ifGenerationMatch: generation },
          });
          expect(late.ok).toBe(false);
          if (!late.ok) expect(errorInfo(late.error)?.reason).toBe('TASK_GENERATION_MISMATCH');
        });

        it('ignores ifGenerationMatch on a message that creates a task', async () => {
          const client = new Client1_0(await serve(on), binding);
          const sent = await client.send({ message: message1_0('go'), configuration: { ifGenerationMatch: 42 } });
          expect(sent.ok).toBe(true);
        });

        it('with the option off: no generation anywhere, ifGenerationMatch refused, currentGeneration answered at once', async () => {
          const base = await serve({ draft11: { generations: false, longPollMaxWaitMs: 5000 } });
          const client = new Client1_0(base, binding);
          const streamed = await client.stream({ message: message1_0('go') });
          expect(streamed.length).toBeGreaterThan(3);
          expect(mentionsGeneration(streamed)).toBe(false);
          const taskId = ((streamed[0] as Json).task as Json).id as string;
          const started = Date.now();
          const task = await client.getTask(taskId, 1);
          expect(Date.now() - started).toBeLessThan(2500);
          expect(mentionsGeneration(task)).toBe(false);
          const refused = await client.send({
            message: message1_0('finish', taskId),
            configuration: { ifGenerationMatch: 1 },
          });
          expect(refused.ok).toBe(false);
          if (!refused.ok) {
            expect(errorInfo(refused.error)?.reason).toBe('INVALID_PARAMS');
            expect(String(refused.error.message)).toMatch(/draft11\.generations/);
          }
          const card = (await (await fetch(`${base}/.well-known/agent-card.json`)).json()) as Json;
          expect(JSON.stringify(card)).not.toContain(TASK_GENERATION_EXTENSION);
        });
      });
    }

    it('declares the extension on the card when on', async () => {
      const base = await serve(on);
      const card = (await (await fetch(`${base}/.well-known/agent-card.json`)).json()) as {
        capabilities: { extensions?: { uri: string; params?: Json }[] };
      };
      const extension = card.capabilities.extensions?.find((e) => e.uri === TASK_GENERATION_EXTENSION);
      expect(extension?.params).toEqual({ longPollMaxWaitMs: 5000 });
    });

    it('sends no generation to a 0.3 client, on JSON-RPC and HTTP+JSON, with the option on', async () => {
      const base = await serve(on);
      const message = (text: string, taskId?: string): Json => ({
        kind: 'message',
        messageId: nextId(),
        role: 'user',
        parts: [{ kind: 'text', text }],
        ...(taskId === undefined ? {} : { taskId }),
      });
      const rpc = async (method: string, params: unknown): Promise<Json> => {
        const res = await fetch(`${base}/a2a`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(rpcBody(method, params)),
        });
        return (await res.json()) as Json;
      };
      const sent = await rpc('message/send', { message: message('go') });
      const task = sent.result as Json;
      expect(task.kind).toBe('task');
      expect(mentionsGeneration(sent)).toBe(false);
      expect(mentionsGeneration(await rpc('tasks/get', { id: task.id }))).toBe(false);
      const streamed: unknown[] = [];
      for await (const event of readSse(
        await postSse(`${base}/a2a`, rpcBody('message/stream', { message: message('go') })),
      )) {
        streamed.push(event.data);
      }
      expect(streamed.length).toBeGreaterThan(3);
      expect(mentionsGeneration(streamed)).toBe(false);
      const rest = (await (await fetch(`${base}/v1/tasks/${task.id as string}`)).json()) as Json;
      expect(rest.id).toBe(task.id);
      expect(mentionsGeneration(rest)).toBe(false);
      // A 0.3 request carrying the 1.0 draft's precondition is read as 0.3 always read it: without it.
      const followUp = await rpc('message/send', {
        message: message('finish', task.id as string),
        configuration: { ifGenerationMatch: 999 },
      });
      expect((followUp.result as Json | undefined)?.kind).toBe('task');
    });
  });
}
