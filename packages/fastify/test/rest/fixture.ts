/**
 * What the HTTP+JSON (REST) binding's test files share: the app each test builds (closed after it,
 * with any extra apps the test started), an agent held until the test lets it go on, and reading a
 * sent task back.
 */
import type { AgentExecutorLike, StoredEvent } from '@fastify-a2a/core';
import type { FastifyInstance } from 'fastify';
import { afterEach, expect } from 'vitest';
import { buildApp, type TestApp } from '../helpers.js';
import { rest, type Wire } from '../rest-helpers.js';

/** The app the running test built with {@link build}; undefined between tests. */
export let currentApp: TestApp | undefined;
/** Apps a test started besides {@link currentApp}; closed after it too. */
export const extraApps: FastifyInstance[] = [];

/** Closes every app a test built after each test of the calling file. */
export function useRestApps(): void {
  afterEach(async () => {
    await currentApp?.app.close();
    currentApp = undefined;
    for (const app of extraApps.splice(0)) await app.close();
  });
}

export async function build(
  executor: AgentExecutorLike,
  options: Parameters<typeof buildApp>[1] = {},
): Promise<TestApp> {
  currentApp = await buildApp(executor, options);
  return currentApp;
}

/** A turn that waits until the test opens its gate. */
export function gated(): { open: () => void; running: () => boolean; executor: AgentExecutorLike } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let started = false;
  return {
    open,
    running: () => started,
    executor: async (turn) => {
      started = true;
      await turn.working();
      await gate;
      await turn.complete('opened');
    },
  };
}

/** Sends a message and returns the task, asserting a `{task}` answer. */
export async function sendTask(app: FastifyInstance, body: unknown, prefix = ''): Promise<Wire> {
  const res = await rest(app, 'POST', `${prefix}/v1/message:send`, body);
  expect(res.statusCode, res.body).toBe(200);
  const answer = res.json();
  expect(Object.keys(answer)).toEqual(['task']);
  return answer.task;
}

/** The stored events a stream frame may carry (the task's log, without user messages and turn ends). */
export function streamable(events: StoredEvent[]): StoredEvent[] {
  return events.filter((e) => e.event.kind === 'status-update' || e.event.kind === 'artifact-update');
}
