/**
 * §7.4 tasks/cancel as the runtime carries it out: the agent's signal aborts, its later updates
 * are dropped (§6.3: a terminal state is final), and the cancel reaches a turn run by another
 * runtime of this process that shares the store.
 */
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import { asTask, useRuntimes, userMessage, waitFor, waitForAbort } from './helpers.js';

const start = useRuntimes();

describe('cancel', () => {
  it("aborts the running agent's signal and answers with the canceled task; the agent's completion never lands", async () => {
    let aborted = false;
    const runtime = start(async (turn) => {
      await turn.working();
      await waitForAbort(turn.signal);
      aborted = true;
      await turn.complete('after the cancel');
    });
    const task = asTask(await runtime.sendMessage({ message: userMessage('x'), configuration: { blocking: false } }));
    await waitFor(async () => (await runtime.getTask({ id: task.id })).status.state === 'working');
    const canceled = await runtime.cancelTask({ id: task.id });
    expect(canceled.status.state).toBe('canceled');
    await waitFor(() => aborted);
    const events = await runtime.store.readEvents(task.id, 0);
    expect(events.some((e) => e.event.kind === 'status-update' && e.event.status.state === 'completed')).toBe(false);
    expect((await runtime.getTask({ id: task.id })).status.state).toBe('canceled');
  });

  it('stops the agent when its own commit meets a cancel another worker wrote first, before any notification', async () => {
    // A store whose subscribers hear nothing: another worker's write is known only to whoever
    // commits after it (as on SQLite between polls, or Postgres before the NOTIFY arrives).
    const store = new MemoryStore();
    store.subscribe = () => () => {};
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let aborted = false;
    const runtime = start(
      async (turn) => {
        await turn.artifact({ text: 'a' });
        await gate;
        // Conflicts with the cancel, reloads, finds the task canceled: dropped.
        await turn.artifact({ text: 'b', append: true });
        await Promise.race([waitForAbort(turn.signal), new Promise((resolve) => setTimeout(resolve, 3000))]);
        aborted = turn.signal.aborted;
      },
      { store },
    );
    const task = asTask(await runtime.sendMessage({ message: userMessage('x'), configuration: { blocking: false } }));
    await waitFor(async () => ((await store.getTask(task.id))?.task.artifacts?.length ?? 0) > 0);
    // The other worker's cancel: a commit straight to the shared store.
    const record = await store.getTask(task.id);
    if (record === undefined) throw new Error('no task');
    const cancel = {
      kind: 'status-update' as const,
      taskId: task.id,
      contextId: task.contextId,
      status: { state: 'canceled' as const, timestamp: new Date().toISOString() },
      final: true,
    };
    await store.commit({
      taskId: task.id,
      expectedVersion: record.version,
      task: { ...record.task, status: cancel.status },
      events: [cancel],
    });
    release();
    await waitFor(() => aborted, 2000);
    const final = await store.getTask(task.id);
    expect(final?.task.status.state).toBe('canceled');
    expect(final?.task.artifacts?.[0]?.parts.map((part) => (part.kind === 'text' ? part.text : ''))).toEqual(['a']);
  });

  it('drops updates an agent sends after its task was canceled', async () => {
    let lateWrite: Promise<void> | undefined;
    const runtime = start(async (turn) => {
      await turn.working();
      await waitForAbort(turn.signal);
      lateWrite = turn.artifact({ text: 'late' }).then(() => undefined);
      await lateWrite;
    });
    const task = asTask(await runtime.sendMessage({ message: userMessage('x'), configuration: { blocking: false } }));
    await waitFor(async () => (await runtime.getTask({ id: task.id })).status.state === 'working');
    await runtime.cancelTask({ id: task.id });
    await waitFor(() => lateWrite !== undefined);
    await lateWrite;
    const after = await runtime.getTask({ id: task.id });
    expect(after.status.state).toBe('canceled');
    expect(after.artifacts ?? []).toEqual([]);
  });

  it('reaches an agent running under another runtime of this process that shares the memory store', async () => {
    const store = new MemoryStore();
    let aborted = false;
    const running = start(
      async (turn) => {
        await turn.working();
        await waitForAbort(turn.signal);
        aborted = true;
      },
      { store, closeStore: false },
    );
    const other = start(async (turn) => turn.complete(), { store, closeStore: false });
    const task = asTask(
      await running.sendMessage({ message: userMessage('wait'), configuration: { blocking: false } }),
    );
    await waitFor(async () => (await running.getTask({ id: task.id })).status.state === 'working');
    expect((await other.cancelTask({ id: task.id })).status.state).toBe('canceled');
    await waitFor(() => aborted);
  });
});
