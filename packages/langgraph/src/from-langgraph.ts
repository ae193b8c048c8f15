/**
 * `fromLangGraph(graph)`: a compiled LangGraph.js graph as an A2A agent executor. One A2A turn is
 * one run of the graph on the thread named by the task's contextId; everything the run streams
 * becomes calls on the turn (the executor contract, `@fastify-a2a/core`), never anything else.
 */

import { type AgentExecutor, dataPart, type MessageInput, type Metadata, type TurnContext } from '@fastify-a2a/core';
import { HumanMessage } from '@langchain/core/messages';
import { Command } from '@langchain/langgraph';
import { LangGraphAdapterError } from './errors.js';
import { TextArtifacts, type TextArtifactsOptions } from './text-artifacts.js';
import {
  contentText,
  type GraphInterrupt,
  interruptState,
  questionParts,
  resumeValue,
} from './wire.js';

/**
 * What the adapter needs of a compiled graph (`StateGraph.compile()`, `entrypoint(…)`, a prebuilt
 * agent): `stream` and `getState`. For interrupts the graph must be compiled with a checkpointer;
 * for interrupts answered on another worker, with one every worker shares (the official Postgres or
 * SQLite checkpointer).
 */
export interface LangGraphRunnable {
  // biome-ignore lint/suspicious/noExplicitAny: the graph's own input and option types vary per graph.
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

/** A message (or chunk of one) LangGraph streams in `messages` mode. */
export interface StreamedMessage {
  id?: string;
  /** `ai`, `human`, `tool`, `system`… */
  type?: string;
  content?: unknown;
}

export interface FromLangGraphOptions {
  /**
   * The graph input for a message that does not answer an interrupt.
   * @default `{ messages: [new HumanMessage({ id: messageId, content: turn.text })] }`, the input of
   * a graph over `MessagesAnnotation` (or any state with a `messages` channel).
   */
  input?: (turn: TurnContext) => unknown;
  /**
   * The value a message answering an interrupt resumes the graph with (`Command({ resume })`).
   * @default the message's text, or the value of its first data part when it has no text, or "".
   */
  resume?: (turn: TurnContext, interrupts: readonly GraphInterrupt[]) => unknown;
  /**
   * More of the run's config: `context`, `recursionLimit`, callbacks, `configurable` keys… The
   * adapter sets `configurable.thread_id` (the contextId), `signal`, and `streamMode` itself.
   */
  config?: (turn: TurnContext) => Record<string, unknown>;
  /**
   * Which streamed messages become artifacts.
   * @default the AI messages (`type === 'ai'`): the model's answer, token by token, and what a node returns.
   */
  streamMessage?: (message: StreamedMessage, metadata: StreamedMessageMetadata) => boolean;
  /**
   * The name of the artifact an AI message becomes (one artifact per message, its id the message's).
   * @default "response"
   */
  artifactName?: (metadata: StreamedMessageMetadata) => string;
  /**
   * Node updates as `working` status messages, so a client sees the graph's progress: `true` for
   * one per node that finishes ("Finished <node>."), or a function that returns the message (or
   * undefined for none).
   * @default false
   */
  nodeUpdates?: boolean | ((node: string, update: unknown) => MessageInput | undefined);
  /**
   * What `config.writer(…)` (LangGraph's `custom` stream) sends becomes a `working` status
   * message: a string as text, anything else as a data part. `false` ignores the custom stream.
   * @default true
   */
  customEvents?: boolean;
  /**
   * The question an interrupt ends the turn with.
   * @default each interrupt's value as parts (see the README), and `auth-required` when a value says
   * so (see `authRequired`).
   */
  question?: (interrupts: readonly GraphInterrupt[]) => {
    state: 'input-required' | 'auth-required';
    message: MessageInput;
  };
  /** How streamed text is coalesced into artifact chunks: a bound in time and in size. */
  coalesce?: TextArtifactsOptions;
}

type StreamMode = 'messages' | 'updates' | 'custom';

/** Where the ids of the interrupts a question asks are kept, in the question's message metadata. */
const INTERRUPTS_METADATA_KEY = 'langgraph';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Serves a compiled LangGraph.js graph as an A2A agent:
 * - the graph runs on the thread `turn.contextId`, so a context is one LangGraph conversation;
 * - the AI messages it streams become artifact chunks, one artifact per message, coalesced;
 * - an `interrupt(value)` ends the turn `input-required` (`auth-required` for {@link authRequired}
 *   values) with the value as the question, and the next message on that task resumes the graph
 *   with `Command({ resume })`, on whichever worker receives it;
 * - a cancel aborts the run (the run's `signal`).
 */
export function fromLangGraph(graph: LangGraphRunnable, options: FromLangGraphOptions = {}): AgentExecutor {
  if (graph === null || typeof graph !== 'object' || typeof graph.stream !== 'function') {
    throw new LangGraphAdapterError(
      'INVALID_GRAPH',
      'fromLangGraph(graph) needs a compiled graph: pass the result of `new StateGraph(…).compile({ checkpointer })`.',
    );
  }
  const streamMessage: NonNullable<FromLangGraphOptions['streamMessage']> =
    options.streamMessage ?? ((message) => message.type === 'ai');
  const artifactName: NonNullable<FromLangGraphOptions['artifactName']> = options.artifactName ?? (() => 'response');
  const customEvents = options.customEvents ?? true;
  const nodeUpdates = options.nodeUpdates ?? false;
  const question =
    options.question ??
    ((interrupts: readonly GraphInterrupt[]) => ({
      state: interruptState(interrupts),
      message: { parts: questionParts(interrupts) },
    }));
  const streamMode: StreamMode[] = ['messages', 'updates'];
  if (customEvents) streamMode.push('custom');

  return {
    async execute(turn: TurnContext) {
      const configurable = { thread_id: turn.contextId };
      const extra = options.config?.(turn) ?? {};
      const runConfig = {
        ...extra,
        configurable: { ...(isRecord(extra.configurable) ? extra.configurable : {}), ...configurable },
        signal: turn.signal,
        streamMode,
      };

      const input = await graphInput(graph, turn, options, runConfig);
      if (input === undefined) return;

      const artifacts = new TextArtifacts(turn, options.coalesce);
      const interrupts: GraphInterrupt[] = [];
      try {
        const stream = await graph.stream(input, runConfig);
        for await (const item of stream) {
          if (!Array.isArray(item) || item.length !== 2) continue;
          const [mode, chunk] = item as [StreamMode, unknown];
          if (mode === 'messages') {
            const [message, given] = chunk as [StreamedMessage | undefined, StreamedMessageMetadata | undefined];
            const metadata: StreamedMessageMetadata = given ?? {};
            if (message === undefined || message === null || !streamMessage(message, metadata)) continue;
            const text = contentText(message.content);
            if (text === '') continue;
            await artifacts.write(message.id ?? 'response', text, artifactName(metadata));
          } else if (mode === 'updates') {
            if (!isRecord(chunk)) continue;
            for (const [node, update] of Object.entries(chunk)) {
              if (node === '__interrupt__') {
                if (Array.isArray(update)) interrupts.push(...(update as GraphInterrupt[]));
                continue;
              }
              if (nodeUpdates === false) continue;
              const status = nodeUpdates === true ? `Finished ${node}.` : nodeUpdates(node, update);
              if (status !== undefined) await turn.working(status, { langgraph: { node } });
            }
          } else if (mode === 'custom') {
            await turn.working(typeof chunk === 'string' ? chunk : { parts: [dataPart(chunk)] });
          }
        }
      } catch (error) {
        // A cancel (or the turn's timeout) aborted the run: the runtime has ended the task already.
        if (turn.signal.aborted) return;
        await artifacts.end();
        throw error;
      }
      if (turn.signal.aborted) return;
      await artifacts.end();

      if (interrupts.length > 0) {
        const asked = question(interrupts);
        const ids = interrupts.map((i) => i.id).filter((id): id is string => typeof id === 'string');
        const message = withInterruptIds(asked.message, ids);
        if (asked.state === 'auth-required') await turn.requireAuth(message);
        else await turn.requireInput(message);
        return;
      }
      await turn.complete();
    },
  };
}

/**
 * The graph's input for this turn: `Command({ resume })` when the message answers the task's
 * pending interrupt, the message as new input otherwise; undefined when the turn has already ended
 * (the task's question is no longer pending on the thread).
 */
async function graphInput(
  graph: LangGraphRunnable,
  turn: TurnContext,
  options: FromLangGraphOptions,
  runConfig: { configurable: Record<string, unknown> },
): Promise<unknown> {
  const newInput = () =>
    options.input ? options.input(turn) : { messages: [new HumanMessage({ id: turn.message.messageId, content: turn.text })] };
  // A2A §6.3: only a task paused in input-required or auth-required waits for an answer.
  if (turn.previousState !== 'input-required' && turn.previousState !== 'auth-required') return newInput();

  const state = await graph.getState({ configurable: runConfig.configurable });
  const pending = state.tasks.flatMap((task) => task.interrupts ?? []);
  const asked = askedInterruptIds(turn);
  // Another task of this context ran the graph since this task asked (new input on a thread drops
  // its pending interrupts): the answer has nothing left to resume, and running it as new input
  // would answer a question the graph no longer asks.
  const stillPending =
    pending.length > 0 && (asked === undefined || asked.some((id) => pending.some((p) => p.id === id)));
  if (!stillPending) {
    await turn.fail(
      `This task's question is no longer pending: the conversation (thread ${turn.contextId}) has moved on since it was asked. Send your message as a new task in the same context.`,
    );
    return undefined;
  }
  const value = options.resume ? options.resume(turn, pending) : resumeValue(turn.message, turn.text);
  return new Command({ resume: value });
}

/** The interrupt ids this task's question asked (from its last agent message), if it recorded any. */
function askedInterruptIds(turn: TurnContext): string[] | undefined {
  const history = turn.task.history ?? [];
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i];
    if (message?.role !== 'agent') continue;
    const recorded = message.metadata?.[INTERRUPTS_METADATA_KEY];
    if (isRecord(recorded) && Array.isArray(recorded.interruptIds)) {
      return recorded.interruptIds.filter((id): id is string => typeof id === 'string');
    }
    return undefined;
  }
  return undefined;
}

function withInterruptIds(message: MessageInput, ids: string[]): MessageInput {
  const base = typeof message === 'string' ? { parts: [{ kind: 'text' as const, text: message }] } : Array.isArray(message) ? { parts: message } : message;
  const metadata: Metadata = { ...base.metadata, [INTERRUPTS_METADATA_KEY]: { interruptIds: ids } };
  return { ...base, metadata };
}

