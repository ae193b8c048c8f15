/**
 * a2aTool: an AI SDK agent (streamText over the SDK's mock model) delegating to a remote A2A agent
 * served over HTTP by the plugin (itself fromAiSdk over a mock model), through @fastify-a2a/client.
 */

import { jsonSchema, type ModelMessage, stepCountIs, streamText, type ToolSet, tool } from 'ai';
import { bearerTokens } from 'fastify-a2a';
import { describe, expect, it } from 'vitest';
import { toModelOutput } from '../src/a2a-tool.js';
import { a2aTool, a2aToolFor, fromAiSdk, remoteConversationIn } from '../src/index.js';
import { useServers } from './helpers.js';
import { lastText, type Prompt, scriptedModel, textAnswer, toolCall } from './mock-model.js';

const serve = useServers();

const userTexts = (prompt: Prompt): string[] =>
  prompt
    .filter((message) => message.role === 'user' || message.role === 'tool')
    .map((message) =>
      message.role === 'user'
        ? message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
        : message.content
            .map((part) => (part.type === 'tool-result' && part.output.type === 'text' ? part.output.value : ''))
            .join(''),
    );

/** The remote agent: answers "Remote turn <n>: <everything the user said>", and asks a question for "book". */
async function remoteAgent(): Promise<string> {
  const askUser = tool({
    description: 'Ask the user.',
    inputSchema: jsonSchema<{ question: string }>({ type: 'object', properties: { question: { type: 'string' } } }),
  });
  const { model } = scriptedModel((prompt) => {
    const said = userTexts(prompt);
    if (said.at(-1)?.startsWith('book')) return toolCall('askUser', { question: 'Which city?' });
    return textAnswer(`Remote turn ${said.length}: ${said.join(' / ')}`);
  });
  return serve(
    fromAiSdk(({ messages, abortSignal }) =>
      streamText({ model, tools: { askUser }, messages, abortSignal, stopWhen: stepCountIs(3) }),
    ),
    'memory:',
  );
}

/** The local model: calls the `remote` tool with the user's message, then answers with what the tool returned. */
function delegatingModel() {
  return scriptedModel((prompt) => {
    const last = prompt.at(-1);
    if (last?.role === 'tool') {
      const output = last.content[0]?.type === 'tool-result' ? last.content[0].output : undefined;
      const texts =
        output?.type === 'content'
          ? output.value.slice(1).map((item) => (item.type === 'text' ? item.text : `[${item.type}]`))
          : [];
      return textAnswer(texts.join('\n'));
    }
    const said =
      last?.role === 'user' ? last.content.map((part) => (part.type === 'text' ? part.text : '')).join('') : '';
    return toolCall('remote', { message: said }, `call-${prompt.length}`);
  });
}

/** A local streamText run to its end (the mock model streams): the last step's text, the response messages, the steps. */
async function generateText(options: Parameters<typeof streamText<ToolSet>>[0]) {
  const result = streamText(options);
  const [text, response, steps] = await Promise.all([result.text, result.response, result.steps]);
  return { text, response, steps };
}

