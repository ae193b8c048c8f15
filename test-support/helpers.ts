/**
 * Helpers every plugin and binding test uses, one copy for all packages: message and id makers,
 * polling, and starting an app on a loopback port.
 */
import type { Message, Task } from '@fastify-a2a/core';
import type { FastifyInstance } from 'fastify';

let counter = 0;
/** An id unique within the test process (time-prefixed, so ids from separate runs differ too). */
export const nextId = (prefix = 'm'): string => `${prefix}-${Date.now().toString(36)}-${++counter}`;

export function userMessage(text: string, extra: Partial<Message> = {}): Message {
  return { kind: 'message', role: 'user', messageId: nextId('msg'), parts: [{ kind: 'text', text }], ...extra };
}

/** The Task a SendMessage answered with; fails the test when the agent answered with a Message. */
export function asTask(value: Task | Message): Task {
  if (value.kind !== 'task') throw new Error(`expected a Task, got ${JSON.stringify(value)}`);
  return value;
}

/** Polls `probe` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(
  probe: () => Promise<T> | T,
  timeoutMs = 5000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Starts the app on an ephemeral loopback port and returns its base URL. */
export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}`;
}
