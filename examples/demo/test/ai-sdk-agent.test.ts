/**
 * The demo's `ai-sdk` agent (DEMO_AGENT=ai-sdk, on the SDK's mock model) as `npm start` runs it,
 * a real process on each store: what a plain A2A client receives (SSE over fetch, as curl reads
 * it; the official SDK client), cancel at 5 tokens a second, a conversation and a question across
 * two processes on one store, and an AI SDK agent in this process delegating to it with a2aTool.
 */

import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClientFactory } from '@a2a-js/sdk/client';
import { a2aTool } from '@fastify-a2a/ai-sdk';
import type { StreamResult, Task } from '@fastify-a2a/core';
import { stepCountIs, streamText } from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { artifactText, type RunningDemo, rpc, startDemo, userMessage } from './demo-process.js';

const A2A_BIN = fileURLToPath(new URL('../../../packages/client/bin/a2a.js', import.meta.url));
const pg = withPostgres('demo_ai_sdk');
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'a2a-demo-ai-sdk-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const stores = [
  { name: 'memory', url: () => 'memory:' },
  { name: 'sqlite', url: () => `sqlite:${join(dir, `${crypto.randomUUID()}.db`)}` },
  {
    name: 'postgres',
    url: () => {
      const url = new URL(pg.url);
      url.searchParams.set('schema', pg.newSchema());
      return url.href;
    },
  },
] as const;

