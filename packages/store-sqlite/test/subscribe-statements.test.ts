/**
 * Every turn subscribes to its own task (the scheduler listens for a cancel from another worker),
 * so a subscription's start is paid once per send: one statement reads the task's version and
 * whether a turn of it is queued (issue 30; it was two, one with a JSON array).
 */

import { applyEvents } from '@fastify-a2a/core';
import { createTask, statusUpdate, taskFixture } from '@fastify-a2a/core/testing';
import { describe, expect, it } from 'vitest';
import { verboseStores } from './helpers.js';

const stores = verboseStores();

describe('SQLite subscribe', () => {
  it('starts with one statement, and still hears of a later commit to the task', async () => {
    const { store, statements } = await stores.open();
    const task = taskFixture({ state: 'working' });
    await createTask(store, task);
    statements.length = 0;
    const heard: number[] = [];
    const unsubscribe = store.subscribe(task.id, (seq) => heard.push(seq));
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/SELECT \(SELECT version FROM a2a_tasks/);
    const events = [statusUpdate(task, 'completed')];
    await store.commit({ taskId: task.id, expectedVersion: 1, task: applyEvents(task, events), events });
    expect(heard).toEqual([2]);
    unsubscribe();
  });

  it('notices that another connection finished the turn queued for the task (seq 0, a re-check)', async () => {
    const { store, database } = await stores.open();
    const task = taskFixture({ state: 'working' });
    await createTask(store, task);
    const slot = await store.enqueueTurn({
      contextId: task.contextId,
      taskId: task.id,
      messageId: 'm-1',
      workerId: 'w-1',
    });
    const heard: number[] = [];
    const unsubscribe = store.subscribe(task.id, (seq) => heard.push(seq));
    // Another process's finishTurn: the row goes without this store committing anything.
    database.prepare('DELETE FROM a2a_turns WHERE position = ?').run(slot.position);
    await expect.poll(() => heard, { timeout: 3000 }).toContain(0);
    unsubscribe();
  });
});
