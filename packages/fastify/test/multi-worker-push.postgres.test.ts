/**
 * Push delivery across worker processes on Postgres: three workers deliver one task's
 * notifications; the worker holding the delivery is SIGKILLed while its POST hangs at the receiver;
 * another worker takes the delivery over from the cursor once the claim runs out, and every state
 * arrives, in order, duplicates only where at-least-once allows them (the state the dead worker was
 * sending). The receiver listens on 127.0.0.1, which the workers allow-list.
 */

import type { A2AStore, PushStore, Task } from '@fastify-a2a/core';
import { PostgresStore } from '@fastify-a2a/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Hit, type HoldingReceiver, holdingReceiver } from '../../../test-support/holding-receiver.js';
import { withPostgres } from '../../../test-support/postgres.js';
import { userMessage, waitFor } from './helpers.js';
import { Cluster } from './multi-worker/cluster.js';

const pg = withPostgres('a2a_multiworker_push');
const CLAIM_TTL_MS = 2000;

describe('Postgres: push delivery survives the SIGKILL of the delivering worker', () => {
  let cluster: Cluster;
  let store: A2AStore & PushStore;
  let receiver: HoldingReceiver;

  beforeAll(async () => {
    receiver = await holdingReceiver();
    const storeUrl = `${pg.url}${pg.url.includes('?') ? '&' : '?'}schema=${pg.schema}`;
    cluster = await new Cluster({
      storeUrl,
      workers: 3,
      leaseTtlMs: 3000,
      env: {
        PUSH_ALLOWED_CIDRS: '127.0.0.1/32',
        PUSH_CLAIM_TTL_MS: String(CLAIM_TTL_MS),
        PUSH_POLL_INTERVAL_MS: '50',
        PUSH_THROTTLE_MS: '300',
      },
    }).start();
    const opened = new PostgresStore({ connectionString: pg.url, schema: pg.schema });
    await opened.open();
    store = opened as A2AStore & PushStore;
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
    await store?.close();
    await receiver?.close();
  });

  it('resumes from the cursor on another worker within the claim TTL; every state arrives in order', async () => {
    // The states before it (submitted, working) may be delivered first, depending on how soon a
    // worker claims the delivery: they are answered. The input-required POST hangs.
    receiver.control.holdState = 'input-required';
    const first = cluster.worker('w1');
    const asked = await cluster.result<Task>(
      'message/send',
      {
        message: userMessage('ask:Which colour?'),
        configuration: { pushNotificationConfig: { id: 'hook', url: receiver.url, token: 'tok-kill' } },
      },
      first,
    );
    expect(asked.status.state).toBe('input-required');

    // A worker has claimed the delivery and its POST hangs at the receiver.
    await waitFor(() => receiver.hits.some((h) => h.state === 'input-required'), 10_000, 'the input-required POST');
    const [claimed] = await store.listPushDeliveries({ taskId: asked.id });
    const deliverer = claimed?.state.claimedBy;
    expect(deliverer).toMatch(/^w[123]$/);
    expect(receiver.hits.find((h) => h.state === 'input-required')).toMatchObject({
      answered: false,
      token: 'tok-kill',
    });

    const killedAt = Date.now();
    await cluster.kill(deliverer!);
    receiver.control.holdState = undefined;

    // Another worker takes the delivery over once the dead worker's claim ran out.
    const afterKill = (h: Hit) => h.answered && h.at >= killedAt;
    await waitFor(() => receiver.hits.some(afterKill), 15_000, 'the delivery to resume');
    const resumed = receiver.hits.find(afterKill)!;
    expect(resumed.state).toBe('input-required');
    expect(resumed.at - killedAt).toBeLessThan(CLAIM_TTL_MS + 2000);
    const [after] = await store.listPushDeliveries({ taskId: asked.id });
    expect(after?.state.claimedBy).not.toBe(deliverer);

    // The task goes on on a live worker; its final state arrives too.
    const live = cluster.workers.find((w) => w.id !== deliverer)!;
    const done = await cluster.result<Task>(
      'message/send',
      { message: userMessage('blue', { taskId: asked.id }) },
      live,
    );
    expect(done.status.state).toBe('completed');
    await waitFor(() => receiver.hits.some((h) => h.state === 'completed'), 10_000, 'the completed notification');
    await waitFor(
      async () => {
        const [state] = await store.listPushDeliveries({ taskId: asked.id });
        return state !== undefined && state.state.cursor === state.taskVersion && state.state.claimedBy === null;
      },
      5000,
      'the delivery to be complete',
    );

    const states = receiver.hits.map((h) => h.state);
    // In the task's order, never back: what came before the question (submitted, working), then
    // input-required at least twice (the POST the dead worker was sending, then again; at-least-once
    // allows more, as a loaded run showed in the demo's version of this test), then the follow-up's
    // turn (it may show as working) and completed.
    const asking = states.indexOf('input-required');
    expect(states.slice(0, asking).every((s) => s === 'submitted' || s === 'working')).toBe(true);
    const order = ['input-required', 'working', 'completed'];
    const ranks = states.slice(asking).map((s) => order.indexOf(s));
    expect(ranks.every((rank, i) => rank >= 0 && (i === 0 || rank >= ranks[i - 1]!))).toBe(true);
    expect(states.filter((s) => s === 'input-required').length).toBeGreaterThanOrEqual(2);
    expect(states.filter((s) => s === 'completed').length).toBeGreaterThanOrEqual(1);
    expect(receiver.hits.every((h) => h.token === 'tok-kill')).toBe(true);
    const [final] = await store.listPushDeliveries({ taskId: asked.id });
    expect(final?.state).toMatchObject({ failed: false, attempts: 0, lastStatus: 200 });
  });
});
