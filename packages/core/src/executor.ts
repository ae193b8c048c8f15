/**
 * What users implement: an {@link AgentExecutor} runs one *turn* — one invocation for one incoming
 * user message — and reports progress through the {@link TurnContext} it receives.
 */

import { cloneJson } from './json.js';
import type { Artifact, Message, Metadata, Part, Task, TaskState } from './model/types.js';
import type { Caller } from './protocol/context.js';

/** Text, a list of parts, or message fields; becomes an agent Message (role `agent`). */
export type MessageInput = string | Part[] | (Partial<Omit<Message, 'kind' | 'role'>> & { parts: Part[] });

export interface ArtifactInput {
  /** Defaults to a fresh id per call, or the id of the previous chunk when `append` is true. */
  artifactId?: string;
  name?: string;
  description?: string;
  /** The parts of this chunk. Use `text` or `data` as a shortcut for one part. */
  parts?: Part[];
  text?: string;
  data?: Record<string, unknown>;
  /** Append to the artifact with the same id instead of replacing it (§7.2.3). */
  append?: boolean;
  /** This is the artifact's last chunk (§7.2.3). */
  lastChunk?: boolean;
  metadata?: Metadata;
}

/**
 * The update methods check each update against the task at once (an invalid transition rejects)
 * and write updates to the store in order. Non-final updates (`working`, `artifact`, non-final
 * `status`) resolve as soon as they are checked and queued, so a burst of them goes to the store
 * in one commit; final states (`complete`, `fail`, `reject`, `requireInput`, `requireAuth`,
 * `reply`) resolve once they are in the store. After a cancel, updates are dropped silently.
 *
 * A turn ends at its final status (terminal, or interrupted: `input-required`, `auth-required`):
 * that commit frees the context for its next turn, which may start at once on any worker, and
 * updates the agent sends after it are dropped silently too. Set context state before the final
 * status. The methods are safe to destructure (`async ({ text, complete }) => …`).
 */
export interface TurnContext {
  /** The user message that started this turn (with taskId and contextId filled in). */
  readonly message: Message;
  /** The task as it was when the turn started; its history ends with `message`. */
  readonly task: Task;
  readonly taskId: string;
  readonly contextId: string;
  /** True for the first turn of a task, false when a follow-up message resumed it. */
  readonly isNewTask: boolean;
  /**
   * The task's state when this turn began, before the runtime moved it to `working`: `submitted`
   * for a new task, e.g. `input-required` when the message answers the agent's question.
   */
  readonly previousState: TaskState;
  /** The text parts of `message`, joined with newlines. */
  readonly text: string;
  /** The state this agent stored for the context (see {@link setContextState}), or undefined. */
  readonly contextState: unknown;
  /** Aborted when the task is canceled (from any worker), the turn times out, or the server closes. */
  readonly signal: AbortSignal;
  /**
   * Who sent `message`: the authenticated principal (undefined without authentication), the tenant,
   * and the protocol version and binding it came through, so an agent can act on the caller's behalf.
   */
  readonly caller: Caller;
  /**
   * The W3C trace context (a `traceparent` value) of the operation span of the request that
   * started this turn (the plugin's `SendMessage`/`SendStreamingMessage` span); undefined when
   * untraced. Parent the agent's own spans on it explicitly, e.g. with the Fastify plugin's
   * `parentContextOf(turn)`: `tracer.startSpan(name, {}, parentContextOf(turn))`. That is the
   * only way they nest under the request when the plugin runs with
   * `tracing: { activeContext: false }`, which does not make the span the active context.
   */
  readonly traceContext: string | undefined;

  /** Persists the agent's own state for this context, e.g. an upstream conversation id. */
  setContextState(state: unknown): Promise<void>;
  /** Status `working`, optionally with a progress message. */
  working(message?: MessageInput, metadata?: Metadata): Promise<void>;
  /** Emits an artifact or a chunk of one (§7.2.3). Returns the artifact id, to append further chunks. */
  artifact(chunk: ArtifactInput): Promise<string>;
  /** Status `completed` (terminal). */
  complete(message?: MessageInput, metadata?: Metadata): Promise<void>;
  /** Status `failed` (terminal). */
  fail(message?: MessageInput, metadata?: Metadata): Promise<void>;
  /** Status `rejected` (terminal): the agent will not do this task. */
  reject(message?: MessageInput, metadata?: Metadata): Promise<void>;
  /** Status `input-required`: the task pauses until a message carrying its taskId arrives. */
  requireInput(message: MessageInput, metadata?: Metadata): Promise<void>;
  /** Status `auth-required`: the task pauses until the client authenticates and sends a message. */
  requireAuth(message: MessageInput, metadata?: Metadata): Promise<void>;
  /**
   * Answers with a Message instead of a task result: a blocking `message/send` returns this
   * Message (§7.1), and the task is completed with it as its status message.
   */
  reply(message: MessageInput): Promise<void>;
  /** Any state change; the helpers above are shortcuts for it. */
  status(state: TaskState, message?: MessageInput, metadata?: Metadata): Promise<void>;
}

export interface AgentExecutor {
  /**
   * Runs one turn. Returning ends the turn; the task may stay non-terminal (e.g. `working`) and
   * continue with the next message for it. Throwing fails the task with the error's message.
   */
  execute(context: TurnContext): Promise<void> | void;
}

export type AgentExecutorLike = AgentExecutor | AgentExecutor['execute'];

export function toExecutor(executor: AgentExecutorLike): AgentExecutor {
  return typeof executor === 'function' ? { execute: executor } : executor;
}

export function textOf(message: Pick<Message, 'parts'>): string {
  return message.parts
    .filter((p): p is Extract<Part, { kind: 'text' }> => p.kind === 'text')
    .map((p) => p.text)
    .join('\n');
}

export function toAgentMessage(
  input: MessageInput,
  ids: { taskId: string; contextId: string; messageId: string },
): Message {
  if (typeof input === 'string') {
    return {
      kind: 'message',
      role: 'agent',
      messageId: ids.messageId,
      taskId: ids.taskId,
      contextId: ids.contextId,
      parts: [{ kind: 'text', text: input }],
    };
  }
  if (Array.isArray(input)) {
    return {
      kind: 'message',
      role: 'agent',
      messageId: ids.messageId,
      taskId: ids.taskId,
      contextId: ids.contextId,
      parts: cloneJson(input),
    };
  }
  return {
    ...cloneJson(input),
    kind: 'message',
    role: 'agent',
    messageId: input.messageId ?? ids.messageId,
    taskId: ids.taskId,
    contextId: ids.contextId,
  };
}

export function toArtifact(chunk: ArtifactInput, artifactId: string): Artifact {
  // Copied: snapshots share parts with the events, so the agent reusing its objects must not reach
  // them. With JSON's rules (cloneJson), what every store keeps: ten times cheaper than
  // structuredClone for a chunk's small objects (~0.1 against ~1 µs), paid per streamed chunk.
  const parts: Part[] = chunk.parts === undefined ? [] : cloneJson(chunk.parts);
  if (chunk.text !== undefined) parts.push({ kind: 'text', text: chunk.text });
  if (chunk.data !== undefined) parts.push({ kind: 'data', data: cloneJson(chunk.data) });
  const artifact: Artifact = { artifactId, parts };
  if (chunk.name !== undefined) artifact.name = chunk.name;
  if (chunk.description !== undefined) artifact.description = chunk.description;
  if (chunk.metadata !== undefined) artifact.metadata = cloneJson(chunk.metadata);
  return artifact;
}
