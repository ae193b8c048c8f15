/**
 * Runs the agent for a turn that holds its slot: moves the task to `working`, calls the executor
 * with a {@link RuntimeTurnContext}, then closes the turn according to how it ended (returned, threw,
 * timed out, canceled, interrupted by shutdown or by a lost lease).
 */

import { A2AError } from '../errors.js';
import type { AgentExecutor } from '../executor.js';
import { isFinalState, isTerminalState, type Task, type TaskEvent } from '../model/types.js';

import { retryUntilDone } from './retry.js';
import type { Turn } from './turn.js';
import { RuntimeTurnContext, type TurnContextServices } from './turn-context.js';

/**
 * The failure reason of a turn that failed because the store could not be reached (the agent's
 * write failed, and so did the agent): the store's own message names hosts and users, which
 * clients are never told (its code is not exposed), so the task says what happened without it.
 */
export function storeFailureReason(error: unknown): string | undefined {
  return A2AError.is(error) && error.code === 'STORE_UNAVAILABLE'
    ? 'The turn failed: the task store could not be reached while the agent worked. Send the message again.'
    : undefined;
}

export interface TurnRunnerOptions {
  readonly services: TurnContextServices;
  readonly executor: AgentExecutor;
  readonly workerId: string;
  /** Fails a turn that runs longer than this; undefined or ≤ 0: no limit. */
  readonly turnTimeoutMs: number | undefined;
  /** Named in the failure of a turn interrupted by shutdown. */
  readonly drainTimeoutMs: number;
}

export class TurnRunner {
  readonly #services: TurnContextServices;
  readonly #executor: AgentExecutor;
  readonly #workerId: string;
  readonly #turnTimeoutMs: number | undefined;
  readonly #drainTimeoutMs: number;

  constructor(options: TurnRunnerOptions) {
    this.#services = options.services;
    this.#executor = options.executor;
    this.#workerId = options.workerId;
    this.#turnTimeoutMs = options.turnTimeoutMs;
    this.#drainTimeoutMs = options.drainTimeoutMs;
  }

  /**
   * Runs the turn. Not an async function: a new task in a context this message created (most
   * streams) goes from here to the agent with no read, and its run is then one promise chained on
   * the agent's, with no suspended frame or extra promise per running turn (bench/PROFILE.md,
   * per-stream memory). Never throws: a failure is the returned promise's.
   */
  run(turn: Turn): Promise<void> {
    try {
      if (turn.settled || turn.aborted) return Promise.resolve(); // canceled (or shut down) while it waited for its context
      turn.start();
      // A new task in a context this message created, which started at once, reads nothing (a
      // context it created has no state yet): no retry loop for it either.
      if (turn.waited || !turn.isNewTask || !turn.isNewContext) return this.#readThenStart(turn);
      return this.#start(turn, undefined);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async #readThenStart(turn: Turn): Promise<void> {
    const { store } = this.#services;
    // A task that turns of others may have changed while this one waited is read again; a new
    // task that started at once is as this worker wrote it (a cancel meanwhile still shows up as
    // a version conflict on the first write, and the watch aborts the turn).
    // The reads before the agent runs are retried through a store outage (issue 14): the turn has
    // its slot, and failing it for a read would fail a task the agent never saw.
    let contextRecord: Awaited<ReturnType<typeof store.getContext>>;
    const read = await retryUntilDone(
      async () => {
        if (turn.waited || !turn.isNewTask) {
          await turn.writer.reload();
          turn.projected = turn.writer.task;
        }
        contextRecord = turn.isNewContext
          ? undefined
          : await store.getContext(turn.writer.task.contextId, turn.storeContext);
      },
      {
        log: this.#services.log,
        what: 'read the task before the turn',
        fields: { taskId: turn.taskId },
        giveUp: () => turn.leaseLost || turn.aborted,
      },
    );
    if (!read) throw new Error('The store could not be read before the turn started.');
    return this.#start(turn, contextRecord?.state);
  }

  /** Moves the task to `working` and runs the agent; the turn's context state as read (undefined for a new context). */
  #start(turn: Turn, contextState: unknown): Promise<void> {
    const previousState = turn.writer.task.status.state;
    if (isTerminalState(previousState)) return Promise.resolve();
    const { events } = this.#services;
    // Not waited for: `working` goes to the store together with the agent's first updates (a
    // failure to write it is the turn's writeError).
    turn.enqueue((task) => [events.status(task, 'working')]);
    const context = new RuntimeTurnContext(turn, this.#services, previousState, contextState);
    const timeoutMs = this.#turnTimeoutMs;
    if (timeoutMs === undefined || timeoutMs <= 0) {
      // No limit: no timer, no race; the agent's promise, and what follows it, chained.
      return this.#execute(context).then(
        () => this.#afterAgent(turn, undefined),
        (error: unknown) => this.#afterAgent(turn, error),
      );
    }
    return this.#runWithTimeout(turn, context, timeoutMs);
  }

