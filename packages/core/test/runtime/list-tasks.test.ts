/**
 * ListTasks as the runtime serves it (A2A 1.0 ListTasks, 0.3 HTTP+JSON `GET /v1/tasks`): the page
 * token, page sizes, trimming of history and artifacts, parameter errors, the store's capability
 * and the caller's scope. Filters and ordering themselves are the store's (the conformance suite's
 * listTasks module); here they are only checked to reach it.
 */

import { MemoryStore } from '@fastify-a2a/store-memory';
import { afterEach, describe, expect, it } from 'vitest';
import { A2AError } from '../../src/errors.js';
import type { ListTasksParams, Message, Task, TaskState } from '../../src/model/types.js';
import { callContext } from '../../src/protocol/context.js';
import { A2ARuntime } from '../../src/runtime.js';
import { RuntimeService } from '../../src/runtime-service.js';
import type { A2AStore, StoreCallContext, TaskListQuery } from '../../src/store/index.js';
import {
  artifactUpdate,
  createTask,
  createTestClock,
  TEST_CLOCK_START,
  taskFixture,
  userMessage,
} from '../../src/testing/fixtures.js';

const runtimes: A2ARuntime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

function start(store: A2AStore = new MemoryStore()): A2ARuntime {
  const runtime = new A2ARuntime({
    store,
    executor: async (turn) => {
      await turn.complete(`echo: ${turn.text}`);
    },
    retention: false,
    drainTimeoutMs: 100,
  });
  runtimes.push(runtime);
  return runtime;
}

const at = (ms: number): string => new Date(TEST_CLOCK_START + ms).toISOString();

/** Creates task `id` in the store with its status timestamp `ms` after the test clock's start. */
async function seed(
  store: A2AStore,
  id: string,
  ms: number,
  options: { contextId?: string; state?: TaskState; history?: Message[] } = {},
): Promise<void> {
  await createTask(
    store,
    taskFixture({
      id,
      contextId: options.contextId ?? 'ctx',
      state: options.state ?? 'working',
      timestamp: at(ms),
      ...(options.history ? { history: options.history } : {}),
    }),
  );
}

/** Every page from the first, following nextPageToken. */
async function allPages(runtime: A2ARuntime, params: ListTasksParams): Promise<string[][]> {
  const pages: string[][] = [];
  let token: string | undefined;
  do {
    const page = await runtime.listTasks({ ...params, ...(token === undefined ? {} : { pageToken: token }) });
    pages.push(page.tasks.map((task) => task.id));
    token = page.nextPageToken;
    expect(pages.length).toBeLessThan(100);
  } while (token !== '');
  return pages;
}

