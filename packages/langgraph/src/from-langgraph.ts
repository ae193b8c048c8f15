/**
 * `fromLangGraph(graph)`: a compiled LangGraph.js graph as an A2A agent executor. One A2A turn is
 * one run of the graph on the thread named by the task's contextId; everything the run streams
 * becomes calls on the turn (the executor contract of `@fastify-a2a/core`), nothing else.
 */

import {
  type AgentExecutor,
  dataPart,
  type MessageInput,
  type Metadata,
  type Part,
  type TurnContext,
} from '@fastify-a2a/core';
import {
  answersQuestion,
  type RunAgentTurnOptions,
  runAgentTurn,
  type TextArtifactOptions,
  TextArtifactStream,
} from '@fastify-a2a/core/agent-kit';
import { HumanMessage } from '@langchain/core/messages';
import { Command } from '@langchain/langgraph';
import { LangGraphAdapterError } from './errors.js';
import { type HumanContentOptions, humanContent } from './input.js';
import { contentText, type GraphInterrupt, interruptState, questionParts, resumeValue } from './wire.js';

/**
 * What the adapter needs of a compiled graph (`StateGraph.compile()`, `entrypoint(…)`, a prebuilt
 * agent): `stream` and `getState`. For interrupts the graph must be compiled with a checkpointer;
 * for interrupts answered on another worker, with one every worker shares (the official Postgres or
 * SQLite checkpointer).
 */
export interface LangGraphRunnable {
  // biome-ignore lint/suspicious/noExplicitAny: each graph has its own input and option types.
  stream(input: any, options?: any): Promise<AsyncIterable<unknown>>;
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  getState(config: any): Promise<{ tasks: ReadonlyArray<{ interrupts?: ReadonlyArray<GraphInterrupt> }> }>;
}

/** The metadata of a chunk LangGraph streams in `messages` mode (the fields the adapter reads). */
export interface StreamedMessageMetadata {
  /** The node whose model call (or return value) produced the message. */
  langgraph_node?: string;
  tags?: string[];
  [key: string]: unknown;
}

/** A message (or a chunk of one) LangGraph streams in `messages` mode. */
export interface StreamedMessage {
  id?: string;
  /** `ai`, `human`, `tool`, `system`… */
  type?: string;
  content?: unknown;
}

/** Where an artifact's text comes from: how its chunks are coalesced, and what it is called. */
export interface ArtifactStreamOptions extends Pick<TextArtifactOptions, 'maxDelayMs' | 'maxChars'> {}

export interface FromLangGraphOptions extends HumanContentOptions {
  /**
   * The graph input for a message that does not answer an interrupt.
   * @default `{ messages: [new HumanMessage({ id: messageId, content })] }`, the input of a graph over
   * `MessagesAnnotation` (or any state with a `messages` channel); content is the message's text,
   * or standard content blocks when it has file or data parts (see `fileUrls`).
   */
  input?: (turn: TurnContext) => unknown;
  /**
   * The value a message answering an interrupt resumes the graph with (`Command({ resume })`).
   * @default the message's text, or the value of its first data part when it has no text, or "".
   */
  resume?: (turn: TurnContext, interrupts: readonly GraphInterrupt[]) => unknown;
  /**
   * More of the run's config: `context`, `recursionLimit`, `callbacks`, `configurable` keys… The
   * adapter sets `configurable.thread_id` (the contextId), `signal` and `streamMode` itself.
   */
  config?: (turn: TurnContext) => Record<string, unknown>;
  /**
   * Which streamed messages become artifacts.
   * @default the AI messages (`type === 'ai'`): the model's answer, token by token, and the AI
   * messages a node returns whole.
   */
  streamMessage?: (message: StreamedMessage, metadata: StreamedMessageMetadata) => boolean;
  /**
   * The name of the artifact a message becomes (one artifact per message).
   * @default "response"
   */
  artifactName?: (metadata: StreamedMessageMetadata) => string;
  /**
   * How a message's streamed text is coalesced into artifact chunks: a chunk leaves when `maxChars`
   * characters wait, or when the oldest has waited `maxDelayMs`, whichever comes first.
   * @default { maxDelayMs: 50, maxChars: 1024 }
   */
  coalesce?: ArtifactStreamOptions;
  /**
   * Node updates as `working` status messages, so a client follows the graph's progress: `true` for
   * "Finished <node>." as each node finishes, or a function returning the message (undefined for none).
   * @default false
   */
  nodeUpdates?: boolean | ((node: string, update: unknown) => MessageInput | undefined);
  /**
   * What a node sends with `config.writer(…)` (LangGraph's `custom` stream) becomes a `working`
   * status message: a string as text, any other value as a data part. `false` ignores it.
   * @default true
   */
  customEvents?: boolean;
  /**
   * The status and message an interrupt ends the turn with.
   * @default `auth-required` when an interrupt's value says so (see `authRequired`), else
   * `input-required`; the message holds each interrupt's value (see `questionParts`).
   */
  question?: (interrupts: readonly GraphInterrupt[]) => {
    state: 'input-required' | 'auth-required';
    message: MessageInput;
  };
  /** Called with what the graph threw before the task fails (e.g. to log its stack, which never reaches the client). */
  onError?: RunAgentTurnOptions['onError'];
}

