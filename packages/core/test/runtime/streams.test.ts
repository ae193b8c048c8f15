/**
 * How streams follow their task's log, below any binding: notifications wake them, and a slow
 * safety poll (one getVersions call per interval for every waiting stream) covers lost ones.
 */
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import type { TurnContext } from '../../src/executor.js';
import type { StreamResult } from '../../src/model/types.js';
import type { Unsubscribe } from '../../src/store/index.js';
import { asTask, delay, useRuntimes, userMessage } from './helpers.js';

const start = useRuntimes();

/** A store whose notifications never arrive, as if every NOTIFY after a commit were lost. */
class DeafStore extends MemoryStore {
  getVersionsCalls = 0;
  override subscribe(): Unsubscribe {
    return () => {};
  }
  override getVersions(taskIds: readonly string[]): Promise<Map<string, number>> {
    this.getVersionsCalls++;
    return super.getVersions(taskIds);
  }
}

describe('lost notifications', () => {
  it('streams still reach their final event through the safety poll, one getVersions call per interval for all of them', async () => {
    const store = new DeafStore();
    const runtime = start(
      async (turn) => {
        await turn.working();
        await delay(300);
        await turn.complete();
      },
      { store, followPollIntervalMs: 100 },
    );
    const tasks = await Promise.all(
      [0, 1, 2].map(async () =>
        asTask(await runtime.sendMessage({ message: userMessage('x'), configuration: { blocking: false } })),
      ),
    );
    const started = Date.now();
    const streams = tasks.map(async (task) => {
      const items: StreamResult[] = [];
      for await (const frame of await runtime.resubscribe({ id: task.id })) items.push(frame.result);
      return items;
    });
    for (const items of await Promise.all(streams)) {
      expect(items[0]?.kind).toBe('task');
      expect(items.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
    }
    const elapsedMs = Date.now() - started;
    // Three streams waited together: about one call per 100 ms interval, not one per stream.
    expect(store.getVersionsCalls).toBeGreaterThan(0);
    expect(store.getVersionsCalls).toBeLessThanOrEqual(Math.ceil(elapsedMs / 100) + 1);
  });
});

/** A MemoryStore that counts the subscriptions still open, and the getTask calls. */
class CountingStore extends MemoryStore {
  subscribed = 0;
  getTaskCalls = 0;
  override getTask(...args: Parameters<MemoryStore['getTask']>): ReturnType<MemoryStore['getTask']> {
    this.getTaskCalls++;
    return super.getTask(...args);
  }
  override subscribe(taskId: string, listener: (seq: number) => void): Unsubscribe {
    this.subscribed++;
    const unsubscribe = super.subscribe(taskId, listener);
    let active = true;
    return () => {
      if (active) this.subscribed--;
      active = false;
      unsubscribe();
    };
  }
}

describe('a stream behaves as an async generator', () => {
  /** An agent that works (the runtime's `working` event) until `release` opens, then completes. */
  function heldAgent() {
    const held = { release: () => {} };
    const released = new Promise<void>((resolve) => {
      held.release = resolve;
    });
    const executor = async (turn: import('../../src/executor.js').TurnContext) => {
      await released;
      await turn.complete();
    };
    return { held, executor };
  }

  /** A message/stream of the held agent, on a store that counts its reads and subscriptions. */
  async function heldStream() {
    const store = new CountingStore();
    const { held, executor } = heldAgent();
    const runtime = start(executor, { store });
    const stream = await runtime.streamMessage({ message: userMessage('x') });
    return { store, held, stream };
  }

  it('breaking out of for await lets go of the subscription', async () => {
    const { store, held, stream } = await heldStream();
    const seen: string[] = [];
    for await (const frame of stream) {
      seen.push(frame.result.kind);
      if (frame.result.kind === 'status-update') break;
    }
    expect(seen).toEqual(['task', 'status-update']);
    expect(store.subscribed).toBe(0);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    held.release();
  });

  it('return() while a next() waits is answered after it, then the stream is done', async () => {
    const { store, held, stream } = await heldStream();
    expect((await stream.next()).value?.result.kind).toBe('task');
    expect((await stream.next()).value?.result).toMatchObject({ kind: 'status-update', status: { state: 'working' } });
    const waiting = stream.next();
    const order: string[] = [];
    const returned = stream.return('bye').then((result) => {
      order.push('return');
      return result;
    });
    void waiting.then(() => order.push('next'));
    await delay(50);
    expect(order).toEqual([]);
    held.release();
    expect((await waiting).value?.result).toMatchObject({ kind: 'status-update', final: true });
    expect(await returned).toEqual({ done: true, value: 'bye' });
    expect(order).toEqual(['next', 'return']);
    expect(store.subscribed).toBe(0);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it('throw() rejects with the error, lets go of the subscription and ends the stream', async () => {
    const { store, held, stream } = await heldStream();
    await stream.next();
    await stream.next();
    expect(store.subscribed).toBe(1);
    const boom = new Error('boom');
    await expect(stream.throw(boom)).rejects.toBe(boom);
    expect(store.subscribed).toBe(0);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    held.release();
  });

  it('an abort while it waits ends it and lets go of the subscription', async () => {
    const store = new CountingStore();
    const { held, executor } = heldAgent();
    const runtime = start(executor, { store });
    const controller = new AbortController();
    const stream = await runtime.streamMessage({ message: userMessage('x') }, { signal: controller.signal });
    await stream.next();
    await stream.next();
    const waiting = stream.next();
    await delay(20);
    controller.abort();
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(store.subscribed).toBe(0);
    held.release();
  });

  it('a read that fails rejects the next() and ends the stream', async () => {
    const { store, held, stream } = await heldStream();
    await stream.next();
    const failure = new Error('store down');
    store.readEvents = () => Promise.reject(failure);
    await expect(stream.next()).rejects.toBe(failure);
    expect(store.subscribed).toBe(0);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    held.release();
  });

  it('a stream opened with its task (message/stream) reads no task while it follows the log', async () => {
    const { store, held, stream } = await heldStream();
    expect((await stream.next()).value?.result.kind).toBe('task');
    expect((await stream.next()).value?.result).toMatchObject({ kind: 'status-update', status: { state: 'working' } });
    const last = stream.next();
    await delay(20);
    held.release();
    expect((await last).value?.result).toMatchObject({ kind: 'status-update', final: true });
    expect(store.getTaskCalls).toBe(0);
  });
});

describe('a stream that ends only at a terminal state (A2A 1.0 SubscribeToTask, §3.1.6; issue 31)', () => {
  /** Asks twice, then completes with an artifact naming the answers. */
  async function interview(turn: import('../../src/executor.js').TurnContext): Promise<void> {
    if (turn.text === 'start') return turn.requireInput('First question?');
    if (turn.text === 'one') return turn.requireInput('Second question?');
    await turn.artifact({ text: `answers ended with ${turn.text}` });
    await turn.complete();
  }

  it('follows an input-required task through the next turns to its terminal state, even woken only by the safety poll', async () => {
    const store = new DeafStore();
    const runtime = start(interview, { store, followPollIntervalMs: 30 });
    const task = asTask(await runtime.sendMessage({ message: userMessage('start') }));
    expect(task.status.state).toBe('input-required');
    const stream = await runtime.resubscribe({ id: task.id }, { untilTerminal: true });
    expect((await stream.next()).value?.result).toMatchObject({ kind: 'task', status: { state: 'input-required' } });
    const waiting = stream.next();
    // Several safety polls pass over the waiting stream: each reads the task, still interrupted,
    // and the stream keeps waiting rather than ending.
    await delay(150);
    expect(store.getVersionsCalls).toBeGreaterThan(1);
    await runtime.sendMessage({ message: userMessage('one', { taskId: task.id }) });
    await runtime.sendMessage({ message: userMessage('two', { taskId: task.id }) });
    const items: StreamResult[] = [];
    const first = await waiting;
    if (!first.done) items.push(first.value.result);
    for await (const frame of stream) items.push(frame.result);
    const states = items.flatMap((item) => (item.kind === 'status-update' ? [item.status.state] : []));
    expect(states).toEqual(['working', 'input-required', 'working', 'completed']);
    expect(items.some((item) => item.kind === 'artifact-update')).toBe(true);
    expect(items.at(-1)).toMatchObject({ kind: 'status-update', status: { state: 'completed' } });
  });

  it('without it (0.3 tasks/resubscribe) the same subscription is the snapshot alone', async () => {
    const runtime = start(interview);
    const task = asTask(await runtime.sendMessage({ message: userMessage('start') }));
    const items: StreamResult[] = [];
    for await (const frame of await runtime.resubscribe({ id: task.id })) items.push(frame.result);
    expect(items).toEqual([
      expect.objectContaining({ kind: 'task', status: expect.objectContaining({ state: 'input-required' }) }),
    ]);
  });

  it('a client that leaves while the task waits for input ends it and lets go of the subscription', async () => {
    const store = new CountingStore();
    const runtime = start(interview, { store });
    const task = asTask(await runtime.sendMessage({ message: userMessage('start') }));
    const controller = new AbortController();
    const stream = await runtime.resubscribe({ id: task.id }, { untilTerminal: true, signal: controller.signal });
    await stream.next();
    const waiting = stream.next();
    await delay(20);
    expect(store.subscribed).toBe(1);
    controller.abort();
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(store.subscribed).toBe(0);
  });

  it('resumed with Last-Event-ID at an interrupted task’s last event, it answers the task as it stands, then follows the next turn', async () => {
    const runtime = start(interview);
    const task = asTask(await runtime.sendMessage({ message: userMessage('start') }));
    const record = await runtime.store.getTask(task.id);
    const version = record?.version ?? 0;
    const stream = await runtime.resubscribe({ id: task.id }, { untilTerminal: true, afterSeq: version });
    const first = await stream.next();
    expect(first.value).toMatchObject({ seq: version, result: { kind: 'task', status: { state: 'input-required' } } });
    await runtime.sendMessage({ message: userMessage('one', { taskId: task.id }) });
    await runtime.sendMessage({ message: userMessage('two', { taskId: task.id }) });
    const states: string[] = [];
    for await (const frame of stream) {
      expect(frame.result.kind).not.toBe('task');
      if (frame.result.kind === 'status-update') states.push(frame.result.status.state);
    }
    expect(states).toEqual(['working', 'input-required', 'working', 'completed']);
  });

  it('with Last-Event-ID past an interrupted task’s last event it is refused, as for a running task', async () => {
    const runtime = start(interview);
    const task = asTask(await runtime.sendMessage({ message: userMessage('start') }));
    const record = await runtime.store.getTask(task.id);
    await expect(
      runtime.resubscribe({ id: task.id }, { untilTerminal: true, afterSeq: (record?.version ?? 0) + 5 }),
    ).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
  });
});

describe('a stream reads the log once per notified change (issue 30)', () => {
  const start = useRuntimes();

  it('N chunks committed one by one cost about N reads, not 2N: no empty read after each', async () => {
    let reads = 0;
    class CountingStore extends MemoryStore {
      override readEvents(...args: Parameters<MemoryStore['readEvents']>) {
        reads++;
        return super.readEvents(...args);
      }
    }
    const chunks = 20;
    const runtime = start(
      async (turn) => {
        for (let i = 0; i < chunks; i++) {
          await turn.artifact({ artifactId: 'a', text: `t${i} `, append: i > 0, lastChunk: i === chunks - 1 });
          // One commit and one notification per chunk, as a model streaming at its pace makes.
          await delay(5);
        }
        await turn.complete();
      },
      { store: new CountingStore() },
    );
    const stream = await runtime.streamMessage({ message: userMessage('go') });
    const texts: string[] = [];
    for await (const frame of stream) {
      if (frame.result.kind === 'artifact-update') {
        const part = frame.result.artifact.parts[0];
        texts.push(part?.kind === 'text' ? part.text : '');
      }
    }
    expect(texts).toEqual(Array.from({ length: chunks }, (_, i) => `t${i} `));
    // One read per notified change (the chunks, `working`, `completed`) and a few more at the
    // start and the end; an empty read after each chunk made it more than 2 × chunks.
    expect(reads).toBeLessThan(chunks + 8);
  });
});

describe('streams whose consumer only reads share the store’s events (StreamOptions.sharedFrames; issue 30)', () => {
  const start = useRuntimes();

  /** An agent that streams `chunks` chunks once `go` resolves, then completes. */
  function gatedAgent(chunks: number) {
    let release: () => void = () => {};
    const go = new Promise<void>((resolve) => {
      release = resolve;
    });
    const executor = async (turn: TurnContext) => {
      await turn.working();
      await go;
      for (let i = 0; i < chunks; i++) {
        await turn.artifact({ artifactId: 'a', text: `t${i}`, append: i > 0, lastChunk: i === chunks - 1 });
        await delay(2);
      }
      await turn.complete();
    };
    return { executor, release };
  }

  /** The artifact-update events a stream yields, as the objects it yields. */
  async function chunksOf(stream: AsyncGenerator<{ result: StreamResult }>, change = false): Promise<StreamResult[]> {
    const chunks: StreamResult[] = [];
    for await (const frame of stream) {
      if (frame.result.kind !== 'artifact-update') continue;
      chunks.push(frame.result);
      // A consumer that did not say it only reads may change what it got.
      if (change) frame.result.artifact.parts = [{ kind: 'text', text: 'changed' }];
    }
    return chunks;
  }

  const textsOf = (chunks: StreamResult[]) =>
    chunks.map((c) =>
      c.kind === 'artifact-update' && c.artifact.parts[0]?.kind === 'text' ? c.artifact.parts[0].text : '',
    );

  it('two sharing streams of one task get the same event objects; a stream that does not share gets its own', async () => {
    const { executor, release } = gatedAgent(5);
    const runtime = start(executor);
    const sending = await runtime.streamMessage({ message: userMessage('go') }, { sharedFrames: true });
    const first = await sending.next();
    const taskId = first.value?.result.kind === 'task' ? first.value.result.id : '';
    const sharing = await runtime.resubscribe({ id: taskId }, { sharedFrames: true });
    const own = await runtime.resubscribe({ id: taskId });
    const results = Promise.all([chunksOf(sending), chunksOf(sharing), chunksOf(own, true)]);
    release();
    const [a, b, c] = await results;

    const expected = ['t0', 't1', 't2', 't3', 't4'];
    expect(textsOf(a)).toEqual(expected);
    expect(textsOf(b)).toEqual(expected);
    for (let i = 0; i < expected.length; i++) expect(b[i]).toBe(a[i]);
    // Its own copies: changing them (as it did) changed neither the sharing streams' objects nor the log.
    expect(textsOf(c)).toEqual(expected.map(() => 'changed'));
    for (let i = 0; i < expected.length; i++) expect(c[i]).not.toBe(a[i]);
    const again = await runtime.resubscribe({ id: taskId }, { afterSeq: 0 });
    expect(textsOf(await chunksOf(again))).toEqual(expected);
  });
});
