/**
 * What several workers sharing one store need beyond tasks and events: a per-context queue of
 * turns (so turns of one context run one after another, in arrival order, whichever worker
 * received them), worker leases renewed by heartbeat (so a dead worker's turns are found and its
 * tasks failed), and an index of user message ids per owner (so a retried message/send is
 * recognised).
 *
 * Every store implements it; the memory store does so in-process, SQLite and Postgres in tables
 * that all workers share.
 */
import type { StoreCallContext } from './call-context.js';

/**
 * The slot a user message holds in its context's queue: waiting for the context, or holding it
 * while its turn runs.
 */
export interface QueueSlot {
  contextId: string;
  /**
   * Position in the context's queue: increases with arrival (commit order of enqueueTurn), across
   * all workers; never reused, even after the queue emptied; a safe integer. Gaps are allowed.
   */
  position: number;
  taskId: string;
  /**
   * The messageId of the user message that started the turn (stored in the `turn_id` column of the
   * SQL stores, named before this field was).
   */
  messageId: string;
  /** The worker that received the message and runs the turn. */
  workerId: string;
}

export interface EnqueueTurnRequest {
  contextId: string;
  taskId: string;
  /** The messageId of the user message the turn answers. */
  messageId: string;
  workerId: string;
}

export type TurnReadiness =
  | { ready: true }
  /** The turn ahead of this one; wait for it (its task's notifications tell when it may be done). */
  | { ready: false; ahead: QueueSlot };

export interface ExpiredWorker {
  workerId: string;
  /** Epoch ms of its last heartbeat. */
  lastHeartbeat: number;
  /** Its turns still queued or running, in queue order. */
  turns: QueueSlot[];
}

/**
 * One start of a worker process, recorded with its lease (see {@link CoordinationStore.joinWorker}):
 * what an operator needs to find it, and the incarnation that tells a worker restarted under the
 * same `workerId` from the process that held that id before.
 */
export interface WorkerDescription {
  /** A fresh random id per process start: a worker id may be reused by the next start, this never is. */
  incarnation: string;
  /** The host name the process runs on. */
  host: string;
  /** Its process id on that host. */
  pid: number;
  /** When it started (epoch ms, its clock). */
  startedAt: number;
}

/** A worker holding a lease, as {@link CoordinationStore.listWorkers} lists it. */
export interface WorkerRecord {
  workerId: string;
  /** Epoch ms its lease runs until. */
  leaseUntil: number;
  /** Epoch ms of its last heartbeat (the store's clock). */
  lastHeartbeat: number;
  /**
   * Who it is; `null` for a lease written by heartbeat() alone (a worker of an earlier release, or
   * one whose row a reaper had claimed and that heartbeated again).
   */
  description: WorkerDescription | null;
  /** Its turns still queued or running, in queue order (running ones first within each context). */
  turns: QueueSlot[];
}

export interface MessageIndexEntry {
  taskId: string;
  contextId: string;
  /**
   * `messageDigest` of the message as committed: equal for a retry of the same message (even
   * without the task and context ids the stored copy has), different for another message sent
   * under the same id. Absent for entries indexed before digests were recorded (by an older
   * release, or by the migration that indexed the messages already logged).
   */
  digest?: string;
}

export interface CoordinationStore {
  /**
   * Registers the worker or renews its lease until `leaseUntil` (epoch ms). A worker whose lease
   * is older than `now` at a reaper's claimExpiredWorkers() is considered dead.
   */
  heartbeat(workerId: string, leaseUntil: number, ctx?: StoreCallContext): Promise<void>;

  /**
   * Appends a turn to its context's queue. Positions grow in the order enqueue calls commit, across
   * all workers sharing the store (arrival order); the turn may start once nothing is ahead of it.
   */
  enqueueTurn(request: EnqueueTurnRequest, ctx?: StoreCallContext): Promise<QueueSlot>;

  /**
   * Whether the slot is the head of its context's queue; if not, the slot directly ahead.
   * A slot no longer queued is ready when nothing is ahead of its position.
   */
  turnReadiness(slot: QueueSlot, ctx?: StoreCallContext): Promise<TurnReadiness>;

