/**
 * The HTTP+JSON (REST) binding of A2A 0.3 (§3.5.6 and the REST tabs of §7) through the plugin:
 * under a prefix, encapsulated, beside an application's own /v1, and turned off.
 * Input as @a2a-js/sdk 0.3.14 and the A2A TCK send it (see the research notes rest-0.3.md and
 * tck.md §4), ProtoJSON output, SSE framing, and errors as HTTP status plus `{code, error, message}`.
 */
import { MemoryStore } from '@fastify-a2a/store-memory';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { echoAgent } from '../../../../test-support/agents.js';
import { a2aPlugin } from '../../src/index.js';
import { rpcBody, testCard, userMessage } from '../helpers.js';
import { expectRestError, protoMessage, rest, wireText } from '../rest-helpers.js';
import { build, extraApps, sendTask, useRestApps } from './fixture.js';

useRestApps();

describe('under a prefix', () => {
  it('serves the routes under <prefix>/v1, and the card names <base><prefix> as the HTTP+JSON interface', async () => {
    const { app } = await build(echoAgent, { prefix: '/agents/echo', baseUrl: 'https://agents.example' });
    const card = (await app.inject({ method: 'GET', url: '/agents/echo/.well-known/agent-card.json' })).json();
    expect(card.additionalInterfaces).toContainEqual({
      url: 'https://agents.example/agents/echo',
      transport: 'HTTP+JSON',
    });
    const task = await sendTask(
      app,
      { message: protoMessage('prefixed'), configuration: { blocking: true } },
      '/agents/echo',
    );
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    const got = await rest(app, 'GET', `/agents/echo/v1/tasks/${task.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json().id).toBe(task.id);
    const body = expectRestError(
      await rest(app, 'POST', '/agents/echo/v1/tasks/a%3Ab:cancel'),
      404,
      -32001,
      'TaskNotFoundError',
    );
    expect(body.data).toEqual({ taskId: 'a:b' });
    expectRestError(await rest(app, 'GET', '/agents/echo/v1/nope'), 404, -32601, 'MethodNotFoundError');
    // nothing at the root
    expect((await rest(app, 'GET', `/v1/tasks/${task.id}`)).statusCode).toBe(404);
    expect((await rest(app, 'GET', `/v1/tasks/${task.id}`)).json().code).toBeUndefined();
  });

  it('keeps two agents apart, each under its own prefix', async () => {
    const app = Fastify();
    extraApps.push(app);
    for (const name of ['one', 'two']) {
      await app.register(a2aPlugin, {
        agentCard: { ...testCard, name },
        executor: async (turn) => turn.complete(`${name}: ${turn.text}`),
        store: new MemoryStore(),
        retention: false,
        prefix: `/agents/${name}`,
      });
    }
    await app.ready();
    const task = await sendTask(app, { message: protoMessage('hi'), configuration: { blocking: true } }, '/agents/two');
    expect(wireText(task.status.message.content)).toBe('two: hi');
    expectRestError(await rest(app, 'GET', `/agents/one/v1/tasks/${task.id}`), 404, -32001, 'TaskNotFoundError');
  });

  it('finds the route when the prefix has characters the URL percent-encodes', async () => {
    const { app } = await build(echoAgent, { prefix: '/agents/café' });
    const task = await sendTask(
      app,
      { message: protoMessage('accent'), configuration: { blocking: true } },
      '/agents/caf%C3%A9',
    );
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    const body = expectRestError(
      await rest(app, 'POST', '/agents/caf%C3%A9/v1/tasks/a%3Ab:cancel'),
      404,
      -32001,
      'TaskNotFoundError',
    );
    expect(body.data).toEqual({ taskId: 'a:b' });
  });
});

describe('encapsulation', () => {
  it("the application's own routes and content-type parsers beside the plugin keep working, untouched by the plugin's", async () => {
    const app = Fastify();
    extraApps.push(app);
    app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) =>
      done(null, `app parsed: ${body}`),
    );
    app.post('/echo', async (request) => ({ body: request.body }));
    await app.register(a2aPlugin, {
      agentCard: testCard,
      executor: echoAgent,
      store: new MemoryStore(),
      retention: false,
    });
    app.post('/after', async (request) => ({ body: request.body }));
    app.setNotFoundHandler(async (_request, reply) => reply.code(404).send({ app: 'not here' }));
    await app.ready();

    const echo = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'text/plain' },
      payload: 'hi',
    });
    expect(echo.json()).toEqual({ body: 'app parsed: hi' });
    const after = await app.inject({
      method: 'POST',
      url: '/after',
      headers: { 'content-type': 'text/plain' },
      payload: 'yo',
    });
    expect(after.json()).toEqual({ body: 'app parsed: yo' });
    // Fastify's own JSON parser still serves the application: the plugin's "empty body is no body"
    // and its error format stay inside its scope.
    const empty = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' } });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().code).toBe('FST_ERR_CTP_EMPTY_JSON_BODY');
    const json = await app.inject({ method: 'POST', url: '/after', payload: { a: 1 } });
    expect(json.json()).toEqual({ body: { a: 1 } });
    // The application's unknown routes keep the application's 404; the binding's covers /v1 only.
    const missing = await app.inject({ method: 'GET', url: '/nowhere' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ app: 'not here' });
    expectRestError(await rest(app, 'GET', '/v1/nowhere'), 404, -32601, 'MethodNotFoundError');
    // and the binding still reads its own requests its own way
    const sent = await rest(app, 'POST', '/v1/message:send', {
      message: protoMessage('x'),
      configuration: { blocking: true },
    });
    expect(sent.json().task.status.state).toBe('TASK_STATE_COMPLETED');
    expectRestError(await rest(app, 'POST', '/v1/tasks/nope:cancel'), 404, -32001, 'TaskNotFoundError');
  });
});

describe('beside an application that has its own /v1', () => {
  it("starts (the application's not-found handler under /v1 does not clash), and the application keeps its /v1 routes and its OPTIONS route", async () => {
    const app = Fastify();
    extraApps.push(app);
    await app.register(
      async (api) => {
        api.get('/users', async () => ['ada']);
        api.setNotFoundHandler(async (_request, reply) => reply.code(404).send({ api: 'no such resource' }));
      },
      { prefix: '/v1' },
    );
    // as @fastify/cors answers preflights
    app.options('*', async (_request, reply) => reply.code(204).header('access-control-allow-origin', '*').send());
    await app.register(a2aPlugin, {
      agentCard: testCard,
      executor: echoAgent,
      store: new MemoryStore(),
      retention: false,
    });
    await app.ready();
    expect((await app.inject({ method: 'GET', url: '/v1/users' })).json()).toEqual(['ada']);
    const preflight = await app.inject({ method: 'OPTIONS', url: '/v1/message:send' });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    const sent = await sendTask(app, { message: protoMessage('x'), configuration: { blocking: true } });
    expect(sent.status.state).toBe('TASK_STATE_COMPLETED');
    // with the agent at the root, unknown paths under /v1/ are the binding's
    expectRestError(await rest(app, 'GET', '/v1/nope'), 404, -32601, 'MethodNotFoundError');
  });
});

describe('rest: false', () => {
  it('serves no /v1 routes, and the card declares no HTTP+JSON interface', async () => {
    const { app, call } = await build(echoAgent, { rest: false });
    const res = await rest(app, 'POST', '/v1/message:send', { message: protoMessage('x') });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBeUndefined();
    const card = (await app.inject({ method: 'GET', url: '/.well-known/agent-card.json' })).json();
    expect(JSON.stringify(card)).not.toMatch(/HTTP\+JSON/);
    expect(card.preferredTransport).toBe('JSONRPC');
    // JSON-RPC still works
    const sent = await call('message/send', { message: userMessage('still here') });
    expect(sent).toMatchObject({ result: { kind: 'task' } });
  });

  it('with REST on, the card lists both interfaces', async () => {
    const { app } = await build(echoAgent, { baseUrl: 'https://a.example' });
    const card = (await app.inject({ method: 'GET', url: '/.well-known/agent-card.json' })).json();
    expect(card.additionalInterfaces).toEqual([
      { url: 'https://a.example/a2a', transport: 'JSONRPC' },
      { url: 'https://a.example', transport: 'HTTP+JSON' },
    ]);
    // both bindings reach the same tasks
    const task = await sendTask(app, { message: protoMessage('x'), configuration: { blocking: true } });
    const viaRpc = await app.inject({ method: 'POST', url: '/a2a', payload: rpcBody('tasks/get', { id: task.id }) });
    expect(viaRpc.json().result).toMatchObject({ kind: 'task', id: task.id, status: { state: 'completed' } });
  });
});