/** The A2AError code and its data's first path, or the error itself when it is something else. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    if (!A2AError.is(error)) return error;
    const data = error.data as { errors?: { path: string }[] } | undefined;
    return { code: error.code, path: data?.errors?.[0]?.path, message: error.message };
  }
  return 'resolved';
}

describe('listTasks', () => {
  it('pages newest first with an opaque token, "" on the last page, the page size used and the total', async () => {
    const store = new MemoryStore();
    const runtime = start(store);
    for (let i = 0; i < 7; i++) await seed(store, `t${i}`, i * 10);

    const first = await runtime.listTasks({ pageSize: 3 });
    expect(first.tasks.map((task) => task.id)).toEqual(['t6', 't5', 't4']);
    expect(first).toMatchObject({ pageSize: 3, totalSize: 7 });
    expect(first.nextPageToken).toMatch(/^[A-Za-z0-9_-]+$/); // base64url: safe in a query string
    expect(first.nextPageToken).not.toContain('t4'); // opaque, not the task id in clear

    const second = await runtime.listTasks({ pageSize: 3, pageToken: first.nextPageToken });
    expect(second.tasks.map((task) => task.id)).toEqual(['t3', 't2', 't1']);
    const last = await runtime.listTasks({ pageSize: 3, pageToken: second.nextPageToken });
    expect(last).toMatchObject({ nextPageToken: '', pageSize: 3, totalSize: 7 });
    expect(last.tasks.map((task) => task.id)).toEqual(['t0']);

    // The page size may change from one page to the next; "" is the first page (proto3's unset).
    expect((await runtime.listTasks({ pageSize: 1, pageToken: first.nextPageToken })).tasks[0]?.id).toBe('t3');
    expect((await runtime.listTasks({ pageToken: '' })).tasks).toHaveLength(7);
    expect(await allPages(runtime, { pageSize: 2 })).toEqual([['t6', 't5'], ['t4', 't3'], ['t2', 't1'], ['t0']]);
  });

  it('uses 50 per page by default and allows 1 to 100', async () => {
    const store = new MemoryStore({ maxTasks: 200 });
    const runtime = start(store);
    for (let i = 0; i < 120; i++) await seed(store, `t${String(i).padStart(3, '0')}`, i);

    const byDefault = await runtime.listTasks({});
    expect(byDefault.tasks).toHaveLength(50);
    expect(byDefault).toMatchObject({ pageSize: 50, totalSize: 120 });
    expect(byDefault.nextPageToken).not.toBe('');
    expect((await runtime.listTasks({ pageSize: 1 })).tasks).toHaveLength(1);
    const max = await runtime.listTasks({ pageSize: 100 });
    expect(max.tasks).toHaveLength(100);
    expect((await runtime.listTasks({ pageSize: 100, pageToken: max.nextPageToken })).nextPageToken).toBe('');
  });

  it('passes the filters to the store: contextId, status, statusTimestampAfter (inclusive, ISO 8601)', async () => {
    const store = new MemoryStore();
    const runtime = start(store);
    await seed(store, 'a10', 10, { contextId: 'ctx-a' });
    await seed(store, 'a20', 20, { contextId: 'ctx-a', state: 'completed' });
    await seed(store, 'b30', 30, { contextId: 'ctx-b', state: 'input-required' });
    const ids = async (params: ListTasksParams) => {
      const page = await runtime.listTasks(params);
      return { ids: page.tasks.map((task) => task.id), total: page.totalSize };
    };

    expect(await ids({ contextId: 'ctx-a' })).toEqual({ ids: ['a20', 'a10'], total: 2 });
    expect(await ids({ status: 'input-required' })).toEqual({ ids: ['b30'], total: 1 });
    expect(await ids({ statusTimestampAfter: at(20) })).toEqual({ ids: ['b30', 'a20'], total: 2 });
    // Any ISO 8601 form of the instant, e.g. with an offset.
    const plusTwo = new Date(TEST_CLOCK_START + 20 + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
    expect(await ids({ statusTimestampAfter: plusTwo })).toEqual({ ids: ['b30', 'a20'], total: 2 });
    expect(await ids({ contextId: 'ctx-a', status: 'working', statusTimestampAfter: at(10) })).toEqual({
      ids: ['a10'],
      total: 1,
    });
    expect(await ids({ contextId: 'nowhere' })).toEqual({ ids: [], total: 0 });
    expect((await runtime.listTasks({ contextId: 'nowhere' })).nextPageToken).toBe('');
  });

  it('lists the tasks the runtime created, with the status timestamps it stamped', async () => {
    const clock = createTestClock();
    const store = new MemoryStore({ clock });
    const runtime = new A2ARuntime({
      store,
      clock,
      executor: async (turn) => {
        await turn.complete('done');
      },
      retention: false,
      drainTimeoutMs: 100,
    });
    runtimes.push(runtime);
    const sent: string[] = [];
    for (let i = 0; i < 3; i++) {
      const result = await runtime.sendMessage({ message: userMessage(`m${i}`) });
      sent.push((result as Task).id);
      clock.advance(1000);
    }
    const page = await runtime.listTasks({ status: 'completed' });
    expect(page.tasks.map((task) => task.id)).toEqual([...sent].reverse());
    expect(page.tasks.every((task) => Date.parse(task.status.timestamp ?? '') >= TEST_CLOCK_START)).toBe(true);
  });

  it('historyLength keeps the N most recent messages of each task; 0 keeps none; absent keeps all', async () => {
    const store = new MemoryStore();
    const runtime = start(store);
    const history = ['one', 'two', 'three'].map((text) => userMessage(text));
    await seed(store, 'long', 10, { history });
    await seed(store, 'none', 5);
    const texts = async (params: ListTasksParams) =>
      (await runtime.listTasks(params)).tasks.map((task) =>
        task.history?.map((m) => (m.parts[0]?.kind === 'text' ? m.parts[0].text : '?')),
      );

    expect(await texts({})).toEqual([['one', 'two', 'three'], undefined]);
    expect(await texts({ historyLength: 2 })).toEqual([['two', 'three'], undefined]);
    expect(await texts({ historyLength: 10 })).toEqual([['one', 'two', 'three'], undefined]);
    expect(await texts({ historyLength: 0 })).toEqual([[], undefined]);
    // Trimming a listing changes nothing stored.
    expect((await runtime.getTask({ id: 'long' })).history).toHaveLength(3);
  });

  it('leaves artifacts out of every task unless includeArtifacts is true', async () => {
    const store = new MemoryStore();
    const runtime = start(store);
    const task = taskFixture({ id: 'with-artifact', state: 'working', timestamp: at(10) });
    await createTask(store, task, [artifactUpdate(task, 'the result')]);
    await seed(store, 'without', 5);

    const plain = await runtime.listTasks({});
    expect(plain.tasks.map((t) => 'artifacts' in t)).toEqual([false, false]);
    expect((await runtime.listTasks({ includeArtifacts: false })).tasks[0]).not.toHaveProperty('artifacts');
    const full = await runtime.listTasks({ includeArtifacts: true });
    expect(full.tasks[0]?.artifacts?.[0]?.parts).toEqual([{ kind: 'text', text: 'the result' }]);
    expect(full.tasks[1]).not.toHaveProperty('artifacts');
  });

  it('refuses a malformed or foreign pageToken with INVALID_PARAMS naming pageToken', async () => {
    const store = new MemoryStore();
    const runtime = start(store);
    for (let i = 0; i < 3; i++) await seed(store, `t${i}`, i, { contextId: 'ctx' });
    const { nextPageToken } = await runtime.listTasks({ pageSize: 1, contextId: 'ctx' });
    const json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const real = JSON.parse(Buffer.from(nextPageToken, 'base64url').toString('utf8')) as Record<string, unknown>;

    const foreign = [
      'not a token!',
      '%%%',
      'a'.repeat(9000),
      Buffer.from('plain text').toString('base64url'),
      json(null),
      json([1, 2]),
      json({ ...real, v: 2 }),
      json({ ...real, ts: 'soon' }),
      json({ ...real, id: 42 }),
      json({ ts: real.ts, id: real.id }),
    ];
    for (const pageToken of foreign) {
      expect(await failure(runtime.listTasks({ contextId: 'ctx', pageToken })), pageToken.slice(0, 40)).toMatchObject({
        code: 'INVALID_PARAMS',
        path: 'pageToken',
        message: expect.stringMatching(/pageToken is not a page token this agent issued/),
      });
    }
    expect(await failure(runtime.listTasks({ pageToken: 42 as unknown as string }))).toMatchObject({
      code: 'INVALID_PARAMS',
      path: 'pageToken',
    });

    // A token of this agent, but for other filters or another caller.
    for (const [params, ctx] of [
      [{ contextId: 'other' }, undefined],
      [{ contextId: 'ctx', status: 'working' as const }, undefined],
      [{}, undefined],
      [{ contextId: 'ctx' }, callContext({ tenant: 'acme' })],
      [{ contextId: 'ctx' }, callContext({ principal: { id: 'someone-else' } })],
    ] as const) {
      expect(await failure(runtime.listTasks({ ...params, pageToken: nextPageToken }, ctx))).toMatchObject({
        code: 'INVALID_PARAMS',
        path: 'pageToken',
        message: expect.stringMatching(/issued for other filters/),
      });
    }
    // The same filters, any page size or trimming: fine.
    const next = await runtime.listTasks({ contextId: 'ctx', pageToken: nextPageToken, pageSize: 5, historyLength: 0 });
    expect(next.tasks.map((task) => task.id)).toEqual(['t1', 't0']);
  });

  it('refuses a page size outside 1–100 and other malformed parameters with INVALID_PARAMS naming the field', async () => {
    const runtime = start();
    const cases: [ListTasksParams, string][] = [
      [{ pageSize: 0 }, 'pageSize'],
      [{ pageSize: 101 }, 'pageSize'],
      [{ pageSize: -1 }, 'pageSize'],
      [{ pageSize: 2.5 }, 'pageSize'],
      [{ pageSize: Number.NaN }, 'pageSize'],
      [{ pageSize: '10' as unknown as number }, 'pageSize'],
      [{ historyLength: -1 }, 'historyLength'],
      [{ historyLength: 1.5 }, 'historyLength'],
      [{ status: 'done' as TaskState }, 'status'],
      [{ status: 'TASK_STATE_WORKING' as TaskState }, 'status'],
      [{ statusTimestampAfter: 'yesterday' }, 'statusTimestampAfter'],
      [{ statusTimestampAfter: 1700000000000 as unknown as string }, 'statusTimestampAfter'],
      [{ contextId: 7 as unknown as string }, 'contextId'],
      [{ includeArtifacts: 'yes' as unknown as boolean }, 'includeArtifacts'],
    ];
    for (const [params, path] of cases) {
      expect(await failure(runtime.listTasks(params)), JSON.stringify(params)).toMatchObject({
        code: 'INVALID_PARAMS',
        path,
        message: expect.stringContaining(path),
      });
    }
    expect((await runtime.listTasks({ pageSize: 100, historyLength: 0 })).pageSize).toBe(100);
  });

  it('answers UNSUPPORTED_OPERATION when the store cannot list tasks', async () => {
    // A store written before listTasks existed: no capability, no method.
    const withoutCapability = new MemoryStore();
    Object.defineProperty(withoutCapability, 'supports', {
      value: { durable: false, crossProcess: false, ttl: true, namespaces: false },
    });
    const declaredFalse = new MemoryStore();
    Object.defineProperty(declaredFalse, 'supports', { value: { ...declaredFalse.supports, listTasks: false } });
    for (const store of [withoutCapability, declaredFalse]) {
      const error = await failure(start(store).listTasks({}));
      expect(error).toMatchObject({
        code: 'UNSUPPORTED_OPERATION',
        message: expect.stringMatching(/cannot list tasks/),
      });
    }
  });

  it('calls the store with the caller’s principal and tenant (its StoreCallContext), listing only the caller’s own tasks', async () => {
    const store = new MemoryStore();
    const calls: { query: TaskListQuery; ctx: StoreCallContext | undefined }[] = [];
    const listTasks = store.listTasks.bind(store);
    store.listTasks = (query, ctx) => {
      calls.push({ query, ctx });
      return listTasks(query, ctx);
    };
    const runtime = start(store);
    await seed(store, 'only', 10);

    await runtime.listTasks({ pageSize: 5, status: 'working' });
    await runtime.listTasks({}, callContext({ principal: { id: 'alice' }, tenant: 'acme' }));
    expect(calls).toEqual([
      // owner null: an anonymous caller sees the anonymous tasks only.
      { query: { limit: 5, state: 'working', owner: null }, ctx: undefined },
      // Within a tenant, the owner is the tenant and the principal together (issue 23: tenants isolate).
      { query: { limit: 50, owner: '\u001eacme\u001ealice' }, ctx: { principal: { id: 'alice' }, tenant: 'acme' } },
    ]);
  });

  it('RuntimeService.listTasks is the runtime’s', async () => {
    const store = new MemoryStore();
    const runtime = start(store);
    await seed(store, 'only', 10);
    const service = new RuntimeService({ runtime });
    expect(await service.listTasks({}, callContext())).toEqual(await runtime.listTasks({}));
  });
});
