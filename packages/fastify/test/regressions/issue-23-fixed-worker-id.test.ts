/**
 * Issue 23 item 10: a worker restarted with the same user-set `workerId` within the lease TTL used
 * to renew its predecessor's lease and never reap its turns: the task stayed `working` and the next
 * message of its context hung in `submitted`. A start now recognises its predecessor (another
 * incarnation on the lease row) and fails its turns as it would a dead worker's.
 *
 * SQLite and Postgres: a real worker process, SIGKILLed mid-turn and started again under its id,
 * with a lease TTL far longer than the restart. Memory (which dies with its process): the state a
 * crashed predecessor leaves (its lease, a running turn) is written to the store, then the plugin
 * starts with that worker id.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { A2AStore, Task } from '@fastify-a2a/core';
import { createTask, userMessage as modelUserMessage } from '@fastify-a2a/core/testing';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { PostgresStore } from '@fastify-a2a/store-postgres';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { echoAgent, echoCard } from '../../../../test-support/agents.js';
import { withPostgres } from '../../../../test-support/postgres.js';
import { a2aPlugin } from '../../src/index.js';
import { rpcBody, textParts, userMessage, waitFor } from '../helpers.js';
import { Cluster } from '../multi-worker/cluster.js';

// Far longer than a restart takes. A start that finds its predecessor's lease still live waits one
// renewal interval (a quarter of the TTL, and half of that more) to tell a crashed predecessor from a
// live process under the same id (issue 28): 7.5 s here.
const LONG_LEASE_MS = 20_000;
const RESTARTED = /Worker lost: worker "w1" restarted/;

function restartScenario(name: string, storeUrl: () => string, openStore: () => A2AStore): void {
  describe(`${name}: a worker restarted under its workerId within the lease TTL`, () => {
    it('fails the turn its previous process left running, and the context takes new messages', async () => {
      const cluster = new Cluster({ storeUrl: storeUrl(), workers: 1, leaseTtlMs: LONG_LEASE_MS });
      const store = openStore();
      try {
        await cluster.start();
        await store.open();
        const task = await cluster.result<Task>('message/send', {
          message: userMessage('sleep:600000'),
          configuration: { blocking: false },
        });
        await waitFor(async () => (await store.getTask(task.id))?.task.status.state === 'working', 10_000);
        await cluster.kill('w1', 'SIGKILL');

        const startedAt = Date.now();
        await cluster.startWorker('w1');
        const failed = await waitFor(async () => {
          const record = await store.getTask(task.id);
          return record?.task.status.state === 'failed' ? record : undefined;
        }, 10_000);
        // Before the lease TTL: the new start recognised its predecessor, nobody waited it out.
        expect(Date.now() - startedAt).toBeLessThan(LONG_LEASE_MS);
        expect(textParts(failed.task.status.message?.parts)).toMatch(RESTARTED);
        expect(await store.listWorkerTurns('w1')).toEqual([]);

        const next = await cluster.result<Task>('message/send', {
          message: userMessage('after the restart', { contextId: task.contextId }),
        });
        expect(next.status.state).toBe('completed');
        const [worker] = (await store.listWorkers?.()) ?? [];
        expect(worker).toMatchObject({ workerId: 'w1', description: { pid: cluster.worker('w1').process.pid } });
      } finally {
        await cluster.stop();
        await store.close();
      }
    }, 60_000);
  });
}

const dir = mkdtempSync(join(tmpdir(), 'a2a-issue23-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const filename = join(dir, 'a2a.db');
restartScenario(
  'SQLite',
  () => `sqlite:${filename}`,
  () => new SqliteStore({ filename }),
);

const pg = withPostgres('a2a_issue23');
restartScenario(
  'Postgres',
  () => `${pg.url}${pg.url.includes('?') ? '&' : '?'}schema=${pg.schema}`,
  () => new PostgresStore({ connectionString: pg.url, schema: pg.schema }),
);

describe('Memory: a plugin starting under a worker id whose previous process left a running turn', () => {
  it('fails that turn, and the context takes new messages', async () => {
    const store = new MemoryStore();
    await store.open();
    // What a crashed predecessor leaves: its lease (another incarnation, still live but never
    // renewed again: the start waits a quarter of its 2 s TTL, and half of that more), a working task, its turn.
    await store.joinWorker('w1', Date.now() + 2000, {
      incarnation: 'previous-start',
      host: 'host',
      pid: 1,
      startedAt: Date.now() - 1000,
    });
    const message = modelUserMessage('sleep:600000');
    const task: Task = {
      kind: 'task',
      id: 'task-left-running',
      contextId: 'ctx-left-running',
      status: { state: 'working', timestamp: new Date().toISOString() },
      history: [{ ...message, taskId: 'task-left-running', contextId: 'ctx-left-running' }],
    };
    await createTask(store, task);
    await store.enqueueTurn({
      contextId: task.contextId,
      taskId: task.id,
      messageId: message.messageId,
      workerId: 'w1',
    });

    const app = Fastify();
    try {
      await app.register(a2aPlugin, {
        agentCard: echoCard(),
        executor: echoAgent,
        store,
        workerId: 'w1',
        leaseTtlMs: LONG_LEASE_MS,
      });
      await app.ready();
      const failed = await store.getTask(task.id);
      expect(failed?.task.status.state).toBe('failed');
      expect(textParts(failed?.task.status.message?.parts)).toMatch(RESTARTED);
      const res = await app.inject({
        method: 'POST',
        url: '/a2a',
        payload: rpcBody('message/send', { message: userMessage('after the restart', { contextId: task.contextId }) }),
      });
      expect(res.json().result.status.state).toBe('completed');
    } finally {
      await app.close();
    }
  });
});