  async #runWithTimeout(turn: Turn, context: RuntimeTurnContext, timeoutMs: number): Promise<void> {
    let thrown: unknown;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
      timer.unref();
    });
    const execution = (async () => {
      try {
        await this.#executor.execute(context);
      } catch (error) {
        thrown = error;
      }
      await turn.flush();
      return 'returned' as const;
    })();
    const how = await Promise.race([execution, timedOut]);
    clearTimeout(timer);
    if (how === 'timeout') {
      turn.abort('timeout');
      await this.closeTurn(turn, `Turn timed out after ${timeoutMs} ms.`);
      return;
    }
    await this.#closeAfterAgent(turn, thrown);
  }

  /** The executor's run as a promise, also when it throws before returning one. */
  #execute(context: RuntimeTurnContext): Promise<void> {
    try {
      return Promise.resolve(this.#executor.execute(context));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * After the agent returned or threw. Usually it returned after its final status was written: the
   * turn's end is written, nothing is left to write, nothing aborted it, and closing it would flush
   * nothing and stage nothing (closeTurn's build finds the end written). It is settled at once
   * then, without the chain of async frames (flush, close, retry) that would each find nothing to
   * do: every one of them costs promises, and a promise hook per promise when tracing is on.
   */
  #afterAgent(turn: Turn, thrown: unknown): Promise<void> | undefined {
    if (
      thrown === undefined &&
      turn.phase === 'ended' &&
      !turn.writing &&
      turn.abortCause === undefined &&
      turn.writeError === undefined
    ) {
      turn.settle();
      return undefined;
    }
    return this.#flushThenClose(turn, thrown);
  }

  async #flushThenClose(turn: Turn, thrown: unknown): Promise<void> {
    await turn.flush();
    await this.#closeAfterAgent(turn, thrown);
  }

  /** Closes the turn according to how it ended, once the agent returned (or threw) and its updates are written. */
  async #closeAfterAgent(turn: Turn, thrown: unknown): Promise<void> {
    // Another turn recorded this message first (see Turn, `superseded`): nothing of this one was written.
    if (turn.abortCause === 'superseded') return;
    if (turn.abortCause === 'canceled') {
      await turn.writer.reload(); // settle with the canceled task, not the snapshot before the cancel
      return;
    }
    if (turn.abortCause === 'lease-lost') {
      await this.closeTurn(turn, `Worker lost: worker "${this.#workerId}" could not renew its lease in time.`);
      return;
    }
    if (turn.abortCause === 'shutdown') {
      await this.closeTurn(turn, this.shutdownReason());
      return;
    }
    if (thrown !== undefined) {
      const reason = thrown instanceof Error ? thrown.message : String(thrown);
      this.#services.log.warn({ err: thrown, taskId: turn.taskId }, 'a2a: agent failed the turn');
      await this.closeTurn(turn, storeFailureReason(thrown) ?? (reason || 'The agent failed without a message.'));
      return;
    }
    const { writeError } = turn;
    if (writeError !== undefined) {
      const reason = writeError instanceof Error ? writeError.message : String(writeError);
      await this.closeTurn(turn, storeFailureReason(writeError) ?? `The agent sent an invalid update: ${reason}`);
      return;
    }
    await this.closeTurn(turn, undefined);
  }

  /**
   * Writes the turn's last event and settles it: fails the task with `failure` when given; without
   * one, records a turn end when the agent left the task non-final (a final status ended it already).
   */
  async closeTurn(turn: Turn, failure: string | undefined): Promise<void> {
    const { events, log } = this.#services;
    await turn.flush();
    const build = (task: Task): TaskEvent[] | undefined => {
      if (failure !== undefined) return [events.status(task, 'failed', failure)];
      if (isFinalState(task.status.state)) return undefined;
      return [events.turnEnd(task, turn.messageId)];
    };
    // Retried through a store outage (issue 14): without this event the task stays `working`, and
    // its commit is also the one that releases the turn's slot, without which the context's later
    // messages wait for good. The writer is version-checked: a retry after a commit whose answer
    // was lost finds the task already ended and writes nothing twice.
    const written = await retryUntilDone(
      async () => {
        await turn.flush();
        await turn.stage(build);
      },
      { log, what: "write the turn's last event", fields: { taskId: turn.taskId }, giveUp: () => turn.leaseLost },
    );
    // Its slot, if it still holds one, is then the reaper's: releasing it would leave the task
    // `working` with no turn to end it. Another attempt (the other chain's) may still write the end.
    if (!written) turn.abandon();
    turn.settle();
  }

  /** Why a turn still running when its worker shut down failed. */
  shutdownReason(): string {
    return `Interrupted: worker "${this.#workerId}" shut down before the turn finished (drain timeout ${this.#drainTimeoutMs} ms).`;
  }
}
