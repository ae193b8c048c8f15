/**
 * The runtime's {@link TurnContext}: what an agent's `execute` receives, what it reads of its turn
 * and how it reports on it. It is not the turn (see turn.ts): one is made per run of the agent.
 */

import {
  type ArtifactInput,
  type MessageInput,
  type TurnContext,
  textOf,
  toAgentMessage,
  toArtifact,
} from '../executor.js';
import { cloneJson } from '../json.js';
import type { Logger } from '../logger.js';
import {
  isFinalState,
  type Message,
  type Metadata,
  type Task,
  type TaskEvent,
  type TaskState,
} from '../model/types.js';
import type { Caller } from '../protocol/context.js';
import type { A2AStore } from '../store/index.js';
import type { Events } from './events.js';
import type { Turn } from './turn.js';

/** What the runtime lends the context of each of its turns: one object per runtime, not closures per turn. */
export interface TurnContextServices {
  readonly store: A2AStore;
  readonly log: Logger;
  readonly events: Events;
}

/** Above this many queued, uncommitted events an agent's updates wait for the store (backpressure). */
const MAX_BACKLOG = 256;

type EmitOptions = { durable?: boolean; after?: () => void };
const NO_EMIT_OPTIONS: EmitOptions = Object.freeze({});

/**
 * What an update nobody waits for answers the agent: one resolved promise shared by every turn
 * rather than a promise (and a reaction and a catch on the write's) per artifact chunk.
 */
const QUEUED: Promise<void> = Promise.resolve();

const ignore = (): void => undefined;

/**
 * Its update methods are getters returning a fresh arrow function: `const { complete } = context`
 * works, and a context keeps no closure per method alive while its turn runs (a held stream's turn is mostly
 * waiting). The message and task are copied only if read.
 */
export class RuntimeTurnContext implements TurnContext {
  readonly taskId: string;
  readonly contextId: string;
  readonly isNewTask: boolean;
  readonly previousState: TaskState;
  readonly contextState: unknown;
  readonly caller: Caller;
  readonly #turn: Turn;
  readonly #services: TurnContextServices;
  readonly #taskAtStart: Task;
  /** The artifact of the previous chunk, which a chunk with `append` and no id extends (§7.2.3). */
  #lastArtifactId: string | undefined;
  #message: Message | undefined;
  #task: Task | undefined;
  #text: string | undefined;

  constructor(turn: Turn, services: TurnContextServices, previousState: TaskState, contextState: unknown) {
    this.#turn = turn;
    this.#services = services;
    this.#taskAtStart = turn.projected;
    this.taskId = turn.writer.task.id;
    this.contextId = turn.writer.task.contextId;
    this.isNewTask = turn.isNewTask;
    this.previousState = previousState;
    this.contextState = contextState;
    this.caller = turn.caller;
  }

  // Copies for the agent, made on first read: it may mutate them freely.
  get message(): Message {
    this.#message ??= cloneJson(this.#turn.message);
    return this.#message;
  }
  get task(): Task {
    this.#task ??= cloneJson(this.#taskAtStart);
    return this.#task;
  }
  get text(): string {
    this.#text ??= textOf(this.#turn.message);
    return this.#text;
  }
  get signal(): AbortSignal {
    return this.#turn.signal;
  }
  get traceContext(): string | undefined {
    return this.#turn.writer.traceContext;
  }

