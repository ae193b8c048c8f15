/** Broken stores for the suite modules on the message index and task owners. */

import { createHash } from 'node:crypto';
import {
  type CommitRequest,
  type CommitResult,
  DuplicateMessageError,
  indexedMessages,
  type ListTasksOptions,
  type MessageIndexEntry,
  type StoreCallContext,
  type TaskListPage,
  type TaskListQuery,
  type TaskRecord,
} from '@fastify-a2a/core';
import type { Bugs } from './delegating.js';
import { Delegating } from './delegating.js';

export const messageIndexBugs: Bugs = {
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