type StreamMode = 'messages' | 'updates' | 'custom';

/**
 * The key, in the metadata of the message asking an interrupt's question, under which the
 * interrupt ids are kept: the task's history carries them to the turn that answers, on any worker.
 */
export const INTERRUPTS_METADATA_KEY = 'langgraph';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Serves a compiled LangGraph.js graph as an A2A agent:
 * - the graph runs on the thread `turn.contextId`: a context is one LangGraph conversation;
 * - the AI messages it streams become artifacts, one per message, their text coalesced into chunks;
 * - an `interrupt(value)` ends the turn `input-required` (`auth-required` for an `authRequired`
 *   value) with the value as the question; the next message on that task resumes the graph with
 *   `Command({ resume })`, on whichever worker receives it;
 * - a cancel aborts the run (the run's `signal` is the turn's);
 * - what the graph throws fails the task with a readable message.
 */
export function fromLangGraph(graph: LangGraphRunnable, options: FromLangGraphOptions = {}): AgentExecutor {
  if (
    graph === null ||
    typeof graph !== 'object' ||
    typeof graph.stream !== 'function' ||
    typeof graph.getState !== 'function'
  ) {
    throw new LangGraphAdapterError(
      'INVALID_GRAPH',
      'fromLangGraph(graph) needs a compiled graph: pass what `new StateGraph(…).compile({ checkpointer })` returns.',
    );
  }
  const streamMode: StreamMode[] = ['messages', 'updates'];
  if (options.customEvents !== false) streamMode.push('custom');
  const runOptions: RunAgentTurnOptions = options.onError ? { onError: options.onError } : {};

  return {
    execute(turn: TurnContext) {
      return runAgentTurn(turn, () => runGraph(graph, turn, options, streamMode), runOptions);
    },
  };
}

async function runGraph(
  graph: LangGraphRunnable,
  turn: TurnContext,
  options: FromLangGraphOptions,
  streamMode: StreamMode[],
): Promise<void> {
  const extra = options.config?.(turn) ?? {};
  const configurable = { ...(isRecord(extra.configurable) ? extra.configurable : {}), thread_id: turn.contextId };
  const input = await graphInput(graph, turn, options, configurable);
  if (input === undefined) return;

  const artifacts = new MessageArtifacts(turn, options);
  const interrupts: GraphInterrupt[] = [];
  try {
    const stream = await graph.stream(input, { ...extra, configurable, signal: turn.signal, streamMode });
    for await (const item of stream) {
      if (!Array.isArray(item) || item.length !== 2) continue;
      const [mode, chunk] = item as [StreamMode, unknown];
      if (mode === 'messages') {
        const [message, metadata] = chunk as [StreamedMessage | null | undefined, StreamedMessageMetadata | undefined];
        if (message !== null && typeof message === 'object') await artifacts.write(message, metadata ?? {});
      } else if (mode === 'updates') {
        if (isRecord(chunk)) await onUpdates(turn, options, artifacts, chunk, interrupts);
      } else if (mode === 'custom') {
        await artifacts.flush();
        await turn.working(typeof chunk === 'string' ? chunk : [dataPart(chunk)]);
      }
    }
  } catch (error) {
    // Aborted: the runtime ends the task (canceled, or failed on a timeout); what waits is dropped.
    if (turn.signal.aborted) artifacts.discard();
    else await artifacts.close();
    throw error;
  }
  if (turn.signal.aborted) {
    artifacts.discard();
    return;
  }
  await artifacts.close();

  if (interrupts.length > 0) {
    const asked = (options.question ?? defaultQuestion)(interrupts);
    const ids = interrupts.map((i) => i.id).filter((id): id is string => typeof id === 'string');
    const message = withInterruptIds(asked.message, ids);
    if (asked.state === 'auth-required') await turn.requireAuth(message);
    else await turn.requireInput(message);
    return;
  }
  await turn.complete();
}

async function onUpdates(
  turn: TurnContext,
  options: FromLangGraphOptions,
  artifacts: MessageArtifacts,
  chunk: Record<string, unknown>,
  interrupts: GraphInterrupt[],
): Promise<void> {
  for (const [node, update] of Object.entries(chunk)) {
    if (node === '__interrupt__') {
      if (Array.isArray(update)) interrupts.push(...(update as GraphInterrupt[]));
      continue;
    }
    // The node has finished: the messages it streamed are complete.
    await artifacts.closeNode(node);
    const { nodeUpdates = false } = options;
    if (nodeUpdates === false) continue;
    const status = nodeUpdates === true ? `Finished ${node}.` : nodeUpdates(node, update);
    if (status !== undefined) {
      await artifacts.flush();
      await turn.working(status, { langgraph: { node } });
    }
  }
}

