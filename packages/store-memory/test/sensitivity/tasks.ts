/** Broken stores for the suite modules on tasks, their events, ListTasks, contexts and purging. */

import {
  type Clock,
  type CommitRequest,
  type CommitResult,
  type ContextRecord,
  type InterruptedTasksQuery,
  type ListTasksOptions,
  type PurgeResult,
  type ReadEventsOptions,
  RecentEvents,
  type StoreCallContext,
  type StoredEvent,
  type Task,
  type TaskListPage,
  type TaskListQuery,
  type TaskRecord,
} from '@fastify-a2a/core';
import type { StoreFactoryOptions } from '@fastify-a2a/core/testing';
import type { Bugs } from './delegating.js';
import { Delegating, SharedByLocation } from './delegating.js';

export const taskBugs: Bugs = {
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
  "hands out the log's own events on every read (a plain read shares too)": {
    caughtBy: 'eventLog: a plain read is a copy, also of events committed with transfer and read shared before',
    store: (clock) =>
      new (class extends Delegating {
        override readEvents(
          taskId: string,
          afterSeq: number,
          limit?: number,
          ctx?: StoreCallContext,
        ): Promise<StoredEvent[]> {
          return super.readEvents(taskId, afterSeq, limit, ctx, { shared: true });
        }
      })(clock),
  },
  'ignores the limit of a shared read': {
    caughtBy: 'eventLog: a shared read (readEvents option shared) answers exactly what a plain read does',
    store: (clock) =>
      new (class extends Delegating {
        override readEvents(
          taskId: string,
          afterSeq: number,
          limit?: number,
          ctx?: StoreCallContext,
          options?: ReadEventsOptions,
        ): Promise<StoredEvent[]> {
          return options?.shared === true
            ? super.readEvents(taskId, afterSeq, undefined, ctx, options)
            : super.readEvents(taskId, afterSeq, limit, ctx);
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
};

/**
 * A store on shared storage that answers readEvents from the events it committed itself (core's
 * RecentEvents, as the SQL stores do), with one of the two things that keep such answers right
 * left out: hearing of versions other instances committed, or forgetting on purge.
 */
class RemembersItsCommits extends SharedByLocation {
  readonly #recent = new RecentEvents();
  readonly #clock: Clock;
  readonly #leaveOut: 'hearing of versions' | 'forgetting on purge';
  constructor(options: StoreFactoryOptions, leaveOut: 'hearing of versions' | 'forgetting on purge') {
    super(options);
    this.#clock = options.clock;
    this.#leaveOut = leaveOut;
  }
  override async commit(request: CommitRequest): Promise<CommitResult> {
    const createdAt = this.#clock();
    const eventJsons = request.events.map((event) => JSON.stringify(event));
    const result = await super.commit(request);
    this.#recent.record(request.taskId, request.expectedVersion + 1, eventJsons, createdAt);
    return result;
  }
  override async readEvents(taskId: string, afterSeq: number, limit?: number): Promise<StoredEvent[]> {
    return this.#recent.read(taskId, afterSeq, limit) ?? super.readEvents(taskId, afterSeq, limit);
  }
  override async getTask(taskId: string): Promise<TaskRecord | undefined> {
    const record = await super.getTask(taskId);
    if (record !== undefined && this.#leaveOut !== 'hearing of versions')
      this.#recent.sawVersion(taskId, record.version);
    return record;
  }
  override async getVersions(taskIds: readonly string[]): Promise<Map<string, number>> {
    const versions = await super.getVersions(taskIds);
    if (this.#leaveOut !== 'hearing of versions') {
      for (const [taskId, version] of versions) this.#recent.sawVersion(taskId, version);
    }
    return versions;
  }
  override async purgeExpired(cutoff: number): Promise<PurgeResult> {
    const result = await super.purgeExpired(cutoff);
    if (this.#leaveOut !== 'forgetting on purge') this.#recent.clear();
    return result;
  }
}

export const recentEventsBugs: Bugs = {
  'answers readEvents from its own commits, never hearing of later ones by other instances': {
    caughtBy:
      'eventLog: an instance reads the events other instances committed after its own, once it has heard of them',
    store: (_clock, options) => new RemembersItsCommits(options, 'hearing of versions'),
  },
  'answers readEvents from its own commits, also after purging them': {
    caughtBy:
      'retention: purges old terminal tasks with their events and orphaned old contexts; keeps the rest [requires supports.ttl]',
    store: (_clock, options) => new RemembersItsCommits(options, 'forgetting on purge'),
  },
};
