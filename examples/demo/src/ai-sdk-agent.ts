/**
 * The `ai-sdk` demo agent (DEMO_AGENT=ai-sdk): a Vercel AI SDK `ToolLoopAgent` served with
 * `fromAiSdk` from @fastify-a2a/ai-sdk. It has two tools: `weather` (made-up figures) and
 * `askUser` (no `execute`: calling it ends the turn `input-required` with the question).
 *
 * Without an API key it runs on the SDK's mock model (`MockLanguageModelV3` from `ai/test`), which
 * streams a scripted answer token by token (about 4 characters each) at DEMO_TOKENS_PER_S
 * (default 50 tokens a second): a message that mentions "weather" makes it call the weather tool
 * first; one that mentions "book" makes it ask the user a question; every answer is over a hundred
 * tokens and says how many messages the conversation has, so a client sees it stream and remember.
 *
 * With OPENAI_API_KEY set (OPENAI_BASE_URL for a compatible server, DEMO_MODEL for the model, default
 * gpt-4o-mini) the same agent uses that model.
 */

import { createOpenAI } from '@ai-sdk/openai';
import { fromAiSdk } from '@fastify-a2a/ai-sdk';
import type { AgentExecutor } from '@fastify-a2a/core';
import { jsonSchema, type LanguageModel, stepCountIs, ToolLoopAgent, tool } from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import type { AgentCardInput } from 'fastify-a2a';

type MockPrompt = Parameters<MockLanguageModelV3['doStream']>[0]['prompt'];
type MockStreamPart =
  Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer T> ? T : never;

/** Characters per mock token: about what an English LLM token holds. */
const TOKEN_CHARS = 4;

const ABOUT =
  'I am the mock model of the fastify-a2a demo, standing in for a real one so that the demo runs ' +
  'without an API key. I stream this answer token by token, about four characters each, at ' +
  'DEMO_TOKENS_PER_S tokens a second; fastify-a2a gathers the tokens into the chunks of one ' +
  'artifact, so a client sees the answer grow without one event per token. Ask about the weather ' +
  'to see a tool call before the answer, or ask me to book a trip to be asked a question. Set ' +
  'OPENAI_API_KEY to talk to a real model instead.';

const usage = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};

function textOfContent(content: MockPrompt[number]['content']): string {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : '')).join(' ');
}

/** The mock model's answer to a prompt, as the stream parts a provider sends. */
export function mockAnswer(prompt: MockPrompt): MockStreamPart[] {
  const userMessages = prompt.filter((message) => message.role === 'user').map((m) => textOfContent(m.content));
  const said = userMessages.at(-1) ?? '';
  const last = prompt.at(-1);
  const finish = (reason: 'stop' | 'tool-calls'): MockStreamPart => ({
    type: 'finish',
    finishReason: { unified: reason, raw: undefined },
    usage,
  });
  if (last?.role === 'user' && /\bweather\b/i.test(said)) {
    const city = /\bin ([A-Z][\p{L}-]+(?: [A-Z][\p{L}-]+)*)/u.exec(said)?.[1] ?? 'Paris';
    return [
      {
        type: 'tool-call',
        toolCallId: `weather-${userMessages.length}`,
        toolName: 'weather',
        input: JSON.stringify({ city }),
      },
      finish('tool-calls'),
    ];
  }
  if (last?.role === 'user' && /\bbook\b/i.test(said)) {
    return [
      {
        type: 'tool-call',
        toolCallId: `ask-${userMessages.length}`,
        toolName: 'askUser',
        input: JSON.stringify({ question: 'Which day would you like to travel?' }),
      },
      finish('tool-calls'),
    ];
  }
  let opening: string;
  const result = last?.role === 'tool' ? last.content.find((part) => part.type === 'tool-result') : undefined;
  if (result?.toolName === 'weather' && result.output.type === 'json') {
    const { city, sky, celsius } = result.output.value as { city: string; sky: string; celsius: number };
    opening = `The weather tool says ${city} is ${sky} at ${celsius} °C (the figures are made up).`;
  } else if (result?.toolName === 'askUser') {
    const answer = result.output.type === 'text' ? result.output.value : 'that day';
    opening = `Booked for ${answer}: that was your answer to my question, which reached me on whichever worker took it.`;
  } else {
    opening = `You said: "${said}".`;
  }
  const memory =
    userMessages.length > 1
      ? ` This is message ${userMessages.length} of our conversation; you began with "${userMessages[0]}".`
      : ' This is the first message of our conversation.';
  const text = `${opening}${memory} ${ABOUT}`;
  const parts: MockStreamPart[] = [{ type: 'text-start', id: 'answer' }];
  for (let i = 0; i < text.length; i += TOKEN_CHARS) {
    parts.push({ type: 'text-delta', id: 'answer', delta: text.slice(i, i + TOKEN_CHARS) });
  }
  parts.push({ type: 'text-end', id: 'answer' }, finish('stop'));
  return parts;
}

