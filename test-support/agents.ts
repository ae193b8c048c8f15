/**
 * The agents plugin and binding tests serve. They began as copies of the demo's `echo` agent and
 * card (examples/demo/src/agents.ts) and live here so that changing the demo never changes what a
 * plugin test asserts: the demo may grow, rename or reword its agents freely.
 */
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
 * The echo agent:
 * - `sleep:<ms>` works that long (a cancel interrupts it), then completes;
 * - `ask:<question>` pauses in input-required with the question; the follow-up message (same
 *   taskId) completes the task with an artifact holding the answer;
 * - `whoami` answers with the caller's principal;
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

/** The echo agent's card: a provider and one skill with examples, which card tests read back. */
export function echoCard(): AgentCardInput {
  return {
    name: 'fastify-a2a echo agent',
    description:
      'Echoes your words back as a streamed artifact. Send "sleep:<ms>" to keep it busy or "ask:<question>" to be asked a question.',
    version: '0.1.0',
    provider: { organization: 'fastify-a2a', url: 'https://github.com/fastify-a2a' },
    skills: [
      {
        id: 'echo',
        name: 'Echo',
        description: 'Streams the message back word by word.',
        tags: ['demo'],
        examples: ['hello world', 'sleep:2000', 'ask:What is your name?'],
      },
    ],
  };
}
