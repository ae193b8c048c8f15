import { A2AError } from '../errors.js';
import type { TaskState } from '../model/types.js';
import {
  type A2AStore,
  hasPushStore,
  type PushDelivery,
  type PushDeliveryState,
  type PushProtocolVersion,
  type PushStore,
  type StoredPushConfig,
} from '../store/index.js';
import { appendEvents, artifactUpdate, createTask, rejectionOf, statusUpdate, taskFixture } from './fixtures.js';
import { type ConformanceOptions, defineModule, type StoreTestContext, storesOnLocation } from './harness.js';

const CLAIMANTS = 10;
const TTL = 30_000;

type PushCapable = A2AStore & PushStore;

const PUSH_METHODS = [
  'savePushConfig',
  'getPushConfig',
  'listPushConfigs',
  'deletePushConfig',
  'claimPushDeliveries',
  'renewPushClaims',
  'completePushDelivery',
  'failPushAttempt',
  'releasePushClaim',
  'listPushDeliveries',
] as const satisfies readonly (keyof PushStore)[];

/** `store` with its push methods, which the capability gate guarantees in these tests. */
function pushOf(store: A2AStore): PushCapable {
  const missing = PUSH_METHODS.filter((name) => typeof store[name] !== 'function');
  if (!hasPushStore(store) || missing.length > 0) {
    throw new Error(`The store declares supports.push but has no ${missing.join(', ')}.`);
  }
  return store;
}

/** The state of a delivery nothing happened to yet: a new (or replaced) config. */
const FRESH: PushDeliveryState = Object.freeze({
  cursor: 0,
  attempts: 0,
  nextAttemptAt: null,
  lastSentAt: null,
  failed: false,
  lastError: null,
  lastStatus: null,
  claimedBy: null,
  claimId: null,
  claimUntil: null,
});

const hook = (id: string, extra: Partial<StoredPushConfig> = {}): StoredPushConfig => ({
  id,
  url: `https://hooks.example.com/a2a/${id}`,
  ...extra,
});

function save(
  store: PushCapable,
  taskId: string,
  config: StoredPushConfig,
  protocolVersion: PushProtocolVersion = '1.0',
) {
  return store.savePushConfig({ taskId, config, protocolVersion });
}

/** Creates a task in `state` (version 1) with push configs of these ids. */
async function taskWithConfigs(store: PushCapable, taskId: string, configIds: string[], state: TaskState = 'working') {
  const task = taskFixture({ id: taskId, contextId: `ctx-${taskId}`, state });
  await createTask(store, task);
  for (const id of configIds) await save(store, taskId, hook(id));
  return task;
}

function claim(store: PushCapable, workerId: string, now: number, { limit = 100, ttl = TTL } = {}) {
  return store.claimPushDeliveries({ workerId, now, claimUntil: now + ttl, limit });
}

/** Deliveries by "task/config", to compare claims whose order the contract leaves open. */
const keys = (deliveries: readonly PushDelivery[]): string[] =>
  deliveries.map((d) => `${d.config.taskId}/${d.config.config.id}`).sort();

async function stateOf(store: PushCapable, taskId: string, configId: string): Promise<PushDeliveryState | undefined> {
  const listed = await store.listPushDeliveries({ taskId });
  return listed.find((d) => d.config.config.id === configId)?.state;
}

/** The only delivery of `deliveries`, failing the test unless there is exactly one. */
function only(context: Pick<StoreTestContext, 'expect'>, deliveries: PushDelivery[]): PushDelivery {
  context.expect(deliveries, JSON.stringify(deliveries)).toHaveLength(1);
  return deliveries[0] as PushDelivery;
}

const keyOf = (delivery: PushDelivery) => ({
  taskId: delivery.config.taskId,
  configId: delivery.config.config.id,
  claimId: delivery.state.claimId as string,
});

const isCode = (error: unknown, code: string): boolean => A2AError.is(error) && error.code === code;

/**
 * Push notification configs and their delivery state (supports.push): config CRUD, several per
 * task, replace by id, copies, refusal for an unknown task, purge with the task; delivery
 * claims, cursor, retries, throttle, failure, fencing of lost claims, exclusivity of concurrent
 * claimants, namespaces, persistence.
 *
 * Where the contract leaves room, the suite decides:
 * - The order of the deliveries a claim returns is left open (compared sorted).
 * - A claim that ends exactly at `now` is still held (`claimUntil < now` frees it), as for leases.
 */
