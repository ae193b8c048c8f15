/**
 * `@fastify-a2a/core/testing`: the store conformance suite every adapter runs, and test fixtures.
 *
 * ```ts
 * import { it, describe } from 'vitest';
 * import { storeConformance } from '@fastify-a2a/core/testing';
 * storeConformance({ test: it, describe, factory: ({ clock }) => new MemoryStore({ clock }) });
 * ```
 */

import { activeTasks } from './active-tasks.js';
import { cluster } from './cluster.js';
import { concurrency } from './concurrency.js';
import { contextStore } from './context-store.js';
import { eventLog } from './event-log.js';
import type { ConformanceOptions } from './harness.js';
import { history } from './history.js';
import { interruptedTasks } from './interrupted-tasks.js';
import { isolation } from './isolation.js';
import { leases } from './leases.js';
import { lifecycle } from './lifecycle.js';
import { listTasks } from './list-tasks.js';
import { messageIndex } from './message-index.js';
import { notifications } from './notifications.js';
import { ownership } from './ownership.js';
import { persistence } from './persistence.js';
import { push } from './push.js';
import { retention } from './retention.js';
import { taskBasics } from './task-basics.js';
import { tasksByContext } from './tasks-by-context.js';
import { turnQueue } from './turn-queue.js';

export * from './fixtures.js';
export type {
  Capability,
  ConformanceDescribeFunction,
  ConformanceOptions,
  ConformanceTestBody,
  ConformanceTestContext,
  ConformanceTestFunction,
  StoreFactory,
  StoreFactoryOptions,
  StoreTestBody,
  StoreTestContext,
} from './harness.js';
export {
  activeTasks,
  cluster,
  concurrency,
  contextStore,
  eventLog,
  history,
  interruptedTasks,
  isolation,
  leases,
  lifecycle,
  listTasks,
  messageIndex,
  notifications,
  ownership,
  persistence,
  push,
  retention,
  taskBasics,
  tasksByContext,
  turnQueue,
};

/** Every module of the suite by name, in the order {@link storeConformance} registers them. */
export const conformanceModules: Readonly<Record<string, (options: ConformanceOptions) => void>> = Object.freeze({
  lifecycle,
  taskBasics,
  history,
  tasksByContext,
  listTasks,
  eventLog,
  activeTasks,
  interruptedTasks,
  contextStore,
  concurrency,
  notifications,
  messageIndex,
  ownership,
  turnQueue,
  leases,
  cluster,
  push,
  retention,
  isolation,
  persistence,
});

/**
 * Registers the whole suite with the runner. Tests of a capability the store declares `false` in
 * `store.supports` are reported as skipped (through the test context's `skip`).
 */
export function storeConformance(options: ConformanceOptions): void {
  for (const register of Object.values(conformanceModules)) register(options);
}
