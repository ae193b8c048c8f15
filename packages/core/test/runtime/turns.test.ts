/**
 * How the runtime runs an agent's turns: one at a time per context and in arrival order, several
 * contexts at once, a turn ending at its final status, and what the agent is given and may do.
 */
import { describe, expect, it } from 'vitest';
import type { Part } from '../../src/model/types.js';
import { asTask, textParts, useRuntimes, userMessage, waitFor } from './helpers.js';

const start = useRuntimes();

describe('turn scheduling', () => {
  it('runs the turns of one context one after another, in arrival order', async () => {
    const log: string[] = [];
    const runtime = start(async (turn) => {
      log.push(`start ${turn.text}`);
      await new Promise((r) => setTimeout(r, 30));
      log.push(`end ${turn.text}`);
      await turn.complete();
    });
    // A non-blocking send answers once the message is accepted, i.e. has its place in the queue.
    for (const n of ['1', '2', '3']) {
      await runtime.sendMessage({
        message: userMessage(n, { contextId: 'serial' }),
        configuration: { blocking: false },
      });
    }
    await waitFor(() => log.length === 6);
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
  });

  it('runs turns of different contexts concurrently', async () => {
    let running = 0;
    let maxRunning = 0;
    const runtime = start(async (turn) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await new Promise((r) => setTimeout(r, 50));
      running--;
      await turn.complete();
    });
    await Promise.all(['a', 'b', 'c'].map((c) => runtime.sendMessage({ message: userMessage(c, { contextId: c }) })));
    expect(maxRunning).toBe(3);
  });

  it('a turn ends at its final status: the next turn of the context may start, later updates are dropped', async () => {
    let releaseFirst!: () => void;
    const firstHeldBack = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const log: string[] = [];
    let lateWrites: Promise<unknown> | undefined;
    const runtime = start(
      async (turn) => {
        log.push(`start ${turn.text}`);
        if (turn.text === 'ask') {
          await turn.requireInput('which one?');
          // Still running after the final status: these belong to no turn any more.
          await firstHeldBack;
          lateWrites = Promise.all([
            turn.artifact({ text: 'late' }),
            turn.working('late status'),
            turn.complete('late'),
          ]);
          await lateWrites;
          log.push('end ask');
          return;
        }
        await turn.complete(`done ${turn.text}`);
        log.push(`end ${turn.text}`);
      },
      { workerId: 'tail-worker' },
    );
    const asked = asTask(await runtime.sendMessage({ message: userMessage('ask', { contextId: 'tail' }) }));
    expect(asked.status.state).toBe('input-required');
    // The first agent call has not returned, yet the context's next turn runs and completes.
    const next = asTask(await runtime.sendMessage({ message: userMessage('next', { contextId: 'tail' }) }));
    expect(next.status.state).toBe('completed');
    expect(log).toEqual(['start ask', 'start next', 'end next']);

    releaseFirst();
    await waitFor(() => log.includes('end ask'));
    await lateWrites;
    const after = await runtime.getTask({ id: asked.id });
    expect(after.status.state).toBe('input-required');
    expect(after.artifacts ?? []).toEqual([]);
    // No queued turn is left behind.
    expect(await runtime.store.listWorkerTurns('tail-worker')).toEqual([]);
  });

  it('fails a turn that exceeds turnTimeoutMs and aborts its signal', async () => {
    let aborted = false;
    const runtime = start(
      async (turn) => {
        turn.signal.addEventListener('abort', () => {
          aborted = true;
        });
        await new Promise((r) => setTimeout(r, 2000));
        await turn.complete('too late');
      },
      { turnTimeoutMs: 50 },
    );
    const task = asTask(await runtime.sendMessage({ message: userMessage('slow') }));
    expect(task.status.state).toBe('failed');
    expect(textParts(task.status.message?.parts)).toMatch(/timed out after 50 ms/);
    expect(aborted).toBe(true);
  });
});

describe('what the agent is given', () => {
  it('keeps what the agent sent even when the agent changes its objects afterwards', async () => {
    const runtime = start(async (turn) => {
      const metadata = { step: 1 };
      const parts: Part[] = [{ kind: 'text', text: 'as sent' }];
      await turn.working('busy', metadata);
      await turn.artifact({ parts });
      metadata.step = 99;
      parts[0] = { kind: 'text', text: 'replaced' };
      (parts as { kind: string; text: string }[]).push({ kind: 'text', text: 'added' });
      await turn.complete();
    });
    const task = asTask(await runtime.sendMessage({ message: userMessage('x') }));
    expect(textParts(task.artifacts?.[0]?.parts)).toBe('as sent');
    const events = await runtime.store.readEvents(task.id, 0);
    // The agent's working status (after the runtime's own, which has no metadata).
    const working = events.findLast((e) => e.event.kind === 'status-update' && e.event.status.state === 'working');
    expect((working?.event as { metadata?: unknown } | undefined)?.metadata).toEqual({ step: 1 });
    expect((await runtime.store.getTask(task.id))?.task.artifacts?.[0]?.parts).toEqual([
      { kind: 'text', text: 'as sent' },
    ]);
  });

  it('gives the agent copies: changing the message or task it reads does not change the stored task', async () => {
    const runtime = start(async (turn) => {
      turn.message.parts.push({ kind: 'text', text: ' (edited by the agent)' });
      turn.task.status.state = 'completed';
      turn.task.history?.splice(0);
      await turn.complete(turn.text);
    });
    const task = asTask(await runtime.sendMessage({ message: userMessage('original') }));
    expect(textParts(task.status.message?.parts)).toBe('original');
    expect(textParts(task.history?.[0]?.parts)).toBe('original');
  });

  it('lets the agent destructure the turn context, methods included', async () => {
    const runtime = start(async ({ text, taskId, message, task, working, artifact, complete }) => {
      await working();
      await artifact({
        text: `${text} (${message.parts.length} part, task ${task.id === taskId ? 'ok' : 'mismatch'})`,
      });
      await complete('done');
    });
    const task = asTask(await runtime.sendMessage({ message: userMessage('unpacked') }));
    expect(task.status.state).toBe('completed');
    expect(textParts(task.artifacts?.[0]?.parts)).toBe('unpacked (1 part, task ok)');
  });

  it('gives the agent its context state across turns, per context', async () => {
    const runtime = start(async (turn) => {
      const count = ((turn.contextState as { count?: number } | undefined)?.count ?? 0) + 1;
      await turn.setContextState({ count });
      await turn.complete(`turn ${count}`);
    });
    for (const n of [1, 2, 3]) {
      const task = asTask(await runtime.sendMessage({ message: userMessage('x', { contextId: 'stateful' }) }));
      expect(textParts(task.status.message?.parts)).toBe(`turn ${n}`);
    }
    const other = asTask(await runtime.sendMessage({ message: userMessage('x', { contextId: 'other' }) }));
    expect(textParts(other.status.message?.parts)).toBe('turn 1');
  });

  it('fails the task when the agent sends an invalid transition', async () => {
    const runtime = start(async (turn) => {
      await turn.status('submitted');
    });
    const task = asTask(await runtime.sendMessage({ message: userMessage('x') }));
    expect(task.status.state).toBe('failed');
    expect(textParts(task.status.message?.parts)).toMatch(/cannot move from working to submitted/);
  });
});
