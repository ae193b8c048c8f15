/**
 * Tests of the conformance suite itself: it must pass the reference store and fail stores with
 * typical adapter bugs. Each broken store wraps a MemoryStore and changes one behaviour; the suite
 * runs through a recording fake runner, and the test names the suite test that must catch the bug.
 */

import { createHash } from 'node:crypto';
import {
  type A2AStore,
  type ClaimPushDeliveriesRequest,
  type Clock,
  type CommitRequest,
  type CommitResult,
  type CompletePushDeliveryRequest,
  type ContextRecord,
  DuplicateMessageError,
  type EnqueueTurnRequest,
  type ExpiredWorker,
  type FailPushAttemptRequest,
  type InterruptedTasksQuery,
  indexedMessages,
  type ListTasksOptions,
  type MessageIndexEntry,
  type PurgeResult,
  type PushClaimKey,
  type PushConfigRecord,
  type PushDelivery,
  type PushDeliveryFilter,
  type PushStore,
  type QueueSlot,
  type SavePushConfigRequest,
  type StoreCallContext,
  type StoreCapabilities,
  type StoredEvent,
  type Task,
  type TaskListPage,
  type TaskListQuery,
  type TaskRecord,
  type TurnReadiness,
  type Unsubscribe,
  type WorkerDescription,
  type WorkerRecord,
} from '@fastify-a2a/core';
import { type ConformanceTestBody, type StoreFactory, storeConformance } from '@fastify-a2a/core/testing';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';