/** The SDK's mock model, streaming {@link mockAnswer} at `tokensPerSecond`. */
export function mockModel(tokensPerSecond: number): LanguageModel {
  const delay = 1000 / tokensPerSecond;
  return new MockLanguageModelV3({
    provider: 'fastify-a2a-demo',
    modelId: 'mock',
    doStream: async ({ prompt }) => ({
      stream: simulateReadableStream({ chunks: mockAnswer(prompt), initialDelayInMs: delay, chunkDelayInMs: delay }),
    }),
  });
}

/** The model the environment asks for: OpenAI with OPENAI_API_KEY, else the mock. */
export function demoModel(env: NodeJS.ProcessEnv): { model: LanguageModel; summary: string } {
  if (env.OPENAI_API_KEY) {
    const openai = createOpenAI({
      apiKey: env.OPENAI_API_KEY,
      ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : {}),
    });
    const modelId = env.DEMO_MODEL || 'gpt-4o-mini';
    return { model: openai(modelId), summary: `OpenAI model ${modelId}` };
  }
  const rate = Number(env.DEMO_TOKENS_PER_S ?? 50);
  if (!Number.isFinite(rate) || rate <= 0) {
    throw new Error(`DEMO_TOKENS_PER_S must be a number of tokens a second above 0; got "${env.DEMO_TOKENS_PER_S}".`);
  }
  return { model: mockModel(rate), summary: `mock model at ${rate} tokens/s` };
}

const weather = tool({
  description: 'The current weather in a city.',
  inputSchema: jsonSchema<{ city: string }>({
    type: 'object',
    properties: { city: { type: 'string', description: 'The city, e.g. Paris' } },
    required: ['city'],
    additionalProperties: false,
  }),
  // Made up, and deterministic, so that the demo needs no weather service.
  execute: async ({ city }) => ({
    city,
    sky: city.length % 2 === 0 ? 'sunny' : 'cloudy',
    celsius: 12 + (city.length % 10),
  }),
});

const askUser = tool({
  description: 'Ask the user a question and wait for the answer (e.g. a missing detail).',
  inputSchema: jsonSchema<{ question: string }>({
    type: 'object',
    properties: { question: { type: 'string' } },
    required: ['question'],
    additionalProperties: false,
  }),
  // No execute: the turn ends input-required with the question; the user's reply is the result.
});

/** The executor for DEMO_AGENT=ai-sdk, on the model the environment chooses. */
export function aiSdkAgent(env: NodeJS.ProcessEnv = process.env): AgentExecutor {
  const { model } = demoModel(env);
  const agent = new ToolLoopAgent({
    model,
    instructions:
      'You are the fastify-a2a demo agent. Answer briefly. Use the weather tool for weather questions, ' +
      'and askUser when you need a detail from the user.',
    tools: { weather, askUser },
    stopWhen: stepCountIs(5),
  });
  return fromAiSdk(agent, {
    onError: (error, turn) => console.error(`ai-sdk agent: task ${turn.taskId} failed:`, error),
  });
}

export function aiSdkCard(): AgentCardInput {
  return {
    name: 'fastify-a2a AI SDK agent',
    description:
      'A Vercel AI SDK agent served with @fastify-a2a/ai-sdk: streams its answer, calls a weather tool, and asks a question when it needs one. Runs on a mock model unless OPENAI_API_KEY is set.',
    version: '0.1.0',
    provider: { organization: 'fastify-a2a', url: 'https://github.com/fastify-a2a' },
    skills: [
      {
        id: 'ai-sdk',
        name: 'AI SDK agent',
        description: 'Answers with a streamed artifact; tool calls show as working updates.',
        tags: ['demo', 'ai-sdk'],
        examples: ['hello', 'What is the weather in Paris?', 'Book me a train to Lyon'],
      },
    ],
    defaultInputModes: ['text/plain', 'application/json'],
  };
}
