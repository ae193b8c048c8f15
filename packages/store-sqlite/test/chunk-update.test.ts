/**
 * A commit that changes no status (a streamed chunk) updates the task's row without setting its
 * state, status timestamp and context again: SQLite rewrites the entries of every index with a
 * column the UPDATE sets, changed or not, so each chunk rewrote five indexes and wrote their pages
 * to the WAL (issue 30). Statements are seen through better-sqlite3's `verbose` hook, the pages
 * written through the WAL's frame count.
 */

import { applyEvents, type Task, type TaskEvent } from '@fastify-a2a/core';
import { artifactUpdate, createTasks, statusUpdate } from '@fastify-a2a/core/testing';
import { expect, it } from 'vitest';
import type { SqliteStore } from '../src/index.js';
import { verboseStores } from './helpers.js';

const { open } = verboseStores();

async function commit(store: SqliteStore, task: Task, version: number, events: TaskEvent[]): Promise<Task> {
  const next = applyEvents(task, events);
  await store.commit({ taskId: task.id, expectedVersion: version, task: next, events });
  return next;
}

const updates = (statements: string[]) => statements.filter((sql) => /^\s*UPDATE a2a_tasks/i.test(sql));

it('a chunk sets only the row’s version, body and times; a status change sets its indexed columns too', async () => {
  const { store, statements } = await open();
  let [task] = (await createTasks(store, 1, { state: 'working' })) as [Task];
  statements.length = 0;
  task = await commit(store, task, 1, [
    artifactUpdate(task, { artifactId: 'answer', parts: [{ kind: 'text', text: 'Hel' }] }),
  ]);
  const [chunkUpdate] = updates(statements);
  expect(chunkUpdate).toMatch(/SET version = /);
  expect(chunkUpdate).not.toMatch(/\bstate\s*=|status_ts\s*=|context_id\s*=/);

  statements.length = 0;
  const done = statusUpdate(task, 'completed');
  task = await commit(store, task, 2, [done]);
  const [statusChange] = updates(statements);
  expect(statusChange).toMatch(/SET context_id = .*, state = .*, status_ts = /s);

  // Both are what a reader finds, through the indexes the chunk left alone.
  const record = await store.getTask(task.id);
  expect(record?.version).toBe(3);
  expect(record?.task.status.state).toBe('completed');
  expect(record?.task.artifacts?.[0]?.parts).toEqual([{ kind: 'text', text: 'Hel' }]);
  const listed = await store.listTasks({ state: 'completed', limit: 10 });
  expect(listed.records.map((record) => record.task.id)).toEqual([task.id]);
  expect((await store.listTasks({ state: 'working', limit: 10 })).records).toEqual([]);
});

it('a chunk’s commit writes the pages of the task row, one index and the events, no more', async () => {
  const { store, database } = await open();
  let [task] = (await createTasks(store, 1, { state: 'working' })) as [Task];
  const chunk = (text: string, append: boolean) =>
    artifactUpdate(task, { artifactId: 'answer', parts: [{ kind: 'text', text }] }, { append });
  task = await commit(store, task, 1, [chunk('a', false)]);
  database.pragma('wal_checkpoint(TRUNCATE)');
  await commit(store, task, 2, [chunk('b', true)]);
  const log = (database.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]?.log;
  // The tasks table's page, a2a_tasks_by_state's (updated_at), the events table's and its key's.
  expect(log).toBeLessThanOrEqual(4);
});
