/**
 * Issue 23, items 1, 2, 5 and 6: A2A 1.0 as an independent conformance client and the clients it
 * models see it, over real HTTP, on every store, both bindings and both versions:
 * - a JSON-RPC endpoint (and REST routes) reached with a trailing slash;
 * - `application/json` on HTTP+JSON answers, errors included, unless `Accept` names
 *   `application/a2a+json`; both accepted on requests;
 * - an executor's direct Message answer reaching the client as a Message on every binding;
 * - `messageIdReuse: 'ignore'`: one messageId for several requests, each one new.
 */

import type { Message, Task } from '@fastify-a2a/core';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { a2aPlugin } from '../../src/index.js';
import { listen, nextId, testCard, textParts, userMessage } from '../helpers.js';
import { protocolClient } from '../protocol/client.js';
import { BINDINGS, issueStores, serveOn, VERSIONS } from './issue-23-stores.js';

/** A 0.3 message/send or 1.0 SendMessage JSON-RPC body with one text part. */
function rpcSend(version: '0.3' | '1.0', text: string, messageId = nextId('m')): Record<string, unknown> {
  return version === '0.3'
    ? {
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { kind: 'message', role: 'user', messageId, parts: [{ kind: 'text', text }] } },
      }
    : {
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { role: 'ROLE_USER', messageId, parts: [{ text }] } },
      };
}

/** The HTTP+JSON send body and path of a version (0.3 waits only when asked: blocking is a proto3 false). */
function restSend(version: '0.3' | '1.0', text: string): { path: string; body: Record<string, unknown> } {
  return version === '0.3'
    ? {
        path: '/v1/message:send',
        body: {
          message: { role: 'ROLE_USER', messageId: nextId('m'), content: [{ text }] },
          configuration: { blocking: true },
        },
      }
    : { path: '/message:send', body: { message: { role: 'ROLE_USER', messageId: nextId('m'), parts: [{ text }] } } };
}

const versionHeaders = (version: '0.3' | '1.0'): Record<string, string> =>
  version === '1.0' ? { 'a2a-version': '1.0' } : {};

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

const echo = async (turn: { text: string; complete(msg: string): Promise<void> }) =>
  turn.complete(`echo: ${turn.text}`);

describe('issue 23, item 1, with the application’s router ignoring trailing slashes', () => {
  it.each([
    ['ignoreTrailingSlash', { ignoreTrailingSlash: true }],
    ['routerOptions.ignoreTrailingSlash', { routerOptions: { ignoreTrailingSlash: true } }],
  ])('%s: registers without a duplicate route, and …/a2a/ still answers', async (_name, serverOptions) => {
    const app = Fastify(serverOptions);
    try {
      await app.register(a2aPlugin, { agentCard: testCard, executor: echo, prefix: '/agents/echo' });
      const base = await listen(app);
      const res = await post(`${base}/agents/echo/a2a/`, rpcSend('1.0', 'slash'), { 'a2a-version': '1.0' });
      expect(((await res.json()) as { result: { task: unknown } }).result.task).toBeDefined();
      const rest = await post(`${base}/agents/echo/message:send/`, restSend('1.0', 'x').body, { 'a2a-version': '1.0' });
      expect(rest.status).toBe(200);
    } finally {
      await app.close();
    }
  });
});

