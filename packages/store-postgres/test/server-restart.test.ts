/**
 * Issue 28 item 10 asked whether the connections a store held before its server restarted (the
 * pool's, and group commit's lanes') could fail the first commits after it came back. They must
 * not: a throwaway cluster of this file's own is stopped with `pg_ctl stop -m immediate` (every
 * backend killed, as in a crash), started again, and the very first commits after that, a lone one
 * (on the pool) and a burst (batched on the lanes), are all written on the first try.
 */
import { A2AError } from '@fastify-a2a/core';
import { createTask, taskFixture } from '@fastify-a2a/core/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../../../test-support/global-setup.js';
import { PostgresStore } from '../src/index.js';

let cluster: Cluster;
let store: PostgresStore;

beforeAll(async () => {
  cluster = await startCluster({ durable: true });
  store = new PostgresStore({ connectionString: cluster.url, schema: 'restart' });
  await store.open();
}, 90_000);

afterAll(async () => {
  await store?.close();
  await cluster?.stop();
});

const burst = (n: number) => Promise.allSettled(Array.from({ length: n }, () => createTask(store, taskFixture())));

it('the first commits after the server restarted are written on the first try, alone and batched', async () => {
  // Connections of every kind in use before the crash: pooled ones, and both lanes of group commit.
  expect((await burst(60)).every((result) => result.status === 'fulfilled')).toBe(true);

  await cluster.halt();
  const down = await createTask(store, taskFixture()).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(A2AError.is(down) && down.code).toBe('STORE_UNAVAILABLE');
  await cluster.resume();

  await expect(createTask(store, taskFixture())).resolves.toBeDefined();
  const results = await burst(60);
  expect(results.filter((result) => result.status === 'rejected').map((result) => String(result.reason))).toEqual([]);
}, 60_000);
