/** Broken stores for the suite modules on listeners, the turn queue and worker leases. */

import type {
  CommitRequest,
  CommitResult,
  ExpiredWorker,
  QueueSlot,
  TurnReadiness,
  Unsubscribe,
  WorkerDescription,
  WorkerRecord,
} from '@fastify-a2a/core';
import type { Bugs } from './delegating.js';
import { Delegating } from './delegating.js';

export const coordinationBugs: Bugs = {
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
    caughtBy: 'turnQueue: the first slot of a context is ready; the next waits for the one directly ahead of it',
    store: (clock) =>
      new (class extends Delegating {
        override async turnReadiness(): Promise<TurnReadiness> {
          return { ready: true };
        }
      })(clock),
  },
  'finishes the head of the context whatever the slot': {
    caughtBy: 'turnQueue: finishTurn of a missing slot changes nothing',
    store: (clock) =>
      new (class extends Delegating {
        override async finishTurn(slot: QueueSlot): Promise<void> {
          let head = slot;
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
    caughtBy: 'turnQueue: commit with finishTurn removes the slot, and subscribers of the task hear of it',
    store: (clock) =>
      new (class extends Delegating {
        override async commit(request: CommitRequest): Promise<CommitResult> {
          const { finishTurn: _, ...rest } = request;
          return super.commit(rest);
        }
      })(clock),
  },
};
