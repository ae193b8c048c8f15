/**
 * Helpers for the runtime tests: the runtime and its parts are driven directly, with the reference
 * store (`@fastify-a2a/store-memory`, a dev-only dependency of core), and no HTTP binding in between.
 */

import { randomUUID } from 'node:crypto';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { afterEach } from 'vitest';
import type { AgentExecutorLike } from '../../src/executor.js';
import type { Logger } from '../../src/logger.js';
import type { Message, Part } from '../../src/model/types.js';
import { callContext } from '../../src/protocol/context.js';
import { Events } from '../../src/runtime/events.js';
import { Intake } from '../../src/runtime/intake.js';
import type { Turn } from '../../src/runtime/turn.js';
import { A2ARuntime, type A2ARuntimeOptions } from '../../src/runtime.js';

let counter = 0;
export const nextId = (prefix = 'm'): string => `${prefix}-${Date.now().toString(36)}-${++counter}`;

export function userMessage(text: string, extra: Partial<Message> = {}): Message {
  return { kind: 'message', role: 'user', messageId: nextId('msg'), parts: [{ kind: 'text', text }], ...extra };
}

export const textParts = (parts: Part[] | undefined): string =>
  (parts ?? []).map((p) => (p.kind === 'text' ? p.text : '')).join('');

// One copy of each, shared with the plugin and binding tests.
export { asTask, waitFor } from '../../../../test-support/helpers.js';

export function waitForAbort(signal: AbortSignal): Promise<void> {
  return signal.aborted
    ? Promise.resolve()
    : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

export const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts runtimes for the calling test file and closes them after each test. Defaults keep tests
 * short: a fresh MemoryStore, no retention sweep, a 200 ms drain.
 */
export function useRuntimes(): (executor: AgentExecutorLike, options?: Partial<A2ARuntimeOptions>) => A2ARuntime {
  const open: A2ARuntime[] = [];
  afterEach(async () => {
    for (const runtime of open.splice(0)) await runtime.close();
  });
  return (executor, options = {}) => {
    const runtime = new A2ARuntime({
      store: new MemoryStore(),
      executor,
      retention: false,
      drainTimeoutMs: 200,
      ...options,
    });
    open.push(runtime);
    return runtime;
  };
}

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: object;
  msg: string | undefined;
}

/** A Logger that keeps what it is given, for tests that check what a part logs. */
export function recordingLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine['level']) =>
    (obj: object, msg?: string): void => {
      lines.push({ level, obj, msg });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A promise with its resolve function, for holding a store call or a job run open. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/**
 * A turn of worker `w` as intake makes it (its task and slot in `store`), handed to `schedule`
 * (nothing runs it unless that does).
 */
export async function acceptedTurn(
  store: MemoryStore = new MemoryStore(),
  schedule: (turn: Turn) => void = () => {},
): Promise<Turn> {
  let accepted: Turn | undefined;
  const intake = new Intake({
    store,
    events: new Events(Date.now, randomUUID),
    log: recordingLogger(),
    workerId: 'w',
    scheduler: {
      schedule: (turn) => {
        accepted = turn;
        schedule(turn);
      },
    },
  });
  await intake.accept({ message: userMessage('hello') }, callContext());
  if (accepted === undefined) throw new Error('intake scheduled no turn');
  return accepted;
}
