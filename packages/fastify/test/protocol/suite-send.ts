/** The protocol suite's scenarios for message/send, errors and tasks/cancel (see ./suite.ts). */
import { describe, expect, it } from 'vitest';
import { echoAgent } from '../../../../test-support/agents.js';
import { asTask, nextId, textParts, userMessage, waitFor } from '../helpers.js';
import { ok, waitForBlockingSendState, waitForState } from './client.js';
import { gate, type SuiteContext, waitForAbort } from './suite-context.js';

export function sendScenarios({ serve }: SuiteContext): void {
  describe('message/send (§7.1)', () => {
    it('a blocking send returns the completed task with its artifacts and history', async () => {
      const { client } = await serve(echoAgent);
      const task = asTask(ok(await client.sendMessage({ message: userMessage('hello brave new world') })));
      expect(task.status.state).toBe('completed');
      expect(task.artifacts).toHaveLength(1);
      expect(textParts(task.artifacts?.[0]?.parts)).toBe('hello brave new world');
      expect(task.history?.[0]).toMatchObject({ role: 'user', taskId: task.id, contextId: task.contextId });
      expect(textParts(task.history?.[0]?.parts)).toBe('hello brave new world');
    });

    it('a non-blocking send answers at once; the turn goes on and tasks/get sees it end', async () => {
      const held = gate();
      const { client } = await serve(async (turn) => {
        await held.opened;
        await turn.complete('finished');
      });
      const task = asTask(
        ok(await client.sendMessage({ message: userMessage('go'), configuration: { blocking: false } })),
      );
      expect(['submitted', 'working']).toContain(task.status.state);
      held.open();
      const done = await waitForState(client, task.id, 'completed');
      expect(textParts(done.status.message?.parts)).toBe('finished');
    });

    it('an agent that replies with a Message has the send answered with that Message', async () => {
      const { client } = await serve(async (turn) => turn.reply(`pong: ${turn.text}`));
      const message = ok(await client.sendMessage({ message: userMessage('ping') }));
      if (message.kind !== 'message') throw new Error(`expected a Message, got ${JSON.stringify(message)}`);
      expect(message.role).toBe('agent');
      expect(textParts(message.parts)).toBe('pong: ping');
      expect(message.taskId).toBeTypeOf('string');
    });

    it('input-required answers the send; a follow-up carrying the taskId resumes the task, history included', async () => {
      const { client } = await serve(echoAgent);
      const asked = asTask(ok(await client.sendMessage({ message: userMessage('ask:What is your name?') })));
      expect(asked.status.state).toBe('input-required');
      expect(textParts(asked.status.message?.parts)).toBe('What is your name?');
      const answered = asTask(ok(await client.sendMessage({ message: userMessage('Ada', { taskId: asked.id }) })));
      expect(answered.id).toBe(asked.id);
      expect(answered.contextId).toBe(asked.contextId);
      expect(answered.status.state).toBe('completed');
      expect(textParts(answered.artifacts?.[0]?.parts)).toBe('You answered: Ada');
      // user question, agent question, user answer, agent thanks
      expect(answered.history?.map((m) => m.role)).toEqual(['user', 'agent', 'user', 'agent']);
      expect(answered.history?.map((m) => textParts(m.parts))).toEqual([
        'ask:What is your name?',
        'What is your name?',
        'Ada',
        'Thanks for the answer.',
      ]);
    });

    it('a turn may end with the task still working; a later message continues the task', async () => {
      const { client } = await serve(async (turn) => {
        if (turn.isNewTask) await turn.working('started');
        else await turn.complete(`continued with ${turn.text}`);
      });
      const first = asTask(ok(await client.sendMessage({ message: userMessage('one') })));
      expect(first.status.state).toBe('working');
      const second = asTask(ok(await client.sendMessage({ message: userMessage('two', { taskId: first.id }) })));
      expect(second.id).toBe(first.id);
      expect(second.status.state).toBe('completed');
      expect(textParts(second.status.message?.parts)).toBe('continued with two');
    });

    it('historyLength limits the history of the send and tasks/get answers', async () => {
      const { client } = await serve(echoAgent);
      const asked = asTask(ok(await client.sendMessage({ message: userMessage('ask:q') })));
      const full = asTask(ok(await client.sendMessage({ message: userMessage('a', { taskId: asked.id }) })));
      expect(full.history).toHaveLength(4);
      const last1 = asTask(
        ok(await client.sendMessage({ message: userMessage('ask:again'), configuration: { historyLength: 1 } })),
      );
      expect(last1.history).toHaveLength(1);
      expect(last1.history?.[0]?.role).toBe('agent');
      const none = ok(await client.getTask({ id: full.id, historyLength: 0 }));
      expect(none.history ?? []).toEqual([]);
      const two = ok(await client.getTask({ id: full.id, historyLength: 2 }));
      expect(two.history?.map((m) => m.role)).toEqual(['user', 'agent']);
      expect(textParts(two.history?.[0]?.parts)).toBe('a');
      const all = ok(await client.getTask({ id: full.id }));
      expect(all.history).toHaveLength(4);
    });

    it('keeps the contextId the client sends and reuses it across tasks', async () => {
      const { client } = await serve(echoAgent);
      const contextId = nextId('ctx');
      const a = asTask(ok(await client.sendMessage({ message: userMessage('one', { contextId }) })));
      const b = asTask(ok(await client.sendMessage({ message: userMessage('two', { contextId }) })));
      expect(a.contextId).toBe(contextId);
      expect(b.contextId).toBe(contextId);
      expect(a.id).not.toBe(b.id);
    });
  });

  describe('errors (§8)', () => {
    it('-32001 for tasks/get, tasks/cancel and message/send on an unknown task', async () => {
      const { client } = await serve(echoAgent);
      const unknown = nextId('nope');
      const answers = {
        get: await client.getTask({ id: unknown }),
        cancel: await client.cancelTask({ id: unknown }),
        send: await client.sendMessage({ message: userMessage('hi', { taskId: unknown }) }),
      };
      for (const [call, answer] of Object.entries(answers)) {
        expect(answer, call).toMatchObject({ ok: false, code: -32001 });
        expect(answer.ok || answer.message, call).toContain(unknown);
      }
    });

    it('-32001 for a stream of a message to an unknown task, and for resubscribing to one', async () => {
      const { client } = await serve(echoAgent);
      const unknown = nextId('nope');
      const stream = await client.streamMessage({ message: userMessage('hi', { taskId: unknown }) });
      const resubscribed = await client.resubscribe({ id: unknown });
      expect(stream).toMatchObject({ ok: false, code: -32001 });
      expect(resubscribed).toMatchObject({ ok: false, code: -32001 });
    });

    it('-32002 when canceling a terminal task, including a second cancel', async () => {
      const { client } = await serve(async (turn) => {
        if (turn.text === 'wait') {
          await turn.working();
          await waitForAbort(turn.signal);
        } else await turn.complete();
      });
      const running = asTask(
        ok(await client.sendMessage({ message: userMessage('wait'), configuration: { blocking: false } })),
      );
      expect(ok(await client.cancelTask({ id: running.id })).status.state).toBe('canceled');
      const second = await client.cancelTask({ id: running.id });
      expect(second).toMatchObject({ ok: false, code: -32002 });
      expect(second.ok || second.message).toMatch(/canceled/);

      const completed = asTask(ok(await client.sendMessage({ message: userMessage('done') })));
      expect(completed.status.state).toBe('completed');
      expect(await client.cancelTask({ id: completed.id })).toMatchObject({ ok: false, code: -32002 });
    });

    it('-32602 for a message to a terminal task, and for a contextId that is not the task’s', async () => {
      const { client } = await serve(async (turn) => {
        if (turn.text === 'ask') await turn.requireInput('more?');
        else await turn.complete('done');
      });
      const done = asTask(ok(await client.sendMessage({ message: userMessage('hi') })));
      const toTerminal = await client.sendMessage({ message: userMessage('again', { taskId: done.id }) });
      expect(toTerminal).toMatchObject({ ok: false, code: -32602 });
      expect(toTerminal.ok || toTerminal.message).toMatch(/terminal state/);

      const asked = asTask(ok(await client.sendMessage({ message: userMessage('ask') })));
      const mismatch = await client.sendMessage({
        message: userMessage('again', { taskId: asked.id, contextId: nextId('other') }),
      });
      expect(mismatch).toMatchObject({ ok: false, code: -32602 });
      expect(mismatch.ok || mismatch.message).toMatch(/does not match/);
    });

    it('-32602 for invalid params: a message without parts, a negative historyLength', async () => {
      const { client } = await serve(echoAgent);
      expect(await client.sendMessage({ message: { ...userMessage('x'), parts: [] } })).toMatchObject({
        ok: false,
        code: -32602,
      });
      const negative = await client.getTask({ id: 'any', historyLength: -1 });
      expect(negative).toMatchObject({ ok: false, code: -32602 });
      expect(negative.ok || negative.message).toMatch(/historyLength/);
    });
  });

  describe('tasks/cancel (§7.4)', () => {
    it('answers with the canceled task, aborts the agent, and tasks/get then sees it canceled', async () => {
      let aborted = false;
      const { client } = await serve(async (turn) => {
        await turn.working();
        await waitForAbort(turn.signal);
        aborted = true;
      });
      const task = asTask(
        ok(await client.sendMessage({ message: userMessage('x'), configuration: { blocking: false } })),
      );
      await waitForState(client, task.id, 'working');
      const canceled = ok(await client.cancelTask({ id: task.id }));
      expect(canceled.id).toBe(task.id);
      expect(canceled.status.state).toBe('canceled');
      await waitFor(() => aborted, 5000, 'the agent to see the cancel');
      expect(ok(await client.getTask({ id: task.id })).status.state).toBe('canceled');
    });

    it('a blocking send of a task canceled meanwhile answers with the canceled task', async () => {
      let taskId: string | undefined;
      const { client } = await serve(async (turn) => {
        await turn.working();
        taskId = turn.taskId;
        await waitForAbort(turn.signal);
      });
      const pending = client.sendMessage({ message: userMessage('x') });
      const id = await waitFor(() => taskId, 5000, 'the turn to start');
      // The agent knows its task id before the task is written (a blocking send defers that).
      await waitForBlockingSendState(client, id, 'working');
      ok(await client.cancelTask({ id }));
      const task = asTask(ok(await pending));
      expect(task.id).toBe(id);
      expect(task.status.state).toBe('canceled');
    });

    it('cancels a task waiting in input-required', async () => {
      const { client } = await serve(echoAgent);
      const asked = asTask(ok(await client.sendMessage({ message: userMessage('ask:?') })));
      expect(asked.status.state).toBe('input-required');
      expect(ok(await client.cancelTask({ id: asked.id })).status.state).toBe('canceled');
    });
  });
}
