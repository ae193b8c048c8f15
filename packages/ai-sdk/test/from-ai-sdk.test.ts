/**
 * fromAiSdk served by the plugin over HTTP, on every store, driven by the SDK's own mock model
 * (`MockLanguageModelV3`, `simulateReadableStream` from `ai/test`): what a client receives, event
 * by event, and what the model was sent.
 */

import type { Message, StreamResult, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from '@fastify-a2a/core';
import { jsonSchema, stepCountIs, streamText, ToolLoopAgent, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { fromAiSdk } from '../src/index.js';
import {
  getTask,
  send,
  shapeOf,
  storesUnderTest,
  stream,
  textOf,
  userMessage,
  useServers,
  waitFor,
} from './helpers.js';
import { finish, lastText, type Prompt, scriptedModel, textAnswer, toolCall } from './mock-model.js';

const serve = useServers();

const ANSWER = Array.from({ length: 120 }, (_, i) => `w${i}`).join(' ');

const weather = tool({
  description: 'The weather in a city.',
  inputSchema: jsonSchema<{ city: string }>({
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
  }),
  execute: async ({ city }) => ({ city, sky: 'sunny', celsius: 21 }),
});

const askUser = tool({
  description: 'Ask the user a question.',
  inputSchema: jsonSchema<{ question: string }>({
    type: 'object',
    properties: { question: { type: 'string' } },
    required: ['question'],
  }),
  // No execute: the loop stops at this call, and the adapter asks the user.
});

const artifactEvents = (events: StreamResult[]) =>
  events.filter((event): event is TaskArtifactUpdateEvent => event.kind === 'artifact-update');
const statusEvents = (events: StreamResult[]) =>
  events.filter((event): event is TaskStatusUpdateEvent => event.kind === 'status-update');

/** The prompt's messages as `role: text` lines (tool results as `tool: <output json>`), to read what the model was sent. */
function transcript(prompt: Prompt): string[] {
  return prompt.map((message) => {
    if (message.role === 'system') return `system: ${message.content}`;
    const content = message.content.map((part) => {
      if (part.type === 'text') return part.text;
      if (part.type === 'tool-call') return `call ${part.toolName}`;
      if (part.type === 'tool-result') return `result ${JSON.stringify(part.output)}`;
      if (part.type === 'file') return `file ${part.mediaType}`;
      return part.type;
    });
    return `${message.role}: ${content.join(' | ')}`;
  });
}

describe.each(storesUnderTest('ai-sdk-http'))('fromAiSdk over HTTP on $name', ({ url: storeUrl }) => {
  it('streams the answer as coalesced chunks of one artifact, then completes', async () => {
    const { model } = scriptedModel(() => textAnswer(ANSWER, 4), 2);
    const url = await serve(
      fromAiSdk(({ messages, abortSignal }) => streamText({ model, messages, abortSignal }), {
        artifact: { maxDelayMs: 20, maxChars: 64 },
      }),
      storeUrl(),
    );
    const events = await stream(url, userMessage('Tell me a story'));
    const shapes = events.map(shapeOf);
    // Event by event: the task, working, the chunks (first new, then appended, the last marked), completed.
    expect(shapes[0]).toBe('task submitted');
    expect(shapes[1]).toBe('status working');
    const chunks = artifactEvents(events);
    expect(shapes.slice(2, 2 + chunks.length)).toEqual(chunks.map(shapeOf));
    expect(shapes.slice(2 + chunks.length)).toEqual(['status completed final']);
    expect(chunks.map(shapeOf)).toEqual([
      'artifact new',
      ...Array.from({ length: chunks.length - 2 }, () => 'artifact +'),
      'artifact + last',
    ]);
    expect(new Set(chunks.map((chunk) => chunk.artifact.artifactId)).size).toBe(1);
    expect(chunks[0]?.artifact.name).toBe('response');
    expect(chunks.map((chunk) => textOf(chunk.artifact.parts)).join('')).toBe(ANSWER);
    // 150 deltas, coalesced: no chunk over 64 characters, far fewer chunks than deltas.
    expect(chunks.every((chunk) => textOf(chunk.artifact.parts).length <= 64)).toBe(true);
    expect(chunks.length).toBeGreaterThanOrEqual(ANSWER.length / 64);
    expect(chunks.length).toBeLessThan(60);
  });

  it('shows a tool call and its result as working updates before any answer text', async () => {
    const { model, prompts } = scriptedModel((_prompt, call) =>
      call === 1 ? toolCall('weather', { city: 'Paris' }) : textAnswer('It is sunny in Paris.'),
    );
    const url = await serve(
      fromAiSdk(({ messages, abortSignal }) =>
        streamText({ model, tools: { weather }, messages, abortSignal, stopWhen: stepCountIs(3) }),
      ),
      storeUrl(),
    );
    const events = await stream(url, userMessage('weather in Paris?'));
    const firstArtifact = events.findIndex((event) => event.kind === 'artifact-update');
    const progress = statusEvents(events).filter((event) => event.status.message !== undefined);
    expect(progress.map((event) => event.status.state)).toEqual(['working', 'working']);
    expect(progress[0]?.status.message?.parts).toEqual([
      { kind: 'text', text: 'Calling weather({"city":"Paris"})' },
      {
        kind: 'data',
        data: { type: 'tool-call', toolCallId: 'call-weather', toolName: 'weather', input: { city: 'Paris' } },
      },
    ]);
    expect(progress[1]?.status.message?.parts[1]).toEqual({
      kind: 'data',
      data: {
        type: 'tool-result',
        toolCallId: 'call-weather',
        toolName: 'weather',
        output: { city: 'Paris', sky: 'sunny', celsius: 21 },
      },
    });
    expect(events.indexOf(progress[1] as StreamResult)).toBeLessThan(firstArtifact);
    expect(textOf(artifactEvents(events).flatMap((event) => event.artifact.parts))).toBe('It is sunny in Paris.');
    // The second model call got the tool's result.
    expect(transcript(prompts[1] ?? []).at(-1)).toContain('"sky":"sunny"');
    expect(shapeOf(events.at(-1) as StreamResult)).toBe('status completed final');
  });

  it('text written before a tool call reaches the client before the call, in one artifact with the text after it', async () => {
    const { model } = scriptedModel((_prompt, call) =>
      call === 1
        ? [
            { type: 'text-start', id: 'a' },
            { type: 'text-delta', id: 'a', delta: 'Let me look. ' },
            { type: 'text-end', id: 'a' },
            ...toolCall('weather', { city: 'Oslo' }),
          ]
        : textAnswer('Cold in Oslo.'),
    );
    const url = await serve(
      fromAiSdk(
        ({ messages, abortSignal }) =>
          streamText({ model, tools: { weather }, messages, abortSignal, stopWhen: stepCountIs(3) }),
        // Held back far longer than the turn takes: only the flush before the progress update sends it.
        { artifact: { maxDelayMs: 60_000 }, progress: 'text' },
      ),
      storeUrl(),
    );
    const events = await stream(url, userMessage('weather in Oslo?'));
    const lines = events
      .slice(2)
      .map((event) =>
        event.kind === 'artifact-update'
          ? `${shapeOf(event)}: ${textOf(event.artifact.parts)}`
          : `${shapeOf(event)}: ${event.kind === 'status-update' ? textOf(event.status.message?.parts) : ''}`,
      );
    expect(lines).toEqual([
      'artifact new: Let me look. ',
      'status working: Calling weather({"city":"Oslo"})',
      'status working: weather returned {"city":"Oslo","sky":"sunny","celsius":21}',
      'artifact + last: Cold in Oslo.',
      'status completed final: ',
    ]);
  });

  it('a file the model generates becomes an artifact of its own, after the text before it', async () => {
    const png = Buffer.from('not really a png').toString('base64');
    const { model } = scriptedModel(() => [
      { type: 'text-start', id: 'a' },
      { type: 'text-delta', id: 'a', delta: 'Here is your image.' },
      { type: 'text-end', id: 'a' },
      { type: 'file', mediaType: 'image/png', data: png },
      finish('stop'),
    ]);
    const url = await serve(
      fromAiSdk(({ messages, abortSignal }) => streamText({ model, messages, abortSignal }), {
        artifact: { maxDelayMs: 60_000 },
      }),
      storeUrl(),
    );
    const task = await send(url, userMessage('draw a cat'));
    expect(task.status.state).toBe('completed');
    expect(task.artifacts?.map((artifact) => [artifact.name, artifact.parts])).toEqual([
      // The empty chunk that marks the text's last (`lastChunk`) joins the text before it: the
      // snapshot keeps consecutive text chunks as one part.
      ['response', [{ kind: 'text', text: 'Here is your image.' }]],
      ['file', [{ kind: 'file', file: { bytes: png, mimeType: 'image/png' } }]],
    ]);
  });

  it("progress 'data' sends data parts only, 'none' no progress at all", async () => {
    const script = (_prompt: Prompt, call: number) =>
      call % 2 === 1 ? toolCall('weather', { city: 'Oslo' }) : textAnswer('Cold.');
    for (const [progress, expected] of [
      ['data', [['data'], ['data']]],
      ['none', []],
    ] as const) {
      const { model } = scriptedModel(script);
      const url = await serve(
        fromAiSdk(
          ({ messages, abortSignal }) =>
            streamText({ model, tools: { weather }, messages, abortSignal, stopWhen: stepCountIs(3) }),
          { progress },
        ),
        storeUrl(),
      );
      const events = await stream(url, userMessage('weather in Oslo?'));
      const kinds = statusEvents(events)
        .filter((event) => event.status.state === 'working' && event.status.message)
        .map((event) => event.status.message?.parts.map((part) => part.kind));
      expect(kinds).toEqual(expected);
    }
  });

  it('continues the conversation: the next task of the context sends the model the earlier turns', async () => {
    const { model, prompts } = scriptedModel((prompt) => textAnswer(`You said: ${lastText(prompt)}`));
    const url = await serve(
      fromAiSdk(({ messages, abortSignal }) => streamText({ model, messages, abortSignal })),
      storeUrl(),
    );
    const first = await send(url, userMessage('My name is Ada.'));
    expect(first.status.state).toBe('completed');
    const second = await send(url, userMessage('What is my name?', { contextId: first.contextId }));
    expect(textOf(second.artifacts?.[0]?.parts)).toBe('You said: What is my name?');
    expect(transcript(prompts[1] ?? [])).toEqual([
      'user: My name is Ada.',
      'assistant: You said: My name is Ada.',
      'user: What is my name?',
    ]);
  });

  it('a tool without execute ends the turn input-required with its question; the answer resumes the loop', async () => {
    const { model, prompts } = scriptedModel((prompt, call) => {
      if (call === 1) return toolCall('askUser', { question: 'Which city?' });
      const last = prompt.at(-1);
      const answer =
        last?.role === 'tool' && last.content[0]?.type === 'tool-result' ? last.content[0].output : undefined;
      return textAnswer(`Booked for ${answer?.type === 'text' ? answer.value : '?'}.`);
    });
    const url = await serve(
      fromAiSdk(({ messages, abortSignal }) =>
        streamText({ model, tools: { askUser }, messages, abortSignal, stopWhen: stepCountIs(3) }),
      ),
      storeUrl(),
    );
    const events = await stream(url, userMessage('Book me a train'));
    const last = events.at(-1) as TaskStatusUpdateEvent;
    expect(shapeOf(last)).toBe('status input-required final');
    expect(last.status.message?.parts).toEqual([
      { kind: 'text', text: 'Which city?' },
      {
        kind: 'data',
        data: {
          type: 'tool-call',
          toolCallId: 'call-askUser',
          toolName: 'askUser',
          input: { question: 'Which city?' },
        },
      },
    ]);
    const answered = await stream(url, userMessage('Lyon', { taskId: last.taskId, contextId: last.contextId }));
    expect(shapeOf(answered.at(-1) as StreamResult)).toBe('status completed final');
    expect(textOf(artifactEvents(answered).flatMap((event) => event.artifact.parts))).toBe('Booked for Lyon.');
    // The model got its own tool call back with the user's answer as the result.
    expect(transcript(prompts[1] ?? [])).toEqual([
      'user: Book me a train',
      'assistant: call askUser',
      'tool: result {"type":"text","value":"Lyon"}',
    ]);
  });

  it('a tool needing approval asks; "yes" runs it, and the loop goes on', async () => {
    let ran = 0;
    const deleteFile = tool({
      description: 'Delete a file.',
      inputSchema: jsonSchema<{ path: string }>({ type: 'object', properties: { path: { type: 'string' } } }),
      needsApproval: true,
      execute: async ({ path }) => {
        ran += 1;
        return { deleted: path };
      },
    });
    const { model } = scriptedModel((prompt, call) =>
      call === 1 ? toolCall('deleteFile', { path: 'notes.txt' }) : textAnswer(`Done: ${JSON.stringify(prompt.at(-1))}`),
    );
    const url = await serve(
      fromAiSdk(({ messages, abortSignal }) =>
        streamText({ model, tools: { deleteFile }, messages, abortSignal, stopWhen: stepCountIs(3) }),
      ),
      storeUrl(),
    );
    const asked = await send(url, userMessage('delete notes.txt'));
    expect(asked.status.state).toBe('input-required');
    expect(textOf(asked.status.message?.parts)).toBe(
      'May I run deleteFile with {"path":"notes.txt"}? Answer yes or no.',
    );
    expect(ran).toBe(0);
    const done = await send(url, userMessage('yes', { taskId: asked.id, contextId: asked.contextId }));
    expect(done.status.state).toBe('completed');
    expect(ran).toBe(1);
    expect(textOf(done.artifacts?.[0]?.parts)).toContain('"deleted":"notes.txt"');
  });

  it('a new task in the context after an unanswered question tells the model so, then sends the new message', async () => {
    const { model, prompts } = scriptedModel((_prompt, call) =>
      call === 1 ? toolCall('askUser', { question: 'Which city?' }) : textAnswer('Fine, something else then.'),
    );
    const url = await serve(
      fromAiSdk(({ messages, abortSignal }) =>
        streamText({ model, tools: { askUser }, messages, abortSignal, stopWhen: stepCountIs(3) }),
      ),
      storeUrl(),
    );
    const asked = await send(url, userMessage('Book me a train'));
    expect(asked.status.state).toBe('input-required');
    // Not a reply to the task: a new task in the same context.
    const other = await send(url, userMessage('Never mind, tell me a joke', { contextId: asked.contextId }));
    expect(other.status.state).toBe('completed');
    expect(transcript(prompts[1] ?? [])).toEqual([
      'user: Book me a train',
      'assistant: call askUser',
      'tool: result {"type":"error-text","value":"The user did not answer."}',
      'user: Never mind, tell me a joke',
    ]);
  });

  it("shows reasoning as a working update; toolErrors 'model' lets the model see a tool's error and go on", async () => {
    const broken = tool({
      description: 'Always fails.',
      inputSchema: jsonSchema<{ q: string }>({ type: 'object', properties: { q: { type: 'string' } } }),
      execute: async (): Promise<string> => {
        throw new Error('no service');
      },
    });
    const { model, prompts } = scriptedModel((_prompt, call) =>
      call === 1
        ? [
            { type: 'reasoning-start', id: 'r' },
            { type: 'reasoning-delta', id: 'r', delta: 'The user wants ' },
            { type: 'reasoning-delta', id: 'r', delta: 'a lookup.' },
            { type: 'reasoning-end', id: 'r' },
            ...toolCall('broken', { q: 'x' }),
          ]
        : textAnswer('The service is down.'),
    );
    const url = await serve(
      fromAiSdk(
        ({ messages, abortSignal }) =>
          streamText({ model, tools: { broken }, messages, abortSignal, stopWhen: stepCountIs(3) }),
        { toolErrors: 'model', progress: 'text' },
      ),
      storeUrl(),
    );
    const events = await stream(url, userMessage('look it up'));
    const progress = statusEvents(events)
      .filter((event) => event.status.message)
      .map((event) => textOf(event.status.message?.parts));
    expect(progress).toEqual(['The user wants a lookup.', 'Calling broken({"q":"x"})', 'broken failed: no service']);
    expect(shapeOf(events.at(-1) as StreamResult)).toBe('status completed final');
    expect(transcript(prompts[1] ?? []).at(-1)).toContain('no service');
  });

  it("serves the SDK's agent class (ToolLoopAgent) the same way", async () => {
    const { model, prompts } = scriptedModel((_prompt, call) =>
      call === 1 ? toolCall('weather', { city: 'Rome' }) : textAnswer('Sunny in Rome.'),
    );
    const agent = new ToolLoopAgent({ model, tools: { weather }, instructions: 'You are a weather agent.' });
    const url = await serve(fromAiSdk(agent, { progress: 'text' }), storeUrl());
    const task = await send(url, userMessage('weather in Rome?'));
    expect(task.status.state).toBe('completed');
    expect(textOf(task.artifacts?.[0]?.parts)).toBe('Sunny in Rome.');
    expect(transcript(prompts[0] ?? [])).toEqual(['system: You are a weather agent.', 'user: weather in Rome?']);
  });

  it('cancel reaches the model call: its abortSignal fires and the task ends canceled, the stream cut short', async () => {
    // 5 tokens a second: the whole answer would take 30 s.
    const { model, signals } = scriptedModel(() => textAnswer(ANSWER.slice(0, 600), 4), 200);
    const url = await serve(
      fromAiSdk(({ messages, abortSignal }) => streamText({ model, messages, abortSignal }), {
        artifact: { maxDelayMs: 10 },
      }),
      storeUrl(),
    );
    let canceledAt = 0;
    const events = await stream(url, userMessage('a long story'), async (event) => {
      if (event.kind === 'artifact-update' && canceledAt === 0) {
        canceledAt = Date.now();
        await fetch(`${url}/a2a`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/cancel', params: { id: event.taskId } }),
        });
      }
    });
    const elapsed = Date.now() - canceledAt;
    expect(shapeOf(events.at(-1) as StreamResult)).toBe('status canceled final');
    expect(elapsed).toBeLessThan(5000);
    await waitFor(() => signals[0]?.aborted, 2000, 'the model call to be aborted');
    const chunks = artifactEvents(events);
    expect(chunks.length).toBeLessThan(10);
    expect(chunks.some((chunk) => chunk.lastChunk)).toBe(false);
  });

  it('a model error fails the task with its message, never a stack', async () => {
    const { model } = scriptedModel(() => [
      { type: 'error', error: new Error('Rate limit reached for gpt-x. Try again in 20s.') },
    ]);
    const url = await serve(
      // onError: the SDK logs a stream's error to the console unless told otherwise.
      fromAiSdk(({ messages, abortSignal }) => streamText({ model, messages, abortSignal, onError: () => undefined })),
      storeUrl(),
    );
    const task = await send(url, userMessage('hi'));
    expect(task.status.state).toBe('failed');
    const message = textOf(task.status.message?.parts);
    expect(message).toBe('Rate limit reached for gpt-x. Try again in 20s.');
    expect(message).not.toMatch(/\n\s+at /);
  });

  it("a tool that throws fails the task with the tool's name and message", async () => {
    const broken = tool({
      description: 'Always fails.',
      inputSchema: jsonSchema<{ q: string }>({ type: 'object', properties: { q: { type: 'string' } } }),
      execute: async (): Promise<string> => {
        throw new Error('upstream API returned 503');
      },
    });
    const { model } = scriptedModel((_prompt, call) =>
      call === 1 ? toolCall('broken', { q: 'x' }) : textAnswer('never'),
    );
    const url = await serve(
      fromAiSdk(({ messages, abortSignal }) =>
        streamText({ model, tools: { broken }, messages, abortSignal, stopWhen: stepCountIs(3) }),
      ),
      storeUrl(),
    );
    const task = await send(url, userMessage('go'));
    expect(task.status.state).toBe('failed');
    expect(textOf(task.status.message?.parts)).toBe('Tool broken failed: upstream API returned 503');
  });

  it('file and data parts reach the model as file content and JSON text; a file by URI as a note, not a URL', async () => {
    const { model, prompts } = scriptedModel(() => textAnswer('Got it.'));
    const url = await serve(
      fromAiSdk(({ messages, abortSignal }) => streamText({ model, messages, abortSignal })),
      storeUrl(),
    );
    const message: Message = {
      kind: 'message',
      role: 'user',
      messageId: `m-${Date.now()}`,
      parts: [
        { kind: 'text', text: 'Read these' },
        {
          kind: 'file',
          file: { bytes: Buffer.from('hello').toString('base64'), mimeType: 'text/plain', name: 'a.txt' },
        },
        { kind: 'file', file: { uri: 'http://169.254.169.254/secret', mimeType: 'image/png', name: 'b.png' } },
        { kind: 'data', data: { city: 'Paris', days: 3 } },
      ],
    };
    const task = await send(url, message);
    expect(task.status.state).toBe('completed');
    const user = prompts[0]?.at(-1);
    expect(user?.role).toBe('user');
    const content = user?.role === 'user' ? user.content : [];
    expect(content[0]).toMatchObject({ type: 'text', text: 'Read these' });
    expect(content[1]).toMatchObject({ type: 'file', mediaType: 'text/plain', filename: 'a.txt' });
    const bytes = content[1]?.type === 'file' ? content[1].data : undefined;
    const decoded = bytes instanceof Uint8Array ? Buffer.from(bytes) : Buffer.from(String(bytes), 'base64');
    expect(decoded.toString()).toBe('hello');
    expect(content[2]).toEqual({
      type: 'text',
      text: 'A file named "b.png" (image/png) at http://169.254.169.254/secret',
    });
    expect(content[3]).toEqual({ type: 'text', text: 'Data: {"city":"Paris","days":3}' });
    expect(await getTask(url, task.id)).toMatchObject({ status: { state: 'completed' } });
  });
});
