/**
 * What a store can do, as data (abstract-level's manifest). The conformance suite skips a module
 * only when the store declares the capability false; users read it too.
 */
export interface StoreCapabilities {
  /** Data survives close() and a new instance on the same location. */
  durable: boolean;
  /** Events committed by one process reach subscribers in another. */
  crossProcess: boolean;
  /** purgeExpired() deletes terminal tasks and their contexts. */
  ttl: boolean;
  /** Several agents (namespaces) can share one database without seeing each other. */
  namespaces: boolean;
  /**
   * listTasks() pages through all tasks (A2A ListTasks). Optional, so a store written before it
   * existed still satisfies the contract: absent means false.
   */
  listTasks?: boolean;
  /**
   * The {@link PushStore} methods are present: push notification configs kept with their task, and
   * the delivery state (cursor, retries, claims) the push delivery job works from. Optional like
   * `listTasks`: absent means false.
   */
  push?: boolean;
  /**
   * listInterruptedTasks() finds interrupted tasks by age, for the runtime's `interruptedExpiry`.
   * Optional like `listTasks`: absent means false (the runtime then refuses the option).
   */
  interruptedTasks?: boolean;
  /**
   * The cluster-wide view an operator's monitor reads is present: {@link CoordinationStore.joinWorker},
   * {@link CoordinationStore.listWorkers} and {@link EventNotifier.subscribeAll}. Optional like
   * `listTasks`: absent means false.
   */
  cluster?: boolean;
  /**
   * Not a capability but the store's advice: the runtime's default `streamCommitIntervalMs` with
   * this store (how often at most a task's streamed chunks are committed), for a store whose every
   * commit costs a transaction on a server shared by all workers. Absent: 0, each batch at once.
   */
  streamCommitIntervalMs?: number;
}

/**
 * The capabilities of a store that has every optional one (ListTasks, push, interrupted tasks, the
 * cluster view, TTL and namespaces), as the SQL stores do; what varies is whether its data is
 * durable and whether other processes' commits reach its subscribers.
 */
export function fullStoreCapabilities(durable: boolean, crossProcess: boolean): StoreCapabilities {
  return {
    durable,
    crossProcess,
    ttl: true,
    namespaces: true,
    listTasks: true,
    push: true,
    interruptedTasks: true,
    cluster: true,
  };
}
