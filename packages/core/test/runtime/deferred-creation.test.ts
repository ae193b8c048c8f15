/**
 * A blocking message/send in a new context writes its task together with the agent's first
 * updates (A2ARuntimeOptions.createTaskBeforeRun, issue 13 "fewer writes per turn"): one commit for
 * a fast agent, with no queue slot taken; everything any client can be shown is still in the store
 * before it is shown, and every other kind of send still writes the task before its agent runs.
 */
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import type { CommitRequest } from '../../src/store/index.js';
import { asTask, textParts, useRuntimes, userMessage, waitFor } from './helpers.js';

const start = useRuntimes();

/** A memory store that keeps every commit request it is given. */
function recordingStore(): MemoryStore & { commits: CommitRequest[] } {
  const store = new MemoryStore() as MemoryStore & { commits: CommitRequest[] };
  store.commits = [];
  const commit = store.commit.bind(store);
  store.commit = (request, ctx) => {
    store.commits.push(request);
    return commit(request, ctx);
  };
  return store;
}

const shape = (request: CommitRequest) => ({
  create: request.expectedVersion === 0,
  kinds: request.events.map((event) => event.kind),
  takesSlot: request.enqueueTurn !== undefined,
  releasesSlot: request.finishTurn !== undefined,
});

describe('a blocking send in a new context: the task is written with its first updates', () => {
  it('a fast agent: one commit creates the task with its whole log, indexes the message and takes no slot', async () => {
    const store = recordingStore();
    const runtime = start(
      async (turn) => {
        await turn.artifact({ text: 'a' });
        await turn.artifact({ text: 'b', append: true });
        await turn.complete('done');
      },
      { store, workerId: 'w' },
    );
    const message = userMessage('hello');
    const task = asTask(await runtime.sendMessage({ message }));
    expect(task.status.state).toBe('completed');
    expect(store.commits.map(shape)).toEqual([
      {
        create: true,
        kinds: ['task', 'status-update', 'artifact-update', 'artifact-update', 'status-update'],
        takesSlot: false,
        releasesSlot: false,
      },
    ]);
    const log = await store.readEvents(task.id, 0);
    expect(log.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(log[0]?.event).toMatchObject({ kind: 'task', status: { state: 'submitted' } });
    expect(await store.findMessage(message.messageId)).toMatchObject({ taskId: task.id, contextId: task.contextId });
    expect(await store.listWorkerTurns('w')).toEqual([]);
    // The retry of a message recorded this way is recognised: the same task, no second run.
    expect(asTask(await runtime.sendMessage({ message })).id).toBe(task.id);
    expect(store.commits).toHaveLength(1);
  });

  it('createTaskBeforeRun: the task and the slot are written before the agent runs, then its updates', async () => {
    const store = recordingStore();
    const runtime = start(async (turn) => turn.complete('done'), { store, createTaskBeforeRun: true });
    const task = asTask(await runtime.sendMessage({ message: userMessage('hello') }));
    expect(task.status.state).toBe('completed');
    expect(store.commits.map(shape)).toEqual([
      { create: true, kinds: ['task'], takesSlot: true, releasesSlot: false },
      { create: false, kinds: ['status-update', 'status-update'], takesSlot: false, releasesSlot: true },
    ]);
  });

  it('a slow agent: its first updates make the task visible, with its slot, while it works; the end releases the slot', async () => {
    const store = recordingStore();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const runtime = start(
      async (turn) => {
        await turn.artifact({ text: 'first' });
        await gate;
        await turn.complete('done');
      },
      { store, workerId: 'slow' },
    );
    const sent = runtime.sendMessage({ message: userMessage('take your time') });
    const slot = await waitFor(async () => (await store.listWorkerTurns('slow'))[0], 5000, 'the slot of the slow turn');
    const running = await runtime.getTask({ id: slot.taskId });
    expect(running.status.state).toBe('working');
    expect(textParts(running.artifacts?.[0]?.parts)).toBe('first');
    release();
    const task = asTask(await sent);
    expect(task.status.state).toBe('completed');
    expect(store.commits.map(shape)).toEqual([
      { create: true, kinds: ['task', 'status-update', 'artifact-update'], takesSlot: true, releasesSlot: false },
      { create: false, kinds: ['status-update'], takesSlot: false, releasesSlot: true },
    ]);
    expect(await store.listWorkerTurns('slow')).toEqual([]);
  });

  it('an agent that throws at once: the task with `working`, then its failure, and no slot left', async () => {
    const store = recordingStore();
    const runtime = start(
      async () => {
        throw new Error('no model configured');
      },
      { store, workerId: 'thrower' },
    );
    const task = asTask(await runtime.sendMessage({ message: userMessage('hello') }));
    expect(task.status.state).toBe('failed');
    expect(textParts(task.status.message?.parts)).toBe('no model configured');
    // The runner writes what the agent queued (`working`) before it decides how the turn ends.
    expect(store.commits.map(shape)).toEqual([
      { create: true, kinds: ['task', 'status-update'], takesSlot: true, releasesSlot: false },
      { create: false, kinds: ['status-update'], takesSlot: false, releasesSlot: true },
    ]);
    expect((await store.getTask(task.id))?.task.status.state).toBe('failed');
    expect(await store.listWorkerTurns('thrower')).toEqual([]);
  });

  it('streams, non-blocking sends, sends in a named context and follow-ups write the task before the agent runs', async () => {
    const store = recordingStore();
    const seenAtStart: (string | undefined)[] = [];
    const runtime = start(
      async (turn) => {
        // What any other reader would find when the agent starts.
        seenAtStart.push((await store.getTask(turn.taskId))?.task.status.state);
        await turn.requireInput('more?');
      },
      { store },
    );
    const streamed = await runtime.streamMessage({ message: userMessage('stream') });
    for await (const _frame of streamed) {
      // drain to the end of the turn
    }
    const nonBlocking = asTask(
      await runtime.sendMessage({ message: userMessage('later'), configuration: { blocking: false } }),
    );
    const named = asTask(await runtime.sendMessage({ message: userMessage('named', { contextId: 'ctx-named' }) }));
    await runtime.sendMessage({ message: userMessage('follow-up', { taskId: named.id }) });
    await waitFor(async () => (await store.getTask(nonBlocking.id))?.task.status.state === 'input-required');
    expect(seenAtStart).toEqual(['submitted', 'submitted', 'submitted', 'input-required']);
    // Each of them: a commit with the task (or the follow-up message) alone, taking its slot.
    const firsts = store.commits.filter((request) => request.enqueueTurn !== undefined).map(shape);
    expect(firsts).toEqual([
      { create: true, kinds: ['task'], takesSlot: true, releasesSlot: false },
      { create: true, kinds: ['task'], takesSlot: true, releasesSlot: false },
      { create: true, kinds: ['task'], takesSlot: true, releasesSlot: false },
      { create: false, kinds: ['message'], takesSlot: true, releasesSlot: false },
    ]);
  });

  it('the same message sent twice at the same moment: one task, both answered with it', async () => {
    const store = new MemoryStore();
    let runs = 0;
    const executor = async (turn: { complete(text: string): Promise<void> }) => {
      runs++;
      await turn.complete(`run ${runs}`);
    };
    const a = start(executor, { store, workerId: 'a' });
    const b = start(executor, { store, workerId: 'b' });
    const message = userMessage('hedged');
    const [fromA, fromB] = (await Promise.all([a.sendMessage({ message }), b.sendMessage({ message })])).map(asTask);
    expect(fromA?.id).toBe(fromB?.id);
    expect(fromA?.status).toEqual(fromB?.status);
    expect((await store.listTasks({ limit: 10 })).records.map((record) => record.task.id)).toEqual([fromA?.id]);
    // Both checked the message index before either wrote: both agents started (the documented
    // cost of deferring the creation); only the first write counts.
    expect(runs).toBe(2);
    expect(await store.listWorkerTurns('a')).toEqual([]);
    expect(await store.listWorkerTurns('b')).toEqual([]);
  });

  it('createTaskBeforeRun: the same message sent twice at the same moment starts the agent once', async () => {
    const store = new MemoryStore();
    let runs = 0;
    const executor = async (turn: { complete(text: string): Promise<void> }) => {
      runs++;
      await turn.complete(`run ${runs}`);
    };
    const a = start(executor, { store, workerId: 'a', createTaskBeforeRun: true });
    const b = start(executor, { store, workerId: 'b', createTaskBeforeRun: true });
    const message = userMessage('hedged');
    const [fromA, fromB] = (await Promise.all([a.sendMessage({ message }), b.sendMessage({ message })])).map(asTask);
    expect(fromA?.id).toBe(fromB?.id);
    expect(runs).toBe(1);
  });
});
