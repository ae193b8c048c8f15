/**
 * The A2A protocol suite: what a client of either binding and either protocol version (0.3, 1.0)
 * sees, asserted once through {@link ProtocolClient} and run for every (binding, version) on every
 * store (protocol.<store>.test.ts). Section numbers are 0.3's; where 1.0 differs, the scenario says
 * so. Each
 * scenario serves a fresh agent over real HTTP on a fresh store instance; the store fixture decides
 * what "fresh" costs (a new MemoryStore, a connection to the file's SQLite database or Postgres
 * schema).
 *
 * Runtime semantics that need no binding (turn order, leases, retries…) are tested in
 * core/test/runtime; what only one binding has (JSON-RPC envelopes, HTTP+JSON routes) in its own
 * file.
 */

import type {
  A2AStore,
  AgentExecutorLike,
  ListTasksParams,
  ListTasksResult,
  Message,
  StreamResult,
  Task,
  TaskArtifactUpdateEvent,
} from '@fastify-a2a/core';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { echoAgent, sleep } from '../../../../test-support/agents.js';
import { type A2APluginOptions, a2aPlugin, bearerTokens } from '../../src/index.js';
import { asTask, listen, nextId, testCard, textParts, userMessage, waitFor } from '../helpers.js';
import { startWebhookReceiver, type WebhookReceiver } from '../push/receiver.js';
import {
  type BindingName,
  type OpenStream,
  type Outcome,
  type ProtocolClient,
  protocolClient,
  type StreamItem,
  type StreamOutcome,
  type Version,
} from './client.js';
import { taskFrom as v1TaskFrom } from './proto-json-1.0.js';

export interface StoreFixture {
  /** Names the store in test titles. */
  readonly name: string;
  /** A store instance for one scenario; the suite closes it after the scenario. */
  create(): A2AStore | Promise<A2AStore>;
}

/**
 * A binding served by a listener of its own beside Fastify (gRPC, from @fastify-a2a/grpc's tests),
 * so the suite runs on it without this package depending on it.
 */
export interface ListenerBinding {
  readonly name: string;
  /** Starts the binding for the agent registered on `app` (before it listens); resolves its address. */
  serve(app: FastifyInstance): Promise<string>;
  /** A client of the binding at `address`; `headers` go with every call (credentials, say). */
  client(address: string, version: Version, headers: Readonly<Record<string, string>>): ProtocolClient;
}

export interface ProtocolSuiteOptions {
  binding: BindingName | ListenerBinding;
  store: StoreFixture;
  /** @default '0.3' */
  version?: Version;
}

interface Served {
  client: ProtocolClient;
  /** The agent's base URL, for clients of other principals. */
  base: string;
}

function ok<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new Error(`expected a result, got error ${outcome.code}: ${outcome.message}`);
  return outcome.result;
}

function opened(outcome: StreamOutcome): OpenStream {
  if (!outcome.ok) throw new Error(`expected a stream, got error ${outcome.code}: ${outcome.message}`);
  return outcome.stream;
}

async function collect(outcome: StreamOutcome | Promise<StreamOutcome>): Promise<StreamItem[]> {
  return opened(await outcome).rest();
}

/** The Task a stream starts with. */
function firstTask(items: StreamItem[]): Task {
  const first = items[0]?.item;
  if (first?.kind !== 'task') throw new Error(`expected the stream to start with a Task, got ${JSON.stringify(first)}`);
  return first;
}

const kinds = (items: StreamItem[]): string[] => items.map((i) => i.item.kind);
const last = (items: StreamItem[]): StreamResult | undefined => items.at(-1)?.item;

/** Fails after `ms` instead of waiting for the test timeout: a guard against a hang, not a timing assertion. */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A promise and the function that resolves it: holds an agent until the test lets it go on. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

