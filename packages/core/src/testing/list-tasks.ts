import type { ExpectStatic } from 'vitest';
import type { TaskState } from '../model/types.js';
import type { A2AStore, TaskListPage, TaskListQuery } from '../store/index.js';
import { appendEvents, artifactUpdate, createTask, statusUpdate, TEST_CLOCK_START, taskFixture } from './fixtures.js';
import { type ConformanceOptions, defineModule } from './harness.js';

/** `ms` after the test clock's start, as a status timestamp. */
const at = (ms: number): string => new Date(TEST_CLOCK_START + ms).toISOString();

interface Listed {
  id: string;
  contextId?: string;
  state?: TaskState;
  /** Milliseconds after TEST_CLOCK_START; `null` for no status timestamp; a string as it is. */
  ts: number | string | null;
}

async function create(store: A2AStore, { id, contextId = 'ctx', state = 'working', ts }: Listed): Promise<void> {
  const timestamp = typeof ts === 'number' ? at(ts) : ts;
  await createTask(store, taskFixture({ id, contextId, state, timestamp }));
}

/** `store.listTasks`, which the capability gate guarantees in these tests. */
function list(store: A2AStore, query: Partial<TaskListQuery> = {}): Promise<TaskListPage> {
  if (store.listTasks === undefined) throw new Error('The store declares supports.listTasks but has no listTasks().');
  return store.listTasks({ limit: 100, ...query });
}

const ids = (page: TaskListPage): string[] => page.records.map((record) => record.task.id);

/**
 * Every page from the first, following `next`, with `between(pageNumber)` run before each read
 * after the first. Stops after 100 pages, so a store whose cursor never advances fails instead of
 * hanging.
 */
async function pageThrough(
  expect: ExpectStatic,
  store: A2AStore,
  query: Partial<TaskListQuery>,
  between: (page: number) => Promise<void> = async () => {},
): Promise<string[][]> {
  const pages: string[][] = [];
  let page = await list(store, query);
  pages.push(ids(page));
  while (page.next !== undefined) {
    expect(pages.length, 'pages read before next ran out').toBeLessThan(100);
    await between(pages.length);
    page = await list(store, { ...query, after: page.next });
    pages.push(ids(page));
  }
  return pages;
}

