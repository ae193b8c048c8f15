import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  A2AError,
  checkCommitRequest,
  indexedMessageIds,
  indexedMessages,
  type Message,
  messageDigest,
  type TaskEvent,
} from '../src/index.js';
import { agentMessage, statusUpdate, taskFixture, userMessage } from '../src/testing/index.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('messageDigest', () => {
  it('is SHA-256 in hex of the canonical JSON of role, parts, metadata, extensions and referenceTaskIds', () => {
    const message: Message = {
      kind: 'message',
      messageId: 'm-1',
      role: 'user',
      parts: [{ kind: 'text', text: 'hi', metadata: { z: 1, a: 2 } }],
      metadata: { b: [1, 'x', null], a: true },
      extensions: ['https://example.com/ext'],
      referenceTaskIds: ['t-0'],
      taskId: 't-1',
      contextId: 'c-1',
    };
    // Keys sorted at every level, no whitespace, ids and kind left out.
    const canonical =
      '{"extensions":["https://example.com/ext"],"metadata":{"a":true,"b":[1,"x",null]},' +
      '"parts":[{"kind":"text","metadata":{"a":2,"z":1},"text":"hi"}],"referenceTaskIds":["t-0"],"role":"user"}';
    expect(messageDigest(message)).toBe(sha256(canonical));
    expect(messageDigest(message)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('ignores messageId, taskId, contextId and key order; reads the message as JSON would', () => {
    const sent = userMessage('same', { messageId: 'a', metadata: { x: 1, y: { q: 2, p: 3 } } });
    const stored: Message = {
      metadata: { y: { p: 3, q: 2 }, x: 1 },
      contextId: 'generated-context',
      taskId: 'generated-task',
      parts: [{ text: 'same', kind: 'text' }],
      role: 'user',
      messageId: 'b',
      kind: 'message',
    };
    expect(messageDigest(stored)).toBe(messageDigest(sent));
    // What a store's JSON round trip does to a message changes nothing.
    expect(messageDigest(JSON.parse(JSON.stringify(sent)) as Message)).toBe(messageDigest(sent));
    const withUndefined = { ...sent, extensions: undefined, metadata: { ...sent.metadata, gone: undefined } };
    expect(messageDigest(withUndefined as Message)).toBe(messageDigest(sent));
    // Unicode is digested as its characters, not as escapes.
    const unicode = userMessage('héllo 👩🏽‍💻 \u2028');
    expect(messageDigest(unicode)).toBe(
      sha256(`{"parts":[{"kind":"text","text":"héllo 👩🏽‍💻 \u2028"}],"role":"user"}`),
    );
  });

  it('changes with every field it covers', () => {
    const base = userMessage('text', { metadata: { k: 'v' }, extensions: ['e'], referenceTaskIds: ['r'] });
    const digests = new Set(
      [
        base,
        { ...base, role: 'agent' as const },
        { ...base, parts: [{ kind: 'text' as const, text: 'other' }] },
        { ...base, parts: [...base.parts, { kind: 'text' as const, text: 'more' }] },
        { ...base, metadata: { k: 'w' } },
        { ...base, metadata: undefined },
        { ...base, extensions: ['f'] },
        { ...base, referenceTaskIds: [] },
      ].map((message) => messageDigest(message)),
    );
    expect(digests.size).toBe(8);
  });

  /**
   * The digest's definition, written the slow way: a JSON copy of the fields, then written with
   * sorted keys (as a string: an object's integer-like keys always enumerate first).
   */
  function byDefinition(message: Message): string {
    const { role, parts, metadata, extensions, referenceTaskIds } = message;
    const write = (value: unknown): string =>
      value === null || typeof value !== 'object'
        ? JSON.stringify(value)
        : Array.isArray(value)
          ? `[${value.map(write).join(',')}]`
          : `{${Object.keys(value)
              .sort()
              .map((key) => `${JSON.stringify(key)}:${write((value as Record<string, unknown>)[key])}`)
              .join(',')}}`;
    return sha256(write(JSON.parse(JSON.stringify({ role, parts, metadata, extensions, referenceTaskIds }))));
  }

  it('equals its definition (the sorted JSON of a JSON copy) for any metadata, undefined members, dates and NaN included', () => {
    const jsonish = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue({ maxDepth: 2 }),
        fc.constantFrom(undefined, Number.NaN, -0, new Date(0)),
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(fc.string({ maxLength: 4 }), tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 6 }), jsonish, { maxKeys: 5 }),
        fc.string(),
        (metadata, text) => {
          const message = userMessage(text, { metadata });
          expect(messageDigest(message)).toBe(byDefinition(message));
        },
      ),
      { numRuns: 300, seed: 20261124 },
    );
  });

  it('equals its definition for any string in text, keys and values: quotes, backslashes, controls, lone surrogates', () => {
    const anyString = fc.string({ unit: 'binary', maxLength: 8 });
    fc.assert(
      fc.property(fc.dictionary(anyString, anyString, { maxKeys: 20 }), anyString, (metadata, text) => {
        const message = userMessage(text, { metadata });
        expect(messageDigest(message)).toBe(byDefinition(message));
      }),
      { numRuns: 300, seed: 20261124 },
    );
    const tricky = userMessage('"\\\n\u0000\ud800 \udc00\ud83d\ude00', {
      metadata: { 'k"\\\t': '\u001f', b: 1, a: 2 },
    });
    expect(messageDigest(tricky)).toBe(byDefinition(tricky));
  });

  it('refuses a cycle and a BigInt with a TypeError, as JSON does', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => messageDigest(userMessage('x', { metadata: cyclic }))).toThrow(TypeError);
    expect(() => messageDigest(userMessage('x', { metadata: { n: 1n } }))).toThrow(TypeError);
    // The same object twice, side by side, is no cycle.
    const shared = { a: 1 };
    expect(() => messageDigest(userMessage('x', { metadata: { p: shared, q: shared } }))).not.toThrow();
  });
});

