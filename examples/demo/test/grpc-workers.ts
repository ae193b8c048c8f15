/**
 * Streams across workers, gRPC and JSON-RPC mixed: two demo processes (real workers, the way
 * `npm start` runs, each with `A2A_GRPC_PORT`) on one store. A gRPC SubscribeToTask on one worker
 * follows a task started over JSON-RPC on the other, through its final event; a JSON-RPC SSE
 * stream on one worker follows a task started over gRPC on the other; and A2A_GRPC_PORT serves
 * A2A 0.3's gRPC service beside 1.0's: a task started over 0.3 gRPC on one worker is followed and
 * canceled over 0.3 and read over 1.0 gRPC on the other.
 */

import type { Task } from '@fastify-a2a/core';
import { GRPC_0_3 } from '@fastify-a2a/grpc';
import { describe, expect, it } from 'vitest';
import { collect, rawClient } from '../../../packages/grpc/test/raw-client.js';
import { waitFor } from '../../../test-support/helpers.js';
import { freePort, type RunningDemo, rpc, startDemo, userMessage } from './demo-process.js';

async function twoWorkers(store: string): Promise<{ a: RunningDemo; b: RunningDemo; grpcA: string; grpcB: string }> {
  const ports = [await freePort(), await freePort()];
  // One after another: the first creates the schema (or the database file).
  const a = await startDemo(store, { A2A_GRPC_PORT: String(ports[0]) });
  const b = await startDemo(store, { A2A_GRPC_PORT: String(ports[1]) });
  for (const [demo, port] of [
    [a, ports[0]],
    [b, ports[1]],
  ] as const) {
    expect(demo.readyLine).toContain(`gRPC on 127.0.0.1:${port}`);
    const card = (await (await fetch(demo.cardUrl)).json()) as {
      supportedInterfaces: unknown[];
      additionalInterfaces: unknown[];
    };
    for (const protocolVersion of ['1.0', '0.3']) {
      expect(card.supportedInterfaces).toContainEqual({
        url: `127.0.0.1:${port}`,
        protocolBinding: 'GRPC',
        protocolVersion,
      });
    }
    expect(card.additionalInterfaces).toContainEqual({ url: `127.0.0.1:${port}`, transport: 'GRPC' });
  }
  return { a, b, grpcA: `127.0.0.1:${ports[0]}`, grpcB: `127.0.0.1:${ports[1]}` };
}

/** The events of a JSON-RPC SSE stream, parsed, until the server ends it. */
async function sseEvents(baseUrl: string, method: string, params: unknown): Promise<Record<string, unknown>[]> {
  const response = await fetch(`${baseUrl}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = await response.text();
  return body
    .split('\n\n')
    .map((block) => block.split('\n').find((line) => line.startsWith('data: ')))
    .filter((line): line is string => line !== undefined)
    .map((line) => (JSON.parse(line.slice('data: '.length)) as { result: Record<string, unknown> }).result);
}

export function multiWorkerGrpcSuite(name: string, storeUrl: () => string): void {
  describe(`gRPC and JSON-RPC streams across two workers on ${name}`, () => {
    it('a gRPC SubscribeToTask on one worker follows a task started over JSON-RPC on the other', async () => {
      const { a, grpcB } = await twoWorkers(storeUrl());
      const sent = await rpc<Task>(a.baseUrl, 'message/send', {
        message: userMessage('sleep:1500'),
        configuration: { blocking: false },
      });
      const taskId = sent.result?.id as string;
      expect(taskId).toBeDefined();
      const client = rawClient(grpcB);
      try {
        const { items, error } = await collect(client.stream('SubscribeToTask', { id: taskId }));
        expect(error).toBeUndefined();
        expect(items[0]).toMatchObject({ task: { id: taskId } });
        expect(items.at(-1)).toMatchObject({
          statusUpdate: {
            taskId,
            status: { state: 'TASK_STATE_COMPLETED', message: { parts: [{ text: 'Slept for 1500 ms.' }] } },
          },
        });
      } finally {
        client.close();
      }
    });

    it('a JSON-RPC stream on one worker follows a task started over gRPC on the other', async () => {
      const { b, grpcA } = await twoWorkers(storeUrl());
      const client = rawClient(grpcA);
      try {
        const sent = (await client.unary('SendMessage', {
          message: { messageId: `grpc-${crypto.randomUUID()}`, role: 'ROLE_USER', parts: [{ text: 'sleep:1500' }] },
          configuration: { returnImmediately: true },
        })) as { task: { id: string } };
        const taskId = sent.task.id;
        const events = await sseEvents(b.baseUrl, 'tasks/resubscribe', { id: taskId });
        expect(events[0]).toMatchObject({ kind: 'task', id: taskId });
        expect(events.at(-1)).toMatchObject({
          kind: 'status-update',
          taskId,
          final: true,
          status: { state: 'completed' },
        });
        // And the gRPC side of the starting worker reads the same end.
        const got = (await client.unary('GetTask', { id: taskId })) as { status: { state: string } };
        expect(got.status.state).toBe('TASK_STATE_COMPLETED');
      } finally {
        client.close();
      }
    });

    it('A2A_GRPC_PORT serves 0.3 gRPC too: a task started over it on one worker is canceled over it on the other, and read over 1.0', async () => {
      const { grpcA, grpcB } = await twoWorkers(storeUrl());
      const startedOn = rawClient(grpcA, { version: GRPC_0_3 });
      const other0_3 = rawClient(grpcB, { version: GRPC_0_3 });
      const other1_0 = rawClient(grpcB);
      try {
        const sent = (await startedOn.unary('SendMessage', {
          message: { messageId: `grpc03-${crypto.randomUUID()}`, role: 'ROLE_USER', content: [{ text: 'sleep:5000' }] },
        })) as { task: { id: string } };
        const taskId = sent.task.id;
        const stream = other0_3.stream('TaskSubscription', { name: `tasks/${taskId}` });
        const following = collect(stream);
        // Following before the cancel: its first item, the task, has arrived.
        await new Promise((resolve) => stream.once('data', resolve));
        await waitFor(
          async () =>
            ((await other1_0.unary('GetTask', { id: taskId })) as { status: { state: string } }).status.state ===
            'TASK_STATE_WORKING',
        );
        expect(await other0_3.unary('CancelTask', { name: `tasks/${taskId}` })).toMatchObject({
          status: { state: 'TASK_STATE_CANCELLED' },
        });
        const { items, error } = await following;
        expect(error).toBeUndefined();
        expect(items[0]).toMatchObject({ task: { id: taskId } });
        expect(items.at(-1)).toMatchObject({
          statusUpdate: { final: true, status: { state: 'TASK_STATE_CANCELLED' } },
        });
        expect(await other1_0.unary('GetTask', { id: taskId })).toMatchObject({
          status: { state: 'TASK_STATE_CANCELED' },
        });
      } finally {
        for (const client of [startedOn, other0_3, other1_0]) client.close();
      }
    });
  });
}
