/** The protocol suite's scenarios for message/stream and tasks/resubscribe (see ./suite.ts). */

import type { TaskArtifactUpdateEvent, TurnContext } from '@fastify-a2a/core';
import { describe, expect, it } from 'vitest';
import { echoAgent, sleep } from '../../../../test-support/agents.js';
import { asTask, textParts, userMessage } from '../helpers.js';
import { ok, type StreamItem, waitForState } from './client.js';
import {
  collect,
  firstTask,
  gate,
  kinds,
  last,
  opened,
  type SuiteContext,
  waitForAbort,
  within,
} from './suite-context.js';

export function streamScenarios({ version, eventIds, itWithEventIds, serve }: SuiteContext): void {
  describe('message/stream (§7.2)', () => {
    it('streams the Task first, then the updates, and ends with the final status; SSE ids increase', async () => {
      const { client } = await serve(echoAgent);
      const items = await collect(client.streamMessage({ message: userMessage('one two three') }));
      expect(kinds(items)).toEqual([
        'task',
        'status-update',
        'artifact-update',
        'artifact-update',
        'artifact-update',
        'artifact-update',
        'artifact-update',
        'status-update',
      ]);
      const task = firstTask(items);
      expect(task.status.state).toBe('submitted');
      expect(items.every(({ item }) => item.kind === 'task' || item.taskId === task.id)).toBe(true);
      expect(last(items)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
      const nonFinal = items.slice(1, -1).filter(({ item }) => item.kind === 'status-update');
      expect(nonFinal.map(({ item }) => (item as { final: boolean }).final)).toEqual([false]);
      const ids = items.map(({ id }) => Number(id));
      if (eventIds) expect(ids.every((id) => Number.isInteger(id))).toBe(true);
      if (eventIds) expect(ids.every((id, i) => i === 0 || id > (ids[i - 1] as number))).toBe(true);
      const chunks = items
        .filter(({ item }) => item.kind === 'artifact-update')
        .map(({ item }) => item as TaskArtifactUpdateEvent);
      expect(chunks.map((c) => textParts(c.artifact.parts)).join('')).toBe('one two three');
      expect(chunks.slice(1).every((c) => c.append === true)).toBe(true);
      expect(chunks.at(-1)?.lastChunk).toBe(true);
    });

    it('input-required ends the stream; a follow-up message/stream resumes the task', async () => {
      const { client } = await serve(echoAgent);
      const first = await collect(client.streamMessage({ message: userMessage('ask:color?') }));
      const task = firstTask(first);
      expect(last(first)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'input-required' } });
      const second = await collect(client.streamMessage({ message: userMessage('blue', { taskId: task.id }) }));
      const snapshot = firstTask(second);
      expect(snapshot.id).toBe(task.id);
      expect(textParts(snapshot.history?.at(-1)?.parts)).toBe('blue');
      expect(last(second)).toMatchObject({ final: true, status: { state: 'completed' } });
      if (eventIds) expect(Number(second[0]?.id)).toBeGreaterThan(Number(first.at(-1)?.id));
    });

    it('closes the stream when the turn ends with the task still working', async () => {
      const { client } = await serve(async (turn) => turn.working('still going'));
      const items = await collect(client.streamMessage({ message: userMessage('x') }));
      expect(kinds(items)).toEqual(['task', 'status-update', 'status-update']);
      expect(last(items)).toMatchObject({ final: false, status: { state: 'working' } });
    });

    it('a client that disconnects does not cancel the task', async () => {
      const held = gate();
      const { client } = await serve(async (turn) => {
        await turn.working();
        await held.opened;
        await turn.complete('survived');
      });
      const stream = opened(await client.streamMessage({ message: userMessage('x') }));
      const first = await stream.next();
      const task = firstTask(first === undefined ? [] : [first]);
      stream.close();
      held.open();
      const done = await waitForState(client, task.id, 'completed');
      expect(textParts(done.status.message?.parts)).toBe('survived');
    });

    itWithEventIds('sends heartbeats on an idle stream', async () => {
      const { client } = await serve(
        async (turn) => {
          await turn.working();
          await sleep(250, turn.signal);
          await turn.complete();
        },
        { heartbeatIntervalMs: 50 },
      );
      const stream = opened(await client.streamMessage({ message: userMessage('x') }));
      const items = await stream.rest();
      expect(stream.comments).toBeGreaterThan(0);
      expect(last(items)).toMatchObject({ final: true, status: { state: 'completed' } });
    });

    itWithEventIds(
      'a reconnect with Last-Event-ID resumes after that event, without gaps or duplicates or a second turn',
      async () => {
        const held = gate();
        let turns = 0;
        const { client } = await serve(async (turn) => {
          turns++;
          await turn.artifact({ artifactId: 'a', text: 'first', append: false });
          await held.opened;
          await turn.artifact({ artifactId: 'a', text: ' second', append: true });
          await turn.artifact({ artifactId: 'a', text: ' third', append: true, lastChunk: true });
          await turn.complete();
        });
        const params = { message: userMessage('go') };
        const stream = opened(await client.streamMessage(params));
        const seen: StreamItem[] = [];
        for (let next = await stream.next(); next !== undefined; next = await stream.next()) {
          seen.push(next);
          if (next.item.kind === 'artifact-update') break;
        }
        stream.close();
        const lastId = seen.at(-1)?.id as string;
        const taskId = firstTask(seen).id;
        held.open();
        const resumed = await collect(client.reconnectMessageStream(params, taskId, lastId));
        const ids = [...seen, ...resumed].map(({ id }) => Number(id));
        expect(new Set(ids).size).toBe(ids.length);
        expect(resumed.every(({ id }) => Number(id) > Number(lastId))).toBe(true);
        const texts = [...seen, ...resumed]
          .filter(({ item }) => item.kind === 'artifact-update')
          .map(({ item }) => textParts((item as TaskArtifactUpdateEvent).artifact.parts));
        expect(texts).toEqual(['first', ' second', ' third']);
        expect(last(resumed)).toMatchObject({ final: true, status: { state: 'completed' } });
        expect(turns).toBe(1);
      },
    );

    itWithEventIds(
      'a reconnect with a Last-Event-ID at the final event answers the task as it stands and closes',
      async () => {
        const { client } = await serve(echoAgent);
        const params = { message: userMessage('done soon') };
        const first = await collect(client.streamMessage(params));
        expect(last(first)).toMatchObject({ final: true });
        const taskId = firstTask(first).id;
        const again = await within(
          5000,
          'the reconnected stream to close',
          collect(client.reconnectMessageStream(params, taskId, first.at(-1)?.id as string)),
        );
        // Issue 14: one Task event (how the task ended), not an empty stream.
        expect(again).toHaveLength(1);
        expect(firstTask(again)).toMatchObject({ id: taskId, status: { state: 'completed' } });
      },
    );
  });

  describe('tasks/resubscribe (§7.9)', () => {
    it('streams the current task, then the remaining events through the final one', async () => {
      const held = gate();
      const { client } = await serve(async (turn) => {
        await turn.working('started');
        await held.opened;
        await turn.artifact({ text: 'result' });
        await turn.complete();
      });
      const sent = asTask(
        ok(await client.sendMessage({ message: userMessage('x'), configuration: { blocking: false } })),
      );
      await waitForState(client, sent.id, 'working');
      const stream = opened(await client.resubscribe({ id: sent.id }));
      held.open();
      const items = await stream.rest();
      const snapshot = firstTask(items);
      expect(snapshot).toMatchObject({ id: sent.id, status: { state: 'working' } });
      expect(snapshot.artifacts ?? []).toEqual([]);
      // After the snapshot: what the agent did since (a working status may or may not be in it yet).
      const later = items.slice(1).filter(({ item }) => !(item.kind === 'status-update' && !item.final));
      expect(kinds(later)).toEqual(['artifact-update', 'status-update']);
      expect(last(items)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
      if (eventIds) expect(items.every(({ id }, i) => i === 0 || Number(id) > Number(items[i - 1]?.id))).toBe(true);
    });

    it('on a task in a final state: 0.3 answers that one Task and closes; 1.0 refuses a terminal task (-32004)', async () => {
      const { client } = await serve(echoAgent);
      const sent = asTask(ok(await client.sendMessage({ message: userMessage('hi') })));
      if (version === '1.0') {
        // §3.1.6 of 1.0: a terminal task has no more events to subscribe to.
        expect(await client.resubscribe({ id: sent.id })).toMatchObject({ ok: false, code: -32004 });
        return;
      }
      const items = await within(5000, 'the stream to close', collect(client.resubscribe({ id: sent.id })));
      expect(items).toHaveLength(1);
      expect(items[0]?.item).toMatchObject({ kind: 'task', id: sent.id, status: { state: 'completed' } });
    });

    /** Asks twice, then completes with an artifact naming the last answer. */
    const interview = async (turn: TurnContext): Promise<void> => {
      if (turn.text === 'start') return turn.requireInput('First question?');
      if (turn.text === 'one') return turn.requireInput('Second question?');
      await turn.artifact({ text: `answers ended with ${turn.text}` });
      await turn.complete();
    };
    const statesOf = (items: StreamItem[]): string[] =>
      items.flatMap(({ item }) => (item.kind === 'status-update' ? [item.status.state] : []));

    it('on a task waiting in input-required: 0.3 answers that one Task and closes; 1.0 stays open through the next turns until the task is terminal (§3.1.6)', async () => {
      const { client } = await serve(interview);
      const sent = asTask(ok(await client.sendMessage({ message: userMessage('start') })));
      expect(sent.status.state).toBe('input-required');
      if (version === '0.3') {
        // §7.9 reconnects a stream whose cycle ended at the `final` input-required status (§7.2.2).
        const items = await within(5000, 'the stream to close', collect(client.resubscribe({ id: sent.id })));
        expect(items).toHaveLength(1);
        expect(items[0]?.item).toMatchObject({ kind: 'task', id: sent.id, status: { state: 'input-required' } });
        return;
      }
      const stream = opened(await client.resubscribe({ id: sent.id }));
      expect((await stream.next())?.item).toMatchObject({
        kind: 'task',
        id: sent.id,
        status: { state: 'input-required' },
      });
      // The subscriber answers both questions; each answer is a turn its stream follows.
      expect(
        asTask(ok(await client.sendMessage({ message: userMessage('one', { taskId: sent.id }) }))).status.state,
      ).toBe('input-required');
      expect(
        asTask(ok(await client.sendMessage({ message: userMessage('two', { taskId: sent.id }) }))).status.state,
      ).toBe('completed');
      const items = await within(5000, 'the stream to close', stream.rest());
      expect(statesOf(items)).toEqual(['working', 'input-required', 'working', 'completed']);
      const artifact = items.find(({ item }) => item.kind === 'artifact-update')?.item as TaskArtifactUpdateEvent;
      expect(textParts(artifact.artifact.parts)).toBe('answers ended with two');
      expect(items.every(({ item }) => item.kind !== 'task')).toBe(true);
      expect(last(items)).toMatchObject({ kind: 'status-update', status: { state: 'completed' } });
    });

    itWithEventIds(
      'with Last-Event-ID at the last event of a task waiting for input: the task as it stands; 0.3 then closes, 1.0 follows the answer to the end',
      async () => {
        const { client } = await serve(interview);
        const asked = await collect(client.streamMessage({ message: userMessage('start') }));
        const taskId = firstTask(asked).id;
        expect(last(asked)).toMatchObject({ kind: 'status-update', status: { state: 'input-required' } });
        const lastId = asked.at(-1)?.id as string;
        const stream = opened(await client.resubscribe({ id: taskId }, lastId));
        const first = await stream.next();
        expect(first?.item).toMatchObject({ kind: 'task', id: taskId, status: { state: 'input-required' } });
        if (version === '0.3') {
          expect(await within(5000, 'the stream to close', stream.rest())).toEqual([]);
          return;
        }
        ok(await client.sendMessage({ message: userMessage('one', { taskId }) }));
        ok(await client.sendMessage({ message: userMessage('two', { taskId }) }));
        const rest = await within(5000, 'the stream to close', stream.rest());
        expect(statesOf(rest)).toEqual(['working', 'input-required', 'working', 'completed']);
        expect(rest.every(({ id }) => Number(id) > Number(lastId))).toBe(true);
      },
    );

    it('a subscription to a working task: 0.3 ends at input-required; 1.0 goes on to the terminal state', async () => {
      const held = gate();
      const { client } = await serve(async (turn) => {
        if (turn.previousState === 'input-required') return turn.complete('thanks');
        await turn.working('thinking');
        await held.opened;
        await turn.requireInput('Which one?');
      });
      const sent = asTask(
        ok(await client.sendMessage({ message: userMessage('x'), configuration: { blocking: false } })),
      );
      await waitForState(client, sent.id, 'working');
      const stream = opened(await client.resubscribe({ id: sent.id }));
      expect((await stream.next())?.item).toMatchObject({ kind: 'task', status: { state: 'working' } });
      held.open();
      if (version === '0.3') {
        const items = await within(5000, 'the stream to close', stream.rest());
        expect(last(items)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'input-required' } });
        return;
      }
      // Read up to the question before answering it, so the answer's turn comes after it.
      let item = await stream.next();
      while (
        item !== undefined &&
        !(item.item.kind === 'status-update' && item.item.status.state === 'input-required')
      ) {
        item = await stream.next();
      }
      expect(item?.item).toMatchObject({ kind: 'status-update', status: { state: 'input-required' } });
      ok(await client.sendMessage({ message: userMessage('the blue one', { taskId: sent.id }) }));
      const rest = await within(5000, 'the stream to close', stream.rest());
      expect(statesOf(rest)).toEqual(['working', 'completed']);
    });

    itWithEventIds('with Last-Event-ID, sends only the later events', async () => {
      const { client } = await serve(echoAgent);
      const streamed = await collect(client.streamMessage({ message: userMessage('a b') }));
      const taskId = firstTask(streamed).id;
      const after = streamed[2]?.id as string;
      const items = await collect(client.resubscribe({ id: taskId }, after));
      const expected = streamed.filter(({ id }) => Number(id) > Number(after));
      expect(expected.length).toBeGreaterThan(0);
      expect(items.map(({ id }) => id)).toEqual(expected.map(({ id }) => id));
      expect(items.map(({ item }) => item)).toEqual(expected.map(({ item }) => item));
      expect(last(items)).toMatchObject({ final: true });
    });

    it('a cancel ends every open stream of the task with the canceled final event', async () => {
      const { client } = await serve(async (turn) => {
        await turn.working();
        await waitForAbort(turn.signal);
      });
      const sent = asTask(
        ok(await client.sendMessage({ message: userMessage('x'), configuration: { blocking: false } })),
      );
      await waitForState(client, sent.id, 'working');
      // Each is open once its first event (the snapshot) has arrived.
      const streams = [
        opened(await client.resubscribe({ id: sent.id })),
        opened(await client.resubscribe({ id: sent.id })),
      ];
      ok(await client.cancelTask({ id: sent.id }));
      for (const items of await Promise.all(streams.map((s) => s.rest()))) {
        expect(items[0]?.item.kind).toBe('task');
        expect(last(items)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'canceled' } });
      }
    });
  });
}
