/**
 * Tests of the conformance suite itself: it must pass the reference store and fail stores with
 * typical adapter bugs. Each broken store wraps a MemoryStore and changes one behaviour; the suite
 * runs through a recording fake runner, and the test names the suite test that must catch the bug.
 */

import type {
  A2AStore,
  Clock,
  CommitRequest,
  ContextRecord,
  ListTasksOptions,
  PurgeResult,
  StoreCallContext,
  StoreCapabilities,
  StoredEvent,
  Task,
  TaskRecord,
  Unsubscribe,
} from '@fastify-a2a/core';
import { type ConformanceTestBody, type StoreFactory, storeConformance } from '@fastify-a2a/core/testing';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';

class Delegating implements A2AStore {
  readonly inner: MemoryStore;
  readonly supports: StoreCapabilities;
  constructor(clock: Clock) {
    this.inner = new MemoryStore({ clock });
    this.supports = this.inner.supports;
  }
  open(): Promise<void> {
    return this.inner.open();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  ping(): Promise<void> {
    return this.inner.ping();
  }
  commit(request: CommitRequest, ctx?: StoreCallContext): Promise<StoredEvent[]> {
    return this.inner.commit(request, ctx);
  }
  getTask(taskId: string, ctx?: StoreCallContext): Promise<TaskRecord | undefined> {
    return this.inner.getTask(taskId, ctx);
  }
  readEvents(taskId: string, afterSeq: number, limit?: number, ctx?: StoreCallContext): Promise<StoredEvent[]> {
    return this.inner.readEvents(taskId, afterSeq, limit, ctx);
  }
  listTasksByContext(contextId: string, options?: ListTasksOptions, ctx?: StoreCallContext): Promise<TaskRecord[]> {
    return this.inner.listTasksByContext(contextId, options, ctx);
  }
  listActiveTasks(ctx?: StoreCallContext): Promise<TaskRecord[]> {
    return this.inner.listActiveTasks(ctx);
  }
  getContext(contextId: string, ctx?: StoreCallContext): Promise<ContextRecord | undefined> {
    return this.inner.getContext(contextId, ctx);
  }
  setContext(contextId: string, state: unknown, ctx?: StoreCallContext): Promise<void> {
    return this.inner.setContext(contextId, state, ctx);
  }
  subscribe(taskId: string, listener: (seq: number) => void): Unsubscribe {
    return this.inner.subscribe(taskId, listener);
  }
  purgeExpired(cutoff: number, ctx?: StoreCallContext): Promise<PurgeResult> {
    return this.inner.purgeExpired(cutoff, ctx);
  }
}

const bugs: Record<string, { store: (clock: Clock) => A2AStore; caughtBy: string }> = {
  'keeps a reference to the committed snapshot (no copy in)': {
    caughtBy: 'taskBasics: data is copied in: mutating what was committed does not change the store',
    store: (clock) =>
      new (class extends Delegating {
        readonly #committed = new Map<string, Task>();
        override async commit(request: CommitRequest): Promise<StoredEvent[]> {
          const stored = await super.commit(request);
          this.#committed.set(request.taskId, request.task);
          return stored;
        }
        override async getTask(taskId: string): Promise<TaskRecord | undefined> {
          const record = await super.getTask(taskId);
          const task = this.#committed.get(taskId);
          return record && task ? { ...record, task } : record;
        }
      })(clock),
  },
  'hands out the same object twice (no copy out)': {
    caughtBy: 'contextStore: state is copied in and out',
    store: (clock) =>
      new (class extends Delegating {
        readonly #handedOut = new Map<string, ContextRecord>();
        override async getContext(contextId: string): Promise<ContextRecord | undefined> {
          const cached = this.#handedOut.get(contextId);
          if (cached) return cached;
          const record = await super.getContext(contextId);
          if (record) this.#handedOut.set(contextId, record);
          return record;
        }
      })(clock),
  },
  'ignores the injected clock': {
    caughtBy: 'taskBasics: a created task reads back with version, createdAt and updatedAt',
    store: () => new Delegating(Date.now),
  },
  'skips the version check (last writer wins)': {
    caughtBy: 'concurrency: 20 concurrent read → apply → commit writers with retries lose no update',
    store: (clock) =>
      new (class extends Delegating {
        override async commit(request: CommitRequest): Promise<StoredEvent[]> {
          const current = await super.getTask(request.taskId);
          const expectedVersion = request.expectedVersion === 0 ? 0 : (current?.version ?? 0);
          return super.commit({ ...request, expectedVersion });
        }
      })(clock),
  },
  'numbers events from 0': {
    caughtBy: 'eventLog: readEvents(after N) returns exactly the later events, in order',
    store: (clock) =>
      new (class extends Delegating {
        override async readEvents(taskId: string, afterSeq: number, limit?: number): Promise<StoredEvent[]> {
          return (await super.readEvents(taskId, afterSeq, limit)).map((e) => ({ ...e, seq: e.seq - 1 }));
        }
      })(clock),
  },
  'ignores the readEvents limit': {
    caughtBy: 'eventLog: readEvents honours limit',
    store: (clock) =>
      new (class extends Delegating {
        override readEvents(taskId: string, afterSeq: number): Promise<StoredEvent[]> {
          return super.readEvents(taskId, afterSeq);
        }
      })(clock),
  },
  'lists a context newest first': {
    caughtBy: 'tasksByContext: returns only that context’s tasks, oldest first',
    store: (clock) =>
      new (class extends Delegating {
        override async listTasksByContext(contextId: string, options?: ListTasksOptions): Promise<TaskRecord[]> {
          return (await super.listTasksByContext(contextId)).reverse().slice(0, options?.limit);
        }
      })(clock),
  },
  'counts interrupted tasks as active': {
    caughtBy: 'activeTasks: lists submitted, working and unknown tasks, and no terminal or interrupted one',
    store: (clock) =>
      new (class extends Delegating {
        readonly #ids = new Set<string>();
        override async commit(request: CommitRequest): Promise<StoredEvent[]> {
          const stored = await super.commit(request);
          this.#ids.add(request.taskId);
          return stored;
        }
        override async listActiveTasks(): Promise<TaskRecord[]> {
          const records = await Promise.all([...this.#ids].map((id) => super.getTask(id)));
          return records.filter(
            (r): r is TaskRecord =>
              r !== undefined && !['completed', 'failed', 'canceled', 'rejected'].includes(r.task.status.state),
          );
        }
      })(clock),
  },
  'merges context state instead of replacing it': {
    caughtBy: 'contextStore: set replaces the state (no merge) and moves updatedAt',
    store: (clock) =>
      new (class extends Delegating {
        override async setContext(contextId: string, state: unknown): Promise<void> {
          const previous = (await super.getContext(contextId))?.state;
          const merge = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
          return super.setContext(
            contextId,
            merge(previous) && merge(state) ? { ...(previous as object), ...(state as object) } : state,
          );
        }
      })(clock),
  },
  'confuses a null state with no context': {
    caughtBy: 'contextStore: any JSON value round-trips: object, array, string, number, boolean, null',
    store: (clock) =>
      new (class extends Delegating {
        override async getContext(contextId: string): Promise<ContextRecord | undefined> {
          const record = await super.getContext(contextId);
          return record?.state === null ? undefined : record;
        }
      })(clock),
  },
  'purges tasks updated exactly at the cutoff': {
    caughtBy:
      'retention: purges old terminal tasks with their events and orphaned old contexts; keeps the rest [requires supports.ttl]',
    store: (clock) =>
      new (class extends Delegating {
        override purgeExpired(cutoff: number): Promise<PurgeResult> {
          return super.purgeExpired(cutoff + 1);
        }
      })(clock),
  },
  'keeps calling a listener after unsubscribe': {
    caughtBy: 'notifications: unsubscribe stops further calls',
    store: (clock) =>
      new (class extends Delegating {
        override subscribe(taskId: string, listener: (seq: number) => void): Unsubscribe {
          super.subscribe(taskId, listener);
          return () => {};
        }
      })(clock),
  },
  'lets one throwing listener stop the others': {
    caughtBy: 'notifications: a throwing listener breaks neither the commit nor the other listeners',
    store: (clock) =>
      new (class extends Delegating {
        readonly #listeners = new Map<string, Array<(seq: number) => void>>();
        override subscribe(taskId: string, listener: (seq: number) => void): Unsubscribe {
          let list = this.#listeners.get(taskId);
          if (!list) {
            const created: Array<(seq: number) => void> = [];
            list = created;
            this.#listeners.set(taskId, created);
            super.subscribe(taskId, (seq) => {
              for (const l of created) l(seq);
            });
          }
          list.push(listener);
          return () => {
            const index = list.indexOf(listener);
            if (index !== -1) list.splice(index, 1);
          };
        }
      })(clock),
  },
};

interface Outcome {
  passed: string[];
  failed: string[];
  skipped: string[];
}

async function runSuite(factory: StoreFactory): Promise<Outcome> {
  const tests: Array<{ name: string; body: ConformanceTestBody }> = [];
  storeConformance({ test: (name, body) => tests.push({ name, body }), factory, notificationTimeout: 300 });
  const outcome: Outcome = { passed: [], failed: [], skipped: [] };
  for (const { name, body } of tests) {
    let skipped = false;
    try {
      await body({
        expect,
        skip: () => {
          skipped = true;
        },
      });
      (skipped ? outcome.skipped : outcome.passed).push(name);
    } catch {
      outcome.failed.push(name);
    }
  }
  return outcome;
}

describe('the conformance suite', () => {
  it('passes the reference store, reporting only unsupported capabilities as skipped', async () => {
    const outcome = await runSuite(({ clock }) => new MemoryStore({ clock }));
    expect(outcome.failed).toEqual([]);
    expect(outcome.passed.length).toBeGreaterThan(40);
    expect(outcome.skipped.length).toBeGreaterThan(0);
    for (const name of outcome.skipped) expect(name).toMatch(/\[requires supports\.(durable|namespaces)\]$/);
  });

  it('passes the wrapper the broken stores build on', async () => {
    expect((await runSuite(({ clock }) => new Delegating(clock))).failed).toEqual([]);
  });

  for (const [bug, { store, caughtBy }] of Object.entries(bugs)) {
    it(`fails a store that ${bug}`, async () => {
      const outcome = await runSuite(({ clock }) => store(clock));
      expect(outcome.failed, JSON.stringify(outcome.failed)).toContain(caughtBy);
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
      const store = bugs['numbers events from 0']?.store(options.clock) as A2AStore;
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
