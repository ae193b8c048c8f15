/**
 * Ending a turn the framework did not finish: a question (`input-required`, `auth-required`), an
 * error as a readable message, an abort left to the runtime. Through the real runtime.
 */

import { describe, expect, it } from 'vitest';
import {
  answersQuestion,
  askUser,
  MAX_ERROR_MESSAGE_LENGTH,
  readableErrorMessage,
  runAgentTurn,
} from '../../src/agent-kit/index.js';
import { asTask, textParts, useRuntimes, userMessage, waitFor, waitForAbort } from '../runtime/helpers.js';

const runtime = useRuntimes();

describe('readableErrorMessage', () => {
  it("gives an Error's message, never its stack or cause", () => {
    const error = new Error('The model refused: quota exceeded', { cause: new Error('secret internals') });
    const message = readableErrorMessage(error);
    expect(message).toBe('The model refused: quota exceeded');
    expect(message).not.toMatch(/at .*\.ts|secret/);
  });

  it('reads strings and objects with a message; falls back otherwise', () => {
    expect(readableErrorMessage('plain')).toBe('plain');
    expect(readableErrorMessage({ message: 'from an object' })).toBe('from an object');
    expect(readableErrorMessage({ code: 42 })).toBe('The agent failed without a message.');
    expect(readableErrorMessage(undefined, 'fallback')).toBe('fallback');
    expect(readableErrorMessage(new Error('   '), 'fallback')).toBe('fallback');
  });

  it('removes terminal control sequences and cuts long messages', () => {
    expect(readableErrorMessage(new Error('\u001b[31mred\u001b[0m\nline two\u0007'))).toBe('[31mred[0m\nline two');
    const long = readableErrorMessage(new Error('x'.repeat(5000)));
    expect(long).toHaveLength(MAX_ERROR_MESSAGE_LENGTH);
    expect(long.endsWith('…')).toBe(true);
  });
});

describe('askUser', () => {
  it('ends the turn input-required with the question as text and its detail as data; the answer starts a turn that knows it answers', async () => {
    const seen: boolean[] = [];
    const rt = runtime(async (turn) => {
      seen.push(answersQuestion(turn));
      if (!answersQuestion(turn)) {
        await askUser(turn, { text: 'Which city?', data: { tool: 'weather', args: {} } });
        return;
      }
      await turn.complete(`Weather in ${turn.text}: sunny`);
    });
    const paused = asTask(await rt.sendMessage({ message: userMessage('weather please') }));
    expect(paused.status.state).toBe('input-required');
    expect(paused.status.message?.parts).toEqual([
      { kind: 'text', text: 'Which city?' },
      { kind: 'data', data: { tool: 'weather', args: {} } },
    ]);
    const done = asTask(
      await rt.sendMessage({ message: userMessage('Paris', { taskId: paused.id, contextId: paused.contextId }) }),
    );
    expect(done.status.state).toBe('completed');
    expect(textParts(done.status.message?.parts)).toBe('Weather in Paris: sunny');
    expect(seen).toEqual([false, true]);
  });

  it('kind auth ends the turn auth-required', async () => {
    const rt = runtime((turn) => askUser(turn, { text: 'Sign in to your calendar first.', kind: 'auth' }));
    const task = asTask(await rt.sendMessage({ message: userMessage('book it') }));
    expect(task.status.state).toBe('auth-required');
    expect(textParts(task.status.message?.parts)).toBe('Sign in to your calendar first.');
  });
});

describe('runAgentTurn', () => {
  it('a throw fails the task with the readable message, and onError sees the original', async () => {
    const seen: unknown[] = [];
    const thrown = new Error('\u001b[2JTool "weather" failed: timeout');
    const rt = runtime((turn) =>
      runAgentTurn(
        turn,
        async () => {
          await turn.working('thinking');
          throw thrown;
        },
        { onError: (error) => seen.push(error) },
      ),
    );
    const task = asTask(await rt.sendMessage({ message: userMessage('go') }));
    expect(task.status.state).toBe('failed');
    expect(textParts(task.status.message?.parts)).toBe('[2JTool "weather" failed: timeout');
    expect(seen).toEqual([thrown]);
  });

  it('a throw after the turn was canceled sends nothing: the task ends canceled, not failed', async () => {
    const seen: unknown[] = [];
    let started = false;
    const rt = runtime((turn) =>
      runAgentTurn(
        turn,
        async () => {
          started = true;
          await waitForAbort(turn.signal);
          throw new DOMException('This operation was aborted', 'AbortError');
        },
        { onError: (error) => seen.push(error) },
      ),
    );
    const first = asTask(await rt.sendMessage({ message: userMessage('go'), configuration: { blocking: false } }));
    await waitFor(() => started);
    await rt.cancelTask({ id: first.id });
    await waitFor(async () => (await rt.getTask({ id: first.id })).status.state === 'canceled');
    // Give a wrongly sent `failed` the time to land; it must not.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await rt.getTask({ id: first.id })).status.state).toBe('canceled');
    expect(seen).toEqual([]);
  });
});
