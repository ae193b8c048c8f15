/**
 * What an agent hands the turn context (an artifact chunk, a message) is copied with JSON's rules
 * on the way in: the agent may reuse its objects, and the event holds what every store would give
 * back after its JSON round trip.
 */

import { describe, expect, it } from 'vitest';
import { toAgentMessage, toArtifact } from '../src/executor.js';

const ids = { taskId: 't', contextId: 'c', messageId: 'm' };

describe('toArtifact and toAgentMessage copy with JSON semantics', () => {
  it("the agent's objects, changed after the call, do not reach the artifact or the message", () => {
    const metadata = { emittedAt: 1, nested: { n: 1 } };
    const data = { rows: [1, 2] };
    const parts = [{ kind: 'text' as const, text: 'a' }];
    const artifact = toArtifact({ parts, data, metadata, text: 'b' }, 'art');
    const message = toAgentMessage({ parts }, ids);
    metadata.nested.n = 2;
    data.rows.push(3);
    (parts[0] as { text: string }).text = 'changed';
    expect(artifact).toEqual({
      artifactId: 'art',
      parts: [
        { kind: 'text', text: 'a' },
        { kind: 'text', text: 'b' },
        { kind: 'data', data: { rows: [1, 2] } },
      ],
      metadata: { emittedAt: 1, nested: { n: 1 } },
    });
    expect(message.parts).toEqual([{ kind: 'text', text: 'a' }]);
  });

  it('a Date becomes its ISO string, undefined fields and functions vanish, NaN becomes null', () => {
    const at = new Date('2026-11-29T01:02:03.004Z');
    const artifact = toArtifact(
      { metadata: { at, gone: undefined, fn: () => 1, ratio: Number.NaN }, data: { list: [undefined, at] } },
      'art',
    );
    expect(artifact.metadata).toEqual({ at: '2026-11-29T01:02:03.004Z', ratio: null });
    expect(Object.keys(artifact.metadata ?? {})).toEqual(['at', 'ratio']);
    expect(artifact.parts).toEqual([{ kind: 'data', data: { list: [null, '2026-11-29T01:02:03.004Z'] } }]);
  });

  it('a value JSON cannot carry is refused at the call, naming where it is', () => {
    expect(() => toArtifact({ metadata: { big: 10n } }, 'art')).toThrow(/BigInt \(at "big"\)/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => toArtifact({ data: cyclic }, 'art')).toThrow(/cyclic/);
  });
});