  get setContextState(): TurnContext['setContextState'] {
    return (state) => this.#services.store.setContext(this.contextId, state, this.#turn.storeContext);
  }
  get status(): TurnContext['status'] {
    return (state, message, metadata) => this.#status(state, message, metadata);
  }
  get working(): TurnContext['working'] {
    return (message, metadata) => this.#status('working', message, metadata);
  }
  get complete(): TurnContext['complete'] {
    return (message, metadata) => this.#status('completed', message, metadata);
  }
  get fail(): TurnContext['fail'] {
    return (message, metadata) => this.#status('failed', message, metadata);
  }
  get reject(): TurnContext['reject'] {
    return (message, metadata) => this.#status('rejected', message, metadata);
  }
  get requireInput(): TurnContext['requireInput'] {
    return (message, metadata) => this.#status('input-required', message, metadata);
  }
  get requireAuth(): TurnContext['requireAuth'] {
    return (message, metadata) => this.#status('auth-required', message, metadata);
  }
  get reply(): TurnContext['reply'] {
    return (message) => {
      const reply = toAgentMessage(message, this.#ids());
      const turn = this.#turn;
      // §7.1: a message/send may be answered with a Message instead of the Task; the task still
      // completes, so its log and other readers agree.
      return this.#emit((current) => [this.#services.events.status(current, 'completed', reply)], {
        durable: true,
        after: () => turn.settle(reply),
      });
    };
  }
  get artifact(): TurnContext['artifact'] {
    return (chunk) => this.#artifact(chunk);
  }

  /**
   * Not an async function awaiting the queue: a chunk nobody waits for (the usual one) is answered
   * with its id by one promise, with no frame suspended on the shared resolved one.
   */
  #artifact(chunk: ArtifactInput): Promise<string> {
    try {
      // §7.2.3: a chunk with `append` extends the artifact of the previous chunk unless it names one.
      const artifactId =
        chunk.artifactId ?? (chunk.append ? this.#lastArtifactId : undefined) ?? this.#services.events.newId();
      this.#lastArtifactId = artifactId;
      const queued = this.#emit((current) => {
        const event: TaskEvent = {
          kind: 'artifact-update',
          taskId: current.id,
          contextId: current.contextId,
          artifact: toArtifact(chunk, artifactId),
        };
        if (chunk.append !== undefined) event.append = chunk.append;
        if (chunk.lastChunk !== undefined) event.lastChunk = chunk.lastChunk;
        return [event];
      }, NO_EMIT_OPTIONS);
      if (queued === QUEUED) return Promise.resolve(artifactId);
      // Past the backlog the chunk waits for its write; the promise handed to the agent is a new
      // one, so it needs its own handler: an agent that streams chunks without awaiting them must
      // not crash the process when the store fails (the turn fails with the error instead).
      const answer = queued.then(() => artifactId);
      answer.catch(ignore);
      return answer;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #status(state: TaskState, message?: MessageInput, metadata?: Metadata): Promise<void> {
    const turn = this.#turn;
    return this.#emit(
      (current) => [
        this.#services.events.status(
          current,
          state,
          message === undefined ? undefined : toAgentMessage(message, this.#ids()),
          metadata,
        ),
      ],
      isFinalState(state) ? { durable: true, after: () => turn.settle() } : NO_EMIT_OPTIONS,
    );
  }

  #ids(): { taskId: string; contextId: string; messageId: string } {
    return { taskId: this.taskId, contextId: this.contextId, messageId: this.#services.events.newId() };
  }

  /**
   * Queues an update. A final state (and a reply) resolves once it is in the store; other updates
   * resolve as soon as they are checked and queued, so a burst of them is written in one commit,
   * unless too many are waiting for the store. An invalid transition rejects at once.
   */
  #emit(build: (current: Task) => TaskEvent[] | undefined, options: EmitOptions): Promise<void> {
    const turn = this.#turn;
    let queued: boolean;
    try {
      queued = turn.enqueue(build);
    } catch (error) {
      return Promise.reject(error);
    }
    if (!queued) {
      // Canceled, or the turn already ended: the agent's late updates are dropped (§6.3).
      this.#services.log.debug({ taskId: this.taskId }, 'a2a: dropped an update after the turn ended');
      return QUEUED;
    }
    const { durable, after } = options;
    // The usual update: queued, and nothing waits for its write (a failure is the turn's writeError).
    if (!durable && turn.backlog <= MAX_BACKLOG) return QUEUED;
    // One promise, settled by the batch itself rather than chained on a promise of its own.
    const written = new Promise<void>((resolve, reject) => {
      turn.whenQueuedWritten({
        resolve: (ok) => {
          if (ok && after !== undefined) after();
          resolve();
        },
        reject: (error) => {
          // Recorded in turn.writeError, and the turn fails with it: an agent that does not await
          // the update must not crash the process with an unhandled rejection. Handled only when it
          // fails, so a write that succeeds costs no catch.
          written.catch(ignore);
          reject(error);
        },
      });
    });
    return written;
  }
}