/** listTasks (supports.listTasks): filters, order and ties, keyset paging, totals, scope. */
export function listTasks(options: ConformanceOptions): void {
  defineModule(options, 'listTasks', (test) => {
    test(
      'lists newest status timestamp first, equal timestamps by task id descending in code point order, with the total',
      async ({ expect, store, clock }) => {
        // Created (and so stored) in an order unrelated to the status timestamps: a store that
        // sorts by creation or by its own updatedAt fails.
        const tasks: Listed[] = [
          { id: 'middle', ts: 20 },
          { id: 'tie-B', ts: 10 },
          { id: 'newest', ts: 30 },
          { id: 'tie-\u{1F600}', ts: 10 }, // U+1F600, a surrogate pair in UTF-16
          { id: 'tie-a', ts: 10 },
          { id: 'tie-\uFB01', ts: 10 }, // U+FB01: below U+1F600 by code point, above it by UTF-16 unit
          { id: 'tie-b', ts: 10 },
          { id: 'tie-\u00E9', ts: 10 },
          { id: 'oldest', ts: 0 },
        ];
        for (const task of tasks) {
          await create(store, task);
          clock.advance(-10);
        }

        const page = await list(store);
        expect(ids(page)).toEqual([
          'newest',
          'middle',
          'tie-\u{1F600}',
          'tie-\uFB01',
          'tie-\u00E9',
          'tie-b',
          'tie-a',
          'tie-B',
          'oldest',
        ]);
        expect(page.total).toBe(9);
        expect(page.next).toBeUndefined();
        for (const record of page.records) expect(record).toEqual(await store.getTask(record.task.id));
      },
      'listTasks',
    );

    test(
      'filters by context, state and statusTimestampAfter (inclusive), alone and combined; total counts the matches',
      async ({ expect, store }) => {
        const tasks: Listed[] = [
          { id: 'a10', contextId: 'ctx-a', state: 'working', ts: 10 },
          { id: 'a20', contextId: 'ctx-a', state: 'completed', ts: 20 },
          { id: 'a30', contextId: 'ctx-a', state: 'working', ts: 30 },
          { id: 'b15', contextId: 'ctx-b', state: 'working', ts: 15 },
          { id: 'b25', contextId: 'ctx-b', state: 'input-required', ts: 25 },
          { id: 'x40', contextId: 'ctx-a-suffix', state: 'working', ts: 40 },
        ];
        for (const task of tasks) await create(store, task);
        const after = (ms: number): number => TEST_CLOCK_START + ms;

        const check = async (query: Partial<TaskListQuery>, expected: string[]) => {
          const page = await list(store, query);
          expect(ids(page), JSON.stringify(query)).toEqual(expected);
          expect(page.total, JSON.stringify(query)).toBe(expected.length);
          expect(page.next, JSON.stringify(query)).toBeUndefined();
        };
        await check({}, ['x40', 'a30', 'b25', 'a20', 'b15', 'a10']);
        await check({ contextId: 'ctx-a' }, ['a30', 'a20', 'a10']);
        await check({ state: 'working' }, ['x40', 'a30', 'b15', 'a10']);
        await check({ statusTimestampAfter: after(20) }, ['x40', 'a30', 'b25', 'a20']);
        await check({ statusTimestampAfter: after(41) }, []);
        await check({ contextId: 'ctx-a', state: 'working' }, ['a30', 'a10']);
        await check({ contextId: 'ctx-a', statusTimestampAfter: after(10) }, ['a30', 'a20', 'a10']);
        await check({ state: 'working', statusTimestampAfter: after(15) }, ['x40', 'a30', 'b15']);
        await check({ contextId: 'ctx-b', state: 'input-required', statusTimestampAfter: after(25) }, ['b25']);
        await check({ contextId: 'no-such-context' }, []);
        await check({ contextId: 'CTX-A' }, []);
        await check({ state: 'canceled' }, []);

        // A page shorter than the matches: the total still counts all of them.
        const first = await list(store, { state: 'working', limit: 1 });
        expect(ids(first)).toEqual(['x40']);
        expect(first.total).toBe(4);
        expect(first.next).toEqual({ statusTimestamp: after(40), taskId: 'x40' });
      },
      'listTasks',
    );

    test(
      'a task without a readable status timestamp comes last and no statusTimestampAfter selects it',
      async ({ expect, store }) => {
        const longAgo = Date.parse('1960-01-01T00:00:00.000Z') - TEST_CLOCK_START;
        await create(store, { id: 'none-1', ts: null });
        await create(store, { id: 'recent', ts: 10 });
        await create(store, { id: 'unreadable', ts: 'not a timestamp' });
        await create(store, { id: 'before-1970', ts: longAgo });
        await create(store, { id: 'none-2', ts: null });

        const page = await list(store);
        expect(ids(page)).toEqual(['recent', 'before-1970', 'unreadable', 'none-2', 'none-1']);
        const since = await list(store, { statusTimestampAfter: Date.parse('1900-01-01T00:00:00.000Z') });
        expect(ids(since)).toEqual(['recent', 'before-1970']);
        expect(since.total).toBe(2);

        // Paging through them works like through any others.
        expect((await pageThrough(expect, store, { limit: 2 })).flat()).toEqual(ids(page));
      },
      'listTasks',
    );

    test(
      'follows each task’s current status: a status update moves it and the state filter sees it; other events do not',
      async ({ expect, store }) => {
        await create(store, { id: 'a', ts: 10 });
        await create(store, { id: 'b', ts: 20 });
        await create(store, { id: 'c', ts: 25 });
        expect(ids(await list(store))).toEqual(['c', 'b', 'a']);

        await appendEvents(store, 'a', [
          statusUpdate({ id: 'a', contextId: 'ctx' }, 'completed', { timestamp: at(30) }),
        ]);
        await appendEvents(store, 'b', [artifactUpdate({ id: 'b', contextId: 'ctx' }, 'result')]);
        expect(ids(await list(store))).toEqual(['a', 'c', 'b']);
        expect(ids(await list(store, { state: 'working' }))).toEqual(['c', 'b']);
        expect(ids(await list(store, { state: 'completed' }))).toEqual(['a']);
        expect(ids(await list(store, { statusTimestampAfter: TEST_CLOCK_START + 26 }))).toEqual(['a']);
        expect((await list(store)).records[0]?.version).toBe(2);
      },
      'listTasks',
    );

    test(
      'pages of `limit` tasks: next is present exactly while more follow, and the pages add up to the list',
      async ({ expect, store }) => {
        for (let i = 0; i < 7; i++) await create(store, { id: `t${i}`, ts: i * 10 });
        const all = ['t6', 't5', 't4', 't3', 't2', 't1', 't0'];

        expect(await pageThrough(expect, store, { limit: 3 })).toEqual([
          ['t6', 't5', 't4'],
          ['t3', 't2', 't1'],
          ['t0'],
        ]);
        expect(await pageThrough(expect, store, { limit: 1 })).toEqual(all.map((id) => [id]));
        expect(await pageThrough(expect, store, { limit: 7 })).toEqual([all]);
        expect(await pageThrough(expect, store, { limit: 100 })).toEqual([all]);

        const first = await list(store, { limit: 3 });
        expect(first.next).toEqual({ statusTimestamp: TEST_CLOCK_START + 40, taskId: 't4' });
        const second = await list(store, { limit: 3, after: first.next });
        expect(second.total).toBe(7);
        // Exactly at the end: the last page has no next, and a cursor past the end gives nothing.
        const last = await list(store, { limit: 4, after: first.next });
        expect(ids(last)).toEqual(['t3', 't2', 't1', 't0']);
        expect(last.next).toBeUndefined();
        const beyond = await list(store, { after: { statusTimestamp: TEST_CLOCK_START, taskId: 't0' } });
        expect(beyond).toEqual({ records: [], total: 7 });
      },
      'listTasks',
    );

    test(
      'a cursor splits tasks that share one status timestamp without losing or repeating any',
      async ({ expect, store }) => {
        for (const id of ['s1', 's4', 's2', 's5', 's3']) await create(store, { id, ts: 10 });
        await create(store, { id: 'older', ts: 5 });
        expect(await pageThrough(expect, store, { limit: 2 })).toEqual([
          ['s5', 's4'],
          ['s3', 's2'],
          ['s1', 'older'],
        ]);
      },
      'listTasks',
    );

    test(
      'paging while tasks are created between and during page reads lists every earlier task exactly once',
      async ({ expect, store }) => {
        const timestamps = new Map<string, number>();
        const add = async (id: string, ts: number): Promise<void> => {
          timestamps.set(id, TEST_CLOCK_START + ts);
          await create(store, { id, ts });
        };
        const existing: string[] = [];
        for (let i = 0; i < 12; i++) {
          existing.push(`old-${String(i).padStart(2, '0')}`);
          await add(existing[i] as string, i * 10);
        }

        let created = 0;
        const listed: string[] = [];
        let page = await list(store, { limit: 4 });
        for (let reads = 1; ; reads++) {
          listed.push(...ids(page));
          if (page.next === undefined) break;
          expect(reads, 'pages read before next ran out').toBeLessThan(50);
          const cursor = page.next;
          // Between reads: newer tasks (what a busy agent creates), one sharing the cursor's
          // timestamp and one older than every task (they may show up later: that is no repeat).
          await add(`new-${++created}`, 1000 + created);
          await add(`new-${++created}`, 1000 + created);
          await add(`new-${++created}-tie`, cursor.statusTimestamp - TEST_CLOCK_START);
          await add(`new-${++created}`, -1000 - created);
          // And during the read.
          [page] = await Promise.all([
            list(store, { limit: 4, after: cursor }),
            add(`new-${++created}`, 2000 + created),
          ]);
        }

        expect(
          listed.filter((id, index) => listed.indexOf(id) !== index),
          'listed twice',
        ).toEqual([]);
        expect(
          existing.filter((id) => !listed.includes(id)),
          'never listed',
        ).toEqual([]);
        // The listing as a whole is in list order: each task after the one before it.
        const keys = listed.map((id) => ({ id, ts: timestamps.get(id) as number }));
        for (let i = 1; i < keys.length; i++) {
          const [previous, current] = [keys[i - 1], keys[i]] as [
            { id: string; ts: number },
            { id: string; ts: number },
          ];
          expect(
            current.ts < previous.ts || (current.ts === previous.ts && current.id < previous.id),
            `${current.id} after ${previous.id}`,
          ).toBe(true);
        }
      },
      'listTasks',
    );

    test(
      'a cursor is only a key: it still works after the task it names was updated',
      async ({ expect, store }) => {
        for (let i = 0; i < 5; i++) await create(store, { id: `t${i}`, ts: i * 10 });
        const first = await list(store, { limit: 2 });
        expect(ids(first)).toEqual(['t4', 't3']);
        // t3 moves to the front: the next page still starts where the first one ended.
        await appendEvents(store, 't3', [
          statusUpdate({ id: 't3', contextId: 'ctx' }, 'completed', { timestamp: at(99) }),
        ]);
        const second = await list(store, { limit: 2, after: first.next });
        expect(ids(second)).toEqual(['t2', 't1']);
        expect(ids(await list(store, { limit: 2 }))).toEqual(['t3', 't4']);
      },
      'listTasks',
    );

    test(
      'records are copies: changing one changes neither the store nor the next listing',
      async ({ expect, store }) => {
        await create(store, { id: 'kept', ts: 10 });
        const page = await list(store);
        const record = page.records[0];
        if (record === undefined) throw new Error('nothing listed');
        record.task.status.state = 'failed';
        record.task.metadata = { changed: true };
        const again = await list(store);
        expect(again.records[0]?.task.status.state).toBe('working');
        expect(again.records[0]?.task.metadata).toBeUndefined();
      },
      'listTasks',
    );

    test(
      'purged tasks leave the listing and its total; a cursor naming a purged task still works',
      async ({ expect, store, clock }) => {
        await create(store, { id: 'done-1', state: 'completed', ts: 50 });
        await create(store, { id: 'done-2', state: 'failed', ts: 40 });
        await create(store, { id: 'live-1', state: 'working', ts: 30 });
        await create(store, { id: 'live-2', state: 'input-required', ts: 20 });
        const first = await list(store, { limit: 2 });
        expect(ids(first)).toEqual(['done-1', 'done-2']);
        expect(first.total).toBe(4);

        clock.advance(1000);
        expect((await store.purgeExpired(clock.now)).tasks).toBe(2);
        const second = await list(store, { limit: 2, after: first.next });
        expect(ids(second)).toEqual(['live-1', 'live-2']);
        expect(second.total).toBe(2);
        expect(second.next).toBeUndefined();
        expect(await list(store, { state: 'completed' })).toEqual({ records: [], total: 0 });
      },
      ['listTasks', 'ttl'],
    );

    test(
      'each namespace lists and counts only its own tasks',
      async ({ expect, store, openStore }) => {
        const a = await openStore({ namespace: 'agent_a' });
        const b = await openStore({ namespace: 'agent_b' });
        await create(a, { id: 'shared-id', contextId: 'ctx', ts: 10 });
        await create(a, { id: 'only-a', contextId: 'ctx', ts: 20 });
        await create(b, { id: 'shared-id', contextId: 'ctx', state: 'completed', ts: 30 });

        const ofA = await list(a);
        expect(ids(ofA)).toEqual(['only-a', 'shared-id']);
        expect(ofA.total).toBe(2);
        const ofB = await list(b, { contextId: 'ctx' });
        expect(ofB.records.map((r) => [r.task.id, r.task.status.state])).toEqual([['shared-id', 'completed']]);
        expect(ofB.total).toBe(1);
        expect(await list(store)).toEqual({ records: [], total: 0 });
        expect(await list(b, { state: 'working' })).toEqual({ records: [], total: 0 });
      },
      ['listTasks', 'namespaces'],
    );
  });
}
