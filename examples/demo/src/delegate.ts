/**
 * The `delegate` demo agent (DEMO_AGENT=delegate): passes each message on to another A2A agent
 * (DEMO_DELEGATE_URL, e.g. the echo demo) with `callAgent` from @fastify-a2a/client, and answers
 * with what that agent said — the shape of an LLM tool that calls a remote agent. The remote
 * context is kept in this context's state, so a conversation here is one conversation there; when
 * the remote agent asks a question, this task asks it too, and the reply continues the remote task.
 * DEMO_DELEGATE_BEARER (a token, or `file:PATH` / `exec:COMMAND`) authenticates to it.
 */

import { callAgent } from '@fastify-a2a/client';
import type { AgentExecutor, TurnContext } from '@fastify-a2a/core';
import type { AgentCardInput } from 'fastify-a2a';

interface RemoteState {
  contextId?: string | undefined;
  /** The remote task waiting for input, which the next message here continues. */
  pendingTaskId?: string | undefined;
}

export const delegateAgent: AgentExecutor = {
  async execute(turn: TurnContext) {
    const url = process.env.DEMO_DELEGATE_URL;
    if (!url) {
      await turn.fail('DEMO_DELEGATE_URL is not set: give the delegate agent the URL of the agent to call.');
      return;
    }
    const remote = (turn.contextState ?? {}) as RemoteState;
    await turn.working(`Asking the agent at ${url}.`);
    const answer = await callAgent(url, {
      text: turn.text,
      contextId: remote.contextId,
      taskId: remote.pendingTaskId,
      stream: true,
      signal: turn.signal,
      timeoutMs: 120_000,
      bearer: process.env.DEMO_DELEGATE_BEARER,
    });
    const waiting = answer.state === 'input-required' || answer.state === 'auth-required';
    await turn.setContextState({
      contextId: answer.metadata.contextId,
      pendingTaskId: waiting ? answer.metadata.taskId : undefined,
    } satisfies RemoteState);
    const parts = [
      ...(answer.text === '' ? [] : [{ kind: 'text' as const, text: answer.text }]),
      ...answer.data.map((data) => ({ kind: 'data' as const, data: data as Record<string, unknown> })),
      ...answer.files.map((file) => ({
        kind: 'file' as const,
        file: {
          uri: file.url,
          ...(file.name ? { name: file.name } : {}),
          ...(file.mediaType ? { mimeType: file.mediaType } : {}),
        },
      })),
    ];
    if (parts.length > 0 && !waiting) {
      await turn.artifact({
        name: `answer from ${answer.metadata.agent}`,
        parts,
        metadata: { remoteTaskId: answer.metadata.taskId, remoteContextId: answer.metadata.contextId },
      });
    }
    if (waiting) await turn.requireInput(answer.text || `${answer.metadata.agent} needs more input.`);
    else if (answer.state === 'failed' || answer.state === 'rejected' || answer.state === 'canceled')
      await turn.fail(`${answer.metadata.agent} ended ${answer.state}${answer.text ? `: ${answer.text}` : '.'}`);
    else if (!answer.done)
      await turn.complete(`${answer.metadata.agent} is still working on task ${answer.metadata.taskId}.`);
    else await turn.complete();
  },
};

export function delegateCard(): AgentCardInput {
  return {
    name: 'fastify-a2a delegate agent',
    description: 'Passes each message on to another A2A agent (DEMO_DELEGATE_URL) and answers with its reply.',
    version: '0.1.0',
    provider: { organization: 'fastify-a2a', url: 'https://github.com/fastify-a2a' },
    skills: [
      {
        id: 'delegate',
        name: 'Delegate',
        description: 'Asks another agent and relays its answer, questions included.',
        tags: ['demo'],
        examples: ['hello world', 'ask:What is your name?'],
      },
    ],
  };
}
