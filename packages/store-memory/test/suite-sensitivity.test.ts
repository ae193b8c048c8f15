/**
 * Tests of the conformance suite itself: it must pass the reference store and fail stores with
 * typical adapter bugs. Each broken store wraps a MemoryStore and changes one behaviour; the suite
 * runs through a recording fake runner, and the test names the suite test that must catch the bug.
 */

import type {
  A2AStore,
  Clock,
  CommitRequest,
  CommitResult,
  ContextRecord,
  EnqueueTurnRequest,
  ExpiredWorker,
  ListTasksOptions,
  MessageIndexEntry,
  PurgeResult,
  StoreCallContext,
  StoreCapabilities,
  StoredEvent,
  Task,
  TaskRecord,
  TurnReadiness,
  TurnTicket,
  Unsubscribe,
} from '@fastify-a2a/core';
import { type ConformanceTestBody, type StoreFactory, storeConformance } from '@fastify-a2a/core/testing';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';

class Delegating implements A2AStore {
  readonly inner: MemoryStore;
  readonly supports: StoreCapabilities;
  constructor(clock: Clock, inner: MemoryStore = new MemoryStore({ clock })) {
    this.inner = inner;
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
  commit(request: CommitRequest, ctx?: StoreCallContext): Promise<CommitResult> {
    return this.inner.commit(request, ctx);
  }
  getTask(taskId: string, ctx?: StoreCallContext): Promise<TaskRecord | undefined> {
    return this.inner.getTask(taskId, ctx);
  }
  getVersions(taskIds: readonly string[], ctx?: StoreCallContext): Promise<Map<string, number>> {
    return this.inner.getVersions(taskIds, ctx);
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
  heartbeat(workerId: string, leaseUntil: number, ctx?: StoreCallContext): Promise<void> {
    return this.inner.heartbeat(workerId, leaseUntil, ctx);
  }
  enqueueTurn(request: EnqueueTurnRequest, ctx?: StoreCallContext): Promise<TurnTicket> {
    return this.inner.enqueueTurn(request, ctx);
  }
  turnReadiness(ticket: TurnTicket, ctx?: StoreCallContext): Promise<TurnReadiness> {
    return this.inner.turnReadiness(ticket, ctx);
  }
  finishTurn(ticket: TurnTicket, ctx?: StoreCallContext): Promise<void> {
    return this.inner.finishTurn(ticket, ctx);
  }
  claimExpiredWorkers(now: number, exceptWorkerId?: string, ctx?: StoreCallContext): Promise<ExpiredWorker[]> {
    return this.inner.claimExpiredWorkers(now, exceptWorkerId, ctx);
  }
  removeWorker(workerId: string, ctx?: StoreCallContext): Promise<void> {
    return this.inner.removeWorker(workerId, ctx);
  }
  listWorkerTurns(workerId: string, ctx?: StoreCallContext): Promise<TurnTicket[]> {
    return this.inner.listWorkerTurns(workerId, ctx);
  }
  findMessage(messageId: string, ctx?: StoreCallContext): Promise<MessageIndexEntry | undefined> {
    return this.inner.findMessage(messageId, ctx);
  }
}

const bugs: Record<string, { store: (clock: Clock) => A2AStore; caughtBy: string }> = {
  'keeps a reference to the committed snapshot (no copy in)': {
    caughtBy: 'taskBasics: data is copied in: mutating what was committed does not change the store',
    store: (clock) =>
      new (class extends Delegating {
        readonly #committed = new Map<string, Task>();
        override async commit(request: CommitRequest): Promise<CommitResult> {
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
        override async commit(request: CommitRequest): Promise<CommitResult> {
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
        override async commit(request: CommitRequest): Promise<CommitResult> {
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
  'grants every turn at once': {
    caughtBy: 'turnQueue: the first ticket of a context is ready; the next waits for the one directly ahead of it',
    store: (clock) =>
      new (class extends Delegating {
        override async turnReadiness(): Promise<TurnReadiness> {
          return { ready: true };
        }
      })(clock),
  },
  'finishes the head of the context whatever the ticket': {
    caughtBy: 'turnQueue: finishTurn of a missing ticket changes nothing',
    store: (clock) =>
      new (class extends Delegating {
        override async finishTurn(ticket: TurnTicket): Promise<void> {
          let head = ticket;
          for (;;) {
            const readiness = await super.turnReadiness(head);
            if (readiness.ready) break;
            head = readiness.ahead;
          }
          return super.finishTurn(head);
        }
      })(clock),
  },
  'claims a lease that ends exactly at now': {
    caughtBy:
      'leases: claimExpiredWorkers claims workers whose lease ended strictly before now, with their queued turns, once',
    store: (clock) =>
      new (class extends Delegating {
        override claimExpiredWorkers(now: number, exceptWorkerId?: string): Promise<ExpiredWorker[]> {
          return super.claimExpiredWorkers(now + 1, exceptWorkerId);
        }
      })(clock),
  },
  'claims without deleting the worker': {
    caughtBy:
      'leases: claimExpiredWorkers claims workers whose lease ended strictly before now, with their queued turns, once',
    store: (clock) =>
      new (class extends Delegating {
        readonly #leases = new Map<string, number>();
        override heartbeat(workerId: string, leaseUntil: number): Promise<void> {
          this.#leases.set(workerId, leaseUntil);
          return super.heartbeat(workerId, leaseUntil);
        }
        override async claimExpiredWorkers(now: number, exceptWorkerId?: string): Promise<ExpiredWorker[]> {
          const claimed = await super.claimExpiredWorkers(now, exceptWorkerId);
          for (const { workerId } of claimed) await super.heartbeat(workerId, this.#leases.get(workerId) ?? 0);
          return claimed;
        }
      })(clock),
  },
  'claims in two steps (read, then delete), so concurrent reapers share a worker': {
    caughtBy:
      'leases: 10 concurrent claimers (on several instances where supported): each dead worker goes to exactly one',
    store: (clock) =>
      new (class extends Delegating {
        readonly #leases = new Map<string, number>();
        override heartbeat(workerId: string, leaseUntil: number): Promise<void> {
          this.#leases.set(workerId, leaseUntil);
          return super.heartbeat(workerId, leaseUntil);
        }
        override async claimExpiredWorkers(now: number, exceptWorkerId?: string): Promise<ExpiredWorker[]> {
          const expired = [...this.#leases].filter(([id, until]) => until < now && id !== exceptWorkerId);
          await new Promise((resolve) => setImmediate(resolve));
          const claimed: ExpiredWorker[] = [];
          for (const [workerId] of expired) {
            await super.removeWorker(workerId);
            this.#leases.delete(workerId);
            claimed.push({ workerId, lastHeartbeat: clock(), turns: await super.listWorkerTurns(workerId) });
          }
          return claimed;
        }
      })(clock),
  },
  'enqueues the turn of a commit even when the commit is refused': {
    caughtBy: 'turnQueue: a refused commit enqueues nothing and finishes nothing',
    store: (clock) =>
      new (class extends Delegating {
        override async commit(request: CommitRequest): Promise<CommitResult> {
          if (request.enqueueTurn === undefined) return super.commit(request);
          const { turnId, workerId } = request.enqueueTurn;
          const turn = await super.enqueueTurn({
            contextId: request.task.contextId,
            taskId: request.taskId,
            turnId,
            workerId,
          });
          const { enqueueTurn: _, ...rest } = request;
          return { ...(await super.commit(rest)), turn };
        }
      })(clock),
  },
  'ignores finishTurn in a commit': {
    caughtBy: 'turnQueue: commit with finishTurn removes the ticket, and subscribers of the task hear of it',
    store: (clock) =>
      new (class extends Delegating {
        override async commit(request: CommitRequest): Promise<CommitResult> {
          const { finishTurn: _, ...rest } = request;
          return super.commit(rest);
        }
      })(clock),
  },
  'indexes only the first message of a task': {
    caughtBy: 'messageIndex: commit indexes the first user message of a task and every message event',
    store: (clock) =>
      new (class extends Delegating {
        readonly #firsts = new Set<string>();
        override async commit(request: CommitRequest): Promise<CommitResult> {
          const stored = await super.commit(request);
          for (const event of request.events) {
            if (event.kind === 'task' && event.history?.[0]) this.#firsts.add(event.history[0].messageId);
          }
          return stored;
        }
        override async findMessage(messageId: string): Promise<MessageIndexEntry | undefined> {
          return this.#firsts.has(messageId) ? super.findMessage(messageId) : undefined;
        }
      })(clock),
  },
  'keeps the index entries of purged tasks': {
    caughtBy:
      'messageIndex: purgeExpired removes the purged tasks’ entries; their ids can be used again [requires supports.ttl]',
    store: (clock) =>
      new (class extends Delegating {
        readonly #indexed = new Map<string, MessageIndexEntry>();
        override async commit(request: CommitRequest): Promise<CommitResult> {
          const stored = await super.commit(request);
          const at = { taskId: request.taskId, contextId: request.task.contextId };
          for (const event of request.events) {
            if (event.kind === 'message') this.#indexed.set(event.messageId, at);
            if (event.kind === 'task' && event.history?.[0]) this.#indexed.set(event.history[0].messageId, at);
          }
          return stored;
        }
        override async findMessage(messageId: string): Promise<MessageIndexEntry | undefined> {
          return (await super.findMessage(messageId)) ?? this.#indexed.get(messageId);
        }
      })(clock),
  },
};

/**
 * Instances on one location and namespace share a MemoryStore that outlives close(): what a
 * durable, namespaced store looks like to the suite, so its multi-instance, persistence and
 * isolation tests run here too.
 */
class SharedByLocation extends Delegating {
  static readonly #storages = new Map<string, MemoryStore>();
  override readonly supports: StoreCapabilities = { durable: true, crossProcess: false, ttl: true, namespaces: true };
  constructor({ clock, location, namespace }: { clock: Clock; location: string; namespace?: string | undefined }) {
    const key = `${location}/${namespace ?? ''}`;
    let storage = SharedByLocation.#storages.get(key);
    if (storage === undefined) {
      storage = new MemoryStore({ clock });
      SharedByLocation.#storages.set(key, storage);
    }
    super(clock, storage);
  }
  override async close(): Promise<void> {}
}

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
