/**
 * fromLangGraph through the plugin over HTTP, on the memory store with LangGraph's MemorySaver:
 * what each LangGraph concept becomes on the wire (streamed messages, interrupts, resumes, cancel,
 * errors, node updates, custom events).
 */
import type { DataPart, Task } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { AIMessage } from '@langchain/core/messages';
import { interrupt, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type FromLangGraphOptions,
  fromLangGraph,
  INTERRUPTS_METADATA_KEY,
  LangGraphAdapterError,
} from '../src/index.js';
import { assistantGraph, DEFAULT_ANSWER } from './graphs.js';
import {
  artifactChunks,
  artifactText,
  message,
  rpc,
  type Served,
  send,
  serve,
  statusUpdates,
  stream,
  textOf,
  waitFor,
} from './helpers.js';

const servers: Served[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.app.close()));
});

async function start(
  graphOptions: Partial<Parameters<typeof assistantGraph>[0]> = {},
  options: FromLangGraphOptions = {},
) {
  const checkpointer = new MemorySaver();
  const graph = assistantGraph({ checkpointer, ...graphOptions });
  const served = await serve(fromLangGraph(graph, options), new MemoryStore());
  servers.push(served);
  return { ...served, graph };
}

describe('fromLangGraph on the wire', () => {
  it('streams the model answer as coalesced chunks of one artifact, on the thread named by the contextId', async () => {
    // 55 characters, 2 ms apart; a chunk at most 8 characters long: at least 7 chunks, far fewer than 55.
    const { url, graph } = await start({ sleepMs: 2 }, { coalesce: { maxDelayMs: 1000, maxChars: 8 } });
    const events = await stream(url, message('hello'));

    const chunks = artifactChunks(events);
    expect(chunks.length).toBeGreaterThanOrEqual(Math.ceil(DEFAULT_ANSWER.length / 8));
    expect(chunks.length).toBeLessThan(DEFAULT_ANSWER.length);
    expect(new Set(chunks.map((c) => c.artifact.artifactId)).size).toBe(1);
    expect(chunks.map((c) => textOf(c.artifact.parts)).join('')).toBe(DEFAULT_ANSWER);
    expect(chunks[0]?.append).toBeFalsy();
    expect(chunks[0]?.artifact.name).toBe('response');
    expect(chunks.slice(1).every((c) => c.append === true)).toBe(true);
    expect(chunks.at(-1)?.lastChunk).toBe(true);
    expect(chunks.slice(0, -1).some((c) => c.lastChunk)).toBe(false);
    const final = statusUpdates(events).at(-1);
    expect(final?.status.state).toBe('completed');
    expect(final?.final).toBe(true);

    // The snapshot holds the whole answer; the graph's thread is the A2A context.
    const task = await rpc<Task>(url, 'tasks/get', { id: final?.taskId });
    expect(artifactText(task.artifacts?.[0])).toBe(DEFAULT_ANSWER);
    const state = await graph.getState({ configurable: { thread_id: task.contextId } });
    expect(state.values.messages.map((m: { text: string }) => m.text)).toEqual(['hello', DEFAULT_ANSWER]);
  });

  it('a time bound sends a chunk while the model is still streaming', async () => {
    // 55 characters 4 ms apart (about 220 ms); chunks leave after 20 ms of waiting, whatever their size.
    const { url } = await start({ sleepMs: 4 }, { coalesce: { maxDelayMs: 20, maxChars: 4096 } });
    const chunks = artifactChunks(await stream(url, message('hello')));
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expect(chunks.map((c) => textOf(c.artifact.parts)).join('')).toBe(DEFAULT_ANSWER);
  });

  it('a second task in the same context continues the same LangGraph conversation', async () => {
    const { url, graph } = await start({ answers: ['first answer', 'second answer'] });
    const first = await send(url, message('one'));
    const second = await send(url, message('two', { contextId: first.contextId }));
    expect(second.id).not.toBe(first.id);
    expect(second.status.state).toBe('completed');
    expect(artifactText(second.artifacts?.[0])).toBe('second answer');
    const state = await graph.getState({ configurable: { thread_id: first.contextId } });
    expect(state.values.messages.map((m: { text: string }) => m.text)).toEqual([
      'one',
      'first answer',
      'two',
      'second answer',
    ]);
  });

  it('an interrupt ends the turn input-required with its value as the question; the next message resumes the graph', async () => {
    const { url, graph } = await start({ answers: ['Let me check with you.'] });
    const asked = await send(url, message('approve: deploy to production'));
    expect(asked.status.state).toBe('input-required');
    const question = asked.status.message;
    expect(question?.role).toBe('agent');
    expect(textOf(question?.parts)).toBe('Approve deploy to production? (asked on this worker)');
    const data = question?.parts.find((p): p is DataPart => p.kind === 'data');
    expect(data?.data).toEqual({
      question: 'Approve deploy to production? (asked on this worker)',
      action: 'deploy to production',
    });
    const pending = (await graph.getState({ configurable: { thread_id: asked.contextId } })).tasks.flatMap(
      (t) => t.interrupts,
    );
    expect(question?.metadata?.[INTERRUPTS_METADATA_KEY]).toEqual({ interruptIds: pending.map((i) => i.id) });
    // The model's answer before the interrupt is an artifact of the task already.
    expect(artifactText(asked.artifacts?.[0])).toBe('Let me check with you.');

    const done = await send(url, message('yes, go ahead', { taskId: asked.id, contextId: asked.contextId }));
    expect(done.status.state).toBe('completed');
    expect(done.artifacts?.map(artifactText)).toEqual([
      'Let me check with you.',
      'Approved deploy to production on this worker: "yes, go ahead"',
    ]);
    const after = await graph.getState({ configurable: { thread_id: asked.contextId } });
    expect(after.next).toEqual([]);
  });

  it('a data part answers an interrupt with its value', async () => {
    const { url } = await start();
    const asked = await send(url, message('approve: the plan'));
    const answer = {
      kind: 'message',
      role: 'user',
      messageId: `data-${Date.now()}`,
      taskId: asked.id,
      contextId: asked.contextId,
      parts: [{ kind: 'data', data: { approved: true, comment: 'fine' } }],
    };
    const done = await send(url, answer);
    expect(done.status.state).toBe('completed');
    expect(artifactText(done.artifacts?.at(-1))).toBe(
      'Approved the plan on this worker: {"approved":true,"comment":"fine"}',
    );
  });

  it('an interrupt raised with authRequired(…) ends the turn auth-required', async () => {
    const { url } = await start();
    const asked = await send(url, message('auth: please'));
    expect(asked.status.state).toBe('auth-required');
    expect(textOf(asked.status.message?.parts)).toBe('Sign in, then send any message.');
    const data = asked.status.message?.parts.find((p): p is DataPart => p.kind === 'data');
    expect(data?.data).toEqual({
      provider: 'example',
      a2aState: 'auth-required',
      question: 'Sign in, then send any message.',
    });

    const done = await send(url, message('signed in', { taskId: asked.id, contextId: asked.contextId }));
    expect(done.status.state).toBe('completed');
    expect(artifactText(done.artifacts?.at(-1))).toBe('Signed in with "signed in"');
  });

  it("an answer to a question the conversation has moved past fails that task, and never resumes another task's interrupt", async () => {
    const { url, graph } = await start();
    const first = await send(url, message('approve: first'));
    expect(first.status.state).toBe('input-required');
    // A new task in the same context asks a question of its own: new input drops the first one.
    const second = await send(url, message('approve: second', { contextId: first.contextId }));
    expect(second.status.state).toBe('input-required');

    const stale = await send(url, message('yes', { taskId: first.id, contextId: first.contextId }));
    expect(stale.status.state).toBe('failed');
    expect(textOf(stale.status.message?.parts)).toMatch(/no longer pending/);
    // The second task's question is still pending, and its answer resumes it.
    const state = await graph.getState({ configurable: { thread_id: first.contextId } });
    expect(state.tasks.flatMap((t) => t.interrupts).length).toBe(1);
    const done = await send(url, message('ok', { taskId: second.id, contextId: second.contextId }));
    expect(done.status.state).toBe('completed');
    expect(artifactText(done.artifacts?.at(-1))).toBe('Approved second on this worker: "ok"');
  });

  it('tasks/cancel aborts the graph run', async () => {
    // 24 characters 40 ms apart: the model would finish in about a second if nothing stopped it.
    const answer = 'abcdefghijklmnopqrstuvwx';
    const { url, graph } = await start({ sleepMs: 40, answers: [answer] });
    const sent = await rpc<Task>(url, 'message/send', {
      message: message('hello'),
      configuration: { blocking: false },
    });
    await waitFor(
      async () => {
        const task = await rpc<Task>(url, 'tasks/get', { id: sent.id });
        return (task.artifacts?.length ?? 0) > 0;
      },
      5000,
      'a first chunk',
    );
    const canceled = await rpc<Task>(url, 'tasks/cancel', { id: sent.id });
    expect(canceled.status.state).toBe('canceled');
    // The run stopped: well after the model would have finished, the agent node has not, so the
    // thread holds no AI message (it would, had the run gone on without the turn's signal).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const state = await graph.getState({ configurable: { thread_id: sent.contextId } });
    expect(state.values.messages?.some((m: { type: string }) => m.type === 'ai') ?? false).toBe(false);
    const task = await rpc<Task>(url, 'tasks/get', { id: sent.id });
    expect(task.status.state).toBe('canceled');
    expect(artifactText(task.artifacts?.[0]).length).toBeLessThan(answer.length);
  });

  it('what a node throws fails the task with its message', async () => {
    const { url } = await start();
    const failed = await send(url, message('fail: no tools today'));
    expect(failed.status.state).toBe('failed');
    expect(textOf(failed.status.message?.parts)).toBe('The agent node failed: no tools today');
  });

  it('node updates and custom events become working status messages, after the text streamed before them', async () => {
    const { url } = await start({}, { nodeUpdates: true });
    const events = await stream(url, message('progress: go'));
    const working = statusUpdates(events).filter((e) => e.status.state === 'working' && e.status.message);
    const custom = working.find((e) => e.status.message?.parts[0]?.kind === 'data');
    expect((custom?.status.message?.parts[0] as DataPart | undefined)?.data).toEqual({ step: 'thinking', of: 2 });
    const finished = working.find((e) => textOf(e.status.message?.parts) === 'Finished agent.');
    expect(finished?.metadata).toEqual({ langgraph: { node: 'agent' } });
    // The node's update comes after the whole of the text its model streamed.
    const lastChunkAt = events.findIndex((e) => e.kind === 'artifact-update' && e.lastChunk);
    expect(lastChunkAt).toBeGreaterThan(-1);
    expect(events.indexOf(finished as never)).toBeGreaterThan(lastChunkAt);
  });

  it('a node that returns an AI message whole becomes an artifact too, one per message', async () => {
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('first', () => ({ messages: [new AIMessage('One.')] }))
      .addNode('second', () => ({ messages: [new AIMessage('Two.')] }))
      .addEdge(START, 'first')
      .addEdge('first', 'second')
      .compile({ checkpointer: new MemorySaver() });
    const served = await serve(
      fromLangGraph(graph, { artifactName: (m) => `from-${m.langgraph_node}` }),
      new MemoryStore(),
    );
    servers.push(served);
    const task = await send(served.url, message('go'));
    expect(task.status.state).toBe('completed');
    expect(task.artifacts?.map((a) => [a.name, artifactText(a)])).toEqual([
      ['from-first', 'One.'],
      ['from-second', 'Two.'],
    ]);
  });

  it('question and resume options shape the question and the value the graph resumes with', async () => {
    const { url } = await start(
      {},
      {
        question: (interrupts) => ({
          state: 'input-required',
          message: `${interrupts.length} question(s): yes or no?`,
        }),
        resume: (turn) => ({ approved: turn.text === 'yes' }),
      },
    );
    const asked = await send(url, message('approve: it'));
    expect(asked.status.state).toBe('input-required');
    expect(asked.status.message?.parts).toEqual([{ kind: 'text', text: '1 question(s): yes or no?' }]);
    // The interrupt ids are kept even with a question of the application's own.
    expect(asked.status.message?.metadata?.[INTERRUPTS_METADATA_KEY]).toEqual({ interruptIds: [expect.any(String)] });
    const done = await send(url, message('yes', { taskId: asked.id, contextId: asked.contextId }));
    expect(artifactText(done.artifacts?.at(-1))).toBe('Approved it on this worker: {"approved":true}');
  });

  it("an interrupt in a graph compiled without a checkpointer fails the task with LangGraph's message", async () => {
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('ask', () => {
        interrupt('Really?');
        return {};
      })
      .addEdge(START, 'ask')
      .compile();
    const served = await serve(fromLangGraph(graph), new MemoryStore());
    servers.push(served);
    const failed = await send(served.url, message('go'));
    expect(failed.status.state).toBe('failed');
    expect(textOf(failed.status.message?.parts)).toMatch(/^No checkpointer set/);
  });

  it('rejects what is not a compiled graph, saying what to pass', () => {
    expect(() => fromLangGraph({} as never)).toThrow(LangGraphAdapterError);
    expect(() => fromLangGraph({} as never)).toThrow(/compile\(\{ checkpointer \}\)/);
    try {
      fromLangGraph(null as never);
    } catch (error) {
      expect((error as LangGraphAdapterError).code).toBe('INVALID_GRAPH');
    }
  });
});