for (const store of issueStores('a2a-issue23-interop')) {
  describe(`issue 23 on ${store.name}`, () => {
    describe('item 1: a trailing slash on the endpoint', () => {
      it.each(VERSIONS)('JSON-RPC %s at …/a2a/ answers as at …/a2a (it was Fastify’s own 404)', async (version) => {
        const { base } = await serveOn(store, echo, { prefix: '/agents/echo' });
        const res = await post(`${base}/agents/echo/a2a/`, rpcSend(version, 'slash'), versionHeaders(version));
        expect(res.status).toBe(200);
        const body = (await res.json()) as { result: Record<string, unknown> };
        const task = (version === '0.3' ? body.result : body.result.task) as { status: { state: string } };
        expect(task.status.state).toBe(version === '0.3' ? 'completed' : 'TASK_STATE_COMPLETED');
        // An unknown method at the slashed URL is a JSON-RPC error a client can read, not a 404.
        const unknown = await post(`${base}/agents/echo/a2a/`, { jsonrpc: '2.0', id: 2, method: 'nope' });
        expect(((await unknown.json()) as { error: { code: number } }).error.code).toBe(-32601);
      });

      it.each(VERSIONS)('HTTP+JSON %s: send and get with a trailing slash', async (version) => {
        const { base } = await serveOn(store, echo);
        const { path, body } = restSend(version, 'slash');
        const sent = await post(`${base}${path}/`, body, versionHeaders(version));
        expect(sent.status).toBe(200);
        const task = ((await sent.json()) as { task: { id: string } }).task;
        const tasks = version === '0.3' ? '/v1/tasks' : '/tasks';
        const got = await fetch(`${base}${tasks}/${task.id}/`, { headers: versionHeaders(version) });
        expect(got.status).toBe(200);
        expect(((await got.json()) as { id: string }).id).toBe(task.id);
        if (version === '1.0') {
          const list = await fetch(`${base}/tasks/`, { headers: versionHeaders(version) });
          expect(((await list.json()) as { tasks: { id: string }[] }).tasks.map((t) => t.id)).toContain(task.id);
        }
      });
    });

    describe('item 2: the Content-Type of HTTP+JSON answers', () => {
      it('1.0 answers application/json, errors included, and application/a2a+json when Accept asks for it', async () => {
        const { base } = await serveOn(store, echo);
        const v1 = { 'a2a-version': '1.0' };
        const { body } = restSend('1.0', 'types');
        const sent = await post(`${base}/message:send`, body, v1);
        expect(sent.headers.get('content-type')).toBe('application/json; charset=utf-8');
        const missing = await fetch(`${base}/tasks/no-such-task`, { headers: v1 });
        expect(missing.status).toBe(404);
        expect(missing.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(((await missing.json()) as { error: { status: string } }).error.status).toBe('NOT_FOUND');
        const asked = await fetch(`${base}/tasks/no-such-task`, {
          headers: { ...v1, accept: 'application/a2a+json, application/json;q=0.9' },
        });
        expect(asked.headers.get('content-type')).toBe('application/a2a+json; charset=utf-8');
        // A request in application/a2a+json is read as JSON.
        const typed = await post(`${base}/message:send`, restSend('1.0', 'typed').body, {
          ...v1,
          'content-type': 'application/a2a+json',
        });
        expect(typed.status).toBe(200);
        expect(typed.headers.get('content-type')).toBe('application/json; charset=utf-8');
      });

      it.each(BINDINGS)('%s answers application/json for 0.3 and 1.0 alike', async (binding) => {
        const { base } = await serveOn(store, echo);
        for (const version of VERSIONS) {
          const res =
            binding === 'JSONRPC'
              ? await post(`${base}/a2a`, rpcSend(version, 'x'), versionHeaders(version))
              : await post(
                  `${base}${restSend(version, 'x').path}`,
                  restSend(version, 'x').body,
                  versionHeaders(version),
                );
          expect(res.headers.get('content-type'), `${binding} ${version}`).toBe('application/json; charset=utf-8');
        }
      });
    });

    describe('item 5: an executor answering with a Message', () => {
      const replying = async (turn: { text: string; reply(msg: string): Promise<void> }) =>
        turn.reply(`reply: ${turn.text}`);
      const workingThenReplying = async (turn: {
        text: string;
        working(msg?: string): Promise<void>;
        reply(msg: string): Promise<void>;
      }) => {
        await turn.working('thinking');
        await turn.reply(`reply: ${turn.text}`);
      };
      for (const binding of BINDINGS) {
        for (const version of VERSIONS) {
          it(`${binding} ${version}: a blocking send answers the Message, at once or after a working update`, async () => {
            for (const executor of [replying, workingThenReplying]) {
              const { base } = await serveOn(store, executor);
              const client = protocolClient(binding, base, version);
              const outcome = await client.sendMessage({
                message: userMessage('hi'),
                configuration: { blocking: true },
              });
              if (!outcome.ok) throw new Error(`${outcome.code}: ${outcome.message}`);
              const result = outcome.result as Message | Task;
              expect(result.kind, `${executor === replying ? 'at once' : 'after working'}`).toBe('message');
              expect(textParts((result as Message).parts)).toBe('reply: hi');
            }
          });
        }
      }

      it('1.0 HTTP+JSON with returnImmediately unset (the default: blocking) answers {"message"}', async () => {
        const { base } = await serveOn(store, workingThenReplying);
        const res = await post(`${base}/message:send`, restSend('1.0', 'raw').body, { 'a2a-version': '1.0' });
        const body = (await res.json()) as { message?: { role: string }; task?: unknown };
        expect(body.task).toBeUndefined();
        expect(body.message?.role).toBe('ROLE_AGENT');
      });
    });

    describe("item 6: messageIdReuse: 'ignore'", () => {
      for (const binding of BINDINGS) {
        for (const version of VERSIONS) {
          it(`${binding} ${version}: one messageId sent for three requests starts three tasks, the same text included`, async () => {
            const texts: string[] = [];
            const { base } = await serveOn(
              store,
              async (turn) => {
                texts.push(turn.text);
                await turn.complete(`echo: ${turn.text}`);
              },
              { messageIdReuse: 'ignore' },
            );
            const client = protocolClient(binding, base, version);
            const messageId = `session-${nextId('s')}`;
            const ids: string[] = [];
            for (const text of ['first', 'second', 'second']) {
              const outcome = await client.sendMessage({
                message: userMessage(text, { messageId }),
                configuration: { blocking: true },
              });
              if (!outcome.ok) throw new Error(`${outcome.code}: ${outcome.message}`);
              const task = outcome.result as Task;
              expect(task.status.state).toBe('completed');
              expect(textParts(task.status.message?.parts)).toBe(`echo: ${text}`);
              ids.push(task.id);
              // The first keeps the client's id; a reused one is kept as <id>#<uuid> (the index holds one per id).
              const kept = task.history?.[0]?.messageId ?? '';
              expect(kept === messageId || kept.startsWith(`${messageId}#`)).toBe(true);
            }
            expect(new Set(ids).size).toBe(3);
            expect(texts).toEqual(['first', 'second', 'second']);
          });
        }
      }

      it("the default ('reject') still answers a retry with its task and refuses other content (-32602)", async () => {
        let runs = 0;
        const { base } = await serveOn(store, async (turn) => {
          runs++;
          await turn.complete('done');
        });
        const client = protocolClient('JSONRPC', base, '1.0');
        const message = userMessage('same');
        const first = await client.sendMessage({ message });
        const retry = await client.sendMessage({ message });
        if (!first.ok || !retry.ok) throw new Error('expected results');
        expect((retry.result as Task).id).toBe((first.result as Task).id);
        const other = await client.sendMessage({ message: { ...message, parts: [{ kind: 'text', text: 'other' }] } });
        expect(other).toMatchObject({ ok: false, code: -32602 });
        expect(runs).toBe(1);
      });
    });
  });
}
