import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { A2AError, type A2AStore, type AgentCard } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { SqliteStore } from '@fastify-a2a/store-sqlite';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { echoAgent } from '../../../test-support/agents.js';
import { a2aPlugin } from '../src/index.js';
import { buildApp, listen, rpcBody, type TestApp, testCard, userMessage } from './helpers.js';

/** The store with some methods replaced; the others stay the store's own (bound, for its private fields). */
function withOverrides(store: A2AStore, overrides: Partial<A2AStore>): A2AStore {
  return new Proxy(store, {
    get(target, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof A2AStore];
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A GET with a Host header of our choosing (fetch will not send one), as raw HTTP/1.1; the whole response. */
function rawGet(base: string, path: string, host: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    });
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk.toString();
    });
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
}

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

describe('agent card', () => {
  it.each(['/.well-known/agent-card.json', '/.well-known/agent.json', '/a2a'])(
    'GET %s serves the card',
    async (url) => {
      t = await buildApp(echoAgent);
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      const card = res.json() as AgentCard;
      expect(card).toMatchObject({
        name: testCard.name,
        description: testCard.description,
        version: testCard.version,
        protocolVersion: '0.3.0',
        preferredTransport: 'JSONRPC',
        url: 'http://localhost/a2a',
        // §5.6: every interface, the preferred one too (the A2A TCK finds endpoints only here)
        additionalInterfaces: [
          { url: 'http://localhost/a2a', transport: 'JSONRPC' },
          { url: 'http://localhost', transport: 'HTTP+JSON' },
        ],
        capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
        skills: [],
        supportsAuthenticatedExtendedCard: false,
      });
    },
  );

  it('never takes its URL from the Host header; over a real connection it names the address the client reached', async () => {
    t = await buildApp(echoAgent);
    const evil = await t.app.inject({
      method: 'GET',
      url: '/.well-known/agent-card.json',
      headers: { host: 'evil.example' },
    });
    expect(evil.body).not.toContain('evil.example');
    const base = await listen(t.app);
    // fetch cannot forge Host; a raw request can
    const raw = await rawGet(base, '/.well-known/agent-card.json', 'evil.example');
    expect(raw).not.toContain('evil.example');
    const card = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as AgentCard;
    expect(card.url).toBe(`${base}/a2a`);
  });

  it('follows X-Forwarded-Proto and X-Forwarded-Host only when Fastify trusts the proxy (trustProxy)', async () => {
    const headers = { host: 'internal:3000', 'x-forwarded-host': 'agents.example.com', 'x-forwarded-proto': 'https' };
    for (const trustProxy of [true, false]) {
      const app = Fastify({ trustProxy });
      await app.register(a2aPlugin, { agentCard: testCard, executor: echoAgent });
      try {
        const card = (
          await app.inject({ method: 'GET', url: '/.well-known/agent-card.json', headers })
        ).json() as AgentCard;
        expect(card.url).toBe(trustProxy ? 'https://agents.example.com/a2a' : 'http://localhost/a2a');
      } finally {
        await app.close();
      }
    }
  });

  it('uses baseUrl when given and keeps securitySchemes from the application', async () => {
    const app = Fastify();
    await app.register(a2aPlugin, {
      agentCard: {
        ...testCard,
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
        security: [{ bearer: [] }],
      },
      executor: echoAgent,
      store: 'memory:',
      baseUrl: 'https://agents.example.com/',
      prefix: '/agents/echo',
    });
    try {
      const card = (
        await app.inject({ method: 'GET', url: '/agents/echo/.well-known/agent-card.json' })
      ).json() as AgentCard;
      expect(card.url).toBe('https://agents.example.com/agents/echo/a2a');
      // Each scheme in 0.3's shape and, beside it, 1.0's (the served card is read by both).
      expect(card.securitySchemes).toEqual({
        bearer: { type: 'http', scheme: 'bearer', httpAuthSecurityScheme: { scheme: 'bearer' } },
      });
      expect(card.security).toEqual([{ bearer: [] }]);
      expect((card as unknown as Record<string, unknown>).securityRequirements).toEqual([
        { schemes: { bearer: { list: [] } } },
      ]);
    } finally {
      await app.close();
    }
  });
});

