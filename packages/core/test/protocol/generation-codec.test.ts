/**
 * The A2A 1.1 draft's generation fields (§3.2.7) at the 1.0 edge: read as a JSON number or a
 * ProtoJSON int64 string, refused when not a non-negative integer, written only by the variant an
 * agent with `draft11.generations` uses, and never by the 0.3 codec.
 */

import { describe, expect, it } from 'vitest';
import { A2AError } from '../../src/errors.js';
import type { Task, TaskStatusUpdateEvent } from '../../src/model/types.js';
import { json0_3 } from '../../src/protocol/v0_3/jsonrpc.js';
import { protoJson1_0, protoJson1_0Caller, protoJson1_0WithGenerations } from '../../src/protocol/v1_0/codec.js';

const task: Task = { kind: 'task', id: 't1', contextId: 'c1', status: { state: 'working' }, generation: 7 };
const update: TaskStatusUpdateEvent = {
  kind: 'status-update',
  taskId: 't1',
  contextId: 'c1',
  status: { state: 'working' },
  final: false,
  generation: 8,
};

describe('generation fields in the 1.0 codec', () => {
  it('reads currentGeneration and ifGenerationMatch as numbers or ProtoJSON strings', () => {
    expect(protoJson1_0.decode('getTask', { id: 't1', currentGeneration: 3 }, 'params')).toEqual({
      id: 't1',
      currentGeneration: 3,
    });
    expect(protoJson1_0.decode('getTask', { id: 't1', current_generation: '12' }, 'params')).toEqual({
      id: 't1',
      currentGeneration: 12,
    });
    const send = protoJson1_0.decode(
      'sendMessage',
      {
        message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }], taskId: 't1' },
        configuration: { ifGenerationMatch: '5' },
      },
      'params',
    );
    expect(send.configuration?.ifGenerationMatch).toBe(5);
  });

  it('refuses a generation that is not a non-negative int64 it can hold exactly, naming the field', () => {
    for (const bad of ['abc', -1, 1.5, '99999999999999999999', true]) {
      let error: unknown;
      try {
        protoJson1_0.decode('getTask', { id: 't1', currentGeneration: bad }, 'params');
      } catch (caught) {
        error = caught;
      }
      expect(A2AError.is(error) && error.code).toBe('INVALID_PARAMS');
      expect((error as Error).message).toContain('currentGeneration');
    }
  });

  it('writes generation only in the variant of an agent that turned generations on', () => {
    expect(protoJson1_0.encodeResult('getTask', task)).not.toHaveProperty('generation');
    expect(protoJson1_0.encodeStreamItem(update)).toEqual({
      statusUpdate: expect.not.objectContaining({ generation: 8 }),
    });
    expect(protoJson1_0WithGenerations.encodeResult('getTask', task)).toMatchObject({ generation: 7 });
    expect(protoJson1_0WithGenerations.encodeStreamItem(update)).toMatchObject({ statusUpdate: { generation: 8 } });
    // A task last written before generations were kept: 0, the draft's "not counted".
    const { generation: _g, ...legacy } = task;
    expect(protoJson1_0WithGenerations.encodeResult('getTask', legacy)).toMatchObject({ generation: 0 });
  });

  it('never writes generation for 0.3, and leaves items without one untouched', () => {
    expect(json0_3.encodeResult('getTask', task)).not.toHaveProperty('generation');
    expect(json0_3.encodeStreamItem(update)).not.toHaveProperty('generation');
    const list = json0_3.encodeResult('listTasks', { tasks: [task], nextPageToken: '', pageSize: 50, totalSize: 1 });
    expect(JSON.stringify(list)).not.toContain('generation');
    const { generation: _g, ...plain } = task;
    expect(json0_3.encodeResult('getTask', plain)).toBe(plain);
  });

  it('round-trips through the caller codec', () => {
    expect(protoJson1_0Caller.encodeParams('getTask', { id: 't1', currentGeneration: 4 })).toEqual({
      id: 't1',
      currentGeneration: 4,
    });
    const wire = protoJson1_0WithGenerations.encodeResult('getTask', task);
    expect(protoJson1_0Caller.decodeResult('getTask', wire).generation).toBe(7);
    expect(protoJson1_0Caller.decodeResult('getTask', { ...(wire as object), generation: '9' }).generation).toBe(9);
    const item = protoJson1_0WithGenerations.encodeStreamItem(update);
    expect(protoJson1_0Caller.decodeStreamItem(item)).toMatchObject({ kind: 'status-update', generation: 8 });
  });
});
