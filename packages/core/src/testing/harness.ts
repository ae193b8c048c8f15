/**
 * The plumbing every conformance module shares: the options a caller passes, how a test gets its
 * store(s) and clock, capability gating, and closing what a test opened.
 */

import type { ExpectStatic } from 'vitest';
import type { A2AStore, Clock, StoreCapabilities } from '../store/index.js';
import { createTestClock, type TestClock } from './fixtures.js';

/** What the suite needs from the runner's test context. Vitest's and Jest-compatible contexts fit. */
export interface ConformanceTestContext {
  /** Assertions bound to the running test (vitest: the test context's `expect`). */
  expect: ExpectStatic;
  /**
   * Marks the running test as skipped at run time (vitest ≥ 3.1). Used when the store declares a
   * capability false; without it, such a test returns early without asserting anything.
   */
  skip?: (note?: string) => void;
}

/** A test body as the suite hands it to the runner. */
export type ConformanceTestBody = (context: ConformanceTestContext) => Promise<void>;

/** The runner's `test`/`it`, called as `test(name, body)` or `test(name, body, timeout)`. */
export type ConformanceTestFunction = (name: string, body: ConformanceTestBody, timeout?: number) => void;

/** The runner's `describe`, called as `describe(name, () => { … })`. */
export type ConformanceDescribeFunction = (name: string, body: () => void) => unknown;

/** What the suite passes to {@link StoreFactory} each time it needs a store. */
export interface StoreFactoryOptions {
  /**
   * The clock the store must use for every timestamp it records (`createdAt`, `updatedAt`).
   * Tests move it forward by hand, so retention is tested without sleeping.
   */
  clock: Clock;
  /**
   * Opaque name of the backing storage, made of `[a-z0-9_]` and at most 48 characters, so it can be
   * used as a file name or a Postgres schema name. A name the suite has not used before must give
   * empty storage; the same name again must give the same storage (the same file, schema or
   * database). Every test gets its own name, unique within the run and across runs (it contains a
   * random part), so leftovers of an earlier run never collide. The suite reuses a name only for
   * stores that declare `supports.durable` (close and reopen, several instances sharing the data),
   * `supports.crossProcess` (several instances, as several workers would have) or
   * `supports.namespaces` (two agents on one database); other stores may ignore it.
   */
  location: string;
  /**
   * The agent namespace inside `location`. `undefined` means the store's default namespace. Set
   * only by the isolation module, which runs when the store declares `supports.namespaces`.
   */
  namespace?: string;
}

/**
 * Returns a fresh, NOT yet opened store for `options`. The suite calls `open()` and, at the end of
 * the test, `close()` on every store it got, so the factory itself must not open or close anything
 * it hands out. It may be called several times per test (two namespaces, a reopen). The suite reads
 * `store.supports` before `open()` to decide whether a capability-gated test runs.
 */
export type StoreFactory = (options: StoreFactoryOptions) => A2AStore | Promise<A2AStore>;

export interface ConformanceOptions {
  /** The runner's `test` or `it`. */
  test: ConformanceTestFunction;
  /** The runner's `describe`; when given, each module's tests are grouped under the module's name. */
  describe?: ConformanceDescribeFunction;
  /** Creates the store under test; see {@link StoreFactory}. */
  factory: StoreFactory;
  /**
   * Prefix of the `location` names the suite generates, e.g. to find and drop leftover schemas.
   * Must match `[a-z][a-z0-9_]{0,23}`.
   * @default 'a2a_conformance'
   */
  locationPrefix?: string;
  /**
   * Timeout of each test in milliseconds, passed to the runner as `test`'s third argument.
   * @default undefined (the runner's default)
   */
  timeout?: number;
  /**
   * How long the notification tests wait for a listener to be called, in milliseconds.
   * @default 3000
   */
  notificationTimeout?: number;
}