describe('fastify.a2a', () => {
  it('gives the application each agent’s runtime and store, for routes of its own', async () => {
    const app = Fastify();
    const storeA = new MemoryStore();
    await app.register(a2aPlugin, { agentCard: testCard, executor: echoAgent, store: storeA, prefix: '/a' });
    // One agent: the shortcuts reach it.
    expect(app.a2a.store).toBe(storeA);
    await app.register(a2aPlugin, { agentCard: { ...testCard, name: 'B' }, executor: echoAgent, prefix: '/b' });
    app.get('/admin/tasks/:id', async (request) => {
      const { id } = request.params as { id: string };
      const record = await app.a2a.get('/a').store.getTask(id);
      return { state: record?.task.status.state ?? null, version: record?.version ?? null };
    });
    try {
      await app.ready();
      expect(app.a2a.list().map((agent) => agent.prefix)).toEqual(['/a', '/b']);
      expect(app.a2a.get('/a').store).toBe(storeA);
      expect(app.a2a.get('/b').card('https://agents.example.com').url).toBe('https://agents.example.com/b/a2a');
      expect(() => app.a2a.store).toThrow(/2 agents are registered \("\/a", "\/b"\); name one/);
      expect(() => app.a2a.get('/c')).toThrow(/no agent under prefix "\/c"/);
      const sent = (
        await app.inject({
          method: 'POST',
          url: '/a/a2a',
          payload: rpcBody('message/send', { message: userMessage('hi') }),
        })
      ).json();
      const admin = await app.inject({ method: 'GET', url: `/admin/tasks/${sent.result.id}` });
      expect(admin.json()).toEqual({ state: 'completed', version: expect.any(Number) });
      const direct = await app.a2a.get('/a').runtime.getTask({ id: sent.result.id });
      expect(direct.status.state).toBe('completed');
    } finally {
      await app.close();
    }
    expect(app.a2a.list()).toEqual([]);
  });
});

describe('health', () => {
  it('is 200 while the store answers and 503 when it does not', async () => {
    t = await buildApp(echoAgent);
    const ok = await t.app.inject({ method: 'GET', url: '/a2a/health' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ status: 'ok' });
    await t.store.close();
    const down = await t.app.inject({ method: 'GET', url: '/a2a/health' });
    expect(down.statusCode).toBe(503);
    expect(down.json()).toEqual({ status: 'unavailable' });
  });

  it('says nothing of why the store failed: the route is unauthenticated, the reason goes to the log', async () => {
    const logs: string[] = [];
    const failing = withOverrides(new MemoryStore(), {
      ping: async () => {
        throw new Error('connect ECONNREFUSED db.internal:5432 (user a2a_admin, database prod)');
      },
    });
    const app = Fastify({
      logger: { level: 'warn', stream: { write: (line: string) => logs.push(line) } },
    });
    await app.register(a2aPlugin, { agentCard: testCard, executor: echoAgent, store: failing });
    try {
      const down = await app.inject({ method: 'GET', url: '/a2a/health' });
      expect(down.statusCode).toBe(503);
      expect(down.body).not.toMatch(/db\.internal|a2a_admin|5432/);
      expect(logs.join('')).toMatch(/db\.internal:5432/);
    } finally {
      await app.close();
    }
  });
});

describe('internal errors', () => {
  it('answer -32603 with a generic message: a store failure naming host, user or database is logged, never sent', async () => {
    const logs: string[] = [];
    const failing = withOverrides(new MemoryStore(), {
      getTask: async () => {
        throw new A2AError(
          'STORE_UNAVAILABLE',
          'PostgresStore: cannot reach postgres://a2a_admin@db.internal:5432/prod',
        );
      },
    }) as A2AStore;
    const app = Fastify({ logger: { level: 'error', stream: { write: (line: string) => logs.push(line) } } });
    await app.register(a2aPlugin, { agentCard: testCard, executor: echoAgent, store: failing });
    try {
      const res = await app.inject({ method: 'POST', url: '/a2a', payload: rpcBody('tasks/get', { id: 'x' }) });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.error.code).toBe(-32603);
      expect(res.body).not.toMatch(/db\.internal|a2a_admin|5432|prod/);
      expect(body.error.message).toMatch(/retry/);
      expect(logs.join('')).toMatch(/db\.internal:5432/);
    } finally {
      await app.close();
    }
  });
});

