/**
 * Issue 23 (13): the 1.0 `/{tenant}/…` routes (and the JSON-RPC `tenant` field) accepted any tenant
 * and kept nothing apart. A tenant now isolates tasks, contexts, push configs and listing: a task of
 * tenant A is "not found" for tenant B (and for calls naming no tenant), as for another principal.
 * The `tenants` option refuses tenants (`false`) or checks each one (a function). Every store, both
 * bindings; tenants are A2A 1.0's.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { type A2APluginOptions, a2aPlugin } from '../../src/index.js';
import { nextId, testCard } from '../helpers.js';
import { issueStoreUrls, serveAtUrl } from './issue-23-stores.js';

const stores = issueStoreUrls('a2a_tenants');

async function serve(store: string, options: Partial<A2APluginOptions> = {}): Promise<string> {
  const { base } = await serveAtUrl(store, {
    pushNotifications: true,
    // The webhook host below "resolves" to a public address: no DNS in tests.
    pushResolver: async () => [{ address: '93.184.216.34' }],
    executor: async (turn) => {
      if (turn.text === 'ask') await turn.requireInput('Which one?');
      else await turn.complete(`tenant ${turn.caller.tenant ?? 'none'}`);
    },
    ...options,
  });
  return base;
}

// biome-ignore lint/suspicious/noExplicitAny: wire JSON, checked by the assertions
type Wire = any;
type Answer = { ok: true; result: Wire } | { ok: false; status: number; code?: number; message: string };

/** The 1.0 operations a tenant test needs, as one binding spells them; `tenant` undefined: none. */
interface TenantClient {
  call(operation: string, params: Record<string, unknown>): Promise<Answer>;
}

