/** The protocol suite's scenarios for ListTasks and ownership between principals (see ./suite.ts). */

import type { AgentExecutorLike, ListTasksParams, ListTasksResult } from '@fastify-a2a/core';
import { describe, expect, it } from 'vitest';
import { echoAgent } from '../../../../test-support/agents.js';
import { bearerTokens } from '../../src/index.js';
import { asTask, nextId, textParts, userMessage } from '../helpers.js';
import { startWebhookReceiver } from '../push/receiver.js';
import { type Outcome, ok, type ProtocolClient, type StreamItem, type StreamOutcome, waitForState } from './client.js';
import { collect, firstTask, gate, type SuiteContext } from './suite-context.js';

export function listAndOwnershipScenarios({
  binding,
  version,
  itWithEventIds,
  clientOf,
  cleanups,
  serve,
}: SuiteContext): void {
  // ListTasks: A2A 1.0 on both bindings; 0.3 over HTTP+JSON only (`GET /v1/tasks`).
  if (!(binding === 'JSONRPC' && version === '0.3')) {
    describe('ListTasks', () => {
      // Stores are shared between scenarios of a file (SQLite, Postgres): each scenario lists
      // only a context of its own.
      const list = (client: ProtocolClient, params: ListTasksParams) =>
        client.listTasks(params) as Promise<Outcome<ListTasksResult>>;

      it('pages through a context’s tasks newest first, with a token that stays right while tasks are created', async () => {
        const { client } = await serve(async (turn) => turn.complete(`done ${turn.text}`));
        const contextId = nextId('ctx-list');
        const ids: string[] = [];
        // Tasks whose status timestamps fall in one millisecond are listed by id (the tie-break),
        // not in creation order: a pause between sends keeps every timestamp distinct, so the
        // expected order is creation order (a full run once saw two sends finish in one ms).
        const pause = () => new Promise((resolve) => setTimeout(resolve, 3));
        for (let i = 0; i < 5; i++) {
          ids.push(asTask(ok(await client.sendMessage({ message: userMessage(`t${i}`, { contextId }) }))).id);
          await pause();
        }
        const first = ok(await list(client, { contextId, pageSize: 2 }));
        expect(first.totalSize).toBe(5);
        expect(first.pageSize).toBe(2);
        expect(first.nextPageToken).not.toBe('');
        // A task created between page reads comes before the pages already read: none is skipped or repeated.
        const later = asTask(ok(await client.sendMessage({ message: userMessage('later', { contextId }) })));
        const seen = first.tasks.map((t) => t.id);
        let token = first.nextPageToken;
        while (token !== '') {
          const page = ok(await list(client, { contextId, pageSize: 2, pageToken: token }));
          seen.push(...page.tasks.map((t) => t.id));
          token = page.nextPageToken;
        }
        expect(seen).toEqual([...ids].reverse());
        const all = ok(await list(client, { contextId }));
        expect(all.tasks.map((t) => t.id)).toEqual([later.id, ...[...ids].reverse()]);
        expect(all.totalSize).toBe(6);
        expect(all.nextPageToken).toBe('');
      });

      it('filters by status; trims history by historyLength; leaves artifacts out unless includeArtifacts', async () => {
        const { client } = await serve(async (turn) => {
          await turn.artifact({ name: 'out', text: turn.text });
          if (turn.text.startsWith('ask')) await turn.requireInput('Which one?');
          else await turn.complete();
        });
        const contextId = nextId('ctx-list');
        const asked = asTask(ok(await client.sendMessage({ message: userMessage('ask me', { contextId }) })));
        ok(await client.sendMessage({ message: userMessage('just do it', { contextId }) }));
        const waiting = ok(await list(client, { contextId, status: 'input-required' }));
        expect(waiting.tasks.map((t) => t.id)).toEqual([asked.id]);
        expect(waiting.totalSize).toBe(1);
        expect(waiting.tasks[0]?.artifacts).toBeUndefined();
        const full = ok(await list(client, { contextId, includeArtifacts: true, historyLength: 1 }));
        expect(full.tasks).toHaveLength(2);
        for (const task of full.tasks) {
          expect(task.artifacts?.[0]?.name).toBe('out');
          expect(task.history).toHaveLength(1);
        }
        const none = ok(await list(client, { contextId, historyLength: 0 }));
        for (const task of none.tasks) expect(task.history ?? []).toEqual([]);
      });

      it('refuses a page token it did not issue, and a page size over 100 (-32602)', async () => {
        const { client } = await serve(echoAgent);
        expect(await list(client, { pageToken: 'not-a-token' })).toMatchObject({ ok: false, code: -32602 });
        expect(await list(client, { pageSize: 101 })).toMatchObject({ ok: false, code: -32602 });
      });
    });
  }

  // Issue 12, ownership: a task and its context belong to the principal that created them.
  // Another principal is answered exactly as for an id that never existed (§8.2 -32001), so a
  // guessed or leaked id tells nothing; the message-id index is scoped to the caller.
  describe('ownership: two principals on one agent', () => {
    async function serveTwo(executor: AgentExecutorLike = echoAgent) {
      const { base } = await serve(executor, { authenticate: bearerTokens({ 'tok-a': 'alice', 'tok-b': 'bob' }) });
      const as = (token: string) => clientOf(base, { authorization: `Bearer ${token}` });
      return { alice: as('tok-a'), bob: as('tok-b') };
    }

    /** The failure with the task id blanked out, to compare with the one for an id that never existed. */
    function blanked(outcome: Outcome<unknown> | StreamOutcome, taskId: string): { code: number; message: string } {
      if (outcome.ok) throw new Error(`expected task not found for ${taskId}, got a result`);
      return { code: outcome.code, message: outcome.message.replaceAll(taskId, '<id>') };
    }

    /** Every task id a stream's items name. */
    const taskIdsOf = (items: StreamItem[]): Set<string> =>
      new Set(items.map(({ item }) => (item.kind === 'task' ? item.id : (item.taskId ?? ''))));

    it('get, cancel and subscribe on another principal’s task answer as for an id that never existed', async () => {
      const held = gate();
      const { alice, bob } = await serveTwo(async (turn) => {
        await turn.working('on it');
        await held.opened;
        await turn.complete('done');
      });
      const task = asTask(
        ok(await alice.sendMessage({ message: userMessage('mine'), configuration: { blocking: false } })),
      );
      const never = nextId('never');
      const notFound = blanked(await bob.getTask({ id: never }), never);
      expect(notFound.code).toBe(-32001);
      expect(blanked(await bob.getTask({ id: task.id }), task.id)).toEqual(notFound);
      expect(blanked(await bob.cancelTask({ id: task.id }), task.id)).toEqual(
        blanked(await bob.cancelTask({ id: never }), never),
      );
      expect(blanked(await bob.resubscribe({ id: task.id }), task.id)).toEqual(
        blanked(await bob.resubscribe({ id: never }), never),
      );
      // Bob's cancel did nothing: Alice's turn runs on to its end.
      held.open();
      const done = await waitForState(alice, task.id, 'completed');
      expect(textParts(done.status.message?.parts)).toBe('done');
    });

    it('push notification configs of another principal’s task: set, get, list and delete answer as for an id that never existed', async () => {
      const receiver = await startWebhookReceiver();
      cleanups.push(() => receiver.close());
      const { base } = await serve(echoAgent, {
        authenticate: bearerTokens({ 'tok-a': 'alice', 'tok-b': 'bob' }),
        pushNotifications: true,
        pushAllowedCidrs: ['127.0.0.1/32'],
      });
      const as = (token: string) => clientOf(base, { authorization: `Bearer ${token}` });
      const [alice, bob] = [as('tok-a'), as('tok-b')];
      const task = asTask(ok(await alice.sendMessage({ message: userMessage('mine') })));
      ok(await alice.pushConfig('set', task.id, { id: 'c-1', url: receiver.url, token: 'alices' }));
      const never = nextId('never');
      for (const operation of ['set', 'get', 'list', 'delete'] as const) {
        const config = operation === 'set' ? { id: 'c-1', url: `${receiver.url}?bob` } : undefined;
        const answer = await bob.pushConfig(operation, task.id, config, 'c-1');
        expect(answer, operation).toMatchObject({ ok: false, code: -32001 });
        expect(blanked(answer, task.id), operation).toEqual(
          blanked(await bob.pushConfig(operation, never, config, 'c-1'), never),
        );
      }
      // Alice's config is as she set it.
      const listed = ok(await alice.pushConfig('list', task.id)) as unknown;
      expect(JSON.stringify(listed)).toContain(receiver.url);
      expect(JSON.stringify(listed)).not.toContain('?bob');
    });

    it('a follow-up message on another principal’s task is refused as not found and leaves the task untouched', async () => {
      const { alice, bob } = await serveTwo();
      const asked = asTask(ok(await alice.sendMessage({ message: userMessage('ask:Your name?') })));
      expect(asked.status.state).toBe('input-required');
      const answer = await bob.sendMessage({ message: userMessage('Mallory', { taskId: asked.id }) });
      expect(answer).toMatchObject({ ok: false, code: -32001 });
      const streamed = await bob.streamMessage({ message: userMessage('Mallory', { taskId: asked.id }) });
      expect(streamed).toMatchObject({ ok: false, code: -32001 });
      const still = ok(await alice.getTask({ id: asked.id }));
      expect(still.status.state).toBe('input-required');
      expect(still.history?.map((m) => textParts(m.parts))).toEqual(['ask:Your name?', 'Your name?']);
      // Alice herself answers as before.
      const answered = asTask(ok(await alice.sendMessage({ message: userMessage('Ada', { taskId: asked.id }) })));
      expect(textParts(answered.artifacts?.[0]?.parts)).toBe('You answered: Ada');
    });

    it('a new task in another principal’s context is refused (-32602); one’s own context takes more tasks', async () => {
      const { alice, bob } = await serveTwo();
      const first = asTask(ok(await alice.sendMessage({ message: userMessage('one') })));
      const intruding = await bob.sendMessage({ message: userMessage('two', { contextId: first.contextId }) });
      expect(intruding).toMatchObject({ ok: false, code: -32602 });
      const second = asTask(
        ok(await alice.sendMessage({ message: userMessage('two', { contextId: first.contextId }) })),
      );
      expect(second.contextId).toBe(first.contextId);
      expect(second.id).not.toBe(first.id);
    });

    it('a messageId another principal used starts a task of one’s own; the same caller’s retry is idempotent only with the same content', async () => {
      const { alice, bob } = await serveTwo();
      const original = userMessage('secret plans');
      const alices = asTask(ok(await alice.sendMessage({ message: original })));
      // Bob, reusing the id (and even the content), never gets Alice's task.
      const bobs = asTask(ok(await bob.sendMessage({ message: { ...original } })));
      expect(bobs.id).not.toBe(alices.id);
      expect(bobs.contextId).not.toBe(alices.contextId);
      expect(ok(await bob.getTask({ id: bobs.id })).history?.[0]?.messageId).toBe(original.messageId);
      // Alice's retry with the same content: her original task, no second one.
      expect(asTask(ok(await alice.sendMessage({ message: { ...original } }))).id).toBe(alices.id);
      // The same id with other content is an idempotency key reused: -32602, naming the id.
      const reused = await alice.sendMessage({
        message: { ...original, parts: [{ kind: 'text', text: 'other plans' }] },
      });
      expect(reused).toMatchObject({ ok: false, code: -32602 });
      if (!reused.ok) expect(reused.message).toContain(original.messageId);
    });

    itWithEventIds(
      'reconnecting to another principal’s message stream never yields that principal’s events',
      async () => {
        const { alice, bob } = await serveTwo();
        const params = { message: userMessage('streamed') };
        const items = await collect(alice.streamMessage(params));
        const taskId = firstTask(items).id;
        const again = await bob.reconnectMessageStream({ message: { ...params.message } }, taskId, '0');
        if (again.ok) {
          // JSON-RPC re-sends the message: for Bob it is a message of his own, on a task of his own.
          const seen = await again.stream.rest();
          expect(seen.length).toBeGreaterThan(0);
          expect(taskIdsOf(seen).has(taskId)).toBe(false);
        } else {
          expect(again.code).toBe(-32001);
        }
      },
    );

    if (!(binding === 'JSONRPC' && version === '0.3')) {
      it('ListTasks shows only the caller’s own tasks', async () => {
        const { alice, bob } = await serveTwo();
        const contextId = nextId('ctx-owned');
        const alices = asTask(ok(await alice.sendMessage({ message: userMessage('a', { contextId }) })));
        const bobs = asTask(ok(await bob.sendMessage({ message: userMessage('b') })));
        const list = async (client: ProtocolClient, params: ListTasksParams) =>
          ok(await (client.listTasks(params) as Promise<Outcome<ListTasksResult>>));
        expect((await list(bob, { contextId })).tasks).toEqual([]);
        expect((await list(bob, { contextId })).totalSize).toBe(0);
        const bobsAll = (await list(bob, { pageSize: 100 })).tasks.map((t) => t.id);
        expect(bobsAll).toContain(bobs.id);
        expect(bobsAll).not.toContain(alices.id);
        expect((await list(alice, { contextId })).tasks.map((t) => t.id)).toEqual([alices.id]);
      });
    }
  });
}
