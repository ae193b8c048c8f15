/**
 * A retried message (the same messageId, e.g. a client retrying after a lost response) is answered
 * with the task it started, and starts no second turn; a message id reused in another context is
 * the client's mistake (-32602).
 */
import { describe, expect, it } from 'vitest';
import { A2AError } from '../../src/errors.js';
import { asTask, textParts, useRuntimes, userMessage } from './helpers.js';

const start = useRuntimes();

describe('retried messages', () => {
  it('a send retried with the same messageId returns the original task and starts no second turn', async () => {
    let turns = 0;
    const runtime = start(async (turn) => {
      turns++;
      await turn.complete(`done ${turns}`);
    });
    const message = userMessage('once');
    const first = asTask(await runtime.sendMessage({ message }));
    const again = asTask(await runtime.sendMessage({ message }));
    expect(again.id).toBe(first.id);
    expect(textParts(again.status.message?.parts)).toBe('done 1');
    expect(turns).toBe(1);
  });

  it('a retried follow-up that completed its task returns the task instead of a terminal-state error', async () => {
    const runtime = start(async (turn) => {
      if (turn.isNewTask) await turn.requireInput('name?');
      else {
        await turn.artifact({ text: `You answered: ${turn.text}` });
        await turn.complete();
      }
    });
    const asked = asTask(await runtime.sendMessage({ message: userMessage('ask') }));
    const answer = userMessage('Grace', { taskId: asked.id });
    const done = asTask(await runtime.sendMessage({ message: answer }));
    expect(done.status.state).toBe('completed');
    const retried = asTask(await runtime.sendMessage({ message: answer }));
    expect(retried.id).toBe(asked.id);
    expect(retried.status.state).toBe('completed');
    expect(retried.artifacts).toHaveLength(1);
  });

  it('the same messageId in another context is refused with INVALID_PARAMS (-32602) naming the context', async () => {
    let turns = 0;
    const runtime = start(async (turn) => {
      turns++;
      await turn.complete();
    });
    const message = userMessage('hi', { contextId: 'ctx-a' });
    await runtime.sendMessage({ message });
    const refused = await runtime.sendMessage({ message: { ...message, contextId: 'ctx-b' } }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(A2AError.is(refused)).toBe(true);
    expect(refused).toMatchObject({ code: 'INVALID_PARAMS', jsonRpcCode: -32602 });
    expect((refused as Error).message).toMatch(/already used in context "ctx-a"/);
    expect(turns).toBe(1);
  });
});
