/**
 * A group-commit batch runs an agent's updates (no message ids) without a SAVEPOINT each, and a
 * commit with one message id (a send) none either, a commit that indexes two or more ids inside one
 * (issue 30): a conflict or a send's duplicate id still writes nothing, and a duplicate id found
 * after another id of the same commit was indexed still undoes that one.
 * Statements are seen through better-sqlite3's `verbose` hook.
 */

import { A2AError, applyEvents, type Task } from '@fastify-a2a/core';
import { artifactUpdate, createTask, createTasks, message, taskFixture } from '@fastify-a2a/core/testing';
import { describe, expect, it } from 'vitest';
import type { SqliteStore } from '../src/index.js';
import { verboseStores } from './helpers.js';

const stores = verboseStores();
const storeWithStatements = () => stores.open();

const update = (store: SqliteStore, task: Task, expectedVersion: number, text: string) => {
  const events = [artifactUpdate(task, text)];
  return store.commit({ taskId: task.id, expectedVersion, task: applyEvents(task, events), events });
};

describe('SQLite group commit: savepoints only where a commit needs one', () => {
  it('a batch of updates runs with no SAVEPOINT; a stale one conflicts and writes nothing, the others are written', async () => {
    const { store, statements } = await storeWithStatements();
    const tasks = await createTasks(store, 6, { state: 'working' });
    const stale = tasks[3] as Task;
    statements.length = 0;
    // Made in one turn of the event loop: the first runs alone, the rest as one batch.
    const results = await Promise.allSettled(tasks.map((task) => update(store, task, task === stale ? 4 : 1, 'x')));
    expect(statements.some((sql) => /^SAVEPOINT/i.test(sql))).toBe(false);
    expect(statements.filter((sql) => /^BEGIN IMMEDIATE/i.test(sql)).length).toBeLessThanOrEqual(2);
    for (const [i, result] of results.entries()) {
      if (tasks[i] === stale) {
        const reason = (result as PromiseRejectedResult).reason;
        expect(A2AError.is(reason) && reason.code).toBe('VERSION_CONFLICT');
      } else {
        expect(result.status === 'fulfilled' && result.value.version).toBe(2);
      }
    }
    expect((await store.getTask(stale.id))?.version).toBe(1);
    expect(await store.readEvents(stale.id, 1)).toEqual([]);
  });

  it('a batch of sends (one message id each) runs with no SAVEPOINT; a duplicate id writes nothing, the others are written', async () => {
    const { store, statements } = await storeWithStatements();
    const taken = taskFixture({ state: 'working' });
    await createTask(store, taken, [message('user', 'first', { messageId: 'taken-id', taskId: taken.id })]);
    const sends = Array.from({ length: 5 }, () => taskFixture({ state: 'working' }));
    const duplicate = sends[2] as Task;
    statements.length = 0;
    // Made in one turn of the event loop: five commits in at most two transactions, so at least
    // four of them in one batch.
    const results = await Promise.allSettled(
      sends.map((task, i) =>
        createTask(store, task, [
          message('user', `send ${i}`, { messageId: task === duplicate ? 'taken-id' : `send-${i}`, taskId: task.id }),
        ]),
      ),
    );
    expect(statements.some((sql) => /^SAVEPOINT/i.test(sql))).toBe(false);
    expect(statements.filter((sql) => /^BEGIN IMMEDIATE/i.test(sql)).length).toBeLessThanOrEqual(2);
    for (const [i, result] of results.entries()) {
      if (sends[i] === duplicate) {
        const reason = (result as PromiseRejectedResult).reason;
        expect(A2AError.is(reason) && reason.code).toBe('DUPLICATE_MESSAGE');
      } else {
        expect(result.status === 'fulfilled' && result.value.version).toBe(2);
        expect((await store.findMessage(`send-${i}`))?.taskId).toBe(sends[i]?.id);
      }
    }
    // The refused send left no task and no events behind, and the id still points at the first task.
    expect(await store.getTask(duplicate.id)).toBeUndefined();
    expect(await store.readEvents(duplicate.id, 0)).toEqual([]);
    expect((await store.findMessage('taken-id'))?.taskId).toBe(taken.id);
  });

  it('a commit with two message ids in a batch has its SAVEPOINT: a duplicate second id undoes its first', async () => {
    const { store, statements, database } = await storeWithStatements();
    // Its statement journal is kept in memory, not spilled to a temporary file (2 = MEMORY).
    expect(database.pragma('temp_store', { simple: true })).toBe(2);
    const taken = taskFixture({ state: 'working' });
    await createTask(store, taken, [message('user', 'first', { messageId: 'taken-id', taskId: taken.id })]);
    const others = await createTasks(store, 3, { state: 'working' });
    const target = others[1] as Task;
    const messages = [
      message('user', 'new', { messageId: 'fresh-id', taskId: target.id }),
      message('user', 'again', { messageId: 'taken-id', taskId: target.id }),
    ];
    statements.length = 0;
    const results = await Promise.allSettled([
      update(store, others[0] as Task, 1, 'a'),
      store.commit({ taskId: target.id, expectedVersion: 1, task: applyEvents(target, messages), events: messages }),
      update(store, others[2] as Task, 1, 'c'),
    ]);
    expect(statements.some((sql) => /^SAVEPOINT/i.test(sql))).toBe(true);
    expect(results[0]?.status).toBe('fulfilled');
    expect(results[2]?.status).toBe('fulfilled');
    const reason = (results[1] as PromiseRejectedResult).reason;
    expect(A2AError.is(reason) && reason.code).toBe('DUPLICATE_MESSAGE');
    // 'fresh-id' was indexed before the duplicate was found, and is free again: a new commit takes it.
    const retry = [message('user', 'new', { messageId: 'fresh-id', taskId: target.id })];
    await expect(
      store.commit({ taskId: target.id, expectedVersion: 1, task: applyEvents(target, retry), events: retry }),
    ).resolves.toMatchObject({ version: 2 });
  });
});
