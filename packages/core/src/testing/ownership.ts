import type { ExpectStatic } from 'vitest';
import type { Message, Part, Task, TaskState } from '../model/types.js';
import {
  type A2AStore,
  messageDigest,
  type TaskListPage,
  type TaskListQuery,
  type TaskRecord,
} from '../store/index.js';
import {
  appendEvents,
  createTask,
  indexEntry,
  isDuplicateMessage,
  isVersionConflict,
  rejectionOf,
  richTask,
  statusUpdate,
  TEST_CLOCK_START,
  taskFixture,
  textPart,
  userMessage,
} from './fixtures.js';
import { type ConformanceOptions, defineModule, type StoreTestContext, storesOnLocation } from './harness.js';

/** `ms` after the test clock's start, as a status timestamp. */
const at = (ms: number): string => new Date(TEST_CLOCK_START + ms).toISOString();

interface Owned {
  id: string;
  /** `undefined`: created without an owner. */
  owner: string | undefined;
  /** Milliseconds after TEST_CLOCK_START. */
  ts: number;
  contextId?: string;
  state?: TaskState;
}

async function create(store: A2AStore, { id, owner, ts, contextId = 'ctx', state = 'working' }: Owned): Promise<void> {
  await createTask(store, taskFixture({ id, contextId, state, timestamp: at(ts) }), [], owner);
}

/** `store.listTasks`, which the capability gate guarantees in these tests. */
function list(store: A2AStore, query: Partial<TaskListQuery> = {}): Promise<TaskListPage> {
  if (store.listTasks === undefined) throw new Error('The store declares supports.listTasks but has no listTasks().');
  return store.listTasks({ limit: 100, ...query });
}

const ids = (page: TaskListPage): string[] => page.records.map((record) => record.task.id);

/** Whether the record has an `owner` property at all (`toEqual` would not tell absent from undefined). */
const hasOwner = (record: TaskRecord | undefined): boolean => record !== undefined && Object.hasOwn(record, 'owner');

/** A user message that starts a new task, as a client sends it: no task or context id. */
const firstMessage = (text: string, messageId: string): Message => userMessage(text, { messageId });

/** A task whose first history message is `message`, carrying the task's ids as the runtime stores it. */
function taskStartedBy(message: Message, id?: string): { task: Task; stored: Message } {
  const task = taskFixture({ state: 'working', ...(id === undefined ? {} : { id }) });
  const stored: Message = { ...message, taskId: task.id, contextId: task.contextId };
  task.history = [stored];
  return { task, stored };
}

function expectDuplicate(
  expect: StoreTestContext['expect'],
  error: unknown,
  data: { messageId: string; taskId?: string },
): void {
  expect(isDuplicateMessage(error), `expected a DUPLICATE_MESSAGE error, got: ${String(error)}`).toBe(true);
  expect((error as { data?: unknown }).data).toMatchObject(data);
}

/**
 * Every page from the first, following `next`. Stops after 100 pages, so a store whose cursor
 * never advances fails instead of hanging.
 */
async function pageThrough(
  expect: ExpectStatic,
  store: A2AStore,
  query: Partial<TaskListQuery>,
): Promise<{ pages: string[][]; totals: number[] }> {
  const pages: string[][] = [];
  const totals: number[] = [];
  let page = await list(store, query);
  for (;;) {
    pages.push(ids(page));
    totals.push(page.total);
    if (page.next === undefined) return { pages, totals };
    expect(pages.length, 'pages read before next ran out').toBeLessThan(100);
    page = await list(store, { ...query, after: page.next });
  }
}

/**
 * Tasks belong to their caller: the owner a task is created with ({@link TaskRecord.owner}), the
 * owner filter of listTasks, and the message index scoped to the owner, with digests.
 *
 * Where the contract leaves room, the suite decides:
 * - A task without an owner has no `owner` property in any record (not `null`, not `undefined`).
 * - The owner of a task is the creating commit's; a refused creating commit (version conflict,
 *   duplicate message) sets nothing.
 * - The scope of an indexed message is the commit's owner, also when it is not the task's owner.
 * - A duplicate in one scope is reported with the task of that scope (`data.taskId`), never with
 *   the task of another owner that used the same id.
 */
