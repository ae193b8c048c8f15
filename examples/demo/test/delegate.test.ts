/**
 * The delegate demo agent (DEMO_AGENT=delegate) in front of the echo demo, both real processes:
 * a message is passed on with `callAgent` and answered with the echo agent's reply; a question the
 * echo agent asks is asked here too, and the reply continues the echo agent's task.
 */

import { connect } from '@fastify-a2a/client';
import { describe, expect, it } from 'vitest';
import { startDemo } from './demo-process.js';

describe('the delegate demo agent', () => {
  it('relays a message to the echo agent and its question back, continuing the same remote task', async () => {
    const echo = await startDemo('memory:');
    const delegate = await startDemo('memory:', { DEMO_AGENT: 'delegate', DEMO_DELEGATE_URL: echo.baseUrl });
    const client = await connect(delegate.baseUrl, { timeoutMs: 30_000 });
    expect(client.card.name).toBe('fastify-a2a delegate agent');

    const first = await client.send({ text: 'hello delegated world' });
    if (first.result.kind !== 'task') throw new Error('expected a task');
    expect(first.result.status.state).toBe('completed');
    const artifact = first.result.artifacts?.[0];
    expect(artifact?.name).toBe('answer from fastify-a2a echo agent');
    expect(artifact?.parts).toEqual([{ kind: 'text', text: 'hello delegated world' }]);

    const asked = await client.send({ text: 'ask:What is your name?', contextId: first.result.contextId });
    if (asked.result.kind !== 'task') throw new Error('expected a task');
    expect(asked.result.status.state).toBe('input-required');
    const question = asked.result.status.message?.parts[0];
    expect(question?.kind === 'text' && question.text).toBe('What is your name?');

    const replied = await client.send({ text: 'Ada', taskId: asked.result.id, contextId: asked.result.contextId });
    if (replied.result.kind !== 'task') throw new Error('expected a task');
    expect(replied.result.status.state).toBe('completed');
    const answer = replied.result.artifacts?.at(-1)?.parts[0];
    expect(answer?.kind === 'text' && answer.text).toBe('You answered: Ada');
  });
});
