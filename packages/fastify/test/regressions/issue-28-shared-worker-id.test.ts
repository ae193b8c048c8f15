/**
 * Issue 28 item 11: two live processes configured with one `workerId` failed each other's turns:
 * each start took the lease row and failed the turns queued under the id as its "predecessor's"
 * (issue 23's restart handling), while the first process went on renewing and running them. A start
 * now watches another start's live lease for one renewal interval: renewed meanwhile, that process
 * is alive, and this start is refused with an error naming the id, its host and pid. A worker
 * SIGKILLed and started again under its id (nothing renews the old lease) starts as before.
 *
 * Real worker processes on one SQLite file, and on one Postgres schema.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { A2AStore, Task } from '@fastify-a2a/core';
import { PostgresStore } from '@fastify-a2a/store-postgres';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../../test-support/postgres.js';
import { textParts, userMessage, waitFor } from '../helpers.js';
import { Cluster } from '../multi-worker/cluster.js';

/** Renewed every 1 s: a second start waits 1.5 s for a renewal. */
const LEASE_TTL_MS = 4000;

function sharedIdScenario(name: string, storeUrl: () => string, openStore: () => A2AStore): void {
  describe(`${name}: two processes started with one workerId`, () => {
    it('the second is refused, naming the id and the live one’s host and pid; a SIGKILLed one restarts as before', async () => {
      const cluster = new Cluster({ storeUrl: storeUrl(), workers: 1, leaseTtlMs: LEASE_TTL_MS });
      const store = openStore();
      try {
        await cluster.start();
        await store.open();
        const first = cluster.worker('w1');
        const task = await cluster.result<Task>('message/send', {
          message: userMessage('sleep:600000'),
          configuration: { blocking: false },
        });
        await waitFor(async () => (await store.getTask(task.id))?.task.status.state === 'working', 10_000);

        const refused = await cluster.startWorker('w1').then(
          () => undefined,
          (error: unknown) => error as Error,
        );
        expect(refused?.message).toMatch(/exited with 1 before it was ready/);
        expect(refused?.message).toContain(
          `Worker id "w1" is in use: the process on host "${hostname()}" with pid ${first.process.pid} `,
        );
        // The live process lost nothing: its turn still runs, its lease is its own, it takes messages.
        expect((await store.getTask(task.id))?.task.status.state).toBe('working');
        const [lease] = (await store.listWorkers?.()) ?? [];
        expect(lease).toMatchObject({ workerId: 'w1', description: { pid: first.process.pid } });
        expect(lease?.turns.map((turn) => turn.taskId)).toEqual([task.id]);
        const answered = await cluster.result<Task>('message/send', { message: userMessage('still mine') }, first);
        expect(answered.status.state).toBe('completed');

        // A crash, then a start under the same id: nothing renews the old lease, so it is a restart.
        await cluster.kill('w1', 'SIGKILL');
        const restarted = await cluster.startWorker('w1');
        const failed = await waitFor(async () => {
          const record = await store.getTask(task.id);
          return record?.task.status.state === 'failed' ? record : undefined;
        }, 10_000);
        expect(textParts(failed.task.status.message?.parts)).toMatch(/^Worker lost: worker "w1" restarted/);
        const [after] = (await store.listWorkers?.()) ?? [];
        expect(after).toMatchObject({ workerId: 'w1', description: { pid: restarted.process.pid } });
      } finally {
        await cluster.stop();
        await store.close();
      }
    }, 60_000);
  });
}

const dir = mkdtempSync(join(tmpdir(), 'a2a-issue28-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const filename = join(dir, 'a2a.db');
sharedIdScenario(
  'SQLite',
  () => `sqlite:${filename}`,
  () => new SqliteStore({ filename }),
);

const pg = withPostgres('a2a_issue28');
sharedIdScenario(
  'Postgres',
  () => `${pg.url}${pg.url.includes('?') ? '&' : '?'}schema=${pg.schema}`,
  () => new PostgresStore({ connectionString: pg.url, schema: pg.schema }),
);
