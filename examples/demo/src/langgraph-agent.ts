/**
 * The `langgraph` demo agent (DEMO_AGENT=langgraph): a LangGraph.js graph served with
 * `fromLangGraph`, its checkpoints in LangGraph's official checkpointer on the A2A store's own
 * database, so every worker on that store can answer its interrupts.
 *
 * - Any message: the model streams an answer, token by token.
 * - A message starting `approve:` first asks for approval (a LangGraph `interrupt`, the task goes
 *   `input-required`); the next message on that task, whatever it says, resumes the graph and the
 *   model streams its answer.
 *
 * The model: with OPENAI_API_KEY set, OpenAI's chat model (DEMO_MODEL, default gpt-4o-mini;
 * OPENAI_BASE_URL for an OpenAI-compatible server); without it, a mock that streams a canned answer
 * of more than a hundred tokens (about 4 characters each) at DEMO_TOKENS_PER_S (default 50) tokens a second.
 */

import type { AgentExecutor } from '@fastify-a2a/core';
import { fromLangGraph } from '@fastify-a2a/langgraph';
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { type BaseChatModel, SimpleChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessageChunk, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import { ChatGenerationChunk } from '@langchain/core/outputs';
import {
  type BaseCheckpointSaver,
  END,
  interrupt,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import type { AgentCardInput } from 'fastify-a2a';
import { sleep } from './agents.js';

export const DEFAULT_TOKENS_PER_S = 50;

/** The characters per token of the mock model: about what an English tokenizer averages. */
const TOKEN_CHARS = 4;

/** The mock model's answer to `text`: more than a hundred tokens, so a client sees it stream. */
export function mockAnswer(text: string, approval?: string): string {
  const quoted = text.length > 80 ? `${text.slice(0, 77)}...` : text;
  const opening =
    approval === undefined
      ? `You said "${quoted}". `
      : `Approval received ("${approval.length > 40 ? `${approval.slice(0, 37)}...` : approval}"), so here is the result for "${quoted}". `;
  return (
    `${opening}This answer comes from the LangGraph demo agent, a graph with a model node and an approval node, ` +
    'served over the Agent2Agent protocol by fastify-a2a. The mock model streams it a token at a time; the ' +
    'adapter gathers the tokens into artifact chunks, bounded in time and in size, and each chunk goes to the ' +
    'store and on to every client that follows the task, whichever worker it is connected to. Send a message ' +
    'that starts with "approve:" and the graph stops to ask for approval: the task waits in input-required until ' +
    'the next message on it arrives, on this worker or any other one sharing the store.'
  );
}

/**
 * The mock chat model: a LangChain chat model (the framework's own extension point) that streams
 * {@link mockAnswer} in tokens of about four characters, `1000 / tokensPerSecond` ms apart, and
 * stops when the run is aborted.
 */
export class DemoChatModel extends SimpleChatModel {
  readonly tokensPerSecond: number;

  constructor(tokensPerSecond = DEFAULT_TOKENS_PER_S) {
    super({});
    this.tokensPerSecond = tokensPerSecond;
  }

  _llmType(): string {
    return 'fastify-a2a-demo';
  }

  async _call(messages: BaseMessage[]): Promise<string> {
    return answerFor(messages);
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const answer = answerFor(messages);
    const signal = options.signal ?? new AbortController().signal;
    for (let at = 0; at < answer.length; at += TOKEN_CHARS) {
      await sleep(1000 / this.tokensPerSecond, signal);
      const token = answer.slice(at, at + TOKEN_CHARS);
      yield new ChatGenerationChunk({ text: token, message: new AIMessageChunk({ content: token }) });
      await runManager?.handleLLMNewToken(token);
    }
  }
}

/** The answer to the conversation so far: to the user's request, with the approval when one was given. */
function answerFor(messages: BaseMessage[]): string {
  const humans = messages.filter((m) => m.type === 'human').map((m) => m.text);
  const last = humans.at(-1) ?? '';
  const request = humans.at(-2);
  // After an approval the conversation ends with [request "approve: …", the answer to the question].
  if (request?.startsWith('approve:') && messages.at(-1)?.type === 'human' && messages.at(-2)?.type === 'human') {
    return mockAnswer(request, last);
  }
  return mockAnswer(last);
}

/**
 * DEMO_TOKENS_PER_S (default 50), as the ai-sdk agent reads it.
 * @throws {Error} naming the fix when it is not a number above 0 (checked at startup).
 */
export function tokensPerSecond(env: NodeJS.ProcessEnv): number {
  const rate = Number(env.DEMO_TOKENS_PER_S ?? DEFAULT_TOKENS_PER_S);
  if (!Number.isFinite(rate) || rate <= 0) {
    throw new Error(`DEMO_TOKENS_PER_S must be a number of tokens a second above 0; got "${env.DEMO_TOKENS_PER_S}".`);
  }
  return rate;
}

async function demoModel(env: NodeJS.ProcessEnv): Promise<{ model: BaseChatModel; summary: string }> {
  if (env.OPENAI_API_KEY) {
    const { ChatOpenAI } = await import('@langchain/openai');
    const name = env.DEMO_MODEL || 'gpt-4o-mini';
    const model = new ChatOpenAI({
      model: name,
      apiKey: env.OPENAI_API_KEY,
      streaming: true,
      ...(env.OPENAI_BASE_URL ? { configuration: { baseURL: env.OPENAI_BASE_URL } } : {}),
    });
    return { model, summary: `OpenAI model ${name}` };
  }
  const rate = tokensPerSecond(env);
  return { model: new DemoChatModel(rate), summary: `mock model at ${rate} tokens/s` };
}

/**
 * LangGraph's official checkpointer on the A2A store's database: `sqlite:<file>` → SqliteSaver on
 * that file; `postgres://…` → PostgresSaver in the store's schema (the URL's `schema`, default
 * `a2a`; its tables, `checkpoints` and `checkpoint_*`, beside the store's); `memory:` → MemorySaver
 * (one process).
 */
export async function checkpointerFor(
  store: string,
): Promise<{ checkpointer: BaseCheckpointSaver; close(): Promise<void> }> {
  if (store.startsWith('sqlite:')) {
    const { SqliteSaver } = await import('@langchain/langgraph-checkpoint-sqlite');
    const saver = SqliteSaver.fromConnString(store.slice('sqlite:'.length));
    return {
      checkpointer: saver,
      close: async () => {
        saver.db.close();
      },
    };
  }
  if (store.startsWith('postgres:') || store.startsWith('postgresql:')) {
    const { PostgresSaver } = await import('@langchain/langgraph-checkpoint-postgres');
    const url = new URL(store);
    // The store's schema (its default is `a2a`): LangGraph's tables sit beside the store's.
    const schema = url.searchParams.get('schema') ?? 'a2a';
    url.searchParams.delete('schema');
    const saver = PostgresSaver.fromConnString(url.href, { schema });
    await setupOnce(saver);
    return { checkpointer: saver, close: () => saver.end() };
  }
  return { checkpointer: new MemorySaver(), close: async () => undefined };
}

/**
 * PostgresSaver.setup() creates its tables without a lock: workers starting together on a fresh
 * database can collide (a duplicate type or migration row). The one that loses tries again, and
 * finds the tables made.
 */
async function setupOnce(saver: { setup(): Promise<void> }): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await saver.setup();
      return;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (attempt >= 5 || (code !== '23505' && code !== '42P07' && code !== '42710')) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

/** The demo's graph: the model answers; `approve:` asks first (an interrupt), and the answer resumes it. */
export function demoGraph(model: BaseChatModel, checkpointer: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode('approval', (state) => {
      const request = state.messages.at(-1)?.text ?? '';
      const action = request.slice('approve:'.length).trim() || 'this request';
      const answer = interrupt({ question: `Do you approve "${action}"? Any reply continues.`, action });
      // The answer joins the conversation as the user's, so the model (mock or real) reads it.
      return { messages: [new HumanMessage(typeof answer === 'string' ? answer : JSON.stringify(answer))] };
    })
    .addNode('model', async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
    .addConditionalEdges(START, (state) => (state.messages.at(-1)?.text.startsWith('approve:') ? 'approval' : 'model'))
    .addEdge('approval', 'model')
    .addEdge('model', END)
    .compile({ checkpointer });
}

export interface LangGraphDemo {
  executor: AgentExecutor;
  /** What the ready line says about the model. */
  summary: string;
  close(): Promise<void>;
}

/** The `langgraph` agent on `store` (the demo's A2A_STORE). */
export async function createLangGraphAgent(
  store: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<LangGraphDemo> {
  const { model, summary } = await demoModel(env);
  const { checkpointer, close } = await checkpointerFor(store);
  return { executor: fromLangGraph(demoGraph(model, checkpointer)), summary, close };
}

export function langGraphCard(): AgentCardInput {
  return {
    name: 'fastify-a2a LangGraph agent',
    description:
      'A LangGraph.js graph served over A2A: streams its answer token by token; a message starting with "approve:" asks for approval first.',
    version: '0.1.0',
    provider: { organization: 'fastify-a2a', url: 'https://github.com/fastify-a2a' },
    skills: [
      {
        id: 'langgraph',
        name: 'LangGraph',
        description: 'Answers a message, streamed; asks for approval on "approve:<action>".',
        tags: ['demo', 'langgraph'],
        examples: ['hello', 'approve: deploy to production'],
      },
    ],
  };
}
