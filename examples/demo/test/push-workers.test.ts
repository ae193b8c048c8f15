/**
 * The demo as a multi-worker deployment with push notifications: three demo processes on one
 * Postgres database with `A2A_PUSH_ALLOWED_HOSTS=127.0.0.1` and a receiver on loopback. The process
 * holding the delivery is SIGKILLed while its POST hangs at the receiver; another process takes the
 * delivery over once the dead one's claim runs out (the default `pushClaimTtlMs`, 15 s) and sends
 * the state again, and the task, continued on a live process, delivers its final state too.
 */
import type { PushStore, Task } from '@fastify-a2a/core';
import { PostgresStore } from '@fastify-a2a/store-postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { holdingReceiver } from '../../../test-support/holding-receiver.js';
import { withPostgres } from '../../../test-support/postgres.js';
import { type RunningDemo, rpc, startDemo, userMessage } from './demo-process.js';

const pg = withPostgres('demo_push_workers');
const CLAIM_TTL_MS = 15_000;

async function until<T>(check: () => T | undefined | Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the demo on three workers with push notifications', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('delivers to an allow-listed loopback receiver through the crash of the delivering worker', async () => {
    const receiver = await holdingReceiver();
    closers.push(receiver.close);
    const url = new URL(pg.url);
    const schema = pg.newSchema();
    url.searchParams.set('schema', schema);
    const env = { A2A_PUSH_ALLOWED_HOSTS: '127.0.0.1', A2A_LEASE_TTL_MS: '3000' };
    // One after another: the first creates the schema.
    const demos: RunningDemo[] = [];
    for (let i = 0; i < 3; i++) demos.push(await startDemo(url.href, env));
    for (const demo of demos) expect(demo.readyLine).toContain('push: also 127.0.0.1');
    const store = new PostgresStore({ connectionString: pg.url, schema });
    await store.open();
    closers.push(() => store.close());

    // What came before the question (submitted, working) may be delivered first; the
    // input-required notification hangs at the receiver.
    receiver.control.holdState = 'input-required';
    const asked = await rpc<Task>(demos[0]!.baseUrl, 'message/send', {
      message: userMessage('ask:Which colour?'),
      configuration: { pushNotificationConfig: { url: receiver.url, token: 'demo-push' } },
    });
    expect(asked.result?.status.state).toBe('input-required');
    const taskId = asked.result!.id;
    await until(() => receiver.hits.some((h) => h.state === 'input-required'), 10_000, 'the input-required POST');

    // The worker whose POST hangs: the demo's worker ids are `<hostname>-<pid>-<random>`.
    const [delivery] = await (store as PostgresStore & PushStore).listPushDeliveries({ taskId });
    const deliverer = demos.find((d) => delivery?.state.claimedBy?.includes(`-${d.child.pid}-`));
    expect(deliverer, `claimed by ${delivery?.state.claimedBy}`).toBeDefined();
    const killedAt = Date.now();
    await deliverer!.stop('SIGKILL');
    receiver.control.holdState = undefined;

    const resumed = await until(
      () => receiver.hits.find((h) => h.answered && h.at >= killedAt),
      CLAIM_TTL_MS + 10_000,
      'the delivery to resume on another worker',
    );
    expect(resumed.state).toBe('input-required');

    const live = demos.find((d) => d !== deliverer)!;
    const answered = await rpc<Task>(live.baseUrl, 'message/send', { message: userMessage('blue', { taskId }) });
    expect(answered.result?.status.state).toBe('completed');
    await until(() => receiver.hits.some((h) => h.state === 'completed'), 10_000, 'the completed notification');

    const states = receiver.hits.map((h) => h.state);
    const asking = states.indexOf('input-required');
    expect(states.slice(0, asking).every((s) => s === 'submitted' || s === 'working')).toBe(true);
    // Then input-required again (at least once more: the POST the dead worker was sending goes out
    // again; at-least-once allows more), the follow-up's turn (working may show), and completed;
    // never back to an earlier state.
    const order = ['input-required', 'working', 'completed'];
    const ranks = states.slice(asking).map((s) => order.indexOf(s));
    expect(ranks.every((rank, i) => rank >= 0 && (i === 0 || rank >= (ranks[i - 1] as number)))).toBe(true);
    expect(states.filter((s) => s === 'input-required').length).toBeGreaterThanOrEqual(2);
    expect(states.filter((s) => s === 'completed').length).toBeGreaterThanOrEqual(1);
    expect(states.at(-1)).toBe('completed');
    expect(receiver.hits.every((h) => h.token === 'demo-push')).toBe(true);
    for (const demo of demos) if (demo !== deliverer) await demo.stop();
  }, 90_000);
});