class Delegating implements A2AStore, PushStore {
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
  listTasks(query: TaskListQuery, ctx?: StoreCallContext): Promise<TaskListPage> {
    return this.inner.listTasks(query, ctx);
  }
  listInterruptedTasks(query: InterruptedTasksQuery, ctx?: StoreCallContext): Promise<TaskRecord[]> {
    return this.inner.listInterruptedTasks(query, ctx);
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
  enqueueTurn(request: EnqueueTurnRequest, ctx?: StoreCallContext): Promise<QueueSlot> {
    return this.inner.enqueueTurn(request, ctx);
  }
  turnReadiness(ticket: QueueSlot, ctx?: StoreCallContext): Promise<TurnReadiness> {
    return this.inner.turnReadiness(ticket, ctx);
  }
  finishTurn(ticket: QueueSlot, ctx?: StoreCallContext): Promise<void> {
    return this.inner.finishTurn(ticket, ctx);
  }
  claimExpiredWorkers(now: number, exceptWorkerId?: string, ctx?: StoreCallContext): Promise<ExpiredWorker[]> {
    return this.inner.claimExpiredWorkers(now, exceptWorkerId, ctx);
  }
  removeWorker(workerId: string, ctx?: StoreCallContext): Promise<void> {
    return this.inner.removeWorker(workerId, ctx);
  }
  joinWorker(
    workerId: string,
    leaseUntil: number,
    description: WorkerDescription,
    ctx?: StoreCallContext,
  ): Promise<ExpiredWorker | undefined> {
    return this.inner.joinWorker(workerId, leaseUntil, description, ctx);
  }
  listWorkers(ctx?: StoreCallContext): Promise<WorkerRecord[]> {
    return this.inner.listWorkers(ctx);
  }
  subscribeAll(listener: (taskId: string, seq: number) => void): Unsubscribe {
    return this.inner.subscribeAll(listener);
  }
  listWorkerTurns(workerId: string, ctx?: StoreCallContext): Promise<QueueSlot[]> {
    return this.inner.listWorkerTurns(workerId, ctx);
  }
  findMessage(messageId: string, ctx?: StoreCallContext, owner?: string): Promise<MessageIndexEntry | undefined> {
    return this.inner.findMessage(messageId, ctx, owner);
  }
  savePushConfig(request: SavePushConfigRequest, ctx?: StoreCallContext): Promise<PushConfigRecord> {
    return this.inner.savePushConfig(request, ctx);
  }
  getPushConfig(taskId: string, configId: string, ctx?: StoreCallContext): Promise<PushConfigRecord | undefined> {
    return this.inner.getPushConfig(taskId, configId, ctx);
  }
  listPushConfigs(taskId: string, ctx?: StoreCallContext): Promise<PushConfigRecord[]> {
    return this.inner.listPushConfigs(taskId, ctx);
  }
  deletePushConfig(taskId: string, configId: string, ctx?: StoreCallContext): Promise<boolean> {
    return this.inner.deletePushConfig(taskId, configId, ctx);
  }
  claimPushDeliveries(request: ClaimPushDeliveriesRequest, ctx?: StoreCallContext): Promise<PushDelivery[]> {
    return this.inner.claimPushDeliveries(request, ctx);
  }
  renewPushClaims(workerId: string, claimUntil: number, ctx?: StoreCallContext): Promise<number> {
    return this.inner.renewPushClaims(workerId, claimUntil, ctx);
  }
  completePushDelivery(request: CompletePushDeliveryRequest, ctx?: StoreCallContext): Promise<boolean> {
    return this.inner.completePushDelivery(request, ctx);
  }
  failPushAttempt(request: FailPushAttemptRequest, ctx?: StoreCallContext): Promise<boolean> {
    return this.inner.failPushAttempt(request, ctx);
  }
  releasePushClaim(key: PushClaimKey, ctx?: StoreCallContext): Promise<boolean> {
    return this.inner.releasePushClaim(key, ctx);
  }
  listPushDeliveries(filter?: PushDeliveryFilter, ctx?: StoreCallContext): Promise<PushDelivery[]> {
    return this.inner.listPushDeliveries(filter, ctx);
  }
}

const bugs: Record<string, { store: (clock: Clock) => A2AStore; caughtBy: string }> = {
  'keeps the first trace context for good (an update without one does not clear it)': {
    caughtBy: "taskBasics: a commit's traceContext is kept with the task until the next commit replaces or clears it",
    store: (clock) =>
      new (class extends Delegating {
        readonly #first = new Map<string, string>();
        override async commit(request: CommitRequest): Promise<CommitResult> {
          const first = this.#first.get(request.taskId);
          if (first === undefined && request.traceContext !== undefined) {
            this.#first.set(request.taskId, request.traceContext);
          }
          return super.commit(
            request.traceContext === undefined && first !== undefined ? { ...request, traceContext: first } : request,
          );
        }
      })(clock),
  },
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
  'fails every commit of a batch when one of them fails (group commit without its own result per commit)': {
    caughtBy: 'concurrency: 24 commits of different tasks at once, one of them stale: only that one conflicts',
    store: (clock) =>
      new (class extends Delegating {
        #batch: { request: CommitRequest; settle: (error: unknown, result?: CommitResult) => void }[] = [];
        override commit(request: CommitRequest): Promise<CommitResult> {
          return new Promise((resolve, reject) => {
            if (this.#batch.length === 0) setImmediate(() => void this.#flush());
            this.#batch.push({ request, settle: (error, result) => (error ? reject(error) : resolve(result!)) });
          });
        }
        async #flush(): Promise<void> {
          const batch = this.#batch;
          this.#batch = [];
          const results = await Promise.allSettled(batch.map(({ request }) => super.commit(request)));
          const failure = results.find((r) => r.status === 'rejected');
          for (const [i, { settle }] of batch.entries()) {
            const result = results[i] as PromiseSettledResult<CommitResult>;
            if (failure) settle(failure.reason);
            else settle(undefined, (result as PromiseFulfilledResult<CommitResult>).value);
          }
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
  'pages listTasks by offset (a task created between two pages shifts the next one)': {
    caughtBy:
      'listTasks: paging while tasks are created between and during page reads lists every earlier task exactly once [requires supports.listTasks]',
    store: (clock) =>
      new (class extends Delegating {
        override async listTasks(query: TaskListQuery): Promise<TaskListPage> {
          // The "cursor" carries a position in the current list instead of a key.
          const offset = query.after === undefined ? 0 : Number(query.after.taskId);
          const all = await super.listTasks({ ...query, after: undefined, limit: Number.MAX_SAFE_INTEGER });
          const page: TaskListPage = { records: all.records.slice(offset, offset + query.limit), total: all.total };
          const end = offset + page.records.length;
          if (end < all.total) page.next = { statusTimestamp: 0, taskId: String(end) };
          return page;
        }
      })(clock),
  },
  'lists tasks oldest status timestamp first': {
    caughtBy:
      'listTasks: lists newest status timestamp first, equal timestamps by task id descending in code point order, with the total [requires supports.listTasks]',
    store: (clock) =>
      new (class extends Delegating {
        override async listTasks(query: TaskListQuery): Promise<TaskListPage> {
          const all = await super.listTasks({ ...query, after: undefined, limit: Number.MAX_SAFE_INTEGER });
          return { records: all.records.reverse().slice(0, query.limit), total: all.total };
        }
      })(clock),
  },
  'keeps only the status timestamp in its listTasks cursor': {
    caughtBy:
      'listTasks: a cursor splits tasks that share one status timestamp without losing or repeating any [requires supports.listTasks]',
    store: (clock) =>
      new (class extends Delegating {
        override listTasks(query: TaskListQuery): Promise<TaskListPage> {
          // "status_ts < cursor" without the task id: every task sharing the cursor's timestamp is skipped.
          const after = query.after && { statusTimestamp: query.after.statusTimestamp, taskId: '' };
          return super.listTasks({ ...query, after });
        }
      })(clock),
  },
  'filters statusTimestampAfter strictly (> rather than ≥)': {
    caughtBy:
      'listTasks: filters by context, state and statusTimestampAfter (inclusive), alone and combined; total counts the matches [requires supports.listTasks]',
    store: (clock) =>
      new (class extends Delegating {
        override listTasks(query: TaskListQuery): Promise<TaskListPage> {
          const { statusTimestampAfter } = query;
          return super.listTasks(
            statusTimestampAfter === undefined ? query : { ...query, statusTimestampAfter: statusTimestampAfter + 1 },
          );
        }
      })(clock),
  },
  'counts every task in the listTasks total, ignoring the filters': {
    caughtBy:
      'listTasks: filters by context, state and statusTimestampAfter (inclusive), alone and combined; total counts the matches [requires supports.listTasks]',
    store: (clock) =>
      new (class extends Delegating {
        override async listTasks(query: TaskListQuery): Promise<TaskListPage> {
          const page = await super.listTasks(query);
          return { ...page, total: (await super.listTasks({ limit: 1 })).total };
        }
      })(clock),
  },
  'orders tied task ids by UTF-16 code unit rather than by code point': {
    caughtBy:
      'listTasks: lists newest status timestamp first, equal timestamps by task id descending in code point order, with the total [requires supports.listTasks]',
    store: (clock) =>
      new (class extends Delegating {
        override async listTasks(query: TaskListQuery): Promise<TaskListPage> {
          const page = await super.listTasks(query);
          const key = (record: TaskRecord) => Date.parse(record.task.status.timestamp ?? '') || 0;
          const records = [...page.records].sort((a, b) =>
            key(a) !== key(b) ? key(b) - key(a) : a.task.id < b.task.id ? 1 : a.task.id > b.task.id ? -1 : 0,
          );
          return { ...page, records };
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
  'lists interrupted tasks up to and including `before`, newest first': {
    caughtBy:
      'interruptedTasks: lists input-required and auth-required tasks older than `before`, oldest first, ties by id, of every owner [requires supports.interruptedTasks]',
    store: (clock) =>
      new (class extends Delegating {
        override async listInterruptedTasks(query: InterruptedTasksQuery): Promise<TaskRecord[]> {
          return (await super.listInterruptedTasks({ ...query, before: query.before + 1 })).reverse();
        }
      })(clock),
  },
  'remembers which tasks were interrupted when created, not what they are now': {
    caughtBy:
      'interruptedTasks: follows state changes: an answered task leaves the list, a task that pauses again joins it with its new timestamp [requires supports.interruptedTasks]',
    store: (clock) =>
      new (class extends Delegating {
        readonly #interruptedAtCreation = new Set<string>();
        override async commit(request: CommitRequest): Promise<CommitResult> {
          const stored = await super.commit(request);
          const { state } = request.task.status;
          if (request.expectedVersion === 0 && (state === 'input-required' || state === 'auth-required')) {
            this.#interruptedAtCreation.add(request.taskId);
          }
          return stored;
        }
        override async listInterruptedTasks(query: InterruptedTasksQuery): Promise<TaskRecord[]> {
          const records = await Promise.all([...this.#interruptedAtCreation].map((id) => super.getTask(id)));
          return records.filter((r): r is TaskRecord => r !== undefined).slice(0, query.limit);
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
        override async finishTurn(ticket: QueueSlot): Promise<void> {
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
  'renews a restarted worker id without telling of its predecessor': {
    caughtBy:
      'cluster: joinWorker records the start; a start of another incarnation gets its predecessor with every turn [requires supports.cluster]',
    store: (clock) =>
      new (class extends Delegating {
        override async joinWorker(
          workerId: string,
          leaseUntil: number,
          description: WorkerDescription,
        ): Promise<ExpiredWorker | undefined> {
          await super.joinWorker(workerId, leaseUntil, description);
          return undefined;
        }
      })(clock),
  },
  'lists workers without their queued turns': {
    caughtBy:
      'cluster: listWorkers lists every lease by worker id with its turns in queue order; heartbeat keeps the description [requires supports.cluster]',
    store: (clock) =>
      new (class extends Delegating {
        override async listWorkers(): Promise<WorkerRecord[]> {
          return (await super.listWorkers()).map((worker) => ({ ...worker, turns: [] }));
        }
      })(clock),
  },
  'tells subscribeAll listeners of one task only': {
    caughtBy:
      'cluster: subscribeAll hears every task’s commits, also those of other instances where supported, until unsubscribed [requires supports.cluster]',
    store: (clock) =>
      new (class extends Delegating {
        override subscribeAll(listener: (taskId: string, seq: number) => void): Unsubscribe {
          let first: string | undefined;
          return super.subscribeAll((taskId, seq) => {
            first ??= taskId;
            if (taskId === first) listener(taskId, seq);
          });
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
          const { messageId, workerId } = request.enqueueTurn;
          const turn = await super.enqueueTurn({
            contextId: request.task.contextId,
            taskId: request.taskId,
            messageId,
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
  'claims push deliveries without comparing the task version with the cursor': {
    caughtBy:
      'push: claims only what has something to deliver; complete moves the cursor, and a new version makes it due again [requires supports.push]',
    store: (clock) =>
      new (class extends Delegating {
        override async claimPushDeliveries(request: ClaimPushDeliveriesRequest): Promise<PushDelivery[]> {
          // As if the WHERE clause lacked "version > cursor": every free delivery is due.
          for (const delivery of await super.listPushDeliveries({ failed: false })) {
            if (delivery.taskVersion === delivery.state.cursor && delivery.state.claimId === null) {
              const { taskId } = delivery.config;
              await this.inner.commit({
                taskId,
                expectedVersion: delivery.taskVersion,
                task: (await super.getTask(taskId))?.task as Task,
                events: [{ kind: 'turn-end', taskId, contextId: 'ctx', turnId: 'bump' }],
              });
            }
          }
          return super.claimPushDeliveries(request);
        }
      })(clock),
  },
  'claims push deliveries in two steps (read, then write), so concurrent claimants share one': {
    caughtBy:
      'push: 10 concurrent claimants (on several instances where supported): each delivery goes to exactly one, also when expired claims are taken over [requires supports.push]',
    store: (clock) =>
      new (class extends Delegating {
        override async claimPushDeliveries(request: ClaimPushDeliveriesRequest): Promise<PushDelivery[]> {
          // Step 1 reads what is free; step 2, after an await, writes the claim without checking
          // it is still free (an UPDATE keyed by task and config only): it takes the rows over.
          const free = (await super.listPushDeliveries({ failed: false })).filter(
            (d) => d.taskVersion > d.state.cursor && (d.state.claimUntil === null || d.state.claimUntil < request.now),
          );
          await new Promise((resolve) => setImmediate(resolve));
          for (const d of free) {
            const current = (await super.listPushDeliveries({ taskId: d.config.taskId })).find(
              (c) => c.config.config.id === d.config.config.id,
            );
            const claimId = current?.state.claimId;
            if (claimId)
              await super.releasePushClaim({ taskId: d.config.taskId, configId: d.config.config.id, claimId });
          }
          return (await super.claimPushDeliveries({ ...request, limit: Number.MAX_SAFE_INTEGER })).slice(
            0,
            request.limit,
          );
        }
      })(clock),
  },
  'completes a push delivery whoever holds the claim': {
    caughtBy:
      'push: a claim is held until it ends; then another worker takes it over, and the first worker’s complete, fail and release are refused [requires supports.push]',
    store: (clock) =>
      new (class extends Delegating {
        override async completePushDelivery(request: CompletePushDeliveryRequest): Promise<boolean> {
          // An UPDATE keyed by task and config that forgot "AND claim_id = ?".
          if (await super.completePushDelivery(request)) return true;
          const current = (await super.listPushDeliveries({ taskId: request.taskId })).find(
            (d) => d.config.config.id === request.configId,
          );
          if (current?.state.claimId == null) return current !== undefined;
          return super.completePushDelivery({ ...request, claimId: current.state.claimId });
        }
      })(clock),
  },
  'takes over a push claim that ends exactly at now': {
    caughtBy:
      'push: a claim is held until it ends; then another worker takes it over, and the first worker’s complete, fail and release are refused [requires supports.push]',
    store: (clock) =>
      new (class extends Delegating {
        override async claimPushDeliveries(request: ClaimPushDeliveriesRequest): Promise<PushDelivery[]> {
          // "claim_until <= now": release the claims ending exactly now first.
          for (const d of await super.listPushDeliveries()) {
            if (d.state.claimId !== null && d.state.claimUntil === request.now) {
              await super.releasePushClaim({
                taskId: d.config.taskId,
                configId: d.config.config.id,
                claimId: d.state.claimId,
              });
            }
          }
          return super.claimPushDeliveries(request);
        }
      })(clock),
  },
  'holds a terminal state back for the throttle window': {
    caughtBy:
      'push: the throttle window after a success holds back other states until nextAttemptAt; terminal and interrupted states go at once [requires supports.push]',
    store: (clock) =>
      new (class extends Delegating {
        override async claimPushDeliveries(request: ClaimPushDeliveriesRequest): Promise<PushDelivery[]> {
          // "next_attempt_at IS NULL OR next_attempt_at <= now", without the exception.
          const claimed = await super.claimPushDeliveries(request);
          const kept: PushDelivery[] = [];
          for (const d of claimed) {
            const { nextAttemptAt, claimId } = d.state;
            if (nextAttemptAt === null || nextAttemptAt <= request.now) kept.push(d);
            else if (claimId !== null) {
              await super.releasePushClaim({ taskId: d.config.taskId, configId: d.config.config.id, claimId });
            }
          }
          return kept;
        }
      })(clock),
  },
  'keeps the push configs of purged tasks': {
    caughtBy:
      'push: purgeExpired removes the configs and deliveries of the tasks it purges; a task created again has none [requires supports.push, supports.ttl]',
    store: (clock) =>
      new (class extends Delegating {
        readonly #saved = new Map<string, PushConfigRecord[]>();
        override async savePushConfig(request: SavePushConfigRequest): Promise<PushConfigRecord> {
          const record = await super.savePushConfig(request);
          this.#saved.set(request.taskId, [...(this.#saved.get(request.taskId) ?? []), record]);
          return record;
        }
        override async listPushConfigs(taskId: string): Promise<PushConfigRecord[]> {
          const listed = await super.listPushConfigs(taskId);
          return listed.length > 0 ? listed : (this.#saved.get(taskId) ?? []);
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
  'ignores the owner in the message index (keys it by message id alone)': {
    caughtBy: 'ownership: the same message id committed by two owners: both commits succeed, each finds its own task',
    store: (clock) =>
      new (class extends Delegating {
        readonly #index = new Map<string, MessageIndexEntry>();
        override async commit(request: CommitRequest): Promise<CommitResult> {
          const indexed = indexedMessages(request.events);
          for (const { messageId } of indexed) {
            const known = this.#index.get(messageId);
            if (known !== undefined) throw new DuplicateMessageError(messageId, known);
          }
          const result = await super.commit(request);
          const at = { taskId: request.taskId, contextId: request.task.contextId };
          for (const { messageId, digest } of indexed) this.#index.set(messageId, { ...at, digest });
          return result;
        }
        override async findMessage(messageId: string): Promise<MessageIndexEntry | undefined> {
          const entry = this.#index.get(messageId);
          return entry && { ...entry };
        }
      })(clock),
  },
  'reports a duplicate with the first task that used the id, whoever’s it is': {
    caughtBy: 'ownership: an owner reusing its own message id is refused, naming its own task, and nothing is written',
    store: (clock) =>
      new (class extends Delegating {
        readonly #first = new Map<string, { taskId: string; contextId: string }>();
        override async commit(request: CommitRequest): Promise<CommitResult> {
          try {
            const result = await super.commit(request);
            for (const { messageId } of indexedMessages(request.events)) {
              if (!this.#first.has(messageId)) {
                this.#first.set(messageId, { taskId: request.taskId, contextId: request.task.contextId });
              }
            }
            return result;
          } catch (error) {
            // A lookup of the duplicate by message id alone, as a query that forgot the owner.
            if (!(error instanceof DuplicateMessageError)) throw error;
            throw new DuplicateMessageError(error.messageId, this.#first.get(error.messageId));
          }
        }
      })(clock),
  },
  'lets a later commit change the owner': {
    caughtBy: 'ownership: later commits never change the owner, whoever makes them; a refused create sets nothing',
    store: (clock) =>
      new (class extends Delegating {
        readonly #owners = new Map<string, string>();
        override async commit(request: CommitRequest): Promise<CommitResult> {
          const result = await super.commit(request);
          // An UPDATE that also sets owner = $owner.
          if (request.expectedVersion > 0 && request.owner !== undefined)
            this.#owners.set(request.taskId, request.owner);
          return result;
        }
        #patch(record: TaskRecord): TaskRecord {
          const owner = this.#owners.get(record.task.id);
          return owner === undefined ? record : { ...record, owner };
        }
        override async getTask(taskId: string): Promise<TaskRecord | undefined> {
          const record = await super.getTask(taskId);
          return record && this.#patch(record);
        }
        override async listTasksByContext(contextId: string, options?: ListTasksOptions): Promise<TaskRecord[]> {
          return (await super.listTasksByContext(contextId, options)).map((r) => this.#patch(r));
        }
        override async listActiveTasks(): Promise<TaskRecord[]> {
          return (await super.listActiveTasks()).map((r) => this.#patch(r));
        }
      })(clock),
  },
  'returns owner: null for a task without an owner': {
    caughtBy:
      'ownership: the owner a task is created with is returned by getTask, listTasksByContext and listActiveTasks; a task without one has no owner property',
    store: (clock) =>
      new (class extends Delegating {
        // What a SQL store returns when it copies a NULL column into the record as it is.
        #withNull = (record: TaskRecord): TaskRecord => ({ ...record, owner: (record.owner ?? null) as string });
        override async getTask(taskId: string): Promise<TaskRecord | undefined> {
          const record = await super.getTask(taskId);
          return record && this.#withNull(record);
        }
        override async listTasksByContext(contextId: string, options?: ListTasksOptions): Promise<TaskRecord[]> {
          return (await super.listTasksByContext(contextId, options)).map(this.#withNull);
        }
        override async listActiveTasks(): Promise<TaskRecord[]> {
          return (await super.listActiveTasks()).map(this.#withNull);
        }
      })(clock),
  },
  'counts every owner’s tasks in the listTasks total': {
    caughtBy:
      'ownership: listTasks with an owner lists and counts only its tasks, with null only those without one, without it every task [requires supports.listTasks]',
    store: (clock) =>
      new (class extends Delegating {
        override async listTasks(query: TaskListQuery): Promise<TaskListPage> {
          const page = await super.listTasks(query);
          if (query.owner === undefined) return page;
          // The count statement without the owner condition.
          const { total } = await super.listTasks({ ...query, owner: undefined, after: undefined, limit: 1 });
          return { ...page, total };
        }
      })(clock),
  },
  'reads a null owner filter as "any owner"': {
    caughtBy:
      'ownership: listTasks with an owner lists and counts only its tasks, with null only those without one, without it every task [requires supports.listTasks]',
    store: (clock) =>
      new (class extends Delegating {
        override listTasks(query: TaskListQuery): Promise<TaskListPage> {
          return super.listTasks({ ...query, owner: query.owner ?? undefined });
        }
      })(clock),
  },
  'filters a listTasks page by owner after reading it': {
    caughtBy:
      'ownership: listTasks pages through one owner’s tasks with other owners’ tasks interleaved, ties included [requires supports.listTasks]',
    store: (clock) =>
      new (class extends Delegating {
        override async listTasks(query: TaskListQuery): Promise<TaskListPage> {
          if (query.owner === undefined) return super.listTasks(query);
          // The page of every owner's tasks, then the owner's records kept: short pages, and a
          // `next` that follows the unfiltered listing.
          const page = await super.listTasks({ ...query, owner: undefined });
          const { total } = await super.listTasks({ ...query, after: undefined, limit: 1 });
          const records = page.records.filter((r) => (r.owner ?? null) === query.owner);
          return { ...page, records, total };
        }
      })(clock),
  },
  'keeps the owners’ index entries of purged tasks': {
    caughtBy:
      'ownership: purgeExpired removes the entries of purged tasks in every scope; their ids can be used again there [requires supports.ttl]',
    store: (clock) =>
      new (class extends Delegating {
        readonly #owned = new Map<string, MessageIndexEntry>();
        override async commit(request: CommitRequest): Promise<CommitResult> {
          const result = await super.commit(request);
          if (request.owner !== undefined) {
            for (const { messageId, digest } of indexedMessages(request.events)) {
              const at = { taskId: request.taskId, contextId: request.task.contextId, digest };
              this.#owned.set(`${request.owner}\u0000${messageId}`, at);
            }
          }
          return result;
        }
        override async findMessage(
          messageId: string,
          ctx?: StoreCallContext,
          owner?: string,
        ): Promise<MessageIndexEntry | undefined> {
          const found = await super.findMessage(messageId, ctx, owner);
          return found ?? (owner === undefined ? undefined : this.#owned.get(`${owner}\u0000${messageId}`));
        }
      })(clock),
  },
  'digests the whole message, its ids included': {
    caughtBy:
      'ownership: each entry records the digest of its message: equal for the same content whatever its ids, different for other content',
    store: (clock) =>
      new (class extends Delegating {
        readonly #digests = new Map<string, string>();
        override async commit(request: CommitRequest): Promise<CommitResult> {
          const result = await super.commit(request);
          for (const event of request.events) {
            const message = event.kind === 'message' ? event : event.kind === 'task' ? event.history?.[0] : undefined;
            if (message === undefined) continue;
            const digest = createHash('sha256').update(JSON.stringify(message)).digest('hex');
            this.#digests.set(`${request.owner ?? ''}\u0000${message.messageId}`, digest);
          }
          return result;
        }
        override async findMessage(
          messageId: string,
          ctx?: StoreCallContext,
          owner?: string,
        ): Promise<MessageIndexEntry | undefined> {
          const found = await super.findMessage(messageId, ctx, owner);
          const digest = this.#digests.get(`${owner ?? ''}\u0000${messageId}`);
          return found && digest ? { ...found, digest } : found;
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
  override readonly supports: StoreCapabilities = {
    durable: true,
    crossProcess: false,
    ttl: true,
    namespaces: true,
    listTasks: true,
    push: true,
    interruptedTasks: true,
    cluster: true,
  };
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
  /** Why each failed test failed. */
  errors: Map<string, unknown>;
}

async function runSuite(factory: StoreFactory): Promise<Outcome> {
  const tests: Array<{ name: string; body: ConformanceTestBody }> = [];
  storeConformance({ test: (name, body) => tests.push({ name, body }), factory, notificationTimeout: 300 });
  const outcome: Outcome = { passed: [], failed: [], skipped: [], errors: new Map() };
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
    } catch (error) {
      outcome.failed.push(name);
      outcome.errors.set(name, error);
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
      const outcome = await runSuite(({ clock }) => store(clock));
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
