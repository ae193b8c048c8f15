/**
 * The graphs the tests serve, built from LangGraph's own parts and LangChain's fake chat model
 * (`FakeListChatModel` streams its answer a character at a time, `sleep` ms apart).
 *
 * `assistantGraph`: START → agent (the model answers the last message) → END, except:
 * - a message starting `approve:` goes on to `approval`, which asks `interrupt({ question, action })`
 *   and answers "Approved <action> (<the resume value as JSON>)";
 * - `auth:` goes on to `signIn`, which asks `interrupt(authRequired(…))`;
 * - `fail:` makes the agent node throw.
 */
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import {
  type BaseCheckpointSaver,
  END,
  interrupt,
  type LangGraphRunnableConfig,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { authRequired } from '../src/index.js';

export interface AssistantGraphOptions {
  checkpointer: BaseCheckpointSaver;
  /** What the model answers, in turn (it cycles). */
  answers?: string[];
  /** Milliseconds between the characters the model streams. */
  sleepMs?: number;
  /** Who runs the graph: named in the question and in the approval's answer. */
  workerId?: string;
}

export const DEFAULT_ANSWER = 'LangGraph streams this answer one character at a time.';

const lastHumanText = (messages: BaseMessage[]): string =>
  [...messages].reverse().find((m) => m.type === 'human')?.text ?? '';

export function assistantGraph(options: AssistantGraphOptions) {
  const model = new FakeListChatModel({ responses: options.answers ?? [DEFAULT_ANSWER], sleep: options.sleepMs ?? 1 });
  const worker = options.workerId ?? 'this worker';
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state, config: RunnableConfig) => {
      const text = lastHumanText(state.messages);
      if (text.startsWith('fail:')) throw new Error(`The agent node failed: ${text.slice(5).trim()}`);
      if (text.startsWith('progress:')) (config as LangGraphRunnableConfig).writer?.({ step: 'thinking', of: 2 });
      return { messages: [await model.invoke(state.messages, config)] };
    })
    .addNode('approval', async (state) => {
      const action = lastHumanText(state.messages).slice('approve:'.length).trim();
      const decision = interrupt({ question: `Approve ${action}? (asked on ${worker})`, action });
      return { messages: [new AIMessage(`Approved ${action} on ${worker}: ${JSON.stringify(decision)}`)] };
    })
    .addNode('signIn', async () => {
      const proof = interrupt(authRequired('Sign in, then send any message.', { provider: 'example' }));
      return { messages: [new AIMessage(`Signed in with ${JSON.stringify(proof)}`)] };
    })
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (state) => {
      const text = lastHumanText(state.messages);
      if (text.startsWith('approve:')) return 'approval';
      if (text.startsWith('auth:')) return 'signIn';
      return END;
    })
    .addEdge('approval', END)
    .addEdge('signIn', END)
    .compile({ checkpointer: options.checkpointer });
}
