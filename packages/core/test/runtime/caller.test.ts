/**
 * The caller's context below the edge: the agent learns who sent the message that started its turn
 * (`turn.caller`), and the store is told on whose behalf each call is made (its StoreCallContext),
 * for the turn's writes as for the request's reads. A call without a context is an anonymous
 * A2A 0.3 JSON-RPC call, as before contexts existed.
 */
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import type { TurnContext } from '../../src/executor.js';
import type { Message } from '../../src/model/types.js';
import { type CallContext, type Caller, callContext, type Principal } from '../../src/protocol/context.js';
import type { A2ARuntime } from '../../src/runtime.js';
import type { A2AStore, StoreCallContext } from '../../src/store/index.js';
import { asTask, useRuntimes, userMessage } from './helpers.js';

const start = useRuntimes();

/** Where each store method that takes a StoreCallContext takes it. */
const CONTEXT_ARGUMENT: Readonly<Record<string, number>> = {
  commit: 1,
  getTask: 1,
  getVersions: 1,
  readEvents: 3,
  listTasksByContext: 2,
  listActiveTasks: 0,
  getContext: 1,
  setContext: 2,
  findMessage: 1,
};

interface RecordedCall {
  method: string;
  ctx: StoreCallContext | undefined;
}

/** A MemoryStore behind a proxy that records the StoreCallContext of every call that takes one. */
function recordingStore(): { store: A2AStore; calls: RecordedCall[] } {
  const target = new MemoryStore();
  const calls: RecordedCall[] = [];
  const store = new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      const at = typeof property === 'string' ? CONTEXT_ARGUMENT[property] : undefined;
      if (at === undefined) return value.bind(object);
      return (...args: unknown[]) => {
        calls.push({ method: property as string, ctx: args[at] as StoreCallContext | undefined });
        return value.apply(object, args);
      };
    },
  });
  return { store, calls };
}

/** An agent that records its caller, keeps context state and asks once before it completes. */
function recordingAgent(callers: Caller[]) {
  return async (turn: TurnContext): Promise<void> => {
    callers.push(turn.caller);
    await turn.setContextState({ turns: ((turn.contextState as { turns?: number })?.turns ?? 0) + 1 });
    if (turn.isNewTask) await turn.requireInput('and then?');
    else await turn.complete('done');
  };
}

/** One conversation through every kind of runtime call: sends, a retry, a stream, get, resubscribe, cancel. */
async function converse(runtime: A2ARuntime, ctx?: CallContext): Promise<void> {
  const contextId = `ctx-${Math.random().toString(36).slice(2)}`;
  const first: Message = userMessage('one', { contextId });
  const asked = asTask(await runtime.sendMessage({ message: first }, ctx));
  await runtime.sendMessage({ message: first }, ctx); // a retry: found in the message index
  const frames = await runtime.streamMessage({ message: userMessage('two', { taskId: asked.id }) }, {}, ctx);
  for await (const _ of frames) {
    // to the end of the turn
  }
  await runtime.getTask({ id: asked.id }, ctx);
  for await (const _ of await runtime.resubscribe({ id: asked.id }, {}, ctx)) {
    // the terminal task's snapshot
  }
  const other = asTask(await runtime.sendMessage({ message: userMessage('three', { contextId }) }, ctx));
  await runtime.cancelTask({ id: other.id }, ctx);
}

describe('the caller of a turn', () => {
  it("turn.caller carries the context's version, binding, principal and tenant, and not its signal", async () => {
    const callers: Caller[] = [];
    const runtime = start(recordingAgent(callers));
    const principal: Principal = { id: 'alice', claims: { scope: 'a2a:write' } };
    const ctx = callContext({
      version: '1.0',
      binding: 'HTTP+JSON',
      principal,
      tenant: 'acme',
      signal: new AbortController().signal,
      lastEventId: 7,
    });
    await runtime.sendMessage({ message: userMessage('hi') }, ctx);
    expect(callers).toHaveLength(1);
    expect(callers[0]).toStrictEqual({ version: '1.0', binding: 'HTTP+JSON', principal, tenant: 'acme' });
  });

  it('each turn has the caller of its own message', async () => {
    const callers: Caller[] = [];
    const runtime = start(recordingAgent(callers));
    const alice = callContext({ principal: { id: 'alice' } });
    const aliceOverRest = callContext({ principal: { id: 'alice', claims: { via: 'rest' } }, binding: 'HTTP+JSON' });
    const asked = asTask(await runtime.sendMessage({ message: userMessage('hi') }, alice));
    await runtime.sendMessage({ message: userMessage('answer', { taskId: asked.id }) }, aliceOverRest);
    expect(callers.map((c) => [c.principal?.id, c.principal?.claims?.via, c.binding])).toEqual([
      ['alice', undefined, 'JSONRPC'],
      ['alice', 'rest', 'HTTP+JSON'],
    ]);
  });

  it('a call without a context is an anonymous A2A 0.3 JSON-RPC call', async () => {
    const callers: Caller[] = [];
    const runtime = start(recordingAgent(callers));
    await runtime.sendMessage({ message: userMessage('hi') });
    expect(callers[0]).toStrictEqual({ version: '0.3', binding: 'JSONRPC', principal: undefined, tenant: undefined });
  });
});

describe('the store context of calls made for a caller', () => {
  it("the turn's commits and the request's reads give the store the principal and tenant, never the signal", async () => {
    const { store, calls } = recordingStore();
    const runtime = start(recordingAgent([]), { store });
    const principal: Principal = { id: 'alice', claims: { tenant: 'acme' } };
    const ctx = callContext({
      principal,
      tenant: 'acme',
      binding: 'HTTP+JSON',
      signal: new AbortController().signal,
    });
    await converse(runtime, ctx);
    // Every kind of call the conversation makes was seen, each with the caller's context.
    expect(new Set(calls.map((c) => c.method))).toEqual(
      // listTasksByContext: a new task in a known context checks who owns that context.
      new Set(['commit', 'getTask', 'readEvents', 'getContext', 'setContext', 'findMessage', 'listTasksByContext']),
    );
    for (const call of calls) expect(call.ctx, call.method).toStrictEqual({ principal, tenant: 'acme' });
  });

  it('a principal alone gives a context without a tenant', async () => {
    const { store, calls } = recordingStore();
    const runtime = start(recordingAgent([]), { store });
    const principal: Principal = { id: 'svc-1' };
    await runtime.sendMessage({ message: userMessage('hi', { contextId: 'c-principal' }) }, callContext({ principal }));
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(call.ctx, call.method).toStrictEqual({ principal });
  });

  it('calls without a context pass no store context, as before contexts existed', async () => {
    const { store, calls } = recordingStore();
    const runtime = start(recordingAgent([]), { store });
    await converse(runtime);
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(call.ctx, call.method).toBeUndefined();
  });
});
