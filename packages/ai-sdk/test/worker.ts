/**
 * One worker process of the cross-worker tests: the plugin on STORE_URL serving fromAiSdk over the
 * SDK's mock model, which answers from the prompt it is sent — so what a turn on this worker
 * answers shows what conversation reached it. WORKER_ID names the worker in its answers. Prints
 * `READY <port>`; closes on SIGTERM.
 *
 * The model: a message starting with "book" makes it call `askUser` (a tool without execute: the
 * turn ends input-required); a tool result makes it answer "Booked for <answer> on <worker>.";
 * anything else, "Turn <n> on <worker>: <every user message so far, joined by ' / '>".
 */

import { jsonSchema, stepCountIs, streamText, tool } from 'ai';
import Fastify from 'fastify';
import { a2aPlugin } from 'fastify-a2a';
import { serveAsChildProcess } from '../../../test-support/child-server.js';
import { fromAiSdk } from '../src/index.js';
import { scriptedModel, textAnswer, toolCall } from './mock-model.js';

const workerId = process.env.WORKER_ID ?? `worker-${process.pid}`;

const { model } = scriptedModel((prompt) => {
  const last = prompt.at(-1);
  if (last?.role === 'tool') {
    const result = last.content[0];
    const answer = result?.type === 'tool-result' && result.output.type === 'text' ? result.output.value : '?';
    return textAnswer(`Booked for ${answer} on ${workerId}.`);
  }
  const userTexts = prompt
    .filter((message) => message.role === 'user')
    .map((message) => message.content.map((part) => (part.type === 'text' ? part.text : '')).join(''));
  if (userTexts.at(-1)?.startsWith('book')) return toolCall('askUser', { question: 'Which city?' });
  return textAnswer(`Turn ${userTexts.length} on ${workerId}: ${userTexts.join(' / ')}`);
}, 1);

const askUser = tool({
  description: 'Ask the user.',
  inputSchema: jsonSchema<{ question: string }>({ type: 'object', properties: { question: { type: 'string' } } }),
});

const app = Fastify({ logger: false });
await app.register(a2aPlugin, {
  agentCard: { name: 'AI SDK worker', description: 'fromAiSdk on several workers.', version: '1.0.0' },
  executor: fromAiSdk(({ messages, abortSignal }) =>
    streamText({ model, tools: { askUser }, messages, abortSignal, stopWhen: stepCountIs(3) }),
  ),
  store: process.env.STORE_URL ?? 'memory:',
  retention: false,
  drainTimeoutMs: 1000,
});
await serveAsChildProcess(app);
