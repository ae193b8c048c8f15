import { describe, expect, it } from 'vitest';
import type { A2AStore, StoreCapabilities } from '../../src/store/index.js';
import { defineModule } from '../../src/testing/harness.js';
import {
  type ConformanceOptions,
  type ConformanceTestBody,
  conformanceModules,
  type StoreFactoryOptions,
  storeConformance,
} from '../../src/testing/index.js';

/** A store that only records its lifecycle; the harness tests never touch data. */
class StubStore {
  readonly events: string[] = [];
  constructor(
    readonly supports: StoreCapabilities,
    readonly factoryOptions: StoreFactoryOptions,
    readonly closeError?: Error,
  ) {}
  async open(): Promise<void> {
    this.events.push('open');
  }
  async close(): Promise<void> {
    this.events.push('close');
    if (this.closeError) throw this.closeError;
  }
}

const allSupported: StoreCapabilities = {
  durable: true,
  crossProcess: true,
  ttl: true,
  namespaces: true,
  listTasks: true,
};

function recorder() {
  const tests: Array<{ name: string; body: ConformanceTestBody; timeout: number | undefined }> = [];
  const groups: string[] = [];
  const stores: StubStore[] = [];
  const options = (
    overrides: Partial<ConformanceOptions> & { supports?: StoreCapabilities; closeError?: Error } = {},
  ) => {
    const { supports = allSupported, closeError, ...rest } = overrides;
    const result: ConformanceOptions = {
      test: (name, body, timeout) => tests.push({ name, body, timeout }),
      factory: (factoryOptions) => {
        const store = new StubStore(supports, factoryOptions, closeError);
        stores.push(store);
        return store as unknown as A2AStore;
      },
      ...rest,
    };
    return result;
  };
  return { tests, groups, stores, options };
}

const run = async (body: ConformanceTestBody, skip?: (note?: string) => void) =>
  body(skip === undefined ? { expect } : { expect, skip });