describe('a2aTool', () => {
  it("returns the remote agent's answer, and continues the same remote context on later calls in one conversation", async () => {
    const url = await remoteAgent();
    const remote = a2aTool({ url });
    const { model } = delegatingModel();
    const messages: ModelMessage[] = [{ role: 'user', content: 'I like trains' }];
    const first = await generateText({ model, tools: { remote }, messages, stopWhen: stepCountIs(3) });
    expect(first.text).toBe('Remote turn 1: I like trains');
    messages.push(...first.response.messages, { role: 'user', content: 'What do I like?' });
    const second = await generateText({ model, tools: { remote }, messages, stopWhen: stepCountIs(3) });
    // The remote agent saw both messages: same remote context.
    expect(second.text).toBe('Remote turn 2: I like trains / What do I like?');
    const contexts = [first, second].map(
      (result) => remoteConversationIn(result.response.messages, url)?.contextId ?? 'none',
    );
    expect(contexts[0]).not.toBe('none');
    expect(contexts[1]).toBe(contexts[0]);
  });

  it("surfaces the remote agent's question to the calling model; the next call answers the remote task", async () => {
    const url = await remoteAgent();
    const remote = a2aTool({ url });
    const { model } = delegatingModel();
    const messages: ModelMessage[] = [{ role: 'user', content: 'book a train' }];
    const asked = await generateText({ model, tools: { remote }, messages, stopWhen: stepCountIs(3) });
    expect(asked.text.split('\n').slice(0, 2)).toEqual([
      'AI SDK test agent asks: Which city?',
      'Ask the user, then call this tool again with their answer.',
    ]);
    const pending = remoteConversationIn(asked.response.messages, url);
    expect(pending?.pendingTaskId).toBeDefined();
    messages.push(...asked.response.messages, { role: 'user', content: 'Lyon' });
    const answered = await generateText({ model, tools: { remote }, messages, stopWhen: stepCountIs(3) });
    // The remote loop resumed with the answer as its tool's result, in the same task.
    expect(answered.text).toBe('Remote turn 2: book a train / Lyon');
    expect(remoteConversationIn(answered.response.messages, url)?.pendingTaskId).toBeUndefined();
  });

  it('sends the credentials it is given: the remote agent sees the principal; without them the call fails readably', async () => {
    const { model: remoteModel } = scriptedModel((prompt) => textAnswer(lastText(prompt) ?? ''));
    const url = await serve(
      fromAiSdk(({ messages, abortSignal, turn }) =>
        streamText({
          model: remoteModel,
          messages: [...messages, { role: 'user', content: `caller: ${turn.caller.principal?.id}` }],
          abortSignal,
        }),
      ),
      'memory:',
      { authenticate: bearerTokens({ 'tok-alice-0123456789': 'alice' }) },
    );
    const { model, prompts } = scriptedModel((prompt) =>
      prompt.at(-1)?.role === 'tool' ? textAnswer('done') : toolCall('remote', { message: 'hi' }),
    );
    const run = (remote: ReturnType<typeof a2aTool>) =>
      generateText({ model, tools: { remote }, messages: [{ role: 'user', content: 'go' }], stopWhen: stepCountIs(3) });
    const signedIn = await run(a2aTool({ url, bearer: 'tok-alice-0123456789' }));
    const result = signedIn.steps[0]?.content.find((part) => part.type === 'tool-result');
    expect((result as { output: { text: string } } | undefined)?.output.text).toBe('caller: alice');
    const anonymous = await run(a2aTool({ url, connect: { retry: { attempts: 1 } } }));
    const error = anonymous.steps[0]?.content.find((part) => part.type === 'tool-error');
    expect(String((error as { error: Error } | undefined)?.error.message)).toMatch(
      new RegExp(`^The call to the agent at ${url.replace(/[.]/g, '\\.')} failed: `),
    );
    expect(prompts).toHaveLength(4); // two runs, each: the call, then the answer after the tool's result or error
  });

  it('an agent that cannot be reached becomes a tool error the model sees, with a readable message', async () => {
    const remote = a2aTool({ url: 'http://127.0.0.1:9', connect: { retry: { attempts: 1 } } });
    const { model } = scriptedModel((prompt) =>
      prompt.at(-1)?.role === 'tool' ? textAnswer('sorry') : toolCall('remote', { message: 'hi' }),
    );
    const result = await generateText({
      model,
      tools: { remote },
      messages: [{ role: 'user', content: 'hi' }],
      stopWhen: stepCountIs(3),
    });
    const error = result.steps[0]?.content.find((part) => part.type === 'tool-error');
    expect(error?.type).toBe('tool-error');
    expect(String((error as { error: Error }).error.message)).toMatch(
      /^The call to the agent at http:\/\/127\.0\.0\.1:9 failed: /,
    );
  });

  it("gives the model the agent's text, data as JSON text, inline files as file data and links as file URLs", () => {
    const output = toModelOutput({
      a2a: { agent: 'http://a', agentName: 'A', contextId: 'c', pendingTaskId: undefined, state: 'completed' },
      text: 'Here you are',
      data: [{ rows: 2 }],
      files: [
        { name: 'r.txt', mediaType: 'text/plain', url: 'data:text/plain;base64,aGk=' },
        { name: 'p.png', mediaType: 'image/png', url: 'https://files.example/p.png' },
      ],
    });
    expect(output).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: '{"a2a":{"agent":"http://a","agentName":"A","contextId":"c","state":"completed"}}' },
        { type: 'text', text: 'Here you are' },
        { type: 'text', text: 'Data: {"rows":2}' },
        { type: 'file-data', data: 'aGk=', mediaType: 'text/plain', filename: 'r.txt' },
        { type: 'file-url', url: 'https://files.example/p.png', mediaType: 'image/png' },
      ],
    });
    // The first text part is what a later call reads the remote conversation back from.
    expect(
      remoteConversationIn(
        [{ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'x', toolName: 'any', output }] }],
        'http://a',
      ),
    ).toEqual({ agent: 'http://a', contextId: 'c', pendingTaskId: undefined });
  });

  it("a2aToolFor reads the card first: the tool's description is the agent's name, description and skills", async () => {
    const url = await serve(
      fromAiSdk(({ messages, abortSignal }) =>
        streamText({ model: scriptedModel(() => textAnswer('hi')).model, messages, abortSignal }),
      ),
      'memory:',
      {
        agentCard: {
          name: 'Research',
          description: 'Finds papers.',
          version: '1.0.0',
          skills: [{ id: 's', name: 'Search', description: 'Searches arXiv.', tags: [] }],
        },
      },
    );
    const remote = await a2aToolFor(url);
    expect(remote.description).toBe(
      'Send a message to the A2A agent Research: Finds papers.\n- Search: Searches arXiv.',
    );
    expect((await a2aToolFor(url, { description: 'mine' })).description).toBe('mine');
  });

  it('needs an agent', () => {
    expect(() => a2aTool({})).toThrow(/url/);
  });
});
