/** A task snapshot with the version it was read at, and version-checked writes with retry. */

import { A2AError, taskNotFound } from '../errors.js';
import { applyEvents } from '../model/task-state.js';
import type { Task, TaskEvent } from '../model/types.js';
import type { A2AStore, CommitRequest, CommitResult, QueueSlot, StoreCallContext } from '../store/index.js';
import { monotonicSeconds, noTelemetry, type Telemetry } from '../telemetry.js';

export interface CommitOptions {
  /**
   * The principal on whose behalf the commit is made: the owner of a task it creates, and the
   * scope in which the store indexes the user messages it carries (see CommitRequest.owner).
   */
  owner?: string | undefined;
  /** Take a turn's slot in the context's queue in the same commit (the store's `enqueueTurn`). */
  takeSlot?: CommitRequest['enqueueTurn'];
  /** Release this slot in the same commit: the events end its turn (the store's `finishTurn`). */
  releaseSlot?: QueueSlot | undefined;
}

/** Version conflicts in a row before a write gives up (other writers keep winning the race). */
const MAX_ATTEMPTS = 20;

export class TaskWriter {
  task: Task;
  version: number;
  /**
   * The trace of the call this writer works for (Telemetry.callTraceContext), set by the intake:
   * what a commit carries when no trace is active (a telemetry that does not follow the active context).
   */
  traceContext: string | undefined;

  constructor(
    private readonly store: A2AStore,
    task: Task,
    version: number,
    /** The caller on whose behalf it writes. */
    private readonly ctx: StoreCallContext | undefined,
    /** Where each commit's latency and size are reported. */
    private readonly telemetry: Telemetry = noTelemetry,
  ) {
    this.task = task;
    this.version = version;
  }

  /**
   * Builds events from the current snapshot and commits them; on a version conflict reloads and
   * builds again. Returns undefined when `build` decided there is nothing to write.
   */
  async commit(
    build: (task: Task) => TaskEvent[] | undefined,
    options: CommitOptions = {},
  ): Promise<CommitResult | undefined> {
    for (let attempt = 1; ; attempt++) {
      const events = build(this.task);
      if (events === undefined || events.length === 0) return undefined;
      const next = applyEvents(this.version === 0 ? undefined : this.task, events);
      try {
        const request: CommitRequest = {
          taskId: this.task.id,
          expectedVersion: this.version,
          task: next,
          events,
          // Snapshots are copy-on-write (applyEvents) and events are built here from copies of
          // what the agent passed: nothing changes them after the commit.
          transfer: true,
        };
        // Set one by one rather than spread from fresh objects: no throwaway object per commit.
        if (options.owner !== undefined) request.owner = options.owner;
        if (options.takeSlot !== undefined) request.enqueueTurn = options.takeSlot;
        if (options.releaseSlot !== undefined) request.finishTurn = options.releaseSlot;
        // A task this runtime creates has an id it generated and has shown no one yet: no other
        // worker can be following it, so the store need not tell them (no NOTIFY on Postgres).
        if (this.version === 0) request.unknownElsewhere = true;
        const reported = this.telemetry.enabled;
        let started = 0;
        if (reported) {
          // The trace of the request making this commit travels with the task (see TaskRecord.traceContext).
          const traceContext = this.telemetry.traceContext() ?? this.traceContext;
          if (traceContext !== undefined) request.traceContext = traceContext;
          started = monotonicSeconds();
        }
        let result: CommitResult;
        try {
          result = await this.store.commit(request, this.ctx);
        } catch (error) {
          if (reported) this.telemetry.commitEnded(monotonicSeconds() - started, events.length, true);
          throw error;
        }
        if (reported) this.telemetry.commitEnded(monotonicSeconds() - started, events.length, false);
        this.task = next;
        this.version = result.version;
        return result;
      } catch (error) {
        if (!(A2AError.is(error) && error.code === 'VERSION_CONFLICT') || attempt >= MAX_ATTEMPTS) throw error;
        await this.reload();
      }
    }
  }

  async reload(): Promise<void> {
    const record = await this.store.getTask(this.task.id, this.ctx);
    if (record === undefined) throw taskNotFound(this.task.id);
    this.task = record.task;
    this.version = record.version;
  }
}
