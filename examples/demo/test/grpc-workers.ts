/**
 * Streams across workers, gRPC and JSON-RPC mixed: two demo processes (real workers, the way
 * `npm start` runs, each with `A2A_GRPC_PORT`) on one store. A gRPC SubscribeToTask on one worker
 * follows a task started over JSON-RPC on the other, through its final event; and a JSON-RPC SSE
 * stream on one worker follows a task started over gRPC on the other.
 */

import type { Task } from '@fastify-a2a/core';
import { describe, expect, it } from 'vitest';
import { collect, rawClient } from '../../../packages/grpc/test/raw-client.js';
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
    const card = (await (await fetch(demo.cardUrl)).json()) as { supportedInterfaces: unknown[] };
    expect(card.supportedInterfaces).toContainEqual({
      url: `127.0.0.1:${port}`,
      protocolBinding: 'GRPC',
      protocolVersion: '1.0',
    });
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
  });
}