export function ownership(options: ConformanceOptions): void {
  defineModule(options, 'ownership', (test) => {
    test('the owner a task is created with is returned by getTask, listTasksByContext and listActiveTasks; a task without one has no owner property', async ({
      expect,
      store,
    }) => {
      await create(store, { id: 'of-alice', owner: 'alice', ts: 10 });
      await create(store, { id: 'of-nobody', owner: undefined, ts: 20 });
      await create(store, { id: 'of-bob', owner: 'bob', ts: 30, state: 'input-required' });

      const alice = await store.getTask('of-alice');
      expect(alice?.owner).toBe('alice');
      expect(alice?.version).toBe(1);
      expect((await store.getTask('of-bob'))?.owner).toBe('bob');
      const nobody = await store.getTask('of-nobody');
      expect(nobody).toBeDefined();
      expect(hasOwner(nobody), 'a task without an owner has no owner property').toBe(false);

      const byContext = await store.listTasksByContext('ctx');
      expect(byContext.map((r) => [r.task.id, r.owner])).toEqual([
        ['of-alice', 'alice'],
        ['of-nobody', undefined],
        ['of-bob', 'bob'],
      ]);
      expect(hasOwner(byContext[1])).toBe(false);
      for (const record of byContext) expect(record).toEqual(await store.getTask(record.task.id));

      const active = await store.listActiveTasks();
      expect(Object.fromEntries(active.map((r) => [r.task.id, r.owner ?? null]))).toEqual({
        'of-alice': 'alice',
        'of-nobody': null,
      });
      expect(hasOwner(active.find((r) => r.task.id === 'of-nobody'))).toBe(false);

      // Records are copies: changing one changes neither the store nor the next read.
      if (alice === undefined) throw new Error('task of-alice was not stored');
      alice.owner = 'mallory';
      expect((await store.getTask('of-alice'))?.owner).toBe('alice');
    });

    test('later commits never change the owner, whoever makes them; a refused create sets nothing', async ({
      expect,
      store,
    }) => {
      const owned = taskFixture({ id: 'owned', contextId: 'ctx', state: 'working' });
      await createTask(store, owned, [], 'alice');
      await appendEvents(store, 'owned', [statusUpdate(owned, 'working', { message: 'by bob' })], 'bob');
      await appendEvents(store, 'owned', [statusUpdate(owned, 'input-required')]);
      await appendEvents(store, 'owned', [userMessage('reply', { taskId: 'owned', contextId: 'ctx' })], 'carol');
      await appendEvents(store, 'owned', [statusUpdate(owned, 'completed')], 'bob');
      const record = await store.getTask('owned');
      expect([record?.version, record?.task.status.state, record?.owner]).toEqual([5, 'completed', 'alice']);
      expect((await store.listTasksByContext('ctx'))[0]?.owner).toBe('alice');

      // A task created without an owner never gets one.
      const open = taskFixture({ id: 'open', contextId: 'ctx', state: 'working' });
      await createTask(store, open);
      await appendEvents(store, 'open', [statusUpdate(open, 'input-required')], 'carol');
      const openRecord = await store.getTask('open');
      expect(openRecord?.version).toBe(2);
      expect(hasOwner(openRecord), 'a later commit gave an owner to a task created without one').toBe(false);
      expect(hasOwner((await store.listTasksByContext('ctx'))[1])).toBe(false);

      // Creating an existing task on behalf of someone else is a conflict and changes nothing.
      const error = await rejectionOf(createTask(store, taskFixture({ id: 'owned', contextId: 'ctx' }), [], 'mallory'));
      expect(isVersionConflict(error)).toBe(true);
      expect(await store.getTask('owned')).toEqual(record);
      const refused = await rejectionOf(
        createTask(store, taskFixture({ id: 'open', contextId: 'ctx' }), [], 'mallory'),
      );
      expect(isVersionConflict(refused)).toBe(true);
      expect(hasOwner(await store.getTask('open'))).toBe(false);
    });

    test('a commit with an empty owner is refused with INTERNAL and writes nothing', async ({ expect, store }) => {
      const first = firstMessage('hello', 'msg-empty-owner');
      const { task } = taskStartedBy(first, 'empty-owner');
      const error = await rejectionOf(createTask(store, task, [], ''));
      expect((error as { code?: unknown })?.code, String(error)).toBe('INTERNAL');
      expect(await store.getTask('empty-owner')).toBeUndefined();
      expect(await store.findMessage(first.messageId)).toBeUndefined();
      expect(await store.findMessage(first.messageId, undefined, '')).toBeUndefined();
    });

    test(
      'listTasks with an owner lists and counts only its tasks, with null only those without one, without it every task',
      async ({ expect, store }) => {
        const tasks: Owned[] = [
          { id: 'a10', owner: 'alice', ts: 10, contextId: 'ctx-1' },
          { id: 'b20', owner: 'bob', ts: 20, contextId: 'ctx-1' },
          { id: 'n25', owner: undefined, ts: 25, contextId: 'ctx-1' },
          { id: 'a30', owner: 'alice', ts: 30, contextId: 'ctx-2', state: 'completed' },
          { id: 'b40', owner: 'bob', ts: 40, contextId: 'ctx-2' },
          { id: 'n45', owner: undefined, ts: 45, contextId: 'ctx-2', state: 'completed' },
          { id: 'a50', owner: 'alice', ts: 50, contextId: 'ctx-1' },
          { id: 'x55', owner: 'Alice', ts: 55, contextId: 'ctx-1' },
        ];
        for (const task of tasks) await create(store, task);

        const check = async (query: Partial<TaskListQuery>, expected: string[]) => {
          const page = await list(store, query);
          expect(ids(page), JSON.stringify(query)).toEqual(expected);
          expect(page.total, JSON.stringify(query)).toBe(expected.length);
          expect(page.next, JSON.stringify(query)).toBeUndefined();
          return page;
        };
        const ofAlice = await check({ owner: 'alice' }, ['a50', 'a30', 'a10']);
        expect(ofAlice.records.map((r) => r.owner)).toEqual(['alice', 'alice', 'alice']);
        for (const record of ofAlice.records) expect(record).toEqual(await store.getTask(record.task.id));
        await check({ owner: 'bob' }, ['b40', 'b20']);
        await check({ owner: 'Alice' }, ['x55']);
        await check({ owner: 'carol' }, []);
        // '' is no principal (commits refuse it) and so the owner of no task: not "without an owner".
        await check({ owner: '' }, []);
        const ofNobody = await check({ owner: null }, ['n45', 'n25']);
        expect(ofNobody.records.map(hasOwner)).toEqual([false, false]);
        const all = await check({}, ['x55', 'a50', 'n45', 'b40', 'a30', 'n25', 'b20', 'a10']);
        expect(all.records.map((r) => r.owner ?? null)).toEqual([
          'Alice',
          'alice',
          null,
          'bob',
          'alice',
          null,
          'bob',
          'alice',
        ]);

        // Combined with the other filters.
        await check({ owner: 'alice', contextId: 'ctx-1' }, ['a50', 'a10']);
        await check({ owner: 'alice', state: 'completed' }, ['a30']);
        await check({ owner: null, state: 'completed' }, ['n45']);
        await check({ owner: null, contextId: 'ctx-1' }, ['n25']);
        await check({ owner: 'bob', statusTimestampAfter: TEST_CLOCK_START + 21 }, ['b40']);
        await check({ owner: 'bob', contextId: 'ctx-2', state: 'working', statusTimestampAfter: TEST_CLOCK_START }, [
          'b40',
        ]);
        await check({ owner: 'alice', contextId: 'no-such-context' }, []);

        // A page shorter than the owner's tasks: the total still counts all of them, and only them.
        const first = await list(store, { owner: 'alice', limit: 1 });
        expect(ids(first)).toEqual(['a50']);
        expect(first.total).toBe(3);
        expect(first.next).toEqual({ statusTimestamp: TEST_CLOCK_START + 50, taskId: 'a50' });
      },
      'listTasks',
    );

    test(
      'listTasks pages through one owner’s tasks with other owners’ tasks interleaved, ties included',
      async ({ expect, store }) => {
        // Owners take turns, and some timestamps are shared across owners: a store that filters
        // after paging, or whose cursor ignores the owner's range, loses or repeats tasks.
        const owners = ['alice', 'bob', undefined] as const;
        const expected = new Map<string | null, string[]>([
          ['alice', []],
          ['bob', []],
          [null, []],
        ]);
        const tasks: Owned[] = [];
        for (let i = 0; i < 21; i++) {
          const owner = owners[i % 3];
          const id = `t${String(i).padStart(2, '0')}`;
          tasks.push({ id, owner, ts: Math.floor(i / 2) * 10 });
        }
        for (const task of tasks) await create(store, task);
        // List order: newest first, ties by id descending.
        const sorted = [...tasks].sort((x, y) => y.ts - x.ts || (x.id < y.id ? 1 : -1));
        for (const task of sorted) expected.get(task.owner ?? null)?.push(task.id);

        for (const owner of ['alice', 'bob', null] as const) {
          const mine = expected.get(owner) ?? [];
          expect(mine).toHaveLength(7);
          for (const limit of [1, 2, 3, 7]) {
            const { pages, totals } = await pageThrough(expect, store, { owner, limit });
            const label = `owner ${String(owner)}, limit ${limit}`;
            expect(pages.flat(), label).toEqual(mine);
            expect(pages.length, label).toBe(Math.ceil(mine.length / limit));
            expect(new Set(totals), label).toEqual(new Set([7]));
          }
        }
        const { pages } = await pageThrough(expect, store, { limit: 4 });
        expect(pages.flat()).toEqual(sorted.map((task) => task.id));
      },
      'listTasks',
    );

    test('the same message id committed by two owners: both commits succeed, each finds its own task', async ({
      expect,
      store,
    }) => {
      const messageId = 'msg-shared-by-owners';
      const ofAlice = taskStartedBy(firstMessage('alice asks', messageId));
      const ofBob = taskStartedBy(firstMessage('bob asks', messageId));
      const ofNobody = taskStartedBy(firstMessage('somebody asks', messageId));
      // Asserted rather than awaited, so a store that refuses one fails here, not with its error.
      expect(await rejectionOf(createTask(store, ofAlice.task, [], 'alice'))).toBeUndefined();
      expect(await rejectionOf(createTask(store, ofBob.task, [], 'bob')), 'bob reusing alice’s id').toBeUndefined();
      expect(await rejectionOf(createTask(store, ofNobody.task)), 'no owner reusing alice’s id').toBeUndefined();

      expect(await store.findMessage(messageId, undefined, 'alice')).toEqual(indexEntry(ofAlice.task, ofAlice.stored));
      expect(await store.findMessage(messageId, undefined, 'bob')).toEqual(indexEntry(ofBob.task, ofBob.stored));
      // No owner: the anonymous scope, distinct from every principal's.
      expect(await store.findMessage(messageId)).toEqual(indexEntry(ofNobody.task, ofNobody.stored));
      expect(await store.findMessage(messageId, undefined, undefined)).toEqual(
        indexEntry(ofNobody.task, ofNobody.stored),
      );
      expect(await store.findMessage(messageId, undefined, 'carol')).toBeUndefined();
      expect(await store.findMessage(messageId, undefined, 'Alice')).toBeUndefined();
      expect(await store.findMessage(messageId, undefined, '')).toBeUndefined();
      for (const task of [ofAlice.task, ofBob.task, ofNobody.task]) {
        expect((await store.getTask(task.id))?.version, task.id).toBe(1);
      }

      // Follow-ups too: the same id in two owners' tasks.
      const followUp = 'msg-follow-up';
      const toAlice = userMessage('more', {
        messageId: followUp,
        taskId: ofAlice.task.id,
        contextId: ofAlice.task.contextId,
      });
      const toBob = userMessage('more', {
        messageId: followUp,
        taskId: ofBob.task.id,
        contextId: ofBob.task.contextId,
      });
      expect(await rejectionOf(appendEvents(store, ofAlice.task.id, [toAlice], 'alice'))).toBeUndefined();
      expect(
        await rejectionOf(appendEvents(store, ofBob.task.id, [toBob], 'bob')),
        'bob reusing alice’s id',
      ).toBeUndefined();
      expect(await store.findMessage(followUp, undefined, 'alice')).toEqual(indexEntry(ofAlice.task, toAlice));
      expect(await store.findMessage(followUp, undefined, 'bob')).toEqual(indexEntry(ofBob.task, toBob));
      expect(await store.findMessage(followUp)).toBeUndefined();
    });

    test('an owner reusing its own message id is refused, naming its own task, and nothing is written', async ({
      expect,
      store,
    }) => {
      const messageId = 'msg-reused';
      const ofAlice = taskStartedBy(firstMessage('first', messageId), 'alice-task');
      const ofBob = taskStartedBy(firstMessage('first', messageId), 'bob-task');
      await createTask(store, ofBob.task, [], 'bob');
      expect(await rejectionOf(createTask(store, ofAlice.task, [], 'alice')), 'alice reusing bob’s id').toBeUndefined();

      // A new task of alice's with the id: refused with alice's task, never bob's.
      const retry = taskStartedBy(firstMessage('again', messageId), 'alice-retry');
      expectDuplicate(expect, await rejectionOf(createTask(store, retry.task, [], 'alice')), {
        messageId,
        taskId: 'alice-task',
      });
      expect(await store.getTask('alice-retry')).toBeUndefined();
      expect(await store.readEvents('alice-retry', 0)).toEqual([]);
      expect(await store.findMessage(messageId, undefined, 'alice')).toEqual(indexEntry(ofAlice.task, ofAlice.stored));

      // A message event in alice's task reusing it, with a fresh id beside it: nothing of it is kept.
      const before = { record: await store.getTask('alice-task'), events: await store.readEvents('alice-task', 0) };
      const on = { taskId: 'alice-task', contextId: ofAlice.task.contextId };
      const fresh = userMessage('fresh', on);
      const again = userMessage('again', { ...on, messageId });
      expectDuplicate(expect, await rejectionOf(appendEvents(store, 'alice-task', [fresh, again], 'alice')), {
        messageId,
        taskId: 'alice-task',
      });
      expect({ record: await store.getTask('alice-task'), events: await store.readEvents('alice-task', 0) }).toEqual(
        before,
      );
      expect(await store.findMessage(fresh.messageId, undefined, 'alice')).toBeUndefined();

      // The anonymous scope refuses its own repeats the same way, and is not blocked by alice's.
      const anonymous = taskStartedBy(firstMessage('anonymous', messageId), 'anonymous-task');
      expect(await rejectionOf(createTask(store, anonymous.task))).toBeUndefined();
      const anonymousRetry = taskStartedBy(firstMessage('anonymous again', messageId), 'anonymous-retry');
      expectDuplicate(expect, await rejectionOf(createTask(store, anonymousRetry.task)), {
        messageId,
        taskId: 'anonymous-task',
      });
      expect(await store.getTask('anonymous-retry')).toBeUndefined();
      expect(await store.findMessage(messageId, undefined, 'bob')).toEqual(indexEntry(ofBob.task, ofBob.stored));
    });

    test('the scope of an indexed message is the commit’s owner, not the task’s', async ({ expect, store }) => {
      const ofAlice = taskStartedBy(firstMessage('start', 'msg-start'), 'alice-task');
      await createTask(store, ofAlice.task, [], 'alice');
      const on = { taskId: 'alice-task', contextId: ofAlice.task.contextId };
      const byBob = userMessage('from bob', { ...on, messageId: 'msg-by-bob' });
      const byNobody = userMessage('from nobody', { ...on, messageId: 'msg-by-nobody' });
      expect(await rejectionOf(appendEvents(store, 'alice-task', [byBob], 'bob'))).toBeUndefined();
      expect(await rejectionOf(appendEvents(store, 'alice-task', [byNobody]))).toBeUndefined();

      expect(await store.findMessage('msg-by-bob', undefined, 'bob')).toEqual(indexEntry(ofAlice.task, byBob));
      expect(await store.findMessage('msg-by-bob', undefined, 'alice')).toBeUndefined();
      expect(await store.findMessage('msg-by-bob')).toBeUndefined();
      expect(await store.findMessage('msg-by-nobody')).toEqual(indexEntry(ofAlice.task, byNobody));
      expect(await store.findMessage('msg-by-nobody', undefined, 'alice')).toBeUndefined();
      expect(await store.findMessage('msg-start', undefined, 'alice')).toEqual(
        indexEntry(ofAlice.task, ofAlice.stored),
      );
      expect((await store.getTask('alice-task'))?.owner).toBe('alice');
    });

    test('each entry records the digest of its message: equal for the same content whatever its ids, different for other content', async ({
      expect,
      store,
    }) => {
      const data: Part = { kind: 'data', data: { zebra: 1, apple: [true, null, { b: 2, a: 'x' }] } };
      const parts: Part[] = [textPart('the same words ✓'), data];
      const details = {
        metadata: { source: 'test', nested: { y: 1, x: 2 } },
        extensions: ['https://example.com/ext/v1'],
        referenceTaskIds: ['task-referenced'],
      };
      // What the client sent: no task or context id.
      const sent = userMessage(parts, { messageId: 'msg-original', ...details });
      const digest = messageDigest(sent);
      expect(digest).toMatch(/^[0-9a-f]{64}$/);

      // Stored with the ids of the task the runtime created (alice), and resent under another id
      // by bob, as a message event of his task; and with its keys in another order (anonymous).
      const ofAlice = taskStartedBy(sent);
      await createTask(store, ofAlice.task, [], 'alice');
      const ofBob = taskFixture({ state: 'working' });
      expect(await rejectionOf(createTask(store, ofBob, [], 'bob'))).toBeUndefined();
      const resent = userMessage(parts, {
        messageId: 'msg-resent',
        taskId: ofBob.id,
        contextId: ofBob.contextId,
        ...details,
      });
      expect(await rejectionOf(appendEvents(store, ofBob.id, [resent], 'bob'))).toBeUndefined();
      const reordered: Message = {
        referenceTaskIds: ['task-referenced'],
        extensions: ['https://example.com/ext/v1'],
        metadata: { nested: { x: 2, y: 1 }, source: 'test' },
        parts: [
          { text: 'the same words ✓', kind: 'text' },
          { data: { apple: [true, null, { a: 'x', b: 2 }], zebra: 1 }, kind: 'data' },
        ],
        role: 'user',
        messageId: 'msg-reordered',
        kind: 'message',
      };
      const reorderedTask = taskStartedBy(reordered);
      expect(await rejectionOf(createTask(store, reorderedTask.task))).toBeUndefined();

      const entries = [
        await store.findMessage('msg-original', undefined, 'alice'),
        await store.findMessage('msg-resent', undefined, 'bob'),
        await store.findMessage('msg-reordered'),
      ];
      expect(entries.map((entry) => entry?.digest)).toEqual([digest, digest, digest]);
      expect(entries[0]).toEqual({ taskId: ofAlice.task.id, contextId: ofAlice.task.contextId, digest });

      // Other content, other digest: parts, metadata, extensions, referenceTaskIds each count.
      const variants: Message[] = [
        userMessage([textPart('other words'), data], { messageId: 'v-parts', ...details }),
        userMessage(parts, { messageId: 'v-metadata', ...details, metadata: { source: 'other' } }),
        userMessage(parts, { messageId: 'v-extensions', ...details, extensions: [] }),
        userMessage(parts, { messageId: 'v-references', ...details, referenceTaskIds: ['task-other'] }),
        userMessage(parts, { messageId: 'v-bare' }),
      ];
      const seen = new Set([digest]);
      for (const variant of variants) {
        const { task } = taskStartedBy(variant);
        await createTask(store, task, [], 'alice');
        const recorded = (await store.findMessage(variant.messageId, undefined, 'alice'))?.digest;
        expect(recorded, variant.messageId).toBe(messageDigest(variant));
        expect(seen.has(recorded ?? digest), `${variant.messageId} digests like another message`).toBe(false);
        seen.add(recorded ?? digest);
      }

      // The message as read back digests like the entry (whatever the store's JSON round trip).
      const rich = richTask();
      const richFirst = rich.history?.[0] as Message;
      await createTask(store, rich, [], 'alice');
      const stored = (await store.getTask(rich.id))?.task.history?.[0] as Message;
      expect((await store.findMessage(richFirst.messageId, undefined, 'alice'))?.digest).toBe(messageDigest(stored));
      expect(messageDigest(stored)).toBe(messageDigest(richFirst));
    });

    test('concurrent creates with one message id by five owners (on several instances where supported): one wins per owner', async (context) => {
      const { expect } = context;
      const stores = await storesOnLocation(context, 3);
      const messageId = 'msg-contested-per-owner';
      const owners = ['o1', 'o2', 'o3', 'o4', 'o5'];
      const attempts = owners.flatMap((owner) =>
        [0, 1].map((n) => ({ owner, ...taskStartedBy(firstMessage(`${owner} try ${n}`, messageId), `${owner}-${n}`) })),
      );
      const results = await Promise.allSettled(
        attempts.map(({ task, owner }, i) => createTask(stores[i % stores.length] as A2AStore, task, [], owner)),
      );
      for (const owner of owners) {
        const won = attempts.filter((attempt, i) => attempt.owner === owner && results[i]?.status === 'fulfilled');
        expect(
          won.map((attempt) => attempt.task.id),
          owner,
        ).toHaveLength(1);
        const winner = won[0];
        if (winner === undefined) continue;
        for (const [i, attempt] of attempts.entries()) {
          const result = results[i];
          if (attempt.owner === owner && result?.status === 'rejected') {
            expectDuplicate(expect, result.reason, { messageId, taskId: winner.task.id });
          }
        }
        for (const reader of stores) {
          expect(await reader.findMessage(messageId, undefined, owner)).toEqual(indexEntry(winner.task, winner.stored));
          expect((await reader.getTask(winner.task.id))?.owner).toBe(owner);
        }
      }
      expect(await stores[0]?.findMessage(messageId)).toBeUndefined();
    });

    test(
      'purgeExpired removes the entries of purged tasks in every scope; their ids can be used again there',
      async ({ expect, store, clock }) => {
        const messageId = 'msg-purged';
        const done = (owner: string | undefined, id: string) => {
          const { task, stored } = taskStartedBy(firstMessage(`${id} first`, messageId), id);
          task.status = { state: 'completed', timestamp: at(0) };
          return { task, stored, owner };
        };
        const purged = [done('alice', 'alice-done'), done('bob', 'bob-done')];
        for (const { task, owner } of purged)
          expect(await rejectionOf(createTask(store, task, [], owner))).toBeUndefined();
        const running = taskStartedBy(firstMessage('still running', messageId), 'anonymous-running');
        expect(await rejectionOf(createTask(store, running.task))).toBeUndefined();
        const carol = taskStartedBy(firstMessage('carol running', messageId), 'carol-running');
        expect(await rejectionOf(createTask(store, carol.task, [], 'carol'))).toBeUndefined();

        clock.advance(10_000);
        expect(await store.purgeExpired(clock.now)).toEqual({ tasks: 2, contexts: 0 });
        expect(await store.findMessage(messageId, undefined, 'alice')).toBeUndefined();
        expect(await store.findMessage(messageId, undefined, 'bob')).toBeUndefined();
        expect(await store.findMessage(messageId)).toEqual(indexEntry(running.task, running.stored));
        expect(await store.findMessage(messageId, undefined, 'carol')).toEqual(indexEntry(carol.task, carol.stored));

        const again = taskStartedBy(firstMessage('after the purge', messageId), 'alice-again');
        expect(await rejectionOf(createTask(store, again.task, [], 'alice')), 'reusing a purged id').toBeUndefined();
        expect(await store.findMessage(messageId, undefined, 'alice')).toEqual(indexEntry(again.task, again.stored));
        expect((await store.getTask('alice-again'))?.owner).toBe('alice');
        expectDuplicate(
          expect,
          await rejectionOf(createTask(store, taskStartedBy(firstMessage('x', messageId)).task, [], 'carol')),
          { messageId, taskId: 'carol-running' },
        );
      },
      'ttl',
    );

    test(
      'owners and the scoped message index survive close and reopen',
      async ({ expect, store, openStore }) => {
        const messageId = 'msg-durable';
        const ofAlice = taskStartedBy(firstMessage('alice', messageId), 'alice-task');
        const ofNobody = taskStartedBy(firstMessage('nobody', messageId), 'anonymous-task');
        await createTask(store, ofAlice.task, [], 'alice');
        expect(await rejectionOf(createTask(store, ofNobody.task))).toBeUndefined();
        const before = {
          alice: await store.getTask('alice-task'),
          nobody: await store.getTask('anonymous-task'),
          byContext: await store.listTasksByContext(ofAlice.task.contextId),
          active: await store.listActiveTasks(),
        };
        await store.close();

        const reopened = await openStore();
        expect({
          alice: await reopened.getTask('alice-task'),
          nobody: await reopened.getTask('anonymous-task'),
          byContext: await reopened.listTasksByContext(ofAlice.task.contextId),
          active: await reopened.listActiveTasks(),
        }).toEqual(before);
        expect(before.alice?.owner).toBe('alice');
        expect(hasOwner(await reopened.getTask('anonymous-task'))).toBe(false);
        expect(await reopened.findMessage(messageId, undefined, 'alice')).toEqual(
          indexEntry(ofAlice.task, ofAlice.stored),
        );
        expect(await reopened.findMessage(messageId)).toEqual(indexEntry(ofNobody.task, ofNobody.stored));
        expectDuplicate(
          expect,
          await rejectionOf(createTask(reopened, taskStartedBy(firstMessage('again', messageId)).task, [], 'alice')),
          { messageId, taskId: 'alice-task' },
        );
        const ofBob = taskStartedBy(firstMessage('bob', messageId), 'bob-task');
        expect(await rejectionOf(createTask(reopened, ofBob.task, [], 'bob'))).toBeUndefined();
        expect(await reopened.findMessage(messageId, undefined, 'bob')).toEqual(indexEntry(ofBob.task, ofBob.stored));
        if (reopened.supports.listTasks === true && reopened.listTasks !== undefined) {
          expect(ids(await reopened.listTasks({ limit: 10, owner: 'alice' }))).toEqual(['alice-task']);
        }
      },
      'durable',
    );
  });
}
