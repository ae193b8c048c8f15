/**
 * Issue 23 (11): a blocking message/send held its request until the turn settled, past load
 * balancers' idle timeouts. `blockingSendMaxWaitMs` bounds the wait: the send then answers with the
 * task as it is (not terminal), and the client follows it up by polling. Every store, both
 * bindings, both versions; a retried send waits no longer than a first one.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { sleep } from '../../../../test-support/agents.js';
import { a2aPlugin } from '../../src/index.js';
import { asTask, testCard, textParts, userMessage } from '../helpers.js';
import { ok, protocolClient, waitForState } from '../protocol/client.js';
import { BINDING_VERSIONS, issueStoreUrls, serveAtUrl } from './issue-23-stores.js';

const stores = issueStoreUrls('a2a_max_wait');
const MAX_WAIT_MS = 300;
const TURN_MS = 1500;

/** `slow`: works for TURN_MS, then completes; anything else completes at once. */
async function serve(store: string): Promise<string> {
  const { base } = await serveAtUrl(store, {
    blockingSendMaxWaitMs: MAX_WAIT_MS,
    executor: async (turn) => {
      if (turn.text === 'slow') {
        await turn.working('Working on it.');
        await sleep(TURN_MS, turn.signal);
      }
      await turn.complete(`done: ${turn.text}`);
    },
  });
  return base;
}

describe.each(stores)('blockingSendMaxWaitMs on $name', (store) => {
  it.each(BINDING_VERSIONS)(
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
      const done = await waitForState(client, task.id, 'completed', 10_000);
      expect(textParts(done.status.message?.parts)).toBe('done: slow');
    },
  );

  it.each(BINDING_VERSIONS)(
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
