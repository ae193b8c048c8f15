/**
 * What the protocol suite's scenario files share: the suite's context (its binding, version, store
 * and the agent it serves per scenario) and the helpers for reading streams and holding agents.
 */

import type { AgentExecutorLike, StreamResult, Task } from '@fastify-a2a/core';
import type { it } from 'vitest';
import type { A2APluginOptions } from '../../src/index.js';
import type { BindingName, OpenStream, ProtocolClient, StreamItem, StreamOutcome, Version } from './client.js';
import type { ListenerBinding, StoreFixture } from './suite.js';

/** What each scenario file of the protocol suite gets from {@link protocolSuite} (./suite.ts). */
export interface SuiteContext {
  binding: BindingName | ListenerBinding;
  version: Version;
  store: StoreFixture;
  /** The binding when it is served by a listener of its own (gRPC); undefined for the HTTP bindings. */
  listener: ListenerBinding | undefined;
  /** Whether stream events carry ids (SSE does, gRPC does not). */
  eventIds: boolean;
  /** `it` where stream events carry ids; declares nothing elsewhere. */
  itWithEventIds: typeof it | (() => undefined);
  /** A client of the suite's binding and version for the agent at `base`. */
  clientOf(base: string, headers?: Readonly<Record<string, string>>): ProtocolClient;
  /** Run after each scenario, last first. */
  cleanups: (() => Promise<void>)[];
  /** Serves `executor` on a fresh store and returns a client of the suite's binding for it. */
  serve(executor: AgentExecutorLike, options?: Partial<A2APluginOptions>): Promise<Served>;
}

export interface Served {
  client: ProtocolClient;
  /** The agent's base URL, for clients of other principals. */
  base: string;
}

export function opened(outcome: StreamOutcome): OpenStream {
  if (!outcome.ok) throw new Error(`expected a stream, got error ${outcome.code}: ${outcome.message}`);
  return outcome.stream;
}

export async function collect(outcome: StreamOutcome | Promise<StreamOutcome>): Promise<StreamItem[]> {
  return opened(await outcome).rest();
}

/** The Task a stream starts with. */
export function firstTask(items: StreamItem[]): Task {
  const first = items[0]?.item;
  if (first?.kind !== 'task') throw new Error(`expected the stream to start with a Task, got ${JSON.stringify(first)}`);
  return first;
}

export const kinds = (items: StreamItem[]): string[] => items.map((i) => i.item.kind);
export const last = (items: StreamItem[]): StreamResult | undefined => items.at(-1)?.item;

/** Fails after `ms` instead of waiting for the test timeout: a guard against a hang, not a timing assertion. */
export function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A promise and the function that resolves it: holds an agent until the test lets it go on. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

export function waitForAbort(signal: AbortSignal): Promise<void> {
  return signal.aborted
    ? Promise.resolve()
    : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