function waitForAbort(signal: AbortSignal): Promise<void> {
  return signal.aborted
    ? Promise.resolve()
    : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

export function protocolSuite({ binding, store, version = '0.3' }: ProtocolSuiteOptions): void {
  const listener = typeof binding === 'string' ? undefined : binding;
  // SSE gives each stream event its sequence number as its id, and Last-Event-ID resumes after it;
  // a gRPC stream's messages carry none (A2A 1.0 §10 defines no resume point), so the scenarios
  // about ids, heartbeat comments and Last-Event-ID are defined for SSE bindings only.
  const eventIds = listener === undefined;
  const itWithEventIds = eventIds ? it : () => undefined;
  const clientOf = (base: string, headers: Readonly<Record<string, string>> = {}): ProtocolClient =>
    listener === undefined
      ? protocolClient(binding as BindingName, base, version, headers)
      : listener.client(base, version, headers);
  describe(`A2A ${version} over ${listener?.name ?? binding} on ${store.name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    /** Serves `executor` on a fresh store and returns a client of this suite's binding for it. */
    async function serve(executor: AgentExecutorLike, options: Partial<A2APluginOptions> = {}): Promise<Served> {
      const instance = await store.create();
      cleanups.push(() => instance.close());
      // Force-close: a test that drops a stream must not hold the server's close up on its socket.
      const app = Fastify({ logger: false, forceCloseConnections: true });
      cleanups.push(() => app.close());
      await app.register(a2aPlugin, {
        agentCard: testCard,
        executor,
        store: instance,
        retention: false,
        drainTimeoutMs: 100,
        ...options,
      });
      const address = listener === undefined ? undefined : await listener.serve(app);
      const base = await listen(app);
      return { client: clientOf(address ?? base), base: address ?? base };
    }

    /** Waits until the task reaches `state` (tasks/get) and returns it. */
    function waitForState(client: ProtocolClient, id: string, state: string): Promise<Task> {
      return waitFor(
        async () => {
          const task = ok(await client.getTask({ id }));
          return task.status.state === state ? task : undefined;
        },
        5000,
        `task ${id} to be ${state}`,
      );
    }

    describe('message/send (§7.1)', () => {
      it('a blocking send returns the completed task with its artifacts and history', async () => {
        const { client } = await serve(echoAgent);
        const task = asTask(ok(await client.sendMessage({ message: userMessage('hello brave new world') })));
        expect(task.status.state).toBe('completed');
        expect(task.artifacts).toHaveLength(1);
        expect(textParts(task.artifacts?.[0]?.parts)).toBe('hello brave new world');
        expect(task.history?.[0]).toMatchObject({ role: 'user', taskId: task.id, contextId: task.contextId });
        expect(textParts(task.history?.[0]?.parts)).toBe('hello brave new world');
      });

      it('a non-blocking send answers at once; the turn goes on and tasks/get sees it end', async () => {
        const held = gate();
        const { client } = await serve(async (turn) => {
          await held.opened;
          await turn.complete('finished');
        });
        const task = asTask(
          ok(await client.sendMessage({ message: userMessage('go'), configuration: { blocking: false } })),
        );
        expect(['submitted', 'working']).toContain(task.status.state);
        held.open();
        const done = await waitForState(client, task.id, 'completed');
        expect(textParts(done.status.message?.parts)).toBe('finished');
      });

      it('an agent that replies with a Message has the send answered with that Message', async () => {
        const { client } = await serve(async (turn) => turn.reply(`pong: ${turn.text}`));
        const message = ok(await client.sendMessage({ message: userMessage('ping') }));
        if (message.kind !== 'message') throw new Error(`expected a Message, got ${JSON.stringify(message)}`);
        expect(message.role).toBe('agent');
        expect(textParts(message.parts)).toBe('pong: ping');
        expect(message.taskId).toBeTypeOf('string');
      });

      it('input-required answers the send; a follow-up carrying the taskId resumes the task, history included', async () => {
        const { client } = await serve(echoAgent);
        const asked = asTask(ok(await client.sendMessage({ message: userMessage('ask:What is your name?') })));
        expect(asked.status.state).toBe('input-required');
        expect(textParts(asked.status.message?.parts)).toBe('What is your name?');
        const answered = asTask(ok(await client.sendMessage({ message: userMessage('Ada', { taskId: asked.id }) })));
        expect(answered.id).toBe(asked.id);
        expect(answered.contextId).toBe(asked.contextId);
        expect(answered.status.state).toBe('completed');
        expect(textParts(answered.artifacts?.[0]?.parts)).toBe('You answered: Ada');
        // user question, agent question, user answer, agent thanks
        expect(answered.history?.map((m) => m.role)).toEqual(['user', 'agent', 'user', 'agent']);
        expect(answered.history?.map((m) => textParts(m.parts))).toEqual([
          'ask:What is your name?',
          'What is your name?',
          'Ada',
          'Thanks for the answer.',
        ]);
      });

      it('a turn may end with the task still working; a later message continues the task', async () => {
        const { client } = await serve(async (turn) => {
          if (turn.isNewTask) await turn.working('started');
          else await turn.complete(`continued with ${turn.text}`);
        });
        const first = asTask(ok(await client.sendMessage({ message: userMessage('one') })));
        expect(first.status.state).toBe('working');
        const second = asTask(ok(await client.sendMessage({ message: userMessage('two', { taskId: first.id }) })));
        expect(second.id).toBe(first.id);
        expect(second.status.state).toBe('completed');
        expect(textParts(second.status.message?.parts)).toBe('continued with two');
      });

      it('historyLength limits the history of the send and tasks/get answers', async () => {
        const { client } = await serve(echoAgent);
        const asked = asTask(ok(await client.sendMessage({ message: userMessage('ask:q') })));
        const full = asTask(ok(await client.sendMessage({ message: userMessage('a', { taskId: asked.id }) })));
        expect(full.history).toHaveLength(4);
        const last1 = asTask(
          ok(await client.sendMessage({ message: userMessage('ask:again'), configuration: { historyLength: 1 } })),
        );
        expect(last1.history).toHaveLength(1);
        expect(last1.history?.[0]?.role).toBe('agent');
        const none = ok(await client.getTask({ id: full.id, historyLength: 0 }));
        expect(none.history ?? []).toEqual([]);
        const two = ok(await client.getTask({ id: full.id, historyLength: 2 }));
        expect(two.history?.map((m) => m.role)).toEqual(['user', 'agent']);
        expect(textParts(two.history?.[0]?.parts)).toBe('a');
        const all = ok(await client.getTask({ id: full.id }));
        expect(all.history).toHaveLength(4);
      });

      it('keeps the contextId the client sends and reuses it across tasks', async () => {
        const { client } = await serve(echoAgent);
        const contextId = nextId('ctx');
        const a = asTask(ok(await client.sendMessage({ message: userMessage('one', { contextId }) })));
        const b = asTask(ok(await client.sendMessage({ message: userMessage('two', { contextId }) })));
        expect(a.contextId).toBe(contextId);
        expect(b.contextId).toBe(contextId);
        expect(a.id).not.toBe(b.id);
      });
    });

    describe('errors (§8)', () => {
      it('-32001 for tasks/get, tasks/cancel and message/send on an unknown task', async () => {
        const { client } = await serve(echoAgent);
        const unknown = nextId('nope');
        const answers = {
          get: await client.getTask({ id: unknown }),
          cancel: await client.cancelTask({ id: unknown }),
          send: await client.sendMessage({ message: userMessage('hi', { taskId: unknown }) }),
        };
        for (const [call, answer] of Object.entries(answers)) {
          expect(answer, call).toMatchObject({ ok: false, code: -32001 });
          expect(answer.ok || answer.message, call).toContain(unknown);
        }
      });

      it('-32001 for a stream of a message to an unknown task, and for resubscribing to one', async () => {
        const { client } = await serve(echoAgent);
        const unknown = nextId('nope');
        const stream = await client.streamMessage({ message: userMessage('hi', { taskId: unknown }) });
        const resubscribed = await client.resubscribe({ id: unknown });
        expect(stream).toMatchObject({ ok: false, code: -32001 });
        expect(resubscribed).toMatchObject({ ok: false, code: -32001 });
      });

      it('-32002 when canceling a terminal task, including a second cancel', async () => {
        const { client } = await serve(async (turn) => {
          if (turn.text === 'wait') {
            await turn.working();
            await waitForAbort(turn.signal);
          } else await turn.complete();
        });
        const running = asTask(
          ok(await client.sendMessage({ message: userMessage('wait'), configuration: { blocking: false } })),
        );
        expect(ok(await client.cancelTask({ id: running.id })).status.state).toBe('canceled');
        const second = await client.cancelTask({ id: running.id });
        expect(second).toMatchObject({ ok: false, code: -32002 });
        expect(second.ok || second.message).toMatch(/canceled/);

        const completed = asTask(ok(await client.sendMessage({ message: userMessage('done') })));
        expect(completed.status.state).toBe('completed');
        expect(await client.cancelTask({ id: completed.id })).toMatchObject({ ok: false, code: -32002 });
      });

      it('-32602 for a message to a terminal task, and for a contextId that is not the task’s', async () => {
        const { client } = await serve(async (turn) => {
          if (turn.text === 'ask') await turn.requireInput('more?');
          else await turn.complete('done');
        });
        const done = asTask(ok(await client.sendMessage({ message: userMessage('hi') })));
        const toTerminal = await client.sendMessage({ message: userMessage('again', { taskId: done.id }) });
        expect(toTerminal).toMatchObject({ ok: false, code: -32602 });
        expect(toTerminal.ok || toTerminal.message).toMatch(/terminal state/);

        const asked = asTask(ok(await client.sendMessage({ message: userMessage('ask') })));
        const mismatch = await client.sendMessage({
          message: userMessage('again', { taskId: asked.id, contextId: nextId('other') }),
        });
        expect(mismatch).toMatchObject({ ok: false, code: -32602 });
        expect(mismatch.ok || mismatch.message).toMatch(/does not match/);
      });

      it('-32602 for invalid params: a message without parts, a negative historyLength', async () => {
        const { client } = await serve(echoAgent);
        expect(await client.sendMessage({ message: { ...userMessage('x'), parts: [] } })).toMatchObject({
          ok: false,
          code: -32602,
        });
        const negative = await client.getTask({ id: 'any', historyLength: -1 });
        expect(negative).toMatchObject({ ok: false, code: -32602 });
        expect(negative.ok || negative.message).toMatch(/historyLength/);
      });
    });

    describe('tasks/cancel (§7.4)', () => {
      it('answers with the canceled task, aborts the agent, and tasks/get then sees it canceled', async () => {
        let aborted = false;
        const { client } = await serve(async (turn) => {
          await turn.working();
          await waitForAbort(turn.signal);
          aborted = true;
        });
        const task = asTask(
          ok(await client.sendMessage({ message: userMessage('x'), configuration: { blocking: false } })),
        );
        await waitForState(client, task.id, 'working');
        const canceled = ok(await client.cancelTask({ id: task.id }));
        expect(canceled.id).toBe(task.id);
        expect(canceled.status.state).toBe('canceled');
        await waitFor(() => aborted, 5000, 'the agent to see the cancel');
        expect(ok(await client.getTask({ id: task.id })).status.state).toBe('canceled');
      });

      it('a blocking send of a task canceled meanwhile answers with the canceled task', async () => {
        let taskId: string | undefined;
        const { client } = await serve(async (turn) => {
          await turn.working();
          taskId = turn.taskId;
          await waitForAbort(turn.signal);
        });
        const pending = client.sendMessage({ message: userMessage('x') });
        const id = await waitFor(() => taskId, 5000, 'the turn to start');
        await waitForState(client, id, 'working');
        ok(await client.cancelTask({ id }));
        const task = asTask(ok(await pending));
        expect(task.id).toBe(id);
        expect(task.status.state).toBe('canceled');
      });

      it('cancels a task waiting in input-required', async () => {
        const { client } = await serve(echoAgent);
        const asked = asTask(ok(await client.sendMessage({ message: userMessage('ask:?') })));
        expect(asked.status.state).toBe('input-required');
        expect(ok(await client.cancelTask({ id: asked.id })).status.state).toBe('canceled');
      });
    });

    describe('message/stream (§7.2)', () => {
      it('streams the Task first, then the updates, and ends with the final status; SSE ids increase', async () => {
        const { client } = await serve(echoAgent);
        const items = await collect(client.streamMessage({ message: userMessage('one two three') }));
        expect(kinds(items)).toEqual([
          'task',
          'status-update',
          'artifact-update',
          'artifact-update',
          'artifact-update',
          'artifact-update',
          'artifact-update',
          'status-update',
        ]);
        const task = firstTask(items);
        expect(task.status.state).toBe('submitted');
        expect(items.every(({ item }) => item.kind === 'task' || item.taskId === task.id)).toBe(true);
        expect(last(items)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
        const nonFinal = items.slice(1, -1).filter(({ item }) => item.kind === 'status-update');
        expect(nonFinal.map(({ item }) => (item as { final: boolean }).final)).toEqual([false]);
        const ids = items.map(({ id }) => Number(id));
        if (eventIds) expect(ids.every((id) => Number.isInteger(id))).toBe(true);
        if (eventIds) expect(ids.every((id, i) => i === 0 || id > (ids[i - 1] as number))).toBe(true);
        const chunks = items
          .filter(({ item }) => item.kind === 'artifact-update')
          .map(({ item }) => item as TaskArtifactUpdateEvent);
        expect(chunks.map((c) => textParts(c.artifact.parts)).join('')).toBe('one two three');
        expect(chunks.slice(1).every((c) => c.append === true)).toBe(true);
        expect(chunks.at(-1)?.lastChunk).toBe(true);
      });

      it('input-required ends the stream; a follow-up message/stream resumes the task', async () => {
        const { client } = await serve(echoAgent);
        const first = await collect(client.streamMessage({ message: userMessage('ask:color?') }));
        const task = firstTask(first);
        expect(last(first)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'input-required' } });
        const second = await collect(client.streamMessage({ message: userMessage('blue', { taskId: task.id }) }));
        const snapshot = firstTask(second);
        expect(snapshot.id).toBe(task.id);
        expect(textParts(snapshot.history?.at(-1)?.parts)).toBe('blue');
        expect(last(second)).toMatchObject({ final: true, status: { state: 'completed' } });
        if (eventIds) expect(Number(second[0]?.id)).toBeGreaterThan(Number(first.at(-1)?.id));
      });

      it('closes the stream when the turn ends with the task still working', async () => {
        const { client } = await serve(async (turn) => turn.working('still going'));
        const items = await collect(client.streamMessage({ message: userMessage('x') }));
        expect(kinds(items)).toEqual(['task', 'status-update', 'status-update']);
        expect(last(items)).toMatchObject({ final: false, status: { state: 'working' } });
      });

      it('a client that disconnects does not cancel the task', async () => {
        const held = gate();
        const { client } = await serve(async (turn) => {
          await turn.working();
          await held.opened;
          await turn.complete('survived');
        });
        const stream = opened(await client.streamMessage({ message: userMessage('x') }));
        const first = await stream.next();
        const task = firstTask(first === undefined ? [] : [first]);
        stream.close();
        held.open();
        const done = await waitForState(client, task.id, 'completed');
        expect(textParts(done.status.message?.parts)).toBe('survived');
      });

      itWithEventIds('sends heartbeats on an idle stream', async () => {
        const { client } = await serve(
          async (turn) => {
            await turn.working();
            await sleep(250, turn.signal);
            await turn.complete();
          },
          { heartbeatIntervalMs: 50 },
        );
        const stream = opened(await client.streamMessage({ message: userMessage('x') }));
        const items = await stream.rest();
        expect(stream.comments).toBeGreaterThan(0);
        expect(last(items)).toMatchObject({ final: true, status: { state: 'completed' } });
      });

      itWithEventIds(
        'a reconnect with Last-Event-ID resumes after that event, without gaps or duplicates or a second turn',
        async () => {
          const held = gate();
          let turns = 0;
          const { client } = await serve(async (turn) => {
            turns++;
            await turn.artifact({ artifactId: 'a', text: 'first', append: false });
            await held.opened;
            await turn.artifact({ artifactId: 'a', text: ' second', append: true });
            await turn.artifact({ artifactId: 'a', text: ' third', append: true, lastChunk: true });
            await turn.complete();
          });
          const params = { message: userMessage('go') };
          const stream = opened(await client.streamMessage(params));
          const seen: StreamItem[] = [];
          for (let next = await stream.next(); next !== undefined; next = await stream.next()) {
            seen.push(next);
            if (next.item.kind === 'artifact-update') break;
          }
          stream.close();
          const lastId = seen.at(-1)?.id as string;
          const taskId = firstTask(seen).id;
          held.open();
          const resumed = await collect(client.reconnectMessageStream(params, taskId, lastId));
          const ids = [...seen, ...resumed].map(({ id }) => Number(id));
          expect(new Set(ids).size).toBe(ids.length);
          expect(resumed.every(({ id }) => Number(id) > Number(lastId))).toBe(true);
          const texts = [...seen, ...resumed]
            .filter(({ item }) => item.kind === 'artifact-update')
            .map(({ item }) => textParts((item as TaskArtifactUpdateEvent).artifact.parts));
          expect(texts).toEqual(['first', ' second', ' third']);
          expect(last(resumed)).toMatchObject({ final: true, status: { state: 'completed' } });
          expect(turns).toBe(1);
        },
      );

      itWithEventIds(
        'a reconnect with a Last-Event-ID at the final event answers the task as it stands and closes',
        async () => {
          const { client } = await serve(echoAgent);
          const params = { message: userMessage('done soon') };
          const first = await collect(client.streamMessage(params));
          expect(last(first)).toMatchObject({ final: true });
          const taskId = firstTask(first).id;
          const again = await within(
            5000,
            'the reconnected stream to close',
            collect(client.reconnectMessageStream(params, taskId, first.at(-1)?.id as string)),
          );
          // Issue 14: one Task event (how the task ended), not an empty stream.
          expect(again).toHaveLength(1);
          expect(firstTask(again)).toMatchObject({ id: taskId, status: { state: 'completed' } });
        },
      );
    });

    describe('tasks/resubscribe (§7.9)', () => {
      it('streams the current task, then the remaining events through the final one', async () => {
        const held = gate();
        const { client } = await serve(async (turn) => {
          await turn.working('started');
          await held.opened;
          await turn.artifact({ text: 'result' });
          await turn.complete();
        });
        const sent = asTask(
          ok(await client.sendMessage({ message: userMessage('x'), configuration: { blocking: false } })),
        );
        await waitForState(client, sent.id, 'working');
        const stream = opened(await client.resubscribe({ id: sent.id }));
        held.open();
        const items = await stream.rest();
        const snapshot = firstTask(items);
        expect(snapshot).toMatchObject({ id: sent.id, status: { state: 'working' } });
        expect(snapshot.artifacts ?? []).toEqual([]);
        // After the snapshot: what the agent did since (a working status may or may not be in it yet).
        const later = items.slice(1).filter(({ item }) => !(item.kind === 'status-update' && !item.final));
        expect(kinds(later)).toEqual(['artifact-update', 'status-update']);
        expect(last(items)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
        if (eventIds) expect(items.every(({ id }, i) => i === 0 || Number(id) > Number(items[i - 1]?.id))).toBe(true);
      });

      it('on a task in a final state: 0.3 answers that one Task and closes; 1.0 refuses a terminal task (-32004)', async () => {
        const { client } = await serve(echoAgent);
        const sent = asTask(ok(await client.sendMessage({ message: userMessage('hi') })));
        if (version === '1.0') {
          // §3.1.6 of 1.0: a terminal task has no more events to subscribe to.
          expect(await client.resubscribe({ id: sent.id })).toMatchObject({ ok: false, code: -32004 });
          return;
        }
        const items = await within(5000, 'the stream to close', collect(client.resubscribe({ id: sent.id })));
        expect(items).toHaveLength(1);
        expect(items[0]?.item).toMatchObject({ kind: 'task', id: sent.id, status: { state: 'completed' } });
      });

      it('on a task waiting in input-required, answers that one Task and closes (both versions)', async () => {
        const { client } = await serve(async (turn) => turn.requireInput('Which one?'));
        const sent = asTask(ok(await client.sendMessage({ message: userMessage('hi') })));
        const items = await within(5000, 'the stream to close', collect(client.resubscribe({ id: sent.id })));
        expect(items).toHaveLength(1);
        expect(items[0]?.item).toMatchObject({ kind: 'task', id: sent.id, status: { state: 'input-required' } });
      });

      itWithEventIds('with Last-Event-ID, sends only the later events', async () => {
        const { client } = await serve(echoAgent);
        const streamed = await collect(client.streamMessage({ message: userMessage('a b') }));
        const taskId = firstTask(streamed).id;
        const after = streamed[2]?.id as string;
        const items = await collect(client.resubscribe({ id: taskId }, after));
        const expected = streamed.filter(({ id }) => Number(id) > Number(after));
        expect(expected.length).toBeGreaterThan(0);
        expect(items.map(({ id }) => id)).toEqual(expected.map(({ id }) => id));
        expect(items.map(({ item }) => item)).toEqual(expected.map(({ item }) => item));
        expect(last(items)).toMatchObject({ final: true });
      });

      it('a cancel ends every open stream of the task with the canceled final event', async () => {
        const { client } = await serve(async (turn) => {
          await turn.working();
          await waitForAbort(turn.signal);
        });
        const sent = asTask(
          ok(await client.sendMessage({ message: userMessage('x'), configuration: { blocking: false } })),
        );
        await waitForState(client, sent.id, 'working');
        // Each is open once its first event (the snapshot) has arrived.
        const streams = [
          opened(await client.resubscribe({ id: sent.id })),
          opened(await client.resubscribe({ id: sent.id })),
        ];
        ok(await client.cancelTask({ id: sent.id }));
        for (const items of await Promise.all(streams.map((s) => s.rest()))) {
          expect(items[0]?.item.kind).toBe('task');
          expect(last(items)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'canceled' } });
        }
      });
    });

    // ListTasks: A2A 1.0 on both bindings; 0.3 over HTTP+JSON only (`GET /v1/tasks`).
    if (!(binding === 'JSONRPC' && version === '0.3')) {
      describe('ListTasks', () => {
        // Stores are shared between scenarios of a file (SQLite, Postgres): each scenario lists
        // only a context of its own.
        const list = (client: ProtocolClient, params: ListTasksParams) =>
          client.listTasks(params) as Promise<Outcome<ListTasksResult>>;

        it('pages through a context’s tasks newest first, with a token that stays right while tasks are created', async () => {
          const { client } = await serve(async (turn) => turn.complete(`done ${turn.text}`));
          const contextId = nextId('ctx-list');
          const ids: string[] = [];
          // Tasks whose status timestamps fall in one millisecond are listed by id (the tie-break),
          // not in creation order: a pause between sends keeps every timestamp distinct, so the
          // expected order is creation order (a full run once saw two sends finish in one ms).
          const pause = () => new Promise((resolve) => setTimeout(resolve, 3));
          for (let i = 0; i < 5; i++) {
            ids.push(asTask(ok(await client.sendMessage({ message: userMessage(`t${i}`, { contextId }) }))).id);
            await pause();
          }
          const first = ok(await list(client, { contextId, pageSize: 2 }));
          expect(first.totalSize).toBe(5);
          expect(first.pageSize).toBe(2);
          expect(first.nextPageToken).not.toBe('');
          // A task created between page reads comes before the pages already read: none is skipped or repeated.
          const later = asTask(ok(await client.sendMessage({ message: userMessage('later', { contextId }) })));
          const seen = first.tasks.map((t) => t.id);
          let token = first.nextPageToken;
          while (token !== '') {
            const page = ok(await list(client, { contextId, pageSize: 2, pageToken: token }));
            seen.push(...page.tasks.map((t) => t.id));
            token = page.nextPageToken;
          }
          expect(seen).toEqual([...ids].reverse());
          const all = ok(await list(client, { contextId }));
          expect(all.tasks.map((t) => t.id)).toEqual([later.id, ...[...ids].reverse()]);
          expect(all.totalSize).toBe(6);
          expect(all.nextPageToken).toBe('');
        });

        it('filters by status; trims history by historyLength; leaves artifacts out unless includeArtifacts', async () => {
          const { client } = await serve(async (turn) => {
            await turn.artifact({ name: 'out', text: turn.text });
            if (turn.text.startsWith('ask')) await turn.requireInput('Which one?');
            else await turn.complete();
          });
          const contextId = nextId('ctx-list');
          const asked = asTask(ok(await client.sendMessage({ message: userMessage('ask me', { contextId }) })));
          ok(await client.sendMessage({ message: userMessage('just do it', { contextId }) }));
          const waiting = ok(await list(client, { contextId, status: 'input-required' }));
          expect(waiting.tasks.map((t) => t.id)).toEqual([asked.id]);
          expect(waiting.totalSize).toBe(1);
          expect(waiting.tasks[0]?.artifacts).toBeUndefined();
          const full = ok(await list(client, { contextId, includeArtifacts: true, historyLength: 1 }));
          expect(full.tasks).toHaveLength(2);
          for (const task of full.tasks) {
            expect(task.artifacts?.[0]?.name).toBe('out');
            expect(task.history).toHaveLength(1);
          }
          const none = ok(await list(client, { contextId, historyLength: 0 }));
          for (const task of none.tasks) expect(task.history ?? []).toEqual([]);
        });

        it('refuses a page token it did not issue, and a page size over 100 (-32602)', async () => {
          const { client } = await serve(echoAgent);
          expect(await list(client, { pageToken: 'not-a-token' })).toMatchObject({ ok: false, code: -32602 });
          expect(await list(client, { pageSize: 101 })).toMatchObject({ ok: false, code: -32602 });
        });
      });
    }

    // Issue 12, ownership: a task and its context belong to the principal that created them.
    // Another principal is answered exactly as for an id that never existed (§8.2 -32001), so a
    // guessed or leaked id tells nothing; the message-id index is scoped to the caller.
    describe('ownership: two principals on one agent', () => {
      async function serveTwo(executor: AgentExecutorLike = echoAgent) {
        const { base } = await serve(executor, { authenticate: bearerTokens({ 'tok-a': 'alice', 'tok-b': 'bob' }) });
        const as = (token: string) => clientOf(base, { authorization: `Bearer ${token}` });
        return { alice: as('tok-a'), bob: as('tok-b') };
      }

      /** The failure with the task id blanked out, to compare with the one for an id that never existed. */
      function blanked(outcome: Outcome<unknown> | StreamOutcome, taskId: string): { code: number; message: string } {
        if (outcome.ok) throw new Error(`expected task not found for ${taskId}, got a result`);
        return { code: outcome.code, message: outcome.message.replaceAll(taskId, '<id>') };
      }

      /** Every task id a stream's items name. */
      const taskIdsOf = (items: StreamItem[]): Set<string> =>
        new Set(items.map(({ item }) => (item.kind === 'task' ? item.id : (item.taskId ?? ''))));

      it('get, cancel and subscribe on another principal’s task answer as for an id that never existed', async () => {
        const held = gate();
        const { alice, bob } = await serveTwo(async (turn) => {
          await turn.working('on it');
          await held.opened;
          await turn.complete('done');
        });
        const task = asTask(
          ok(await alice.sendMessage({ message: userMessage('mine'), configuration: { blocking: false } })),
        );
        const never = nextId('never');
        const notFound = blanked(await bob.getTask({ id: never }), never);
        expect(notFound.code).toBe(-32001);
        expect(blanked(await bob.getTask({ id: task.id }), task.id)).toEqual(notFound);
        expect(blanked(await bob.cancelTask({ id: task.id }), task.id)).toEqual(
          blanked(await bob.cancelTask({ id: never }), never),
        );
        expect(blanked(await bob.resubscribe({ id: task.id }), task.id)).toEqual(
          blanked(await bob.resubscribe({ id: never }), never),
        );
        // Bob's cancel did nothing: Alice's turn runs on to its end.
        held.open();
        const done = await waitForState(alice, task.id, 'completed');
        expect(textParts(done.status.message?.parts)).toBe('done');
      });

      it('push notification configs of another principal’s task: set, get, list and delete answer as for an id that never existed', async () => {
        const receiver = await startWebhookReceiver();
        cleanups.push(() => receiver.close());
        const { base } = await serve(echoAgent, {
          authenticate: bearerTokens({ 'tok-a': 'alice', 'tok-b': 'bob' }),
          pushNotifications: true,
          pushAllowedCidrs: ['127.0.0.1/32'],
        });
        const as = (token: string) => clientOf(base, { authorization: `Bearer ${token}` });
        const [alice, bob] = [as('tok-a'), as('tok-b')];
        const task = asTask(ok(await alice.sendMessage({ message: userMessage('mine') })));
        ok(await alice.pushConfig('set', task.id, { id: 'c-1', url: receiver.url, token: 'alices' }));
        const never = nextId('never');
        for (const operation of ['set', 'get', 'list', 'delete'] as const) {
          const config = operation === 'set' ? { id: 'c-1', url: `${receiver.url}?bob` } : undefined;
          const answer = await bob.pushConfig(operation, task.id, config, 'c-1');
          expect(answer, operation).toMatchObject({ ok: false, code: -32001 });
          expect(blanked(answer, task.id), operation).toEqual(
            blanked(await bob.pushConfig(operation, never, config, 'c-1'), never),
          );
        }
        // Alice's config is as she set it.
        const listed = ok(await alice.pushConfig('list', task.id)) as unknown;
        expect(JSON.stringify(listed)).toContain(receiver.url);
        expect(JSON.stringify(listed)).not.toContain('?bob');
      });

      it('a follow-up message on another principal’s task is refused as not found and leaves the task untouched', async () => {
        const { alice, bob } = await serveTwo();
        const asked = asTask(ok(await alice.sendMessage({ message: userMessage('ask:Your name?') })));
        expect(asked.status.state).toBe('input-required');
        const answer = await bob.sendMessage({ message: userMessage('Mallory', { taskId: asked.id }) });
        expect(answer).toMatchObject({ ok: false, code: -32001 });
        const streamed = await bob.streamMessage({ message: userMessage('Mallory', { taskId: asked.id }) });
        expect(streamed).toMatchObject({ ok: false, code: -32001 });
        const still = ok(await alice.getTask({ id: asked.id }));
        expect(still.status.state).toBe('input-required');
        expect(still.history?.map((m) => textParts(m.parts))).toEqual(['ask:Your name?', 'Your name?']);
        // Alice herself answers as before.
        const answered = asTask(ok(await alice.sendMessage({ message: userMessage('Ada', { taskId: asked.id }) })));
        expect(textParts(answered.artifacts?.[0]?.parts)).toBe('You answered: Ada');
      });

      it('a new task in another principal’s context is refused (-32602); one’s own context takes more tasks', async () => {
        const { alice, bob } = await serveTwo();
        const first = asTask(ok(await alice.sendMessage({ message: userMessage('one') })));
        const intruding = await bob.sendMessage({ message: userMessage('two', { contextId: first.contextId }) });
        expect(intruding).toMatchObject({ ok: false, code: -32602 });
        const second = asTask(
          ok(await alice.sendMessage({ message: userMessage('two', { contextId: first.contextId }) })),
        );
        expect(second.contextId).toBe(first.contextId);
        expect(second.id).not.toBe(first.id);
      });

      it('a messageId another principal used starts a task of one’s own; the same caller’s retry is idempotent only with the same content', async () => {
        const { alice, bob } = await serveTwo();
        const original = userMessage('secret plans');
        const alices = asTask(ok(await alice.sendMessage({ message: original })));
        // Bob, reusing the id (and even the content), never gets Alice's task.
        const bobs = asTask(ok(await bob.sendMessage({ message: { ...original } })));
        expect(bobs.id).not.toBe(alices.id);
        expect(bobs.contextId).not.toBe(alices.contextId);
        expect(ok(await bob.getTask({ id: bobs.id })).history?.[0]?.messageId).toBe(original.messageId);
        // Alice's retry with the same content: her original task, no second one.
        expect(asTask(ok(await alice.sendMessage({ message: { ...original } }))).id).toBe(alices.id);
        // The same id with other content is an idempotency key reused: -32602, naming the id.
        const reused = await alice.sendMessage({
          message: { ...original, parts: [{ kind: 'text', text: 'other plans' }] },
        });
        expect(reused).toMatchObject({ ok: false, code: -32602 });
        if (!reused.ok) expect(reused.message).toContain(original.messageId);
      });

      itWithEventIds(
        'reconnecting to another principal’s message stream never yields that principal’s events',
        async () => {
          const { alice, bob } = await serveTwo();
          const params = { message: userMessage('streamed') };
          const items = await collect(alice.streamMessage(params));
          const taskId = firstTask(items).id;
          const again = await bob.reconnectMessageStream({ message: { ...params.message } }, taskId, '0');
          if (again.ok) {
            // JSON-RPC re-sends the message: for Bob it is a message of his own, on a task of his own.
            const seen = await again.stream.rest();
            expect(seen.length).toBeGreaterThan(0);
            expect(taskIdsOf(seen).has(taskId)).toBe(false);
          } else {
            expect(again.code).toBe(-32001);
          }
        },
      );

      if (!(binding === 'JSONRPC' && version === '0.3')) {
        it('ListTasks shows only the caller’s own tasks', async () => {
          const { alice, bob } = await serveTwo();
          const contextId = nextId('ctx-owned');
          const alices = asTask(ok(await alice.sendMessage({ message: userMessage('a', { contextId }) })));
          const bobs = asTask(ok(await bob.sendMessage({ message: userMessage('b') })));
          const list = async (client: ProtocolClient, params: ListTasksParams) =>
            ok(await (client.listTasks(params) as Promise<Outcome<ListTasksResult>>));
          expect((await list(bob, { contextId })).tasks).toEqual([]);
          expect((await list(bob, { contextId })).totalSize).toBe(0);
          const bobsAll = (await list(bob, { pageSize: 100 })).tasks.map((t) => t.id);
          expect(bobsAll).toContain(bobs.id);
          expect(bobsAll).not.toContain(alices.id);
          expect((await list(alice, { contextId })).tasks.map((t) => t.id)).toEqual([alices.id]);
        });
      }
    });

    describe('push notifications (§7.5–7.8, §9.5)', () => {
      const PUSH: Partial<A2APluginOptions> = {
        pushNotifications: true,
        pushAllowedCidrs: ['127.0.0.1/32'],
        pushPollIntervalMs: 20,
      };
      let receiver: WebhookReceiver;
      afterEach(async () => receiver?.close());

      interface Config {
        id?: string;
        url?: string;
        token?: string;
      }
      /** A config from any of the wire forms: 0.3's nested one (JSON-RPC or HTTP+JSON), 1.0's flat one. */
      function configOf(wire: unknown): Config {
        const outer = wire as { pushNotificationConfig?: Config } & Config;
        const { id, url, token } = outer.pushNotificationConfig ?? outer;
        return { id, url, ...(token === undefined ? {} : { token }) };
      }
      const configsOf = (wire: unknown): Config[] =>
        (Array.isArray(wire) ? wire : (wire as { configs: unknown[] }).configs).map(configOf);
      /** The task a notification carries: 0.3's Task, or 1.0's StreamResponse `{ task }`. */
      const notifiedTask = (body: unknown): Task =>
        version === '0.3' ? (body as Task) : v1TaskFrom((body as { task: unknown }).task);

      it('set, get, list and delete configs; several per task, and an id-less one gets the task id', async () => {
        receiver = await startWebhookReceiver();
        const { client } = await serve(echoAgent, PUSH);
        const task = asTask(ok(await client.sendMessage({ message: userMessage('hello') })));
        const set = ok(await client.pushConfig('set', task.id, { id: 'c-1', url: receiver.url, token: 'tok-1' }));
        expect(configOf(set)).toEqual({ id: 'c-1', url: receiver.url, token: 'tok-1' });
        ok(await client.pushConfig('set', task.id, { url: `${receiver.url}?second` }));
        expect(configOf(ok(await client.pushConfig('get', task.id, undefined, 'c-1')))).toEqual({
          id: 'c-1',
          url: receiver.url,
          token: 'tok-1',
        });
        expect(configOf(ok(await client.pushConfig('get', task.id, undefined, task.id)))).toEqual({
          id: task.id,
          url: `${receiver.url}?second`,
        });
        expect(configsOf(ok(await client.pushConfig('list', task.id))).map((c) => c.id)).toEqual(['c-1', task.id]);
        ok(await client.pushConfig('delete', task.id, undefined, 'c-1'));
        expect(configsOf(ok(await client.pushConfig('list', task.id))).map((c) => c.id)).toEqual([task.id]);
        expect(await client.pushConfig('get', task.id, undefined, 'c-1')).toMatchObject({ ok: false, code: -32001 });
        expect(await client.pushConfig('list', 'no-such-task')).toMatchObject({ ok: false, code: -32001 });
      });

      it("a send's push config delivers the task's final state in this version's form, with the token", async () => {
        receiver = await startWebhookReceiver();
        const held = gate();
        const { client } = await serve(async (turn) => {
          await turn.working('on it');
          await held.opened;
          await turn.artifact({ artifactId: 'out', text: 'result' });
          await turn.complete('done');
        }, PUSH);
        const task = asTask(
          ok(
            await client.sendMessage({
              message: userMessage('go'),
              configuration: {
                blocking: false,
                pushNotificationConfig: {
                  id: 'mine',
                  url: receiver.url,
                  authentication: { schemes: ['Bearer'], credentials: 'secret-1' },
                },
              },
            }),
          ),
        );
        held.open();
        await waitFor(
          () => receiver.received.some((n) => notifiedTask(n.body).status.state === 'completed'),
          5000,
          'the completed notification',
        );
        const last = receiver.received.at(-1)!;
        expect(last.headers.authorization).toBe('Bearer secret-1');
        expect(last.headers['x-a2a-notification-token']).toBe('secret-1');
        const notified = notifiedTask(last.body);
        expect(notified.id).toBe(task.id);
        expect(textParts(notified.artifacts?.[0]?.parts)).toBe('result');
        if (version === '0.3') expect((last.body as Task).kind).toBe('task');
        else
          expect((last.body as { task: { status: { state: string } } }).task.status.state).toBe('TASK_STATE_COMPLETED');
        const configs = configsOf(ok(await client.pushConfig('list', task.id)));
        expect(configs).toEqual([{ id: 'mine', url: receiver.url }]);
      });

      it('refuses a URL inside the network at set time and on a send (-32602, naming why)', async () => {
        const { client } = await serve(echoAgent, PUSH);
        const task = asTask(ok(await client.sendMessage({ message: userMessage('hello') })));
        const refused = await client.pushConfig('set', task.id, { url: 'http://10.0.0.5/hook' });
        expect(refused).toMatchObject({ ok: false, code: -32602 });
        expect((refused as { message: string }).message).toContain('a private address (RFC 1918)');
        const metadata = await client.pushConfig('set', task.id, { url: 'http://169.254.169.254/latest/meta-data' });
        expect(metadata).toMatchObject({ ok: false, code: -32602 });
        const send = await client.sendMessage({
          message: userMessage('hello'),
          configuration: { pushNotificationConfig: { url: 'http://[fd00::1]/hook' } },
        });
        expect(send).toMatchObject({ ok: false, code: -32602 });
        expect(configsOf(ok(await client.pushConfig('list', task.id)))).toEqual([]);
      });
    });

    describe('capabilities the card does not declare', () => {
      it.each(['set', 'get', 'list', 'delete'] as const)(
        'push notification config %s answers -32003 (not supported)',
        async (operation) => {
          const { client } = await serve(echoAgent);
          const answer = await client.pushConfig(operation, 't-1', { url: 'https://example.com/hook' });
          expect(answer).toMatchObject({ ok: false, code: -32003 });
        },
      );

      it('push notification config set still validates its params first (-32602)', async () => {
        const { client } = await serve(echoAgent);
        expect(await client.pushConfig('set', 't-1')).toMatchObject({ ok: false, code: -32602 });
      });

      it('the authenticated extended card answers -32007', async () => {
        const { client } = await serve(echoAgent);
        expect(await client.getExtendedCard()).toMatchObject({ ok: false, code: -32007 });
      });
    });
  });
}