describe('indexedMessages', () => {
  it('gives the user messages a commit indexes, in event order, with their digests', () => {
    const first = userMessage('first');
    const task = taskFixture({ history: [first, userMessage('not indexed')] });
    const followUp = userMessage('follow-up', { taskId: task.id, contextId: task.contextId });
    const events: TaskEvent[] = [
      task,
      statusUpdate(task, 'working', { message: 'agent' }),
      followUp,
      taskFixture({ history: [agentMessage('agent first')] }),
    ];
    expect(indexedMessages(events)).toEqual([
      { messageId: first.messageId, digest: messageDigest(first) },
      { messageId: followUp.messageId, digest: messageDigest(followUp) },
    ]);
    expect(indexedMessageIds(events)).toEqual([first.messageId, followUp.messageId]);
  });
});

describe('checkCommitRequest', () => {
  const request = () => {
    const task = taskFixture();
    return { taskId: task.id, expectedVersion: 0, task, events: [task] };
  };

  it('accepts a commit without an owner or with a principal id', () => {
    expect(() => checkCommitRequest(request(), 'TestStore')).not.toThrow();
    expect(() => checkCommitRequest({ ...request(), owner: 'alice' }, 'TestStore')).not.toThrow();
  });

  it('refuses an empty or non-string owner with INTERNAL, saying what to pass', () => {
    for (const owner of ['', 42, null]) {
      let error: unknown;
      try {
        checkCommitRequest({ ...request(), owner: owner as string }, 'TestStore');
      } catch (caught) {
        error = caught;
      }
      expect(A2AError.is(error) && error.code, String(owner)).toBe('INTERNAL');
      expect((error as Error).message).toMatch(/TestStore: commit\(\) for task .* got owner .*non-empty string/);
    }
  });
});