function defaultQuestion(interrupts: readonly GraphInterrupt[]) {
  return { state: interruptState(interrupts), message: { parts: questionParts(interrupts) } };
}

/** One artifact per streamed message, each a coalesced text stream from the agent kit. */
class MessageArtifacts {
  readonly #turn: TurnContext;
  readonly #options: FromLangGraphOptions;
  readonly #open = new Map<string, { stream: TextArtifactStream; node: string | undefined }>();
  /** A message streamed without an id (a custom model may not set one) is one artifact per node. */
  #anonymous = 0;

  constructor(turn: TurnContext, options: FromLangGraphOptions) {
    this.#turn = turn;
    this.#options = options;
  }

  async write(message: StreamedMessage, metadata: StreamedMessageMetadata): Promise<void> {
    const accept = this.#options.streamMessage ?? ((m: StreamedMessage) => m.type === 'ai');
    if (!accept(message, metadata)) return;
    const text = contentText(message.content);
    if (text === '') return;
    const node = metadata.langgraph_node;
    const key = message.id ?? `${node ?? ''}#${this.#anonymous}`;
    let open = this.#open.get(key);
    if (open === undefined) {
      const name = this.#options.artifactName?.(metadata) ?? 'response';
      open = { stream: new TextArtifactStream(this.#turn, { ...this.#options.coalesce, name }), node };
      this.#open.set(key, open);
    }
    await open.stream.write(text);
  }

  /** Sends what waits in every open artifact (before an update of another kind, so it comes first). */
  async flush(): Promise<void> {
    for (const { stream } of this.#open.values()) await stream.flush();
  }

  async closeNode(node: string): Promise<void> {
    for (const [key, open] of this.#open) {
      if (open.node !== node) continue;
      this.#open.delete(key);
      await open.stream.close();
    }
    this.#anonymous += 1;
  }

  async close(): Promise<void> {
    for (const { stream } of this.#open.values()) await stream.close();
    this.#open.clear();
  }

  discard(): void {
    for (const { stream } of this.#open.values()) stream.discard();
    this.#open.clear();
  }
}

/**
 * The graph's input for this turn: `Command({ resume })` when the message answers the task's
 * pending interrupt, the message as new input otherwise; undefined when the turn has ended here.
 */
async function graphInput(
  graph: LangGraphRunnable,
  turn: TurnContext,
  options: FromLangGraphOptions,
  configurable: Record<string, unknown>,
): Promise<unknown> {
  // A2A §6.3: only a task paused in input-required or auth-required waits for an answer.
  if (!answersQuestion(turn)) {
    if (options.input) return options.input(turn);
    const content = humanContent(turn.message, turn.text, options);
    return { messages: [new HumanMessage({ id: turn.message.messageId, content })] };
  }
  const state = await graph.getState({ configurable });
  const pending = state.tasks.flatMap((task) => task.interrupts ?? []);
  const asked = askedInterruptIds(turn);
  // New input on a thread drops its pending interrupts: when another task of this context ran the
  // graph since this task asked, there is nothing left to resume, and running the answer as new
  // input would answer a question the graph no longer asks.
  const stillPending =
    pending.length > 0 && (asked === undefined || asked.some((id) => pending.some((p) => p.id === id)));
  if (!stillPending) {
    await turn.fail(
      "This task's question is no longer pending: the conversation has moved on since it was asked (another task in this context ran the graph). Send your answer as a new message in the same context.",
    );
    return undefined;
  }
  const value = options.resume ? options.resume(turn, pending) : resumeValue(turn.message, turn.text);
  return new Command({ resume: value });
}

/** The interrupt ids the task's question asked (from its last agent message), when it recorded them. */
function askedInterruptIds(turn: TurnContext): string[] | undefined {
  const history = turn.task.history ?? [];
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i];
    if (message?.role !== 'agent') continue;
    const recorded = message.metadata?.[INTERRUPTS_METADATA_KEY];
    if (!isRecord(recorded) || !Array.isArray(recorded.interruptIds)) return undefined;
    return recorded.interruptIds.filter((id): id is string => typeof id === 'string');
  }
  return undefined;
}

function withInterruptIds(message: MessageInput, ids: string[]): MessageInput {
  const base: { parts: Part[]; metadata?: Metadata } =
    typeof message === 'string'
      ? { parts: [{ kind: 'text', text: message }] }
      : Array.isArray(message)
        ? { parts: message }
        : message;
  return { ...base, metadata: { ...base.metadata, [INTERRUPTS_METADATA_KEY]: { interruptIds: ids } } };
}