function jsonRpcClient(base: string, tenant: string | undefined): TenantClient {
  return {
    async call(operation, params) {
      const response = await fetch(`${base}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: operation,
          params: tenant === undefined ? params : { tenant, ...params },
        }),
      });
      const body = (await response.json()) as Wire;
      return body.error === undefined
        ? { ok: true, result: body.result }
        : { ok: false, status: response.status, code: body.error.code, message: body.error.message };
    },
  };
}

/** HTTP+JSON: `/{tenant}/…` when there is a tenant. */
function restClient(base: string, tenant: string | undefined): TenantClient {
  const root = tenant === undefined ? base : `${base}/${encodeURIComponent(tenant)}`;
  const routes: Record<string, (p: Wire) => { method: string; path: string; body?: unknown }> = {
    SendMessage: (p) => ({ method: 'POST', path: '/message:send', body: p }),
    GetTask: (p) => ({ method: 'GET', path: `/tasks/${p.id}` }),
    ListTasks: () => ({ method: 'GET', path: '/tasks' }),
    CancelTask: (p) => ({ method: 'POST', path: `/tasks/${p.id}:cancel`, body: {} }),
    CreateTaskPushNotificationConfig: (p) => ({
      method: 'POST',
      path: `/tasks/${p.taskId}/pushNotificationConfigs`,
      body: p,
    }),
    ListTaskPushNotificationConfigs: (p) => ({ method: 'GET', path: `/tasks/${p.taskId}/pushNotificationConfigs` }),
  };
  return {
    async call(operation, params) {
      const route = (routes[operation] as (p: Wire) => { method: string; path: string; body?: unknown })(params);
      const response = await fetch(`${root}${route.path}`, {
        method: route.method,
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        ...(route.body === undefined ? {} : { body: JSON.stringify(route.body) }),
      });
      const body = (await response.json()) as Wire;
      return response.ok
        ? { ok: true, result: body }
        : { ok: false, status: response.status, message: body.error?.message ?? JSON.stringify(body) };
    },
  };
}

const bindings = [
  { name: 'JSONRPC', client: jsonRpcClient, notFound: { code: -32001 }, invalid: { code: -32602 } },
  { name: 'HTTP+JSON', client: restClient, notFound: { status: 404 }, invalid: { status: 400 } },
] as const;

function ok(answer: Answer): Wire {
  if (!answer.ok) throw new Error(`expected a result, got ${answer.status} ${answer.code}: ${answer.message}`);
  return answer.result;
}

function message(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { message: { messageId: nextId('msg'), role: 'ROLE_USER', parts: [{ text }], ...extra } };
}

const WEBHOOK = { url: 'https://hooks.example.com/a2a', token: 'tok' };

describe.each(stores)('tenants on $name', (store) => {
  describe.each(bindings)('$name', (binding) => {
    it("keeps tenant A's task, context, push configs and listing from tenant B and from tenant-less calls", async () => {
      const base = await serve(store.fresh());
      const a = binding.client(base, 'acme');
      const b = binding.client(base, 'globex');
      const none = binding.client(base, undefined);

      const task = ok(await a.call('SendMessage', message('ask'))).task;
      expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(ok(await a.call('GetTask', { id: task.id })).id).toBe(task.id);

      // Tasks: "not found" from another tenant, and without one, as for another principal.
      for (const other of [b, none]) {
        expect(await other.call('GetTask', { id: task.id })).toMatchObject({ ok: false, ...binding.notFound });
        expect(await other.call('CancelTask', { id: task.id })).toMatchObject({ ok: false, ...binding.notFound });
        // Continuing A's task or joining its context from elsewhere.
        expect(await other.call('SendMessage', message('x', { taskId: task.id }))).toMatchObject({
          ok: false,
          ...binding.notFound,
        });
        expect(await other.call('SendMessage', message('x', { contextId: task.contextId }))).toMatchObject({
          ok: false,
          ...binding.invalid,
        });
      }

      // Listing: each tenant sees its own tasks only.
      const mine = ok(await b.call('SendMessage', message('hello'))).task;
      expect(mine.status.state).toBe('TASK_STATE_COMPLETED');
      expect(ok(await a.call('ListTasks', {})).tasks.map((t: Wire) => t.id)).toEqual([task.id]);
      expect(ok(await b.call('ListTasks', {})).tasks.map((t: Wire) => t.id)).toEqual([mine.id]);
      expect(ok(await none.call('ListTasks', {})).tasks ?? []).toEqual([]);

      // Push configs: tenant A's, unreachable from tenant B.
      ok(await a.call('CreateTaskPushNotificationConfig', { taskId: task.id, id: 'c-1', ...WEBHOOK }));
      expect(ok(await a.call('ListTaskPushNotificationConfigs', { taskId: task.id })).configs).toHaveLength(1);
      expect(await b.call('ListTaskPushNotificationConfigs', { taskId: task.id })).toMatchObject({
        ok: false,
        ...binding.notFound,
      });
      expect(
        await b.call('CreateTaskPushNotificationConfig', { taskId: task.id, id: 'c-2', ...WEBHOOK }),
      ).toMatchObject({ ok: false, ...binding.notFound });

      // The agent sees the tenant; tenant A may go on with its task.
      expect(
        ok(await a.call('SendMessage', message('red', { taskId: task.id }))).task.status.message.parts[0].text,
      ).toBe('tenant acme');
    });

    it('tenants: false refuses a call naming a tenant, saying so; calls without one work', async () => {
      const base = await serve(store.fresh(), { tenants: false });
      const refused = await binding.client(base, 'acme').call('SendMessage', message('hello'));
      expect(refused).toMatchObject({ ok: false, ...binding.invalid });
      expect((refused as { message: string }).message).toMatch(/does not use tenants/);
      expect(ok(await binding.client(base, undefined).call('SendMessage', message('hello'))).task.status.state).toBe(
        'TASK_STATE_COMPLETED',
      );
    });

    it('a tenants function decides which tenants a call may use (PERMISSION_DENIED otherwise)', async () => {
      const seen: string[] = [];
      const base = await serve(store.fresh(), {
        tenants: (tenant) => {
          seen.push(tenant);
          return tenant === 'acme';
        },
      });
      expect(ok(await binding.client(base, 'acme').call('SendMessage', message('hello'))).task.status.state).toBe(
        'TASK_STATE_COMPLETED',
      );
      const refused = await binding.client(base, 'globex').call('SendMessage', message('hello'));
      expect(refused).toMatchObject(
        binding.name === 'JSONRPC' ? { ok: false, code: -32600 } : { ok: false, status: 403 },
      );
      expect((refused as { message: string }).message).toMatch(/may not use tenant "globex"/);
      expect(seen).toEqual(['acme', 'globex']);
    });
  });
});

it('refuses a tenants option that is neither a boolean nor a function at register', async () => {
  const app = Fastify({ logger: false });
  await expect(
    app.register(a2aPlugin, { agentCard: testCard, executor: () => undefined, tenants: 'yes' as never }),
  ).rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/"tenants"/) });
  await app.close();
});
