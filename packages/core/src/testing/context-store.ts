import { type ConformanceOptions, defineModule } from './harness.js';

/**
 * getContext/setContext. A context's state is any JSON value, `null` included: `setContext(id,
 * null)` stores a record whose state is `null` (not the same as "no record"). `undefined` is not
 * JSON and its behaviour is left to each store.
 */
export function contextStore(options: ConformanceOptions): void {
  defineModule(options, 'contextStore', (test) => {
    test('a missing context is undefined', async ({ expect, store }) => {
      expect(await store.getContext('no-such-context')).toBeUndefined();
      await store.setContext('known', { a: 1 });
      expect(await store.getContext('known-2')).toBeUndefined();
      expect(await store.getContext('KNOWN')).toBeUndefined();
    });

    test('any JSON value round-trips: object, array, string, number, boolean, null', async ({
      expect,
      store,
      clock,
    }) => {
      const values: Record<string, unknown> = {
        object: { upstream: 'conv-✓-42', turns: 3, nested: { list: [1, 'two', null, false], empty: {} }, none: null },
        array: [1, { two: 2 }, ['three'], null],
        string: 'upstream conversation 👩🏽‍💻 שלום',
        emptyString: '',
        integer: 42,
        float: -1.5e-3,
        zero: 0,
        true: true,
        false: false,
        null: null,
      };
      for (const [id, state] of Object.entries(values)) await store.setContext(`ctx-${id}`, state);
      for (const [id, state] of Object.entries(values)) {
        expect(await store.getContext(`ctx-${id}`)).toEqual({ contextId: `ctx-${id}`, state, updatedAt: clock.now });
      }
    });

    test('set replaces the state (no merge) and moves updatedAt', async ({ expect, store, clock }) => {
      await store.setContext('ctx', { a: 1, keep: 'no' });
      const later = clock.advance(5000);
      await store.setContext('ctx', { b: 2 });
      expect(await store.getContext('ctx')).toEqual({ contextId: 'ctx', state: { b: 2 }, updatedAt: later });
      clock.advance(1);
      await store.setContext('ctx', 'now a string');
      expect(await store.getContext('ctx')).toEqual({ contextId: 'ctx', state: 'now a string', updatedAt: later + 1 });
      await store.setContext('ctx', null);
      expect(await store.getContext('ctx')).toEqual({ contextId: 'ctx', state: null, updatedAt: later + 1 });
    });

    test('contexts are independent of each other', async ({ expect, store }) => {
      await store.setContext('one', { n: 1 });
      await store.setContext('two', { n: 2 });
      await store.setContext('one', { n: 11 });
      expect((await store.getContext('one'))?.state).toEqual({ n: 11 });
      expect((await store.getContext('two'))?.state).toEqual({ n: 2 });
    });

    test('state is copied in and out', async ({ expect, store }) => {
      const state = { nested: { list: [1, 2] }, name: 'original' };
      await store.setContext('ctx', state);
      state.nested.list.push(3);
      state.name = 'changed';

      const first = await store.getContext('ctx');
      expect(first?.state).toEqual({ nested: { list: [1, 2] }, name: 'original' });
      const read = first?.state as typeof state;
      read.nested.list.push(4);
      read.name = 'changed again';
      if (first) first.contextId = 'other';

      expect(await store.getContext('ctx')).toEqual({
        contextId: 'ctx',
        state: { nested: { list: [1, 2] }, name: 'original' },
        updatedAt: expect.any(Number),
      });
    });
  });
}
