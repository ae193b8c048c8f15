/**
 * Issue 23 (11): a blocking message/send held its request until the turn settled, past load
 * balancers' idle timeouts. `blockingSendMaxWaitMs` bounds the wait: the send then answers with the
 * task as it is (not terminal), and the client follows it up by polling. Every store, both
 * bindings, both versions; a retried send waits no longer than a first one.
 */
import type { Message, Task } from '@fastify-a2a/core';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { sleep } from '../../../../test-support/agents.js';
import { a2aPlugin } from '../../src/index.js';
import { asTask, listen, testCard, textParts, userMessage, waitFor } from '../helpers.js';
import { lifecycleStores } from '../lifecycle/stores.js';
import { ok, protocolClient } from '../protocol/client.js';

const stores = lifecycleStores('a2a_max_wait');
const MAX_WAIT_MS = 300;
const TURN_MS = 1500;

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** `slow`: works for TURN_MS, then completes; anything else completes at once. */
async function serve(store: string) {
  const app = Fastify({ logger: false });
  await app.register(a2aPlugin, {
    agentCard: testCard,
    store,
    retention: false,
    drainTimeoutMs: 100,
    blockingSendMaxWaitMs: MAX_WAIT_MS,
    executor: async (turn) => {
      if (turn.text === 'slow') {
        await turn.working('Working on it.');
        await sleep(TURN_MS, turn.signal);
      }
      await turn.complete(`done: ${turn.text}`);
    },
  });
  const base = await listen(app);
  close = () => app.close();
  return base;
}

const combos = (['JSONRPC', 'HTTP+JSON'] as const).flatMap((binding) =>
  (['0.3', '1.0'] as const).map((version) => ({ binding, version })),
);

describe.each(stores)('blockingSendMaxWaitMs on $name', (store) => {
  it.each(combos)(
    '$binding $version: a long turn answers with the working task, which then completes',
    async ({ binding, version }) => {
      const client = protocolClient(binding, await serve(store.fresh()), version);
      const message = userMessage('slow');
      const since = Date.now();
      const task = asTask(ok(await client.sendMessage({ message, configuration: { blocking: true } })));
      const waited = Date.now() - since;
      expect(waited).toBeGreaterThanOrEqual(MAX_WAIT_MS - 20);
      expect(waited).toBeLessThan(TURN_MS);
      expect(['submitted', 'working']).toContain(task.status.state);

      // The same message again (a client retrying after a lost answer) waits no longer either.
      const retried = asTask(ok(await client.sendMessage({ message, configuration: { blocking: true } })));
      expect(retried.id).toBe(task.id);
      expect(retried.status.state).toBe('working');

      // The follow-up the docs describe: poll the task until it settles.
      const done = await waitFor(
        async () => {
          const current = ok(await client.getTask({ id: task.id }));
          return current.status.state === 'completed' ? current : undefined;
        },
        10_000,
        'the task to complete',
      );
      expect(textParts(done.status.message?.parts)).toBe('done: slow');
    },
  );

  it.each(combos)(
    '$binding $version: a turn shorter than the wait answers completed, as without the option',
    async ({ binding, version }) => {
      const client = protocolClient(binding, await serve(store.fresh()), version);
      const task = asTask(
        ok(await client.sendMessage({ message: userMessage('quick'), configuration: { blocking: true } })),
      );
      expect(task.status.state).toBe('completed');
    },
  );
});

it('refuses a wait that is not a positive number of ms at register', async () => {
  const app = Fastify({ logger: false });
  await expect(
    app.register(a2aPlugin, { agentCard: testCard, executor: () => undefined, blockingSendMaxWaitMs: 0 }),
  ).rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/"blockingSendMaxWaitMs"/) });
  await app.close();
});
