import type { AgentExecutor, TurnContext } from '@fastify-a2a/core';
import type { A2APluginOptions, AgentCardInput } from 'fastify-a2a';
import { aiSdkAgent, aiSdkCard, demoModel } from './ai-sdk-agent.js';
import { delegateAgent, delegateCard } from './delegate.js';
import { langGraphCard, tokensPerSecond } from './langgraph-agent.js';

/** Resolves after `ms`, or rejects as soon as `signal` aborts (a tasks/cancel from any worker). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The `echo` demo agent:
 * - `sleep:<ms>` works that long (a cancel interrupts it), then completes;
 * - `ask:<question>` pauses in input-required with the question; the follow-up message (same
 *   taskId) completes the task with an artifact holding the answer;
 * - `whoami` answers with the caller's principal (the extended card's skill);
 * - anything else is streamed back word by word as chunks of one artifact, then the task completes.
 */
export const echoAgent: AgentExecutor = {
  async execute(turn: TurnContext) {
    const text = turn.text.trim();
    if (turn.previousState === 'input-required') {
      await turn.artifact({ name: 'answer', text: `You answered: ${text}` });
      await turn.complete('Thanks for the answer.');
      return;
    }
    if (text === 'whoami') {
      // The caller as authentication found it (A2A §4): the skill the extended card adds.
      const principal = turn.caller.principal;
      await turn.complete(
        principal === undefined ? 'You are anonymous: this agent does not authenticate.' : `You are ${principal.id}.`,
      );
      return;
    }
    const sleepMatch = /^sleep:(\d+)$/.exec(text);
    if (sleepMatch) {
      const ms = Number(sleepMatch[1]);
      await turn.working(`Sleeping for ${ms} ms.`);
      await sleep(ms, turn.signal);
      await turn.complete(`Slept for ${ms} ms.`);
      return;
    }
    if (text.startsWith('ask:')) {
      await turn.requireInput(text.slice('ask:'.length).trim() || 'What would you like to tell me?');
      return;
    }
    const words = text.split(/(\s+)/).filter((w) => w !== '');
    const artifactId = `echo-${turn.taskId}`;
    for (let i = 0; i < words.length; i++) {
      await turn.artifact({
        artifactId,
        name: 'echo',
        text: words[i] as string,
        append: i > 0,
        lastChunk: i === words.length - 1,
      });
    }
    if (words.length === 0) await turn.artifact({ artifactId, name: 'echo', text: '', lastChunk: true });
    await turn.complete();
  },
};

/**
 * How long the `tck` agent keeps a `test-resubscribe-message-id…` task working: the A2A TCK
 * resubscribes meanwhile and wants the task live for twice its streaming timeout
 * (`TCK_STREAMING_TIMEOUT`, seconds, 2 by default; SDK CIs run it with 5).
 */
export function tckResubscribeHoldMs(env: NodeJS.ProcessEnv = process.env): number {
  const timeoutSeconds = Number(env.TCK_STREAMING_TIMEOUT);
  const timeoutMs = Number.isFinite(timeoutSeconds) && timeoutSeconds > 0 ? timeoutSeconds * 1000 : 2000;
  return Math.max(4500, 2 * timeoutMs + 500);
}

/**
 * The `tck` demo agent, following the A2A TCK's expectations of a system under test:
 * - a message leaves its task `working`, and so does every follow-up to it (the TCK sends up to
 *   five follow-ups to one task, each of which must succeed, then cancels it or reads its history);
 * - a message whose id starts with `test-resubscribe-message-id` works for `resubscribeHoldMs`
 *   (see {@link tckResubscribeHoldMs}), then completes, so a client can resubscribe meanwhile.
 */
export function createTckAgent(options: { resubscribeHoldMs?: number } = {}): AgentExecutor {
  const holdMs = options.resubscribeHoldMs ?? tckResubscribeHoldMs();
  return {
    async execute(turn: TurnContext) {
      if (turn.message.messageId.startsWith('test-resubscribe-message-id')) {
        await turn.working('Working on it; resubscribe to follow along.');
        await sleep(holdMs, turn.signal);
        await turn.artifact({ name: 'result', text: `Processed: ${turn.text}` });
        await turn.complete('Done.');
        return;
      }
      await turn.working(turn.isNewTask ? `Received: ${turn.text}` : `Continued with: ${turn.text}`);
    },
  };
}

export const tckAgent: AgentExecutor = createTckAgent();

/** Throws with a message naming the fix when the selected agent's settings are wrong (checked at startup). */
export function checkDemoAgentSettings(name: DemoAgentName, env: NodeJS.ProcessEnv): void {
  if (name === 'ai-sdk') demoModel(env);
  if (name === 'langgraph') tokensPerSecond(env);
}

export const demoAgents = {
  echo: echoAgent,
  tck: tckAgent,
  delegate: delegateAgent,
  // Built on first use: it reads its model settings from the environment.
  'ai-sdk': lazyAgent(() => aiSdkAgent()),
} as const;
/** Agents built at startup, once what they connect to is ready (server.ts builds them). */
export const builtAgents = ['langgraph'] as const;
export type DemoAgentName = keyof typeof demoAgents | (typeof builtAgents)[number];
export const demoAgentNames: readonly DemoAgentName[] = [
  ...(Object.keys(demoAgents) as DemoAgentName[]),
  ...builtAgents,
];

/**
 * Plugin options a demo agent needs beyond its card and executor. The A2A TCK's concurrency tests
 * send one messageId with several texts (copies of one request) and expect each to succeed, so
 * the tck agent answers a reused messageId with the original task instead of -32602.
 */
export function demoOptions(name: DemoAgentName): Pick<A2APluginOptions, 'messageIdReuse'> {
  return name === 'tck' ? { messageIdReuse: 'replay' } : {};
}

/** An executor made when its first turn starts, so that an agent nobody selected reads no settings. */
function lazyAgent(make: () => AgentExecutor): AgentExecutor {
  let made: AgentExecutor | undefined;
  return {
    execute(turn) {
      made ??= make();
      return made.execute(turn);
    },
  };
}

export function demoCard(name: DemoAgentName): AgentCardInput {
  if (name === 'delegate') return delegateCard();
  if (name === 'langgraph') return langGraphCard();
  if (name === 'ai-sdk') return aiSdkCard();
  const echo = name === 'echo';
  return {
    name: echo ? 'fastify-a2a echo agent' : 'fastify-a2a TCK agent',
    description: echo
      ? 'Echoes your words back as a streamed artifact. Send "sleep:<ms>" to keep it busy or "ask:<question>" to be asked a question.'
      : 'A system under test for the A2A TCK: tasks stay working until continued or canceled.',
    version: '0.1.0',
    provider: { organization: 'fastify-a2a', url: 'https://github.com/fastify-a2a' },
    skills: [
      {
        id: name,
        name: echo ? 'Echo' : 'TCK',
        description: echo ? 'Streams the message back word by word.' : 'Keeps tasks open for protocol tests.',
        tags: ['demo'],
        examples: echo ? ['hello world', 'sleep:2000', 'ask:What is your name?'] : ['hello'],
      },
    ],
    // The A2A TCK runs its file- and data-part tests only for a card whose modes name "file" and
    // "data" (a TCK convention, not media types); the agent accepts both kinds of parts.
    ...(echo ? {} : { defaultInputModes: ['text/plain', 'file', 'data'] }),
  };
}
