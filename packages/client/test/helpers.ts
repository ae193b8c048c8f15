/**
 * Our server for the client's tests: the plugin on a real port (127.0.0.1, port 0) with a small
 * agent that counts its runs, on the store URL given (memory:, sqlite:…, postgres://…).
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentExecutor, TurnContext } from '@fastify-a2a/core';
import Fastify, { type FastifyInstance } from 'fastify';
import { type A2APluginOptions, a2aPlugin } from 'fastify-a2a';

export const testCard = {
  name: 'Client test agent',
  description: 'Answers the client tests.',
  version: '1.0.0',
  // The CLI tests send file and data parts of these types; A2A 1.0 refuses a part outside the
  // card's input modes (validateInputModes).
  defaultInputModes: ['text/plain', 'application/json', 'application/x-test'],
};

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/**
 * - `sleep:<ms>`: working, then completes after that long (a cancel interrupts it);
 * - `ask:<q>`: input-required with the question; the reply completes the task;
 * - `fail`: the task fails;
 * - `words:<n>`: n artifact chunks, 20 ms apart, then completes;
 * - anything else: one artifact `echo: <text>`, then completes.
 */
export function testAgent(runs: Map<string, number> = new Map()): AgentExecutor & { runs: Map<string, number> } {
  return {
    runs,
    async execute(turn: TurnContext) {
      const text = turn.text.trim();
      runs.set(turn.taskId, (runs.get(turn.taskId) ?? 0) + 1);
      if (turn.previousState === 'input-required') {
        await turn.artifact({ name: 'answer', text: `You answered: ${text}` });
        await turn.complete('Thanks.');
        return;
      }
      const sleepMatch = /^sleep:(\d+)$/.exec(text);
      if (sleepMatch) {
        await turn.working('Sleeping.');
        await sleep(Number(sleepMatch[1]), turn.signal);
        await turn.complete('Slept.');
        return;
      }
      if (text.startsWith('ask:')) {
        await turn.requireInput(text.slice(4));
        return;
      }
      if (text === 'fail') {
        await turn.fail('Failed on purpose.');
        return;
      }
      const wordsMatch = /^words:(\d+)$/.exec(text);
      if (wordsMatch) {
        const n = Number(wordsMatch[1]);
        for (let i = 0; i < n; i++) {
          await turn.artifact({ artifactId: 'words', text: `w${i} `, append: i > 0, lastChunk: i === n - 1 });
          await sleep(20, turn.signal);
        }
        await turn.complete();
        return;
      }
      await turn.artifact({ artifactId: 'echo', text: `echo: ${text}` });
      await turn.complete();
    },
  };
}

export interface Served {
  app: FastifyInstance;
  url: string;
  agent: ReturnType<typeof testAgent>;
  close(): Promise<void>;
}

export async function serve(store: string, options: Partial<A2APluginOptions> = {}): Promise<Served> {
  const agent = testAgent();
  const app = Fastify({ logger: false });
  await app.register(a2aPlugin, {
    agentCard: testCard,
    executor: agent,
    store,
    retention: false,
    drainTimeoutMs: 200,
    pushNotifications: true,
    pushAllowedCidrs: ['127.0.0.1/32'],
    ...options,
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url, agent, close: () => app.close() };
}

/** A temp directory for a SQLite file, removed by the returned function. */
export async function tempDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'a2a-client-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