  /**
   * Removes the slot from its queue (turn done, or abandoned). Missing slots are ignored.
   * When a slot was removed, subscribers of `slot.taskId` are notified with seq 0 (in other
   * processes too where the store can: Postgres NOTIFY), so the turn waiting behind it looks at
   * the queue again at once; stream followers ignore a seq they already have.
   */
  finishTurn(slot: QueueSlot, ctx?: StoreCallContext): Promise<void>;

  /**
   * Atomically claims every worker whose lease ended before `now` (other than `exceptWorkerId`):
   * returns each with its turns and deletes the worker row, so of several concurrent reapers
   * exactly one gets each dead worker. The turns stay queued: the reaper fails their tasks, then
   * calls finishTurn() for each.
   */
  claimExpiredWorkers(now: number, exceptWorkerId?: string, ctx?: StoreCallContext): Promise<ExpiredWorker[]>;

  /**
   * Takes the lease of `workerId` for a new start of a process, recording `description`, and tells
   * whether another start held that worker id before: a worker restarted under a fixed `workerId`
   * within the lease TTL would otherwise renew its predecessor's lease and never reap its turns.
   *
   * Atomically: when a lease row of `workerId` exists whose incarnation is not
   * `description.incarnation` (or that has none), it returns that predecessor, with its
   * `lastHeartbeat` and every turn queued under `workerId` (the new start has enqueued none yet: it
   * calls this before taking work), whether or not its lease has run out; the turns stay queued, and
   * the caller fails their tasks and finishes them as a reaper does a dead worker's. In every case
   * the row then holds the new lease (`leaseUntil`, last heartbeat now) and `description`. Called
   * again with the same incarnation it only renews (and returns `undefined`), as does a first start.
   * With no row of `workerId` (a reaper claimed it) but turns still queued under it, those are a
   * previous start's too: it returns them with `lastHeartbeat` 0.
   *
   * Present when `supports.cluster`.
   */
  joinWorker?(
    workerId: string,
    leaseUntil: number,
    description: WorkerDescription,
    ctx?: StoreCallContext,
  ): Promise<ExpiredWorker | undefined>;

  /**
   * Every worker holding a lease row (expired ones included until a reaper claims them), ordered
   * by worker id, each with its description and its queued turns; and each worker id that owns
   * queued turns but has no row (claimed by a reaper that failed to finish them), with
   * `leaseUntil` and `lastHeartbeat` 0 and no description, so operators can still release them.
   * For monitoring and operator actions. Present when `supports.cluster`.
   */
  listWorkers?(ctx?: StoreCallContext): Promise<WorkerRecord[]>;

  /** Deletes the worker's lease row (graceful shutdown, after its turns were finished). */
  removeWorker(workerId: string, ctx?: StoreCallContext): Promise<void>;

  /** Turns of a worker still in the queue (graceful shutdown, diagnostics). */
  listWorkerTurns(workerId: string, ctx?: StoreCallContext): Promise<QueueSlot[]>;

  /**
   * The task a user message with this id was committed to by `owner`: every `message` event, and
   * the first history message of every `task` event when its role is `user`, is indexed by the
   * store at commit, in the same transaction, with its digest.
   *
   * The index is per namespace and per owner: an entry belongs to the scope of the commit's
   * `owner` ({@link CommitRequest.owner}), and `owner` here names the scope to look in; left out,
   * the anonymous scope of commits without an owner, which is distinct from every principal's. So
   * two principals may use the same message id without conflict and never find each other's
   * entries, while one principal (or the anonymous scope) reusing an id is refused at commit with
   * `DuplicateMessageError`. The empty string names no scope (commits refuse it as an owner):
   * nothing is found under it.
   *
   * `undefined` when unknown in that scope (or purged with its task). A commit whose own events
   * repeat an id is refused too; when a commit is both at a stale version and carries a known id,
   * either error may be raised.
   */
  findMessage(messageId: string, ctx?: StoreCallContext, owner?: string): Promise<MessageIndexEntry | undefined>;
}
