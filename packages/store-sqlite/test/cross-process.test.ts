/**
 * Real child processes on one file: what "many worker processes act as one server" needs from
 * SQLite. Each child is test/fixtures/child.ts run by Node with tsx.
 */

import { join } from 'node:path';
import type { CommitRequest, Task } from '@fastify-a2a/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { makeTask, runChild, tempDir } from './helpers.js';

let dir: string;
let remove: () => void;
let store: SqliteStore;
let filename: string;

beforeEach(async () => {
  ({ dir, remove } = tempDir());
  filename = join(dir, 'a2a.db');
  store = new SqliteStore({ filename, pollIntervalMs: 10 });
  await store.open();
});
afterEach(async () => {
  await store.close();
  remove();
});

const working = (task: Task, expectedVersion: number): CommitRequest => ({
  taskId: task.id,
  expectedVersion,
  task: { ...task, status: { state: 'working' } },
  events: [
    { kind: 'status-update', taskId: task.id, contextId: task.contextId, status: { state: 'working' }, final: false },
  ],
});

describe('across processes', () => {
  it("a child process's commit reaches this process's subscriber", async () => {
    const task = makeTask('t1', 'c1');
    await store.commit({ taskId: 't1', expectedVersion: 0, task, events: [task] });
    const seen: number[] = [];
    store.subscribe('t1', (seq) => seen.push(seq));

    const child = await runChild(['commit', filename, JSON.stringify(working(task, 1))]);
    expect(child.stderr).toBe('');
    expect(child.output).toEqual({ ok: true, seqs: [2] });
    await vi.waitFor(() => expect(seen).toEqual([2]), { timeout: 5000, interval: 10 });
    expect((await store.getTask('t1'))?.task.status.state).toBe('working');
  });

  it('a child in another namespace neither sees nor notifies this one', async () => {
    const task = makeTask('t1', 'c1');
    await store.commit({ taskId: 't1', expectedVersion: 0, task, events: [task] });
    const seen: number[] = [];
    store.subscribe('t1', (seq) => seen.push(seq));
    // Version 0 succeeds there: the task does not exist in namespace "other".
    const child = await runChild(['commit', filename, JSON.stringify({ ...working(task, 0), events: [task] })], {
      NAMESPACE: 'other',
    });
    expect(child.output).toEqual({ ok: true, seqs: [1] });
    // A local commit after the child's, so a (wrong) cross-namespace notification would have had its chance.
    await store.commit(working(task, 1));
    expect(seen).toEqual([2]);
  });

  it('children committing the same version at the same instant: exactly one wins, the rest conflict', async () => {
    const task = makeTask('t1', 'c1');
    await store.commit({ taskId: 't1', expectedVersion: 0, task, events: [task] });
    const env = { START_AT: String(Date.now() + 2000) };
    const request = JSON.stringify(working(task, 1));
    const results = await Promise.all([1, 2, 3, 4].map(() => runChild(['commit', filename, request], env)));
    for (const result of results) expect(result.stderr).toBe('');
    const outputs = results.map((result) => result.output);
    expect(outputs.filter((output) => output?.ok)).toEqual([{ ok: true, seqs: [2] }]);
    expect(outputs.filter((output) => !output?.ok)).toEqual([
      { ok: false, code: 'VERSION_CONFLICT' },
      { ok: false, code: 'VERSION_CONFLICT' },
      { ok: false, code: 'VERSION_CONFLICT' },
    ]);
    expect((await store.readEvents('t1', 0)).map((event) => event.seq)).toEqual([1, 2]);
  });

  it('read-modify-write loops in three processes lose no update', async () => {
    const task = makeTask('t1', 'c1');
    await store.commit({ taskId: 't1', expectedVersion: 0, task, events: [task] });
    const times = 100;
    const env = { START_AT: String(Date.now() + 2000) };
    const results = await Promise.all(
      [1, 2, 3].map(() => runChild(['increment', filename, JSON.stringify({ taskId: 't1', times })], env)),
    );
    for (const result of results) {
      expect(result.stderr).toBe('');
      expect(result.output).toMatchObject({ ok: true });
    }
    const total = 1 + 3 * times;
    const record = await store.getTask('t1');
    expect(record?.version).toBe(total);
    // The snapshot is the one written by the last commit, which had read version total - 1.
    expect(record?.task.metadata).toEqual({ count: total - 1 });
    const seqs = (await store.readEvents('t1', 0)).map((event) => event.seq);
    expect(seqs).toEqual(Array.from({ length: total }, (_, index) => index + 1));
  });
});