export function push(options: ConformanceOptions): void {
  defineModule(options, 'push', (test) => {
    // ---- Configs ----

    test(
      'saves several configs per task and reads them back oldest first, with createdAt and updatedAt from the store clock',
      async ({ expect, store: s, clock }) => {
        const store = pushOf(s);
        const t0 = clock.now;
        await createTask(store, taskFixture({ id: 'task-a' }));
        await createTask(store, taskFixture({ id: 'task-b' }));

        const first = await save(store, 'task-a', hook('z-first', { token: 'tok-z' }), '0.3');
        expect(first).toEqual({
          taskId: 'task-a',
          config: hook('z-first', { token: 'tok-z' }),
          protocolVersion: '0.3',
          createdAt: t0,
          updatedAt: t0,
        });
        clock.advance(10);
        await save(store, 'task-a', hook('m-second'));
        // Same instant: save order decides, not the id.
        await save(store, 'task-a', hook('y-third'));
        await save(store, 'task-a', hook('a-fourth'));
        // The same config id on another task is another config.
        await save(store, 'task-b', hook('z-first', { url: 'https://other.example.com/hook' }));

        const listed = await store.listPushConfigs('task-a');
        expect(listed.map((r) => r.config.id)).toEqual(['z-first', 'm-second', 'y-third', 'a-fourth']);
        expect(listed[0]).toEqual(first);
        expect(listed[1]).toEqual({
          taskId: 'task-a',
          config: hook('m-second'),
          protocolVersion: '1.0',
          createdAt: t0 + 10,
          updatedAt: t0 + 10,
        });
        expect(await store.getPushConfig('task-a', 'z-first')).toEqual(first);
        expect((await store.getPushConfig('task-b', 'z-first'))?.config.url).toBe('https://other.example.com/hook');

        expect(await store.getPushConfig('task-a', 'unknown')).toBeUndefined();
        expect(await store.getPushConfig('task-unknown', 'z-first')).toBeUndefined();
        expect(await store.listPushConfigs('task-unknown')).toEqual([]);
        await createTask(store, taskFixture({ id: 'task-without-configs' }));
        expect(await store.listPushConfigs('task-without-configs')).toEqual([]);
      },
      'push',
    );

    test(
      'saving a config id again replaces the config (no merge), keeps createdAt and its place, moves updatedAt',
      async ({ expect, store: s, clock }) => {
        const store = pushOf(s);
        const t0 = clock.now;
        await createTask(store, taskFixture({ id: 'task' }));
        await save(store, 'task', hook('one', { token: 'old-token' }), '0.3');
        clock.advance(1);
        await save(store, 'task', hook('two'));

        clock.advance(4);
        const replacement: StoredPushConfig = {
          id: 'one',
          url: 'https://new.example.com/hook',
          authentication: { schemes: ['Bearer'], credentials: 'new-secret' },
        };
        const replaced = await save(store, 'task', replacement, '1.0');
        expect(replaced).toEqual({
          taskId: 'task',
          config: replacement,
          protocolVersion: '1.0',
          createdAt: t0,
          updatedAt: t0 + 5,
        });
        expect(await store.getPushConfig('task', 'one')).toEqual(replaced);
        expect((await store.listPushConfigs('task')).map((r) => [r.config.id, r.config.token])).toEqual([
          ['one', undefined],
          ['two', undefined],
        ]);
      },
      'push',
    );

    test(
      'keeps both token shapes and every field as given; configs are copied in and out',
      async ({ expect, store: s, clock }) => {
        const store = pushOf(s);
        await createTask(store, taskFixture({ id: 'task' }));
        const config: StoredPushConfig = {
          id: 'cfg-ünïcode ✓',
          url: 'https://hooks.example.com/a2a/r%C3%A9sum%C3%A9?tenant=t&x=1#frag',
          token: 'top-level-token 🔑',
          authentication: { schemes: ['Bearer', 'Basic'], credentials: 'dXNlcjpwYXNz' },
        };
        const schemesOnly = hook('schemes-only', { authentication: { schemes: [] } });
        const input = structuredClone(config);
        const saved = await save(store, 'task', input, '0.3');
        await save(store, 'task', schemesOnly);
        // Mutating what was saved, or what was read, changes nothing stored.
        input.url = 'https://evil.example.com/';
        input.authentication?.schemes.push('Mutated');
        saved.config.token = 'mutated';
        const read = await store.getPushConfig('task', config.id);
        expect(read?.config).toEqual(config);
        (read as { config: StoredPushConfig }).config.authentication = { schemes: ['Mutated'] };
        const listed = await store.listPushConfigs('task');
        expect(listed.map((r) => r.config)).toEqual([config, schemesOnly]);
        (listed[0] as { config: StoredPushConfig }).config.url = 'https://evil.example.com/';

        expect((await store.getPushConfig('task', config.id))?.config).toEqual(config);
        const delivery = (await claim(store, 'worker', clock.now)).find((d) => d.config.config.id === config.id);
        expect(delivery?.config.config).toEqual(config);
        (delivery as PushDelivery).state.cursor = 99;
        expect((await store.listPushDeliveries({ taskId: 'task' })).map((d) => d.config.config)).toEqual([
          config,
          schemesOnly,
        ]);
        expect((await stateOf(store, 'task', config.id))?.cursor).toBe(0);
      },
      'push',
    );

    test(
      'refuses a config for a task that does not exist (TASK_NOT_FOUND) or without an id (INTERNAL), storing nothing',
      async ({ expect, store: s }) => {
        const store = pushOf(s);
        const missing = await rejectionOf(save(store, 'task-unknown', hook('cfg')));
        expect(isCode(missing, 'TASK_NOT_FOUND'), String(missing)).toBe(true);
        expect(await store.listPushConfigs('task-unknown')).toEqual([]);
        expect(await store.listPushDeliveries()).toEqual([]);

        await createTask(store, taskFixture({ id: 'task' }));
        const noId = await rejectionOf(save(store, 'task', { url: 'https://hooks.example.com/' } as StoredPushConfig));
        expect(isCode(noId, 'INTERNAL'), String(noId)).toBe(true);
        expect(await store.listPushConfigs('task')).toEqual([]);
        // The refusals left nothing behind: a good config is the only one listed.
        await save(store, 'task', hook('cfg'));
        expect((await store.listPushConfigs('task')).map((r) => r.config.id)).toEqual(['cfg']);
      },
      'push',
    );

    test(
      'deletePushConfig deletes the config and its delivery: true once, then false; unknown ids give false',
      async ({ expect, store: s }) => {
        const store = pushOf(s);
        await taskWithConfigs(store, 'task', ['keep', 'drop']);
        expect(await store.deletePushConfig('task', 'drop')).toBe(true);
        expect(await store.deletePushConfig('task', 'drop')).toBe(false);
        expect(await store.deletePushConfig('task', 'never')).toBe(false);
        expect(await store.deletePushConfig('task-unknown', 'keep')).toBe(false);
        expect(await store.getPushConfig('task', 'drop')).toBeUndefined();
        expect((await store.listPushConfigs('task')).map((r) => r.config.id)).toEqual(['keep']);
        expect((await store.listPushDeliveries()).map((d) => d.config.config.id)).toEqual(['keep']);
      },
      'push',
    );

    test(
      'purgeExpired removes the configs and deliveries of the tasks it purges; a task created again has none',
      async ({ expect, store: s, clock }) => {
        const store = pushOf(s);
        await taskWithConfigs(store, 'done', ['a', 'b'], 'completed');
        await taskWithConfigs(store, 'running', ['a'], 'working');
        const claimed = await claim(store, 'worker', clock.now);
        expect(keys(claimed)).toEqual(['done/a', 'done/b', 'running/a']);

        clock.advance(10_000);
        expect((await store.purgeExpired(clock.now)).tasks).toBe(1);
        expect(await store.getPushConfig('done', 'a')).toBeUndefined();
        expect(await store.listPushConfigs('done')).toEqual([]);
        expect(keys(await store.listPushDeliveries())).toEqual(['running/a']);
        const purgedClaim = claimed.find((d) => d.config.taskId === 'done') as PushDelivery;
        expect(await store.completePushDelivery({ ...keyOf(purgedClaim), cursor: 1, sentAt: clock.now })).toBe(false);

        await createTask(store, taskFixture({ id: 'done', state: 'working' }));
        expect(await store.listPushConfigs('done')).toEqual([]);
        expect(keys(await store.listPushDeliveries())).toEqual(['running/a']);
      },
      ['push', 'ttl'],
    );

    // ---- Delivery ----

    test(
      'a new config’s delivery starts at cursor 0 with nothing recorded, and is listed with the task version',
      async ({ expect, store: s }) => {
        const store = pushOf(s);
        const task = await taskWithConfigs(store, 'task', []);
        await appendEvents(store, 'task', [artifactUpdate(task, 'one'), artifactUpdate(task, 'two')]);
        const record = await save(store, 'task', hook('cfg'));
        // Cursor 0, not the version at save time: the first POST carries the task's current state.
        expect(await store.listPushDeliveries({ taskId: 'task' })).toEqual([
          { config: record, state: FRESH, taskVersion: 3 },
        ]);
      },
      'push',
    );

    test(
      'claims only what has something to deliver; complete moves the cursor, and a new version makes it due again',
      async (context) => {
        const { expect, clock } = context;
        const store = pushOf(context.store);
        const t0 = clock.now;
        const task = await taskWithConfigs(store, 'task', ['cfg']);
        await createTask(store, taskFixture({ id: 'task-without-configs' }));

        const delivery = only(context, await claim(store, 'worker-a', t0));
        expect(delivery).toEqual({
          config: await store.getPushConfig('task', 'cfg'),
          state: { ...FRESH, claimedBy: 'worker-a', claimId: expect.any(String), claimUntil: t0 + TTL },
          taskVersion: 1,
        });
        // Held: nobody else gets it, the holder neither.
        expect(await claim(store, 'worker-b', t0)).toEqual([]);
        expect(await claim(store, 'worker-a', t0)).toEqual([]);

        clock.advance(5);
        expect(
          await store.completePushDelivery({ ...keyOf(delivery), cursor: 1, sentAt: clock.now - 1, status: 204 }),
        ).toBe(true);
        expect(await stateOf(store, 'task', 'cfg')).toEqual({
          ...FRESH,
          cursor: 1,
          lastSentAt: t0 + 4,
          lastStatus: 204,
        });
        // Delivered up to the task's version: nothing to claim, whoever asks and whenever.
        expect(await claim(store, 'worker-a', t0 + 10)).toEqual([]);
        expect(await claim(store, 'worker-b', t0 + 10 * TTL)).toEqual([]);

        await appendEvents(store, 'task', [statusUpdate(task, 'working', { message: 'progress' })]);
        const again = only(context, await claim(store, 'worker-b', t0 + 20));
        expect(again.taskVersion).toBe(2);
        expect(again.state).toEqual({
          ...FRESH,
          cursor: 1,
          lastSentAt: t0 + 4,
          lastStatus: 204,
          claimedBy: 'worker-b',
          claimId: expect.any(String),
          claimUntil: t0 + 20 + TTL,
        });
        expect(again.state.claimId).not.toBe(delivery.state.claimId);
        expect(await store.completePushDelivery({ ...keyOf(again), cursor: 2, sentAt: t0 + 21 })).toBe(true);

        // A config added later starts at 0 and is due while the other is not.
        await save(store, 'task', hook('later'));
        const later = only(context, await claim(store, 'worker-a', t0 + 30));
        expect([later.config.config.id, later.state.cursor, later.taskVersion]).toEqual(['later', 0, 2]);
      },
      'push',
    );

    test(
      'the cursor never moves back',
      async (context) => {
        const { expect, clock } = context;
        const store = pushOf(context.store);
        const task = await taskWithConfigs(store, 'task', ['cfg']);
        await appendEvents(store, 'task', [artifactUpdate(task, 'a'), artifactUpdate(task, 'b')]);
        const first = only(context, await claim(store, 'worker', clock.now));
        expect(await store.completePushDelivery({ ...keyOf(first), cursor: 3, sentAt: clock.now })).toBe(true);
        await appendEvents(store, 'task', [artifactUpdate(task, 'c')]);
        const second = only(context, await claim(store, 'worker', clock.now));
        expect(await store.completePushDelivery({ ...keyOf(second), cursor: 1, sentAt: clock.now })).toBe(true);
        expect((await stateOf(store, 'task', 'cfg'))?.cursor).toBe(3);
      },
      'push',
    );

    test(
      'a claim is held until it ends; then another worker takes it over, and the first worker’s complete, fail and release are refused',
      async (context) => {
        const { expect, clock } = context;
        const store = pushOf(context.store);
        const t0 = clock.now;
        await taskWithConfigs(store, 'task', ['cfg']);
        const mine = only(context, await claim(store, 'worker-a', t0, { ttl: 1000 }));

        // Exactly at claimUntil the claim still holds (claimUntil < now frees it).
        expect(await claim(store, 'worker-b', t0 + 1000)).toEqual([]);
        clock.set(t0 + 1001);
        const theirs = only(context, await claim(store, 'worker-b', t0 + 1001));
        expect(theirs.state.claimedBy).toBe('worker-b');
        expect(theirs.state.claimId).not.toBe(mine.state.claimId);
        const held = { ...FRESH, claimedBy: 'worker-b', claimId: theirs.state.claimId, claimUntil: t0 + 1001 + TTL };
        expect(await stateOf(store, 'task', 'cfg')).toEqual(held);

        expect(await store.completePushDelivery({ ...keyOf(mine), cursor: 1, sentAt: t0 + 1002, status: 200 })).toBe(
          false,
        );
        expect(await store.failPushAttempt({ ...keyOf(mine), nextAttemptAt: null, error: 'late', status: 500 })).toBe(
          false,
        );
        expect(await store.releasePushClaim(keyOf(mine))).toBe(false);
        expect(await stateOf(store, 'task', 'cfg')).toEqual(held);

        expect(await store.completePushDelivery({ ...keyOf(theirs), cursor: 1, sentAt: t0 + 1003 })).toBe(true);
        expect((await stateOf(store, 'task', 'cfg'))?.cursor).toBe(1);
      },
      'push',
    );

    test(
      'an expired claim nobody took over is still held: its worker may complete it, or renew it',
      async (context) => {
        const { expect, clock } = context;
        const store = pushOf(context.store);
        const t0 = clock.now;
        await taskWithConfigs(store, 'task-1', ['cfg']);
        await taskWithConfigs(store, 'task-2', ['cfg']);
        const [late, renewed] = await store.claimPushDeliveries({
          workerId: 'w',
          now: t0,
          claimUntil: t0 + 10,
          limit: 2,
        });
        expect(keys([late as PushDelivery, renewed as PushDelivery])).toEqual(['task-1/cfg', 'task-2/cfg']);

        clock.set(t0 + 100);
        expect(await store.completePushDelivery({ ...keyOf(late as PushDelivery), cursor: 1, sentAt: t0 + 100 })).toBe(
          true,
        );
        expect(await store.renewPushClaims('w', t0 + 500)).toBe(1);
        expect(await claim(store, 'other', t0 + 500)).toEqual([]);
        const { taskId, claimId } = keyOf(renewed as PushDelivery);
        expect(await stateOf(store, taskId, 'cfg')).toEqual({
          ...FRESH,
          claimedBy: 'w',
          claimId,
          claimUntil: t0 + 500,
        });
      },
      'push',
    );

    test(
      'renewPushClaims moves the end of the worker’s own claims only, and counts them',
      async (context) => {
        const { expect, clock } = context;
        const store = pushOf(context.store);
        const t0 = clock.now;
        for (const id of ['t1', 't2', 't3']) await taskWithConfigs(store, id, ['cfg']);
        const ofA = await claim(store, 'worker-a', t0, { limit: 2, ttl: 1000 });
        const ofB = await claim(store, 'worker-b', t0, { limit: 2, ttl: 1000 });
        expect(ofA).toHaveLength(2);
        expect(ofB).toHaveLength(1);

        expect(await store.renewPushClaims('worker-a', t0 + 5000)).toBe(2);
        expect(await store.renewPushClaims('worker-nobody', t0 + 5000)).toBe(0);
        // B's claim ended; A's did not.
        expect(keys(await claim(store, 'worker-c', t0 + 1001))).toEqual(keys(ofB));
        expect(await claim(store, 'worker-c', t0 + 5000)).toEqual([]);
        expect(keys(await claim(store, 'worker-c', t0 + 5001))).toEqual(keys(ofA));
        // Taken over: nothing of A's is left to renew.
        expect(await store.renewPushClaims('worker-a', t0 + 9000)).toBe(0);
      },
      'push',
    );

    test(
      'releasePushClaim gives the delivery back at once, its state otherwise unchanged; a claim not held gives false',
      async (context) => {
        const { expect, clock } = context;
        const store = pushOf(context.store);
        const t0 = clock.now;
        await taskWithConfigs(store, 'task', ['cfg']);
        const first = only(context, await claim(store, 'worker-a', t0));
        expect(
          await store.failPushAttempt({ ...keyOf(first), nextAttemptAt: t0 + 10, error: 'boom', status: 502 }),
        ).toBe(true);
        const second = only(context, await claim(store, 'worker-a', t0 + 10));
        expect(await store.releasePushClaim(keyOf(second))).toBe(true);
        expect(await store.releasePushClaim(keyOf(second))).toBe(false);
        const failedOnce = { ...FRESH, attempts: 1, nextAttemptAt: t0 + 10, lastError: 'boom', lastStatus: 502 };
        expect(await stateOf(store, 'task', 'cfg')).toEqual(failedOnce);

        const third = only(context, await claim(store, 'worker-b', t0 + 10));
        expect(third.state).toEqual({
          ...failedOnce,
          claimedBy: 'worker-b',
          claimId: expect.any(String),
          claimUntil: t0 + 10 + TTL,
        });
        expect(await store.releasePushClaim(keyOf(first))).toBe(false);
        expect((await stateOf(store, 'task', 'cfg'))?.claimedBy).toBe('worker-b');
      },
      'push',
    );

    test(
      'failPushAttempt counts attempts and records the error; the retry is due at nextAttemptAt, not before, whatever the task state',
      async (context) => {
        const { expect, clock } = context;
        const store = pushOf(context.store);
        const t0 = clock.now;
        const task = await taskWithConfigs(store, 'task', ['cfg']);
        const first = only(context, await claim(store, 'worker', t0));
        expect(
          await store.failPushAttempt({ ...keyOf(first), nextAttemptAt: t0 + 1000, error: 'HTTP 503', status: 503 }),
        ).toBe(true);
        expect(await stateOf(store, 'task', 'cfg')).toEqual({
          ...FRESH,
          attempts: 1,
          nextAttemptAt: t0 + 1000,
          lastError: 'HTTP 503',
          lastStatus: 503,
        });

        expect(await claim(store, 'worker', t0 + 999)).toEqual([]);
        // A retry wait holds back even a terminal state (only the throttle window lets it through).
        await appendEvents(store, 'task', [statusUpdate(task, 'completed')]);
        expect(await claim(store, 'worker', t0 + 999)).toEqual([]);
        const second = only(context, await claim(store, 'worker', t0 + 1000));
        expect([second.state.attempts, second.state.cursor, second.taskVersion]).toEqual([1, 0, 2]);

        expect(await store.failPushAttempt({ ...keyOf(second), nextAttemptAt: t0 + 3000, error: 'timeout' })).toBe(
          true,
        );
        expect(await stateOf(store, 'task', 'cfg')).toEqual({
          ...FRESH,
          attempts: 2,
          nextAttemptAt: t0 + 3000,
          lastError: 'timeout',
        });
        expect(await claim(store, 'worker', t0 + 2999)).toEqual([]);
        const third = only(context, await claim(store, 'worker', t0 + 3000));
        expect(await store.completePushDelivery({ ...keyOf(third), cursor: 2, sentAt: t0 + 3001, status: 200 })).toBe(
          true,
        );
        expect(await stateOf(store, 'task', 'cfg')).toEqual({
          ...FRESH,
          cursor: 2,
          lastSentAt: t0 + 3001,
          lastStatus: 200,
        });
      },
      'push',
    );

    test(
      'a delivery that failed for good is never claimed again but listed; saving its config again starts it afresh',
      async (context) => {
        const { expect, clock } = context;
        const store = pushOf(context.store);
        const t0 = clock.now;
        const task = await taskWithConfigs(store, 'task', ['dead', 'alive']);
        const claimed = await claim(store, 'worker', t0);
        const dead = claimed.find((d) => d.config.config.id === 'dead') as PushDelivery;
        const alive = claimed.find((d) => d.config.config.id === 'alive') as PushDelivery;
        expect(
          await store.failPushAttempt({ ...keyOf(dead), nextAttemptAt: null, error: 'gave up: HTTP 410', status: 410 }),
        ).toBe(true);
        expect(await store.completePushDelivery({ ...keyOf(alive), cursor: 1, sentAt: t0 })).toBe(true);
        const failed = { ...FRESH, attempts: 1, failed: true, lastError: 'gave up: HTTP 410', lastStatus: 410 };
        expect(await stateOf(store, 'task', 'dead')).toEqual(failed);

        await appendEvents(store, 'task', [statusUpdate(task, 'completed')]);
        const aliveAgain = only(context, await claim(store, 'worker', t0 + 100 * TTL));
        expect(aliveAgain.config.config.id).toBe('alive');
        expect(await store.completePushDelivery({ ...keyOf(aliveAgain), cursor: 2, sentAt: t0 + 100 * TTL })).toBe(
          true,
        );
        expect(await claim(store, 'worker', t0 + 1000 * TTL)).toEqual([]);

        const deadRecord = await store.getPushConfig('task', 'dead');
        expect(await store.listPushDeliveries({ failed: true })).toEqual([
          { config: deadRecord, state: failed, taskVersion: 2 },
        ]);
        expect((await store.listPushDeliveries({ failed: false })).map((d) => d.config.config.id)).toEqual(['alive']);
        expect((await store.listPushDeliveries()).map((d) => d.config.config.id)).toEqual(['dead', 'alive']);

        await save(store, 'task', hook('dead', { url: 'https://fixed.example.com/hook' }));
        expect(await stateOf(store, 'task', 'dead')).toEqual(FRESH);
        const revived = only(context, await claim(store, 'worker', t0 + 1000 * TTL));
        expect(revived.config.config.url).toBe('https://fixed.example.com/hook');
      },
      'push',
    );

    test(
      'the throttle window after a success holds back other states until nextAttemptAt; terminal and interrupted states go at once',
      async (context) => {
        const { expect, clock } = context;
        const store = pushOf(context.store);
        const t0 = clock.now;
        const task = await taskWithConfigs(store, 'task', ['cfg']);
        const deliver = async (now: number, cursor: number) => {
          const delivery = only(context, await claim(store, 'worker', now));
          expect(delivery.taskVersion).toBe(cursor);
          const done = await store.completePushDelivery({
            ...keyOf(delivery),
            cursor,
            sentAt: now,
            nextAttemptAt: now + 1000,
          });
          expect(done).toBe(true);
        };
        await deliver(t0, 1);
        expect((await stateOf(store, 'task', 'cfg'))?.nextAttemptAt).toBe(t0 + 1000);

        await appendEvents(store, 'task', [artifactUpdate(task, 'partial result')]);
        expect(await claim(store, 'worker', t0 + 500)).toEqual([]);
        expect(await claim(store, 'worker', t0 + 999)).toEqual([]);
        await deliver(t0 + 1000, 2);

        await appendEvents(store, 'task', [statusUpdate(task, 'input-required', { message: 'which one?' })]);
        await deliver(t0 + 1100, 3);
        await appendEvents(store, 'task', [statusUpdate(task, 'working')]);
        expect(await claim(store, 'worker', t0 + 1200)).toEqual([]);
        await appendEvents(store, 'task', [statusUpdate(task, 'auth-required')]);
        await deliver(t0 + 1200, 5);
        await appendEvents(store, 'task', [statusUpdate(task, 'working')]);
        expect(await claim(store, 'worker', t0 + 1300)).toEqual([]);
        await appendEvents(store, 'task', [statusUpdate(task, 'completed', { message: 'done' })]);
        await deliver(t0 + 1300, 7);
        expect(await claim(store, 'worker', t0 + 1000 * TTL)).toEqual([]);
      },
      'push',
    );

    test(
      'replacing a config restarts its delivery at cursor 0 and drops the claim: the holder’s late writes are refused, also after it claimed again',
      async (context) => {
        const { expect, clock } = context;
        const store = pushOf(context.store);
        const t0 = clock.now;
        const task = await taskWithConfigs(store, 'task', ['cfg']);
        const first = only(context, await claim(store, 'worker', t0));
        expect(await store.completePushDelivery({ ...keyOf(first), cursor: 1, sentAt: t0, status: 200 })).toBe(true);
        await appendEvents(store, 'task', [artifactUpdate(task, 'more')]);
        const stale = only(context, await claim(store, 'worker', t0 + 1));

        await save(store, 'task', hook('cfg', { token: 'rotated' }));
        expect(await stateOf(store, 'task', 'cfg')).toEqual(FRESH);
        expect(await store.completePushDelivery({ ...keyOf(stale), cursor: 2, sentAt: t0 + 2 })).toBe(false);

        const fresh = only(context, await claim(store, 'worker', t0 + 3));
        expect([fresh.state.cursor, fresh.config.config.token]).toEqual([0, 'rotated']);
        expect(fresh.state.claimId).not.toBe(stale.state.claimId);
        // The same worker holds the delivery again, but the old claim's writes stay refused.
        expect(await store.completePushDelivery({ ...keyOf(stale), cursor: 2, sentAt: t0 + 4 })).toBe(false);
        expect(await store.failPushAttempt({ ...keyOf(stale), nextAttemptAt: null, error: 'old' })).toBe(false);
        expect(await store.releasePushClaim(keyOf(stale))).toBe(false);
        expect((await stateOf(store, 'task', 'cfg'))?.claimId).toBe(fresh.state.claimId);
        expect(await store.completePushDelivery({ ...keyOf(fresh), cursor: 2, sentAt: t0 + 5 })).toBe(true);
      },
      'push',
    );

    test(
      'deleting a config refuses its holder’s complete, fail and release, also once the id is saved again',
      async (context) => {
        const { expect, clock } = context;
        const store = pushOf(context.store);
        await taskWithConfigs(store, 'task', ['cfg']);
        const held = only(context, await claim(store, 'worker', clock.now));
        expect(await store.deletePushConfig('task', 'cfg')).toBe(true);
        expect(await store.completePushDelivery({ ...keyOf(held), cursor: 1, sentAt: clock.now })).toBe(false);
        expect(await store.failPushAttempt({ ...keyOf(held), nextAttemptAt: clock.now, error: 'x' })).toBe(false);
        expect(await store.releasePushClaim(keyOf(held))).toBe(false);

        await save(store, 'task', hook('cfg'));
        expect(await store.completePushDelivery({ ...keyOf(held), cursor: 1, sentAt: clock.now })).toBe(false);
        expect(await stateOf(store, 'task', 'cfg')).toEqual(FRESH);
      },
      'push',
    );

    test(
      'listPushDeliveries lists oldest config first across tasks, filters by task and failed, and honours limit',
      async (context) => {
        const { expect, clock } = context;
        const store = pushOf(context.store);
        const t0 = clock.now;
        await createTask(store, taskFixture({ id: 'task-1' }));
        await createTask(store, taskFixture({ id: 'task-2' }));
        await save(store, 'task-2', hook('b'));
        clock.advance(1);
        await save(store, 'task-1', hook('c'));
        await save(store, 'task-2', hook('a'));
        clock.advance(1);
        await save(store, 'task-1', hook('d'));
        const order = ['task-2/b', 'task-1/c', 'task-2/a', 'task-1/d'];
        const listed = (filter?: Parameters<PushStore['listPushDeliveries']>[0]) =>
          store.listPushDeliveries(filter).then((all) => all.map((d) => `${d.config.taskId}/${d.config.config.id}`));

        expect(await listed()).toEqual(order);
        expect(await listed({ limit: 2 })).toEqual(order.slice(0, 2));
        expect(await listed({ taskId: 'task-1' })).toEqual(['task-1/c', 'task-1/d']);
        expect(await listed({ taskId: 'task-unknown' })).toEqual([]);

        const c = (await claim(store, 'worker', t0 + 2)).find((d) => d.config.config.id === 'c') as PushDelivery;
        expect(await store.failPushAttempt({ ...keyOf(c), nextAttemptAt: null, error: 'gone' })).toBe(true);
        expect(await listed({ failed: true })).toEqual(['task-1/c']);
        expect(await listed({ failed: false, taskId: 'task-1' })).toEqual(['task-1/d']);
        expect(await listed({ failed: false, limit: 1 })).toEqual(['task-2/b']);
        // Claims show in the listing.
        const states = await store.listPushDeliveries({ failed: false });
        expect(states.map((d) => d.state.claimedBy)).toEqual(['worker', 'worker', 'worker']);
      },
      'push',
    );

    test(
      `${CLAIMANTS} concurrent claimants (on several instances where supported): each delivery goes to exactly one, also when expired claims are taken over`,
      async (context) => {
        const { expect, clock } = context;
        const stores = (await storesOnLocation(context, 3)).map(pushOf);
        const at = (i: number): PushCapable => stores[i % stores.length] as PushCapable;
        const t0 = clock.now;
        const all: string[] = [];
        for (let i = 0; i < 8; i++) {
          await taskWithConfigs(at(i), `task-${i}`, ['x', 'y']);
          all.push(`task-${i}/x`, `task-${i}/y`);
        }
        all.sort();

        const round = async (now: number) => {
          const results = await Promise.all(
            Array.from({ length: CLAIMANTS }, (_, i) => claim(at(i), `worker-${i}`, now, { limit: 4, ttl: 1000 })),
          );
          results.forEach((claimed, i) => {
            for (const d of claimed) expect(d.state.claimedBy).toBe(`worker-${i}`);
          });
          return results.flat();
        };
        const first = await round(t0);
        expect(keys(first)).toEqual(all);
        for (const reader of stores) expect(await claim(reader, 'late', t0 + 1000)).toEqual([]);

        // Every claim expired: ten workers race to take them over.
        const second = await round(t0 + 1001);
        expect(keys(second)).toEqual(all);
        const claimIds = new Set(second.map((d) => d.state.claimId));
        expect(claimIds.size).toBeGreaterThan(0);
        for (const d of first) expect(claimIds.has(d.state.claimId)).toBe(false);

        // Only the current holders may complete: the first round's claims are all refused.
        const stale = await Promise.all(
          first.map((d, i) => at(i).completePushDelivery({ ...keyOf(d), cursor: 1, sentAt: t0 + 1002 })),
        );
        expect(stale.every((done) => !done)).toBe(true);
        const current = await Promise.all(
          second.map((d, i) => at(i).completePushDelivery({ ...keyOf(d), cursor: 1, sentAt: t0 + 1002 })),
        );
        expect(current.every(Boolean)).toBe(true);
        for (const reader of stores) {
          const states = await reader.listPushDeliveries();
          expect(states.map((d) => d.state.cursor)).toEqual(all.map(() => 1));
        }
      },
      'push',
    );

    test(
      'configs and deliveries are per namespace',
      async ({ expect, store: s, openStore, clock }) => {
        const store = pushOf(s);
        const a = pushOf(await openStore({ namespace: 'agent_a' }));
        const b = pushOf(await openStore({ namespace: 'agent_b' }));
        await taskWithConfigs(a, 'same-id', ['cfg']);
        const missing = await rejectionOf(save(b, 'same-id', hook('cfg')));
        expect(isCode(missing, 'TASK_NOT_FOUND'), String(missing)).toBe(true);
        await taskWithConfigs(b, 'same-id', ['other']);

        expect((await a.listPushConfigs('same-id')).map((r) => r.config.id)).toEqual(['cfg']);
        expect((await b.listPushConfigs('same-id')).map((r) => r.config.id)).toEqual(['other']);
        expect(await store.listPushConfigs('same-id')).toEqual([]);
        expect(await store.listPushDeliveries()).toEqual([]);
        expect(await b.getPushConfig('same-id', 'cfg')).toBeUndefined();

        expect(keys(await claim(b, 'worker', clock.now))).toEqual(['same-id/other']);
        expect(await claim(store, 'worker', clock.now)).toEqual([]);
        const ofA = only({ expect }, await claim(a, 'worker', clock.now));
        // A claim of a cannot be completed, renewed or deleted through b (b renews its own claim only).
        expect(await b.completePushDelivery({ ...keyOf(ofA), cursor: 1, sentAt: clock.now })).toBe(false);
        expect(await b.renewPushClaims('worker', clock.now + 10 * TTL)).toBe(1);
        expect(await b.deletePushConfig('same-id', 'cfg')).toBe(false);
        expect((await a.listPushDeliveries())[0]?.state.claimUntil).toBe(clock.now + TTL);
        expect(await a.completePushDelivery({ ...keyOf(ofA), cursor: 1, sentAt: clock.now })).toBe(true);
      },
      ['push', 'namespaces'],
    );

    test(
      'configs, delivery state and claims survive close and reopen; a claim made on one instance is completed on another',
      async (context) => {
        const { expect, clock, openStore } = context;
        const store = pushOf(context.store);
        const t0 = clock.now;
        await taskWithConfigs(store, 'task', ['done', 'held']);
        const claimed = await claim(store, 'worker', t0);
        const done = claimed.find((d) => d.config.config.id === 'done') as PushDelivery;
        const held = claimed.find((d) => d.config.config.id === 'held') as PushDelivery;
        expect(await store.completePushDelivery({ ...keyOf(done), cursor: 1, sentAt: t0, status: 200 })).toBe(true);
        const before = await store.listPushDeliveries();
        await store.close();

        const reopened = pushOf(await openStore());
        expect(await reopened.listPushDeliveries()).toEqual(before);
        expect(await reopened.listPushConfigs('task')).toEqual(before.map((d) => d.config));
        expect(await claim(reopened, 'other', t0 + 1)).toEqual([]);
        expect(await reopened.completePushDelivery({ ...keyOf(held), cursor: 1, sentAt: t0 + 2 })).toBe(true);
        expect((await reopened.listPushDeliveries()).map((d) => d.state.cursor)).toEqual([1, 1]);
      },
      ['push', 'durable'],
    );
  });
}
