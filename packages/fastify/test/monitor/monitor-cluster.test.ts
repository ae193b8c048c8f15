/**
 * The monitor of a cluster: two real worker processes on one SQLite file or Postgres schema, each
 * serving the monitor. Either worker's monitor shows the tasks of both owners and both workers,
 * its events stream carries changes made on the other worker and resumes by Last-Event-ID there
 * too, and an operator action taken on one worker acts on a turn running on the other. The live
 * page in a real browser: monitor-page.test.ts.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { A2AStore, Task } from '@fastify-a2a/core';
import { PostgresStore } from '@fastify-a2a/store-postgres';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../../test-support/postgres.js';
import { textParts, userMessage, waitFor } from '../helpers.js';
import { Cluster, type Worker } from '../multi-worker/cluster.js';
import { EventsReader, taskEvent } from './sse.js';

const TOKEN = 'cluster-operator-token';
const OPERATOR = { authorization: `Bearer ${TOKEN}` };
const ALICE = { authorization: 'Bearer tok-alice' };
const BOB = { authorization: 'Bearer tok-bob' };

interface TaskView {
  id: string;
  owner: string | null;
  state: string;
  turn: { workerId: string; queuePosition: number } | null;
}

export function clusterMonitorScenarios(name: string, storeUrl: () => string, openStore: () => A2AStore): void {
  describe(`${name}: the monitor of two worker processes`, () => {
    let cluster: Cluster;
    let store: A2AStore;
    const w = (n: number): Worker => cluster.worker(`w${n}`);
    const readers: EventsReader[] = [];

    beforeAll(async () => {
      cluster = await new Cluster({
        storeUrl: storeUrl(),
        workers: 2,
        leaseTtlMs: 5000,
        drainTimeoutMs: 200,
        env: { MONITOR_TOKEN: TOKEN },
      }).start();
      store = openStore();
      await store.open();
    }, 60_000);

    afterAll(async () => {
      for (const reader of readers) reader.close();
      await cluster?.stop();
      await store?.close();
    });

    const send = async (worker: Worker, text: string, headers: Record<string, string>, extra = {}) =>
      cluster.result<Task>(
        'message/send',
        { message: userMessage(text, extra), configuration: { blocking: false } },
        worker,
        headers,
      );
    const monitor = async <T>(worker: Worker, path: string, method = 'GET'): Promise<{ status: number; body: T }> => {
      const res = await fetch(`${worker.url}/monitor${path}`, { method, headers: OPERATOR });
      return { status: res.status, body: (await res.json()) as T };
    };
    const stateOf = async (id: string) => (await store.getTask(id))?.task.status.state;

    it('either worker shows the tasks of both owners and the turns and processes of both workers', async () => {
      const onW1 = await send(w(1), 'sleep:60000', ALICE);
      const onW2 = await send(w(2), 'sleep:60000', BOB);
      await waitFor(async () => (await stateOf(onW1.id)) === 'working' && (await stateOf(onW2.id)) === 'working');
      for (const worker of [w(1), w(2)]) {
        const { body } = await monitor<{ tasks: TaskView[] }>(worker, '/tasks?state=working');
        const byId = new Map(body.tasks.map((t) => [t.id, t]));
        expect(byId.get(onW1.id)).toMatchObject({ owner: 'alice', turn: { workerId: 'w1', queuePosition: 0 } });
        expect(byId.get(onW2.id)).toMatchObject({ owner: 'bob', turn: { workerId: 'w2', queuePosition: 0 } });
        const onlyW2 = await monitor<{ tasks: TaskView[] }>(worker, '/tasks?worker=w2');
        expect(onlyW2.body.tasks.map((t) => t.id)).toEqual([onW2.id]);

        const agents = await monitor<{ workers: Record<string, unknown>[]; agents: { name: string }[] }>(
          worker,
          '/agents',
        );
        expect(agents.body.agents.map((a) => a.name)).toEqual([expect.any(String)]);
        expect(agents.body.workers).toEqual([
          expect.objectContaining({ workerId: 'w1', pid: w(1).process.pid, runningTurns: 1, host: expect.any(String) }),
          expect.objectContaining({ workerId: 'w2', pid: w(2).process.pid, runningTurns: 1, host: expect.any(String) }),
        ]);
      }
      // Operator actions across workers: each taken on the worker that does not run the turn.
      expect((await monitor(w(2), `/tasks/${onW1.id}/cancel`, 'POST')).body).toEqual({
        id: onW1.id,
        state: 'canceled',
      });
      expect((await monitor(w(1), `/tasks/${onW2.id}/fail`, 'POST')).body).toEqual({ id: onW2.id, state: 'failed' });
      // The turns running on the other workers stop: each worker saw the final state in the log.
      await waitFor(
        () =>
          cluster.trace().some((e) => e.event === 'abort' && e.taskId === onW1.id && e.worker === 'w1') &&
          cluster.trace().some((e) => e.event === 'abort' && e.taskId === onW2.id && e.worker === 'w2'),
        5000,
        'both turns aborted on their own workers',
      );
      expect(textParts((await store.getTask(onW2.id))?.task.status.message?.parts)).toBe(
        'Turn failed by operator "operator"',
      );
      // The failed turn's context takes the next message, on either worker.
      const next = await cluster.result<Task>(
        'message/send',
        { message: userMessage('next', { contextId: onW2.contextId }) },
        w(1),
        BOB,
      );
      expect(next.status.state).toBe('completed');
    }, 30_000);

    it('the events stream of one worker carries changes made on the other, and resumes by Last-Event-ID', async () => {
      const reader = await EventsReader.open(`${w(2).url}/monitor/events`, OPERATOR);
      readers.push(reader);
      await reader.waitFor((e) => e.event === 'hello', 5000, 'hello');
      const sentAt = Date.now();
      const task = await send(w(1), 'sleep:600', ALICE);
      await reader.waitFor(taskEvent(task.id), 2000, 'the task sent to w1');
      expect(Date.now() - sentAt).toBeLessThan(2000);
      await reader.waitFor(taskEvent(task.id, 'completed'), 5000, 'the task completing on w1');
      const lastId = reader.lastId as string;
      reader.close();

      const missed = await send(w(1), 'while away', BOB);
      await waitFor(async () => (await stateOf(missed.id)) === 'completed');
      // Resumed on the other worker: Last-Event-ID carries a time, not a worker's own counter.
      const resumed = await EventsReader.open(`${w(1).url}/monitor/events`, { ...OPERATOR, 'last-event-id': lastId });
      readers.push(resumed);
      await resumed.waitFor(taskEvent(missed.id, 'completed'), 5000, 'the change missed while away');
    }, 30_000);

    it('refuses an agent caller and a missing token on both workers', async () => {
      for (const worker of [w(1), w(2)]) {
        expect((await fetch(`${worker.url}/monitor/tasks`)).status).toBe(401);
        expect((await fetch(`${worker.url}/monitor/tasks`, { headers: ALICE })).status).toBe(403);
        expect((await fetch(`${worker.url}/monitor/events`, { headers: BOB })).status).toBe(403);
      }
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'a2a-monitor-cluster-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const filename = join(dir, 'a2a.db');
clusterMonitorScenarios(
  'SQLite',
  () => `sqlite:${filename}`,
  () => new SqliteStore({ filename }),
);

const pg = withPostgres('a2a_monitor_cluster');
clusterMonitorScenarios(
  'Postgres',
  () => `${pg.url}${pg.url.includes('?') ? '&' : '?'}schema=${pg.schema}`,
  () => new PostgresStore({ connectionString: pg.url, schema: pg.schema }),
);
