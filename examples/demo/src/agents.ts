import type { AgentExecutor, TurnContext } from '@fastify-a2a/core';
import type { AgentCardInput } from 'fastify-a2a';

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
 * The `tck` demo agent, following the A2A TCK's expectations of a system under test: a plain
 * message leaves its task `working` (so it can be canceled or continued); a message whose id starts
 * with `test-resubscribe-message-id` keeps working for 4.5 s before it completes, so a client can
 * resubscribe meanwhile; a message continuing a task completes it.
 */
export const tckAgent: AgentExecutor = {
  async execute(turn: TurnContext) {
    if (turn.message.messageId.startsWith('test-resubscribe-message-id')) {
      await turn.working('Working on it; resubscribe to follow along.');
      await sleep(4500, turn.signal);
      await turn.artifact({ name: 'result', text: `Processed: ${turn.text}` });
      await turn.complete('Done.');
      return;
    }
    if (!turn.isNewTask) {
      await turn.artifact({ name: 'result', text: `Continued with: ${turn.text}` });
      await turn.complete('Done.');
      return;
    }
    await turn.working(`Received: ${turn.text}`);
  },
};

export const demoAgents = { echo: echoAgent, tck: tckAgent } as const;
export type DemoAgentName = keyof typeof demoAgents;

export function demoCard(name: DemoAgentName): AgentCardInput {
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
  };
}