describe('conformance harness', () => {
  it('prefixes test names with the module without describe, groups them with it', () => {
    const flat = recorder();
    defineModule(flat.options(), 'demo', (test) => test('does a thing', async () => {}));
    expect(flat.tests.map((t) => t.name)).toEqual(['demo: does a thing']);

    const grouped = recorder();
    const names: string[] = [];
    defineModule(
      grouped.options({
        describe: (name, body) => {
          names.push(name);
          body();
        },
      }),
      'demo',
      (test) => test('does a thing', async () => {}, 'durable'),
    );
    expect(names).toEqual(['demo']);
    expect(grouped.tests.map((t) => t.name)).toEqual(['does a thing [requires supports.durable]']);
  });

  it('gives each test a fresh, opened store at a new location and closes it', async () => {
    const r = recorder();
    const seen: Array<{ location: string; now: number }> = [];
    defineModule(r.options({ timeout: 1234 }), 'demo', (test) => {
      for (let i = 0; i < 2; i++) {
        test(`test ${i}`, async ({ store, location, clock }) => {
          expect((store as unknown as StubStore).events).toEqual(['open']);
          clock.advance(5);
          seen.push({ location, now: clock() });
        });
      }
    });
    expect(r.tests.map((t) => t.timeout)).toEqual([1234, 1234]);
    for (const t of r.tests) await run(t.body);

    expect(r.stores.map((s) => s.events)).toEqual([
      ['open', 'close'],
      ['open', 'close'],
    ]);
    const [first, second] = seen;
    expect(first?.location).not.toBe(second?.location);
    for (const { location } of seen) expect(location).toMatch(/^a2a_conformance_[a-z0-9]{6}_\d+$/);
    // Each test gets its own clock, starting at the same instant.
    expect(first?.now).toBe(second?.now);
    expect(r.stores.map((s) => s.factoryOptions.location)).toEqual(seen.map((s) => s.location));
    expect(r.stores.every((s) => !('namespace' in s.factoryOptions))).toBe(true);
  });

  it('openStore reuses the location and clock unless told otherwise, and passes the namespace', async () => {
    const r = recorder();
    defineModule(r.options({ locationPrefix: 'my_prefix' }), 'demo', (test) =>
      test('two stores', async ({ openStore, newLocation }) => {
        await openStore({ namespace: 'agent_a' });
        await openStore({ location: newLocation() });
      }),
    );
    await run(r.tests[0]?.body as ConformanceTestBody);

    const [primary, namespaced, elsewhere] = r.stores;
    expect(namespaced?.factoryOptions).toEqual({
      clock: primary?.factoryOptions.clock,
      location: primary?.factoryOptions.location,
      namespace: 'agent_a',
    });
    expect(elsewhere?.factoryOptions.location).not.toBe(primary?.factoryOptions.location);
    expect(elsewhere?.factoryOptions.location).toMatch(/^my_prefix_/);
    // Closed last opened first.
    expect(r.stores.map((s) => s.events)).toEqual([
      ['open', 'close'],
      ['open', 'close'],
      ['open', 'close'],
    ]);
  });

  it('skips a test whose capability the store declares false, without opening the store', async () => {
    const r = recorder();
    let ran = false;
    defineModule(r.options({ supports: { ...allSupported, durable: false } }), 'demo', (test) =>
      test(
        'needs durability',
        async () => {
          ran = true;
        },
        'durable',
      ),
    );
    const notes: Array<string | undefined> = [];
    await run(r.tests[0]?.body as ConformanceTestBody, (note) => notes.push(note));

    expect(ran).toBe(false);
    expect(notes).toEqual(['store.supports.durable is false']);
    expect(r.stores.map((s) => s.events)).toEqual([['close']]);
  });

  it('a test that needs several capabilities names them all, and is skipped when any is missing', async () => {
    const r = recorder();
    let ran = 0;
    for (const supports of [allSupported, { ...allSupported, ttl: false }, { durable: true } as StoreCapabilities]) {
      defineModule(r.options({ supports }), 'demo', (test) =>
        test('needs both', async () => {
          ran++;
        }, ['listTasks', 'ttl']),
      );
    }
    expect(r.tests.map((t) => t.name)).toEqual([
      'demo: needs both [requires supports.listTasks, supports.ttl]',
      'demo: needs both [requires supports.listTasks, supports.ttl]',
      'demo: needs both [requires supports.listTasks, supports.ttl]',
    ]);
    const notes: Array<string | undefined> = [];
    for (const t of r.tests) await run(t.body, (note) => notes.push(note));
    expect(ran).toBe(1);
    // An absent capability (a store written before it existed) counts as false.
    expect(notes).toEqual(['store.supports.ttl is false', 'store.supports.listTasks is false']);
  });

  it('closes the stores when the test fails, and reports the test failure over a close failure', async () => {
    const r = recorder();
    defineModule(r.options({ closeError: new Error('close failed') }), 'demo', (test) => {
      test('fails', async () => {
        throw new Error('test failed');
      });
      test('passes', async () => {});
    });
    await expect(run(r.tests[0]?.body as ConformanceTestBody)).rejects.toThrow('test failed');
    await expect(run(r.tests[1]?.body as ConformanceTestBody)).rejects.toThrow('close failed');
    expect(r.stores.map((s) => s.events)).toEqual([
      ['open', 'close'],
      ['open', 'close'],
    ]);
  });

  it('rejects a locationPrefix that cannot be a file or schema name', () => {
    const r = recorder();
    for (const locationPrefix of ['', 'Upper', '1abc', 'has-dash', 'a'.repeat(25)]) {
      expect(() => defineModule(r.options({ locationPrefix }), 'demo', () => {}), locationPrefix).toThrow(
        /locationPrefix/,
      );
    }
  });

  it('storeConformance registers every module, each test once', () => {
    const r = recorder();
    const groups: string[] = [];
    storeConformance(
      r.options({
        describe: (name, body) => {
          groups.push(name);
          body();
        },
      }),
    );
    expect(groups).toEqual(Object.keys(conformanceModules));
    expect(groups).toEqual([
      'lifecycle',
      'taskBasics',
      'history',
      'tasksByContext',
      'listTasks',
      'eventLog',
      'activeTasks',
      'interruptedTasks',
      'contextStore',
      'concurrency',
      'notifications',
      'messageIndex',
      'ownership',
      'turnQueue',
      'leases',
      'cluster',
      'push',
      'retention',
      'isolation',
      'persistence',
    ]);
    expect(r.tests.length).toBeGreaterThanOrEqual(45);
    expect(new Set(r.tests.map((t) => t.name)).size).toBe(r.tests.length);
  });
});
