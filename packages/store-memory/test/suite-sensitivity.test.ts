/**
 * Tests of the conformance suite itself: it must pass the reference store and fail stores with
 * typical adapter bugs. Each broken store wraps a MemoryStore and changes one behaviour; the suite
 * runs through a recording fake runner, and the test names the suite test that must catch the bug.
 */
import type { A2AStore } from '@fastify-a2a/core';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';
import { coordinationBugs } from './sensitivity/coordination.js';
import { type Bugs, Delegating, runSuite, SharedByLocation } from './sensitivity/delegating.js';
import { messageIndexBugs } from './sensitivity/message-index.js';
import { pushBugs } from './sensitivity/push.js';
import { recentEventsBugs, taskBugs } from './sensitivity/tasks.js';

// Each broken store, in the order of the suite's modules.
const bugs: Bugs = { ...taskBugs, ...recentEventsBugs, ...coordinationBugs, ...pushBugs, ...messageIndexBugs };

describe('the conformance suite', () => {
  it('passes the reference store, reporting only unsupported capabilities as skipped', async () => {
    const outcome = await runSuite(({ clock }) => new MemoryStore({ clock }));
    expect(outcome.failed).toEqual([]);
    expect(outcome.passed.length).toBeGreaterThan(40);
    expect(outcome.skipped.length).toBeGreaterThan(0);
    for (const name of outcome.skipped) {
      expect(name).toMatch(/\[requires (supports\.\w+, )*supports\.(durable|namespaces)(, supports\.\w+)*\]$/);
    }
  });

  it('runs and passes every test, none skipped, on a store shared by location and namespace', async () => {
    const outcome = await runSuite((options) => new SharedByLocation(options));
    expect(outcome.failed).toEqual([]);
    expect(outcome.skipped).toEqual([]);
  });

  it('passes the wrapper the broken stores build on', async () => {
    expect((await runSuite(({ clock }) => new Delegating(clock))).failed).toEqual([]);
  });

  for (const [bug, { store, caughtBy }] of Object.entries(bugs)) {
    it(`fails a store that ${bug}`, async () => {
      const outcome = await runSuite((options) => store(options.clock, options));
      expect(outcome.failed, JSON.stringify(outcome.failed)).toContain(caughtBy);
      // On one of its checks: the suite saw the bug, rather than tripping over the store's error.
      // A check is an assertion, or `eventually` giving up on a condition that never came true.
      const error = outcome.errors.get(caughtBy) as Error | undefined;
      const checked =
        error?.name === 'AssertionError' || /^Timed out after \d+ ms waiting for /.test(error?.message ?? '');
      expect(checked, String(error)).toBe(true);
    });
  }

  it('closes every store a test opened, also when the test fails', async () => {
    const opened: A2AStore[] = [];
    const closed = new Set<A2AStore>();
    const outcome = await runSuite(({ clock }) => {
      const store = new MemoryStore({ clock });
      const close = store.close.bind(store);
      store.close = async () => {
        closed.add(store);
        return close();
      };
      opened.push(store);
      return store;
    });
    expect(outcome.failed).toEqual([]);
    expect(opened.length).toBeGreaterThanOrEqual(outcome.passed.length + outcome.skipped.length);
    expect(opened.filter((s) => !closed.has(s))).toEqual([]);

    const failing = await runSuite((options) => {
      const store = bugs['numbers events from 0']?.store(options.clock, options) as A2AStore;
      opened.push(store);
      return store;
    });
    expect(failing.failed.length).toBeGreaterThan(0);
    await expect(Promise.all(opened.map((s) => s.ping()))).rejects.toThrow(/closed/);
    const stillOpen = await Promise.all(
      opened.map((s) =>
        s.ping().then(
          () => true,
          () => false,
        ),
      ),
    );
    expect(stillOpen.filter(Boolean)).toEqual([]);
  });
});
