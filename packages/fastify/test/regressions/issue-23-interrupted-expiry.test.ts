/**
 * Issue 23 (12): interrupted tasks waited for good. With `interruptedExpiry` a task left in
 * input-required (or auth-required) longer than `ttlMs` ends `failed` with a reason, and a reply to
 * it is refused as to any terminal task; two workers on one store expire it once. Every store,
 * both bindings, both versions. (The runtime tests with an injected clock are in
 * packages/core/test/runtime/interrupted-expiry.test.ts.)
 */
import type { Task } from '@fastify-a2a/core';
import Fastify, { type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { a2aPlugin } from '../../src/index.js';
import { asTask, rpcBody, testCard, textParts, userMessage, waitFor } from '../helpers.js';
import { ok, protocolClient, waitForState } from '../protocol/client.js';
import { BINDING_VERSIONS, issueStoreUrls, serveAtUrl } from './issue-23-stores.js';

const stores = issueStoreUrls('a2a_expiry');
const TTL_MS = 300;
const EXPIRED = /^Expired: the task waited in input-required for more than 300 ms without an answer/;

/** `ask` pauses in input-required; a reply completes. */
function serve(store: string, ttlMs = TTL_MS): Promise<{ app: FastifyInstance; base: string }> {
  return serveAtUrl(store, {
    interruptedExpiry: { ttlMs, sweepIntervalMs: 50 },
    executor: async (turn) => {
      if (turn.text === 'ask') await turn.requireInput('Which one?');
      else await turn.complete('done');
    },
  });
}

describe.each(stores)('interruptedExpiry on $name', (store) => {
  it.each(BINDING_VERSIONS)(
    '$binding $version: an unanswered input-required task ends failed with the reason',
    async ({ binding, version }) => {
      const client = protocolClient(binding, (await serve(store.fresh())).base, version);
      const asked = asTask(
        ok(await client.sendMessage({ message: userMessage('ask'), configuration: { blocking: true } })),
      );
      expect(asked.status.state).toBe('input-required');
      // Answered in time: not expired.
      const answered = asTask(
        ok(await client.sendMessage({ message: userMessage('ask'), configuration: { blocking: true } })),
      );
      const done = asTask(
        ok(
          await client.sendMessage({
            message: userMessage('red', { taskId: answered.id }),
            configuration: { blocking: true },
          }),
        ),
      );
      expect(done.status.state).toBe('completed');

      const expired = await waitForState(client, asked.id, 'failed');
      expect(textParts(expired.status.message?.parts)).toMatch(EXPIRED);
      // A terminal task takes no reply.
      const late = await client.sendMessage({ message: userMessage('red', { taskId: asked.id }) });
      expect(late.ok).toBe(false);
      expect(ok(await client.getTask({ id: answered.id })).status.state).toBe('completed');
    },
  );

  it('a fractional ttlMs expires too (Postgres compared a fractional cutoff to a bigint column)', async () => {
    const client = protocolClient('JSONRPC', (await serve(store.fresh(), 300.5)).base, '1.0');
    const asked = asTask(
      ok(await client.sendMessage({ message: userMessage('ask'), configuration: { blocking: true } })),
    );
    const expired = await waitForState(client, asked.id, 'failed');
    expect(textParts(expired.status.message?.parts)).toMatch(/more than 300.5 ms/);
  });

  if (store.persistent) {
    it('two workers on one store expire the task once', async () => {
      const url = store.fresh();
      const first = await serve(url);
      await serve(url);
      const res = await first.app.inject({
        method: 'POST',
        url: '/a2a',
        payload: rpcBody('message/send', { message: userMessage('ask') }),
      });
      const asked = (res.json() as { result: Task }).result;
      const expired = await waitFor(
        async () => {
          const reply = await first.app.inject({
            method: 'POST',
            url: '/a2a',
            payload: rpcBody('tasks/get', { id: asked.id }),
          });
          const task = (reply.json() as { result: Task }).result;
          return task.status.state === 'failed' ? task : undefined;
        },
        5000,
        'the task to expire',
      );
      // Let both workers sweep a few more times.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const again = await first.app.inject({
        method: 'POST',
        url: '/a2a',
        payload: rpcBody('tasks/get', { id: asked.id }),
      });
      const history = (again.json() as { result: Task }).result.history ?? [];
      expect(history.filter((m) => EXPIRED.test(textParts(m.parts)))).toHaveLength(1);
      expect(expired.status.state).toBe('failed');
    });
  }
});

it('refuses an interruptedExpiry without a positive ttlMs at register', async () => {
  const app = Fastify({ logger: false });
  await expect(
    app.register(a2aPlugin, { agentCard: testCard, executor: () => undefined, interruptedExpiry: { ttlMs: 0 } }),
  ).rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/"interruptedExpiry.ttlMs"/) });
  await app.close();
});