/** What a conformance test body receives besides `expect`. */
export interface StoreTestContext {
  expect: ExpectStatic;
  /** The test's store: opened, at {@link StoreTestContext.location}, in the default namespace. */
  store: A2AStore;
  /** The clock every store of this test was created with. */
  clock: TestClock;
  /** The location of `store`. */
  location: string;
  /** A new location name, for a second, independent storage. */
  newLocation: () => string;
  /** Creates and opens another store (default: same location, default namespace); closed after the test. */
  openStore: (options?: { location?: string; namespace?: string }) => Promise<A2AStore>;
  /** From {@link ConformanceOptions.notificationTimeout}. */
  notificationTimeout: number;
}

export type StoreTestBody = (context: StoreTestContext) => Promise<void>;

/**
 * `count` store instances sharing the test's data, as several workers would: the test's store and
 * `count - 1` more on its location when the store declares `supports.durable` or
 * `supports.crossProcess`; otherwise only the test's store (its data lives in that instance).
 */
export async function storesOnLocation(context: StoreTestContext, count: number): Promise<A2AStore[]> {
  const { store, openStore } = context;
  if (!store.supports.durable && !store.supports.crossProcess) return [store];
  const stores = [store];
  for (let i = 1; i < count; i++) stores.push(await openStore());
  return stores;
}

export type Capability = keyof StoreCapabilities;

const LOCATION_PREFIX = /^[a-z][a-z0-9_]{0,23}$/;

// One random part per module instance (each test file gets its own), so locations of two test
// files, or of two runs against one Postgres server, never collide.
const runId = Math.random().toString(36).slice(2, 8).padEnd(6, '0');
let locationCounter = 0;

/** Registers one module's tests, grouped under `describe` when the caller gave one. */
export function defineModule(
  options: ConformanceOptions,
  moduleName: string,
  register: (
    define: (name: string, body: StoreTestBody, requires?: Capability | readonly Capability[]) => void,
  ) => void,
): void {
  const prefix = options.locationPrefix ?? 'a2a_conformance';
  if (!LOCATION_PREFIX.test(prefix)) {
    throw new TypeError(`locationPrefix "${prefix}" must match ${LOCATION_PREFIX} (it becomes file and schema names).`);
  }
  const newLocation = (): string => `${prefix}_${runId}_${++locationCounter}`;
  const grouped = options.describe !== undefined;

  const define = (name: string, body: StoreTestBody, requires?: Capability | readonly Capability[]): void => {
    const required: readonly Capability[] =
      requires === undefined ? [] : typeof requires === 'string' ? [requires] : requires;
    const condition = required.map((capability) => `supports.${capability}`).join(', ');
    const title = `${grouped ? '' : `${moduleName}: `}${name}${condition ? ` [requires ${condition}]` : ''}`;
    options.test(
      title,
      async ({ expect, skip }) => {
        const clock = createTestClock();
        const location = newLocation();
        const opened: A2AStore[] = [];
        const openStore = async (where: { location?: string; namespace?: string } = {}): Promise<A2AStore> => {
          const factoryOptions: StoreFactoryOptions = { clock, location: where.location ?? location };
          if (where.namespace !== undefined) factoryOptions.namespace = where.namespace;
          const store = await options.factory(factoryOptions);
          opened.push(store);
          await store.open();
          return store;
        };
        try {
          const store = await options.factory({ clock, location });
          opened.push(store);
          const missing = required.find((capability) => store.supports[capability] !== true);
          if (missing !== undefined) {
            // Skips come only from what the store declares (STYLE.md), never from caller flags.
            skip?.(`store.supports.${missing} is false`);
          } else {
            await store.open();
            await body({
              expect,
              store,
              clock,
              location,
              newLocation,
              openStore,
              notificationTimeout: options.notificationTimeout ?? 3000,
            });
          }
        } catch (error) {
          // The test's own failure matters more than a failure to close after it.
          await closeAll(opened).catch(() => {});
          throw error;
        }
        await closeAll(opened);
      },
      options.timeout,
    );
  };

  if (options.describe) options.describe(moduleName, () => register(define));
  else register(define);
}

/** Closes every store (last opened first), then reports the first failure, if any. */
async function closeAll(stores: A2AStore[]): Promise<void> {
  let failure: unknown;
  let failed = false;
  for (const store of [...stores].reverse()) {
    try {
      await store.close();
    } catch (error) {
      if (!failed) failure = error;
      failed = true;
    }
  }
  if (failed) throw failure;
}
