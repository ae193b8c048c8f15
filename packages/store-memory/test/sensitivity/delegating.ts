/** What the broken stores of the sensitivity test build on, and how the test runs the suite. */

import type {
  A2AStore,
  ClaimPushDeliveriesRequest,
  Clock,
  CommitRequest,
  CommitResult,
  CompletePushDeliveryRequest,
  ContextRecord,
  EnqueueTurnRequest,
  ExpiredWorker,
  FailPushAttemptRequest,
  InterruptedTasksQuery,
  ListTasksOptions,
  MessageIndexEntry,
  PurgeResult,
  PushClaimKey,
  PushConfigRecord,
  PushDelivery,
  PushDeliveryFilter,
  PushStore,
  QueueSlot,
  ReadEventsOptions,
  SavePushConfigRequest,
  StoreCallContext,
  StoreCapabilities,
  StoredEvent,
  TaskListPage,
  TaskListQuery,
  TaskRecord,
  TurnReadiness,
  Unsubscribe,
  WorkerDescription,
  WorkerRecord,
} from '@fastify-a2a/core';
import {
  type ConformanceTestBody,
  type StoreFactory,
  type StoreFactoryOptions,
  storeConformance,
} from '@fastify-a2a/core/testing';
import { expect } from 'vitest';
import { MemoryStore } from '../../src/index.js';

export class Delegating implements A2AStore, PushStore {
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
  readEvents(
    taskId: string,
    afterSeq: number,
    limit?: number,
    ctx?: StoreCallContext,
    options?: ReadEventsOptions,
  ): Promise<StoredEvent[]> {
    return this.inner.readEvents(taskId, afterSeq, limit, ctx, options);
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
  turnReadiness(slot: QueueSlot, ctx?: StoreCallContext): Promise<TurnReadiness> {
    return this.inner.turnReadiness(slot, ctx);
  }
  finishTurn(slot: QueueSlot, ctx?: StoreCallContext): Promise<void> {
    return this.inner.finishTurn(slot, ctx);
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

/** A store with one bug, and the suite test that must catch it. */
export type Bugs = Record<
  string,
  { store: (clock: Clock, options: StoreFactoryOptions) => A2AStore; caughtBy: string }
>;

/**
 * Instances on one location and namespace share a MemoryStore that outlives close(): what a
 * durable, namespaced store looks like to the suite, so its multi-instance, persistence and
 * isolation tests run here too.
 */
export class SharedByLocation extends Delegating {
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

export interface Outcome {
  passed: string[];
  failed: string[];
  skipped: string[];
  /** Why each failed test failed. */
  errors: Map<string, unknown>;
}

export async function runSuite(factory: StoreFactory): Promise<Outcome> {
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
