/** Broken stores for the suite module on push notification configs and deliveries. */

import type {
  ClaimPushDeliveriesRequest,
  CompletePushDeliveryRequest,
  PushConfigRecord,
  PushDelivery,
  SavePushConfigRequest,
  Task,
} from '@fastify-a2a/core';
import type { Bugs } from './delegating.js';
import { Delegating } from './delegating.js';

export const pushBugs: Bugs = {
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
};
