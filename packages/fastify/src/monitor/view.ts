/**
 * What the monitor shows of a task and of a worker, read from the store: the same shapes in the
 * API's answers and in the events stream. Task text is the agent's and its callers': it goes out
 * as JSON data, and the page escapes it.
 */

import {
  type A2AStore,
  hasPushStore,
  type Part,
  type PushDelivery,
  type QueueSlot,
  statusTimestampOf,
  type TaskRecord,
  type WorkerRecord,
} from '@fastify-a2a/core';

export interface MonitorTurn {
  workerId: string;
  /** The messageId of the user message that started the turn. */
  turnId: string;
  /** 0: the turn holds its context (it runs); n: n turns of the context are ahead of it. */
  queuePosition: number;
  /** The slot's position, for releasing that exact slot. */
  position: number;
}

export interface MonitorPush {
  configId: string;
  /** Only the host: the URL's path and query may carry a client's secret. */
  host: string;
  /** Task versions not yet delivered. */
  behind: number;
  attempts: number;
  failed: boolean;
  lastError: string | null;
  lastStatus: number | null;
  lastSentAt: number | null;
  nextAttemptAt: number | null;
  claimedBy: string | null;
}

export interface MonitorTask {
  id: string;
  contextId: string;
  state: string;
  owner: string | null;
  /** The status timestamp (ISO 8601) as the agent wrote it, or null. */
  statusTimestamp: string | null;
  /** Milliseconds since the status timestamp: for a running turn, how long it has been running. */
  stateAgeMs: number | null;
  version: number;
  createdAt: number;
  updatedAt: number;
  /** The status message's text (cut to 500 characters), if any. */
  statusText: string | null;
  turn: MonitorTurn | null;
  push: MonitorPush[];
}

export interface MonitorWorker {
  workerId: string;
  host: string | null;
  pid: number | null;
  startedAt: number | null;
  lastRenewal: number;
  leaseUntil: number;
  /** Its turns holding their context. */
  runningTurns: number;
  /** Its turns waiting behind another turn of their context. */
  queuedTurns: number;
  /** Whether its lease had run out when read (a reaper has not claimed it yet). */
  expired: boolean;
}

/** The turn queue as the lease table lists it: each task's slot and its place in its context. */
export class QueueView {
  readonly #byTask = new Map<string, MonitorTurn>();
  readonly workers: WorkerRecord[];

  constructor(workers: WorkerRecord[]) {
    this.workers = workers;
    const byContext = new Map<string, QueueSlot[]>();
    for (const slot of workers.flatMap((worker) => worker.turns)) {
      const queue = byContext.get(slot.contextId);
      if (queue === undefined) byContext.set(slot.contextId, [slot]);
      else queue.push(slot);
    }
    for (const queue of byContext.values()) {
      queue.sort((a, b) => a.position - b.position);
      for (const [index, slot] of queue.entries()) {
        if (this.#byTask.has(slot.taskId)) continue;
        this.#byTask.set(slot.taskId, {
          workerId: slot.workerId,
          turnId: slot.messageId,
          queuePosition: index,
          position: slot.position,
        });
      }
    }
  }

  static async read(store: A2AStore): Promise<QueueView> {
    return new QueueView(store.listWorkers === undefined ? [] : await store.listWorkers());
  }

  turnOf(taskId: string): MonitorTurn | null {
    return this.#byTask.get(taskId) ?? null;
  }

  /** Ids of the tasks with a turn of `workerId` queued or running. */
  tasksOf(workerId: string): string[] {
    return [...new Set(this.workers.find((w) => w.workerId === workerId)?.turns.map((t) => t.taskId) ?? [])];
  }

  workerViews(now: number): MonitorWorker[] {
    return this.workers.map((worker) => {
      let running = 0;
      for (const slot of worker.turns) if (this.#byTask.get(slot.taskId)?.queuePosition === 0) running++;
      return {
        workerId: worker.workerId,
        host: worker.description?.host ?? null,
        pid: worker.description?.pid ?? null,
        startedAt: worker.description?.startedAt ?? null,
        lastRenewal: worker.lastHeartbeat,
        leaseUntil: worker.leaseUntil,
        runningTurns: running,
        queuedTurns: worker.turns.length - running,
        expired: worker.leaseUntil < now,
      };
    });
  }
}

const textOf = (parts: Part[] | undefined): string | null => {
  const text = (parts ?? [])
    .map((part) => (part.kind === 'text' ? part.text : ''))
    .join('')
    .trim();
  return text === '' ? null : text.slice(0, 500);
};

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

function pushView(delivery: PushDelivery): MonitorPush {
  const { config, state, taskVersion } = delivery;
  return {
    configId: config.config.id,
    host: hostOf(config.config.url),
    behind: Math.max(0, taskVersion - state.cursor),
    attempts: state.attempts,
    failed: state.failed,
    lastError: state.lastError,
    lastStatus: state.lastStatus,
    lastSentAt: state.lastSentAt,
    nextAttemptAt: state.nextAttemptAt,
    claimedBy: state.claimedBy,
  };
}

/** One task as the monitor shows it; reads its push deliveries from the store. */
export async function taskView(
  store: A2AStore,
  record: TaskRecord,
  queue: QueueView,
  now: number,
): Promise<MonitorTask> {
  const { task } = record;
  const timestamp = statusTimestampOf(task);
  const known = task.status.timestamp !== undefined && Number.isFinite(Date.parse(task.status.timestamp));
  return {
    id: task.id,
    contextId: task.contextId,
    state: task.status.state,
    owner: record.owner ?? null,
    statusTimestamp: known ? (task.status.timestamp as string) : null,
    stateAgeMs: known ? Math.max(0, now - timestamp) : null,
    version: record.version,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    statusText: textOf(task.status.message?.parts),
    turn: queue.turnOf(task.id),
    push: hasPushStore(store) ? (await store.listPushDeliveries({ taskId: task.id })).map(pushView) : [],
  };
}
