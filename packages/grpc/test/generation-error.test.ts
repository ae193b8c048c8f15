/**
 * The A2A 1.1 draft's TaskGenerationMismatchError (§3.2.7) on gRPC: ABORTED with the same
 * ErrorInfo as the JSON-RPC and HTTP+JSON answers. (The generation fields themselves are not on
 * gRPC until the draft's proto is pinned: docs/interop.md.)
 */

import { taskGenerationMismatch } from '@fastify-a2a/core';
import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { grpcStatusOf, STATUS_DETAILS_KEY } from '../src/errors.js';
import { root } from '../src/proto.js';

describe('TASK_GENERATION_MISMATCH on gRPC', () => {
  it('is ABORTED, its details carrying the ErrorInfo reason and generations', () => {
    const answer = grpcStatusOf(taskGenerationMismatch('t1', 3, 5));
    expect(answer.code).toBe(status.ABORTED);
    const [trailer] = answer.metadata.get(STATUS_DETAILS_KEY) as Buffer[];
    const decoded = root.lookupType('google.rpc.Status').decode(trailer as Buffer) as unknown as {
      details: { type_url: string; value: Uint8Array }[];
    };
    const info = decoded.details.find((d) => d.type_url.endsWith('google.rpc.ErrorInfo'));
    const errorInfo = root
      .lookupType('google.rpc.ErrorInfo')
      .toObject(root.lookupType('google.rpc.ErrorInfo').decode(info?.value as Uint8Array)) as {
      reason: string;
      metadata: Record<string, string>;
    };
    expect(errorInfo.reason).toBe('TASK_GENERATION_MISMATCH');
    expect(errorInfo.metadata).toEqual({ taskId: 't1', expectedGeneration: '3', currentGeneration: '5' });
  });
});