/** `message/stream` read as curl reads it: each SSE event's JSON-RPC `result`, in order. */
async function streamEvents(
  baseUrl: string,
  message: Record<string, unknown>,
  onEvent?: (event: StreamResult) => Promise<void> | void,
): Promise<StreamResult[]> {
  const response = await fetch(`${baseUrl}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/stream', params: { message } }),
  });
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const events: StreamResult[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const data = buffer
        .slice(0, end)
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('');
      buffer = buffer.slice(end + 2);
      if (data === '') continue;
      const event = (JSON.parse(data) as { result: StreamResult }).result;
      events.push(event);
      await onEvent?.(event);
    }
  }
  return events;
}

const chunksOf = (events: StreamResult[]) => events.filter((event) => event.kind === 'artifact-update');
const answerOf = (events: StreamResult[]) =>
  chunksOf(events)
    .map((event) => (event.kind === 'artifact-update' ? artifactText(event.artifact) : ''))
    .join('');
const finalState = (events: StreamResult[]) => {
  const last = events.at(-1);
  return last?.kind === 'status-update' && last.final ? last.status.state : undefined;
};

async function send(demo: RunningDemo, text: string, extra: Record<string, unknown> = {}): Promise<Task> {
  const body = await rpc<Task>(demo.baseUrl, 'message/send', { message: userMessage(text, extra) });
  expect(body.error).toBeUndefined();
  return body.result as Task;
}

describe.each(stores)('the ai-sdk demo agent on $name', (store) => {
  it('streams its answer in ten chunks or more; for "weather" it shows the tool call before any text', async () => {
    // 200 tokens a second: the answer's 150 tokens in under a second, still ten chunks or more (50 ms each).
    const demo = await startDemo(store.url(), { DEMO_AGENT: 'ai-sdk', DEMO_TOKENS_PER_S: '200' });
    expect(demo.readyLine).toContain('A2A ai-sdk agent ready');

    const hello = await streamEvents(demo.baseUrl, userMessage('hello'));
    expect(hello[0]?.kind).toBe('task');
    expect(finalState(hello)).toBe('completed');
    expect(chunksOf(hello).length).toBeGreaterThanOrEqual(10);
    const answer = answerOf(hello);
    expect(answer.startsWith('You said: "hello". This is the first message of our conversation.')).toBe(true);
    expect(answer.length).toBeGreaterThanOrEqual(400); // a hundred tokens of about 4 characters

    const weather = await streamEvents(demo.baseUrl, userMessage('What is the weather in Paris?'));
    const toolCall = weather.findIndex(
      (event) =>
        event.kind === 'status-update' &&
        event.status.message?.parts.some((part) => part.kind === 'data' && part.data.type === 'tool-call'),
    );
    const firstChunk = weather.findIndex((event) => event.kind === 'artifact-update');
    expect(toolCall).toBeGreaterThan(0);
    expect(toolCall).toBeLessThan(firstChunk);
    expect(answerOf(weather)).toMatch(/^The weather tool says Paris is (sunny|cloudy) at \d+ °C/);
    expect(finalState(weather)).toBe('completed');
  });
});

describe('the ai-sdk demo agent and its clients', () => {
  it('at 5 tokens a second, a cancel sent after the first chunk ends the task long before the answer would', async () => {
    const demo = await startDemo('memory:', { DEMO_AGENT: 'ai-sdk', DEMO_TOKENS_PER_S: '5' });
    let canceledAt = 0;
    const started = Date.now();
    const events = await streamEvents(demo.baseUrl, userMessage('hello'), async (event) => {
      if (event.kind === 'artifact-update' && canceledAt === 0) {
        canceledAt = Date.now();
        const body = await rpc<Task>(demo.baseUrl, 'tasks/cancel', { id: event.taskId });
        expect(body.error).toBeUndefined();
      }
    });
    expect(finalState(events)).toBe('canceled');
    // The whole answer takes over 20 s at this pace; the stream ended within a few seconds.
    expect(Date.now() - started).toBeLessThan(8000);
    expect(answerOf(events).length).toBeLessThan(100);
  });

  it('the official A2A SDK client and the a2a CLI stream the answer; an AI SDK agent here delegates to it with a2aTool', async () => {
    const demo = await startDemo('memory:', { DEMO_AGENT: 'ai-sdk', DEMO_TOKENS_PER_S: '200' });
    const client = await new ClientFactory().createFromUrl(demo.baseUrl);
    const kinds: string[] = [];
    let text = '';
    for await (const event of client.sendMessageStream({
      message: { kind: 'message', role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'text', text: 'hi' }] },
    })) {
      kinds.push(event.kind);
      if (event.kind === 'artifact-update') text += artifactText(event.artifact);
    }
    expect(kinds.filter((kind) => kind === 'artifact-update').length).toBeGreaterThanOrEqual(10);
    expect(text.startsWith('You said: "hi".')).toBe(true);
    expect(kinds.at(-1)).toBe('status-update');

    // The a2a CLI (packages/client's bin, as `npm ci` builds it), one JSON object per event.
    const cli = spawnSync(process.execPath, [A2A_BIN, 'send', '-a', demo.baseUrl, 'hello', '--stream', '-o', 'jsonl'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(cli.status, cli.stderr).toBe(0);
    const lines = cli.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, { status?: { state?: string } }>);
    expect(lines.filter((line) => 'artifactUpdate' in line).length).toBeGreaterThanOrEqual(10);
    expect(lines.at(-1)?.statusUpdate?.status?.state).toBe('TASK_STATE_COMPLETED');

    // An AI SDK agent in this process: its model calls the tool, then repeats what the tool returned.
    const ask = a2aTool({ url: demo.baseUrl });
    const model = new MockLanguageModelV3({
      doStream: async ({ prompt }) => {
        const last = prompt.at(-1);
        const output =
          last?.role === 'tool' && last.content[0]?.type === 'tool-result' ? last.content[0].output : undefined;
        const text =
          output?.type === 'content'
            ? output.value.map((item) => (item.type === 'text' ? item.text : '')).join('\n')
            : '';
        const usage = {
          inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 1, text: 1, reasoning: 0 },
        };
        type Part =
          Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer T> ? T : never;
        const chunks: Part[] =
          output === undefined
            ? [
                {
                  type: 'tool-call' as const,
                  toolCallId: 'c1',
                  toolName: 'ask',
                  input: JSON.stringify({ message: 'hello from afar' }),
                },
                { type: 'finish' as const, finishReason: { unified: 'tool-calls' as const, raw: undefined }, usage },
              ]
            : [
                { type: 'text-start' as const, id: 't' },
                { type: 'text-delta' as const, id: 't', delta: text },
                { type: 'text-end' as const, id: 't' },
                { type: 'finish' as const, finishReason: { unified: 'stop' as const, raw: undefined }, usage },
              ];
        return { stream: simulateReadableStream({ chunks }) };
      },
    });
    const result = streamText({
      model,
      tools: { ask },
      messages: [{ role: 'user', content: 'ask the demo' }],
      stopWhen: stepCountIs(3),
    });
    expect(await result.text).toContain('You said: "hello from afar". This is the first message of our conversation.');
  });
});

describe.each(stores.filter((store) => store.name !== 'memory'))('two ai-sdk demo processes on $name', (store) => {
  it('carry one conversation across both, and a question asked on one is answered on the other', async () => {
    const url = store.url();
    const a = await startDemo(url, { DEMO_AGENT: 'ai-sdk', DEMO_TOKENS_PER_S: '1000' });
    const b = await startDemo(url, { DEMO_AGENT: 'ai-sdk', DEMO_TOKENS_PER_S: '1000' });

    const first = await send(a, 'My name is Ada');
    const second = await send(b, 'Do you remember me?', { contextId: first.contextId });
    expect(second.status.state).toBe('completed');
    expect(artifactText(second.artifacts?.[0])).toContain(
      'This is message 2 of our conversation; you began with "My name is Ada".',
    );

    const asked = await streamEvents(a.baseUrl, userMessage('Book me a train to Lyon'));
    expect(finalState(asked)).toBe('input-required');
    const question = asked.at(-1);
    if (question?.kind !== 'status-update') throw new Error('no question');
    expect(question.status.message?.parts[0]).toEqual({ kind: 'text', text: 'Which day would you like to travel?' });
    const answered = await send(b, 'Friday', { taskId: question.taskId, contextId: question.contextId });
    expect(answered.status.state).toBe('completed');
    expect(artifactText(answered.artifacts?.at(-1))).toMatch(/^Booked for Friday: /);
  });
});
