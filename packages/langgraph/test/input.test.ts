/**
 * The user's message as LangGraph input, through the plugin: text as a string, other parts as
 * LangChain's standard content blocks, a file URI never handed to the model unless allowed.
 */
import { MemoryStore } from '@fastify-a2a/store-memory';
import { MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { afterEach, describe, expect, it } from 'vitest';
import { type FromLangGraphOptions, fromLangGraph } from '../src/index.js';
import { type Served, send, serve } from './helpers.js';

const servers: Served[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.app.close()));
});

/** Serves a graph whose one node does nothing; returns it, to read the input from its thread. */
async function start(options: FromLangGraphOptions = {}) {
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('noop', () => ({}))
    .addEdge(START, 'noop')
    .compile({ checkpointer: new MemorySaver() });
  const served = await serve(fromLangGraph(graph, options), new MemoryStore());
  servers.push(served);
  return { ...served, graph };
}

async function inputOf(options: FromLangGraphOptions, parts: unknown[]) {
  const { url, graph } = await start(options);
  const messageId = `input-${crypto.randomUUID()}`;
  const task = await send(url, { kind: 'message', role: 'user', messageId, parts });
  expect(task.status.state).toBe('completed');
  const state = await graph.getState({ configurable: { thread_id: task.contextId } });
  const [human] = state.values.messages as { id: string; type: string; content: unknown }[];
  expect(human?.type).toBe('human');
  expect(human?.id).toBe(messageId);
  return human?.content;
}

const parts = [
  { kind: 'text', text: 'Look:' },
  { kind: 'file', file: { bytes: 'aGVsbG8=', mimeType: 'image/png', name: 'a.png' } },
  { kind: 'file', file: { uri: 'http://169.254.169.254/latest/meta-data', mimeType: 'text/plain', name: 'meta' } },
  { kind: 'data', data: { n: 1 } },
];

describe('the user message as graph input', () => {
  it('all text: the text, as a string', async () => {
    expect(
      await inputOf({}, [
        { kind: 'text', text: 'line one' },
        { kind: 'text', text: 'line two' },
      ]),
    ).toBe('line one\nline two');
  });

  it('files and data: standard content blocks; a file URI becomes a note, not a URL the model may fetch', async () => {
    expect(await inputOf({}, parts)).toEqual([
      { type: 'text', text: 'Look:' },
      { type: 'image', mimeType: 'image/png', data: 'aGVsbG8=' },
      { type: 'text', text: 'The file "meta" (text/plain) was sent by URL and left out.' },
      { type: 'text', text: '{"n":1}' },
    ]);
  });

  it('fileUrls: true passes a file URI as a URL block', async () => {
    const content = (await inputOf({ fileUrls: true }, parts)) as unknown[];
    expect(content[2]).toEqual({
      type: 'file',
      mimeType: 'text/plain',
      url: 'http://169.254.169.254/latest/meta-data',
    });
  });

  it('input(turn) replaces the default input', async () => {
    const { url, graph } = await start({
      input: (turn) => ({ messages: [{ role: 'user', content: `[${turn.text}]` }] }),
    });
    const task = await send(url, {
      kind: 'message',
      role: 'user',
      messageId: crypto.randomUUID(),
      parts: [{ kind: 'text', text: 'x' }],
    });
    const state = await graph.getState({ configurable: { thread_id: task.contextId } });
    expect(state.values.messages.map((m: { text: string }) => m.text)).toEqual(['[x]']);
  });
});