describe('encapsulation', () => {
  it("leaves the application's own routes and content-type parsers alone", async () => {
    const app = Fastify();
    app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) =>
      done(null, `parsed:${String(body)}`),
    );
    app.post('/echo', async (request) => ({ body: request.body }));
    await app.register(a2aPlugin, { agentCard: testCard, executor: echoAgent });
    try {
      const plain = await app.inject({
        method: 'POST',
        url: '/echo',
        headers: { 'content-type': 'text/plain' },
        payload: 'hi',
      });
      expect(plain.json()).toEqual({ body: 'parsed:hi' });
      const json = await app.inject({ method: 'POST', url: '/echo', payload: { a: 1 } });
      expect(json.json()).toEqual({ body: { a: 1 } });
      // and the plugin's JSON-RPC route still reads its body itself (a non-JSON body is -32700, not HTTP 400)
      const rpc = await app.inject({
        method: 'POST',
        url: '/a2a',
        headers: { 'content-type': 'application/json' },
        payload: '{',
      });
      expect(rpc.statusCode).toBe(200);
      expect(rpc.json().error.code).toBe(-32700);
    } finally {
      await app.close();
    }
  });
});

describe('registration', () => {
  it('serves two agents under two prefixes, each with its own card, tasks and store', async () => {
    const app = Fastify();
    const storeA = new MemoryStore();
    const storeB = new MemoryStore();
    await app.register(a2aPlugin, {
      agentCard: { ...testCard, name: 'A' },
      executor: async (turn) => turn.complete('from A'),
      store: storeA,
      prefix: '/a',
    });
    await app.register(a2aPlugin, {
      agentCard: { ...testCard, name: 'B' },
      executor: async (turn) => turn.complete('from B'),
      store: storeB,
      prefix: '/b',
    });
    try {
      expect((await app.inject({ method: 'GET', url: '/a/.well-known/agent-card.json' })).json().name).toBe('A');
      expect((await app.inject({ method: 'GET', url: '/b/.well-known/agent-card.json' })).json().name).toBe('B');
      const a = (
        await app.inject({
          method: 'POST',
          url: '/a/a2a',
          payload: rpcBody('message/send', { message: userMessage('x') }),
        })
      ).json();
      expect(a.result.status.message.parts[0].text).toBe('from A');
      const b = (
        await app.inject({ method: 'POST', url: '/b/a2a', payload: rpcBody('tasks/get', { id: a.result.id }) })
      ).json();
      expect(b.error.code).toBe(-32001);
      expect(await storeA.getTask(a.result.id)).toBeDefined();
    } finally {
      await app.close();
    }
  });

  it.each([
    ['no executor', { agentCard: testCard }, /executor/],
    ['no card', { executor: echoAgent }, /agentCard/],
    ['a card without name', { executor: echoAgent, agentCard: { ...testCard, name: '' } }, /agentCard\.name/],
    ['an unknown option', { executor: echoAgent, agentCard: testCard, storage: 'memory:' }, /unknown option "storage"/],
    ['a bad store', { executor: echoAgent, agentCard: testCard, store: 42 }, /"store"/],
    ['a bad prefix', { executor: echoAgent, agentCard: testCard, prefix: 'agents' }, /prefix/],
    ['a bad baseUrl', { executor: echoAgent, agentCard: testCard, baseUrl: 'not a url' }, /baseUrl/],
    ['a negative timeout', { executor: echoAgent, agentCard: testCard, turnTimeoutMs: -1 }, /turnTimeoutMs/],
    [
      'a zero lease TTL',
      { executor: echoAgent, agentCard: testCard, leaseTtlMs: 0 },
      /"leaseTtlMs" must be a positive/,
    ],
    [
      'a fractional bodyLimit',
      { executor: echoAgent, agentCard: testCard, bodyLimit: 1.5 },
      /"bodyLimit" must be a positive whole/,
    ],
    [
      'rest that is not a boolean',
      { executor: echoAgent, agentCard: testCard, rest: 'yes' },
      /"rest" must be true or false/,
    ],
    [
      'createTaskBeforeRun that is not a boolean',
      { executor: echoAgent, agentCard: testCard, createTaskBeforeRun: 'yes' },
      /"createTaskBeforeRun" must be true or false/,
    ],
    [
      'authorize that is not a function',
      { executor: echoAgent, agentCard: testCard, authorize: {} },
      /"authorize" must be a function/,
    ],
    ['a bad retention', { executor: echoAgent, agentCard: testCard, retention: { ttlMs: -5 } }, /"retention\.ttlMs"/],
    [
      'a card url the plugin fills in',
      { executor: echoAgent, agentCard: { ...testCard, url: 'http://x' } },
      /"agentCard\.url" is filled in by the plugin/,
    ],
    ['a non-http baseUrl', { executor: echoAgent, agentCard: testCard, baseUrl: 'ftp://x' }, /http\(s\) URL/],
    [
      'an unsupported store URL',
      { executor: echoAgent, agentCard: testCard, store: 'redis://localhost' },
      /Unsupported store URL/,
    ],
    ['an empty sqlite URL', { executor: echoAgent, agentCard: testCard, store: 'sqlite:' }, /names no file/],
    // Issue 23's options.
    [
      'a negative card max-age',
      { executor: echoAgent, agentCard: testCard, agentCardMaxAgeSeconds: -1 },
      /"agentCardMaxAgeSeconds" must be a whole number of seconds, 0 or more/,
    ],
    [
      'a repeated card version',
      { executor: echoAgent, agentCard: testCard, agentCardVersions: ['1.0', '1.0'] },
      /"agentCardVersions" must be a non-empty array of '1\.0' and '0\.3'/,
    ],
    [
      'input modes checked for a version not served',
      { executor: echoAgent, agentCard: testCard, validateInputModes: '1.0' },
      /"validateInputModes" must be an array of '1\.0' and '0\.3'/,
    ],
    [
      'an unknown messageIdReuse',
      { executor: echoAgent, agentCard: testCard, messageIdReuse: 'skip' },
      /"messageIdReuse" must be 'reject', 'replay' or 'ignore'/,
    ],
    [
      'a card skill without tags that are strings',
      {
        executor: echoAgent,
        agentCard: { ...testCard, skills: [{ id: 's', name: 'S', description: 'd', tags: [1] }] },
      },
      /"agentCard\.skills\[0\]\.tags" must be an array of strings/,
    ],
  ])('fails at register with %s, naming the problem', async (_name, options, pattern) => {
    const app = Fastify();
    await expect(app.register(a2aPlugin, options as never).ready()).rejects.toThrow(pattern);
    await app.close();
  });

  it('refuses a namespace that a store instance was not created with (it would be silently ignored)', async () => {
    const app = Fastify();
    await expect(
      app
        .register(a2aPlugin, {
          agentCard: testCard,
          executor: echoAgent,
          store: new MemoryStore(),
          namespace: 'billing',
        })
        .ready(),
    ).rejects.toThrow(/keeps one agent's data.*store of its own/);
    await app.close();
    const dir = mkdtempSync(join(tmpdir(), 'a2a-ns-'));
    const sqlite = new SqliteStore({ filename: join(dir, 'a.db'), namespace: 'support' });
    try {
      const other = Fastify();
      await expect(
        other
          .register(a2aPlugin, { agentCard: testCard, executor: echoAgent, store: sqlite, namespace: 'billing' })
          .ready(),
      ).rejects.toThrow(/differs from the namespace of the store instance \("support"\)/);
      await other.close();
      const same = Fastify();
      await same.register(a2aPlugin, { agentCard: testCard, executor: echoAgent, store: sqlite, namespace: 'support' });
      await same.ready();
      expect(same.a2a.store.namespace).toBe('support');
      await same.close();
    } finally {
      await sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a second agent under the same prefix', async () => {
    const app = Fastify();
    await app.register(a2aPlugin, { agentCard: testCard, executor: echoAgent, prefix: '/a' });
    await expect(
      app.register(a2aPlugin, { agentCard: testCard, executor: echoAgent, prefix: '/a/' }).ready(),
    ).rejects.toThrow(/already registered under prefix "\/a"/);
    await app.close();
  });

  it('closes a store it created from a URL but leaves an instance it was given open', async () => {
    const given: A2AStore = new MemoryStore();
    const app = Fastify();
    await app.register(a2aPlugin, { agentCard: testCard, executor: echoAgent, store: given });
    await app.ready();
    await app.close();
    await expect(given.ping()).resolves.toBeUndefined();
  });

  it('ends open streams when the server closes', async () => {
    t = await buildApp(async (turn) => {
      await turn.working();
      if (!turn.signal.aborted)
        await new Promise<void>((resolve) => turn.signal.addEventListener('abort', () => resolve()));
    });
    const sent = await t.call<{ id: string }>('message/send', {
      message: userMessage('x'),
      configuration: { blocking: false },
    });
    if (!('result' in sent)) throw new Error('no result');
    const stream = t.app.inject({
      method: 'POST',
      url: '/a2a',
      payload: rpcBody('tasks/resubscribe', { id: sent.result.id }),
    });
    await new Promise((r) => setTimeout(r, 100));
    const closing = t.app.close();
    const res = await stream;
    await closing;
    t = undefined;
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('"kind":"task"');
  });
});
