/**
 * a2aTool: a LangGraph agent calls a remote A2A agent (served by the plugin over HTTP) through
 * LangGraph's ToolNode; the remote conversation, and a remote question, carry over between calls
 * through the graph's checkpointed messages.
 */
import type { TurnContext } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { afterEach, describe, expect, it } from 'vitest';
import { a2aTool } from '../src/index.js';
import { type Served, serve } from './helpers.js';

const servers: Served[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.app.close()));
});

/** The remote agent: "book" asks a question; the reply books; anything else echoes, naming its context. */
async function remoteAgent() {
  const seen: { contextId: string; taskId: string; text: string }[] = [];
  const served = await serve(async (turn: TurnContext) => {
    seen.push({ contextId: turn.contextId, taskId: turn.taskId, text: turn.text });
    if (turn.previousState === 'input-required') return turn.complete(`Booked for ${turn.text}.`);
    if (turn.text.includes('book')) return turn.requireInput('Which day would you like to travel?');
    await turn.artifact({ text: `echo: ${turn.text}`, data: { turns: seen.length } });
    await turn.complete();
  }, new MemoryStore());
  servers.push(served);
  return { ...served, seen };
}

/** A graph whose `caller` node calls the tool with the last human message; ToolNode runs it. */
function callerGraph(tool: ReturnType<typeof a2aTool>) {
  let calls = 0;
  return new StateGraph(MessagesAnnotation)
    .addNode('caller', (state) => {
      const last = [...state.messages].reverse().find((m: BaseMessage) => m.type === 'human');
      calls += 1;
      return {
        messages: [
          new AIMessage({
            content: '',
            tool_calls: [{ id: `call-${calls}`, name: tool.name, args: { message: last?.text } }],
          }),
        ],
      };
    })
    .addNode('tools', new ToolNode([tool]))
    .addEdge(START, 'caller')
    .addEdge('caller', 'tools')
    .addEdge('tools', END)
    .compile({ checkpointer: new MemorySaver() });
}

const toolMessage = (messages: BaseMessage[]) =>
  messages.filter((m) => m.type === 'tool').at(-1) as BaseMessage & {
    artifact?: { a2a: { contextId?: string; pendingTaskId?: string; state?: string } };
  };

describe('a2aTool', () => {
  it('continues the remote conversation and answers a remote question on the next call', async () => {
    const remote = await remoteAgent();
    const graph = callerGraph(a2aTool({ url: remote.url }));
    const config = { configurable: { thread_id: 'thread-1' } };

    const first = await graph.invoke({ messages: [new HumanMessage('please book a trip')] }, config);
    const asked = toolMessage(first.messages);
    expect(asked.text).toBe(
      'LangGraph test agent asks: Which day would you like to travel?\nAsk the user, then call this tool again with their answer.',
    );
    expect(asked.artifact?.a2a.state).toBe('input-required');
    expect(asked.artifact?.a2a.pendingTaskId).toBe(remote.seen[0]?.taskId);

    const second = await graph.invoke({ messages: [new HumanMessage('Friday')] }, config);
    expect(toolMessage(second.messages).text).toBe('Booked for Friday.');
    // The reply went to the waiting task, in the same remote context.
    expect(remote.seen[1]).toEqual({
      contextId: remote.seen[0]?.contextId,
      taskId: remote.seen[0]?.taskId,
      text: 'Friday',
    });

    const third = await graph.invoke({ messages: [new HumanMessage('thanks')] }, config);
    expect(toolMessage(third.messages).text).toBe('echo: thanks\nData: {"turns":3}');
    expect(remote.seen[2]?.contextId).toBe(remote.seen[0]?.contextId);
    expect(remote.seen[2]?.taskId).not.toBe(remote.seen[0]?.taskId);
  });

  it('an unreachable agent is a tool error the model reads, with the reason', async () => {
    const graph = callerGraph(
      a2aTool({ url: 'http://127.0.0.1:9', connect: { retry: { attempts: 1 } }, timeoutMs: 5000 }),
    );
    const result = await graph.invoke({ messages: [new HumanMessage('hello')] }, { configurable: { thread_id: 't' } });
    const error = toolMessage(result.messages);
    expect(error.text).toMatch(/The agent at http:\/\/127\.0\.0\.1:9 could not be reached: /);
  });
});
