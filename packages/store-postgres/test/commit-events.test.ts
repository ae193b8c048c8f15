/**
 * A commit's events go to Postgres as one JSON array text (not a json[] array literal): each event
 * must come back from the log exactly as written, in order, with its own sequence number, whatever
 * its text holds (quotes, backslashes, braces and commas that an array literal would escape), with
 * and without group commit. Read back by another instance: the committing one would answer from
 * the events it remembers (RecentEvents), not from the database.
 */

import type { TaskEvent } from '@fastify-a2a/core';
import { appendEvents, artifactUpdate, createTask, taskFixture } from '@fastify-a2a/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { PostgresStore } from '../src/index.js';

const db = withPostgres('pgevents');

const opened: PostgresStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0).reverse()) await store.close();
});

/** An instance that committed nothing, so its reads come from the database. */
async function reader(): Promise<PostgresStore> {
  const store = new PostgresStore({ connectionString: db.url, schema: db.schema });
  opened.push(store);
  await store.open();
  return store;
}

const awkwardTexts = [
  'quotes " and \\" and \'',
  'backslashes \\ \\\\ \\n (not a newline)',
  '{braces, "commas", NULL, null}',
  'a real\nnewline\tand tab, unicode é ✓ 𝄞',
  '',
];

describe.each([true, false])('events of a commit (groupCommit: %s)', (groupCommit) => {
  it('come back from the log exactly as written, in order, one sequence number each', async () => {
    const store = new PostgresStore({ connectionString: db.url, schema: db.schema, groupCommit });
    opened.push(store);
    await store.open();
    const task = taskFixture();
    const created = await createTask(store, task);
    const events: TaskEvent[] = awkwardTexts.map((text) => artifactUpdate(task, text));
    const { version } = await appendEvents(store, task.id, events);
    expect(version).toBe(created.version + events.length);

    const logged = await (await reader()).readEvents(task.id, created.version);
    expect(logged.map((stored) => stored.seq)).toEqual(events.map((_, i) => created.version + 1 + i));
    expect(logged.map((stored) => stored.event)).toEqual(events);
  });

  it('commit concurrently on many tasks (batched together) and each keeps its own events', async () => {
    const store = new PostgresStore({ connectionString: db.url, schema: db.schema, groupCommit });
    opened.push(store);
    await store.open();
    const tasks = Array.from({ length: 40 }, () => taskFixture());
    await Promise.all(tasks.map((task) => createTask(store, task)));
    const written = await Promise.all(
      tasks.map(async (task, i) => {
        const events = [artifactUpdate(task, `first "${i}"`), artifactUpdate(task, `second \\${i}`)];
        await appendEvents(store, task.id, events);
        return events;
      }),
    );
    const log = await reader();
    for (const [i, task] of tasks.entries()) {
      const logged = await log.readEvents(task.id, 1);
      expect(logged.map((stored) => stored.event)).toEqual(written[i]);
    }
  });
});
