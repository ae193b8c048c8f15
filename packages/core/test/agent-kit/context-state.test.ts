/**
 * Conversation state in the context state: slots under their own keys, carried to the next turn
 * of the context (a new task in the same contextId), other keys kept. Through the real runtime.
 */

import { describe, expect, it } from 'vitest';
import { contextStateSlot, inputContentOf, priorMessages } from '../../src/agent-kit/index.js';
import { asTask, textParts, useRuntimes, userMessage } from '../runtime/helpers.js';

const runtime = useRuntimes();

describe('contextStateSlot', () => {
  it("carries a slot to the context's next turn and keeps the state's other keys", async () => {
    const messages = contextStateSlot<string[]>('messages', (value) =>
      Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : undefined,
    );
    const thread = contextStateSlot<string>('thread');
    const states: unknown[] = [];
    const rt = runtime(async (turn) => {
      states.push(turn.contextState);
      const before = messages.read(turn) ?? [];
      await messages.write(turn, [...before, turn.text]);
      await thread.write(turn, 'thread-1');
      // Read back within the turn: the latest write, not the state as the turn began.
      expect(messages.read(turn)).toEqual([...before, turn.text]);
      await turn.complete(`${before.length + 1} messages`);
    });
    const first = asTask(await rt.sendMessage({ message: userMessage('one') }));
    const second = asTask(await rt.sendMessage({ message: userMessage('two', { contextId: first.contextId }) }));
    expect(textParts(second.status.message?.parts)).toBe('2 messages');
    expect(states).toEqual([undefined, { messages: ['one'], thread: 'thread-1' }]);
  });

  it('reads a state that is not an object, or a value parse refuses, as absent; undefined removes the slot', async () => {
    const slot = contextStateSlot<number>('count', (value) => (typeof value === 'number' ? value : undefined));
    const written: unknown[] = [];
    const turn = (contextState: unknown) => ({
      contextState,
      setContextState: async (state: unknown) => {
        written.push(state);
      },
    });
    expect(slot.read(turn('a string'))).toBeUndefined();
    expect(slot.read(turn({ count: 'three' }))).toBeUndefined();
    expect(slot.read(turn({ count: 3 }))).toBe(3);
    await slot.write(turn({ count: 3, other: true }), undefined);
    await slot.write(turn(['not', 'an', 'object']), 1);
    expect(written).toEqual([{ other: true }, { count: 1 }]);
  });
});

describe('inputContentOf and priorMessages', () => {
  it('maps text, file and data parts in order', () => {
    const content = inputContentOf({
      parts: [
        { kind: 'text', text: 'look' },
        { kind: 'file', file: { bytes: 'aGk=', name: 'hi.txt', mimeType: 'text/plain' } },
        { kind: 'file', file: { uri: 'https://example.com/a.png' } },
        { kind: 'data', data: { city: 'Paris' } },
      ],
    });
    expect(content).toEqual([
      { type: 'text', text: 'look' },
      { type: 'file', mediaType: 'text/plain', filename: 'hi.txt', base64: 'aGk=' },
      { type: 'file', mediaType: 'application/octet-stream', uri: 'https://example.com/a.png' },
      { type: 'data', data: { city: 'Paris' }, json: '{"city":"Paris"}' },
    ]);
  });

  it('leaves out a file whose bytes are not base64, so no framework takes them for a URL to fetch', () => {
    const content = inputContentOf({
      parts: [
        { kind: 'file', file: { bytes: 'http://169.254.169.254/latest/meta-data', name: 'x' } },
        { kind: 'file', file: { bytes: 'aGVsbG8' } },
      ],
    });
    expect(content).toEqual([
      { type: 'text', text: 'The file "x" was left out: its bytes are not base64.' },
      { type: 'file', mediaType: 'application/octet-stream', base64: 'aGVsbG8' },
    ]);
  });

  it("gives the task's messages before the turn's, oldest first", async () => {
    const seen: string[][] = [];
    const rt = runtime(async (turn) => {
      seen.push(priorMessages(turn).map((message) => `${message.role}:${textParts(message.parts)}`));
      if (turn.isNewTask) await turn.requireInput('More?');
      else await turn.complete('done');
    });
    const first = asTask(await rt.sendMessage({ message: userMessage('hello') }));
    await rt.sendMessage({ message: userMessage('yes', { taskId: first.id, contextId: first.contextId }) });
    expect(seen).toEqual([[], ['user:hello', 'agent:More?']]);
  });
});
