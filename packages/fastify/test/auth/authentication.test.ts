/**
 * The `authenticate` option over HTTP: 401 with WWW-Authenticate on every A2A route of every
 * binding and version (the public card and health stay open), the card's security schemes in both
 * versions' shapes, the built-ins (bearer tokens, API keys) and a function of the application's,
 * and the caller reaching the agent as `turn.caller`.
 */

import type { AgentExecutor, JsonRpcResponse, Task } from '@fastify-a2a/core';
import { afterEach, describe, expect, it } from 'vitest';
import { echoAgent } from '../../../../test-support/agents.js';
import { apiKeys, bearerTokens, CredentialsRejected } from '../../src/index.js';
import { buildApp, postJson, rpcBody, type TestApp, userMessage } from '../helpers.js';
import { protoMessage, rest } from '../rest-helpers.js';

/** Answers with the id of the caller its turn was started by. */
const whoAmI: AgentExecutor = {
  async execute(turn) {
    const { principal } = turn.caller;
    await turn.complete(
      `caller=${principal?.id ?? 'anonymous'} roles=${(principal?.roles ?? []).join(',')} via=${turn.caller.binding}/${turn.caller.version}`,
    );
  },
};

const TOKENS = { 'token-of-alice-0123456789': 'alice', 'token-of-bob-0123456789': { id: 'bob', roles: ['ops'] } };
const alice = { authorization: 'Bearer token-of-alice-0123456789' };
const bob = { authorization: 'Bearer token-of-bob-0123456789' };

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

describe('bearer tokens', () => {
  it('refuses a JSON-RPC call without credentials: 401, a Bearer challenge, and a JSON-RPC error naming what to send', async () => {
    t = await buildApp(whoAmI, { authenticate: bearerTokens(TOKENS) });
    const res = await postJson(t.app, rpcBody('message/send', { message: userMessage('hi') }));
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="a2a"');
    const body = res.json() as JsonRpcResponse;
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    expect('error' in body && body.error.message).toBe(
      'Authentication required: send an "Authorization: Bearer <token>" header.',
    );
  });

  it('refuses a wrong token with error="invalid_token", without echoing it, and logs nothing of it', async () => {
    t = await buildApp(whoAmI, { authenticate: bearerTokens(TOKENS) });
    const res = await postJson(t.app, rpcBody('tasks/get', { id: 'x' }), {
      authorization: 'Bearer not-a-token-at-all',
    });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="a2a", error="invalid_token"');
    expect(res.body).not.toContain('not-a-token-at-all');
    expect(res.json()).toMatchObject({
      error: { code: -32600, message: 'Authentication failed: the bearer token is not one this agent accepts.' },
    });
  });

  it('refuses other Authorization schemes as missing credentials', async () => {
    t = await buildApp(whoAmI, { authenticate: bearerTokens(TOKENS) });
    const res = await postJson(t.app, rpcBody('tasks/get', { id: 'x' }), { authorization: 'Basic YWxpY2U6cHc=' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: { message: expect.stringMatching(/^Authentication required/) } });
  });

  it('accepts a known token (scheme name in any case) and the agent sees the caller as turn.caller', async () => {
    t = await buildApp(whoAmI, { authenticate: bearerTokens(TOKENS) });
    const res = await postJson(t.app, rpcBody('message/send', { message: userMessage('hi') }), {
      authorization: 'bearer   token-of-bob-0123456789',
    });
    expect(res.statusCode).toBe(200);
    const task = (res.json() as { result: Task }).result;
    expect(task.status.state).toBe('completed');
    expect(task.status.message?.parts[0]).toMatchObject({ text: 'caller=bob roles=ops via=JSONRPC/0.3' });
  });

  it('answers a 1.0 JSON-RPC client with 1.0 error details', async () => {
    t = await buildApp(whoAmI, { authenticate: bearerTokens(TOKENS) });
    const res = await postJson(t.app, rpcBody('GetTask', { id: 'x' }), { 'a2a-version': '1.0' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({
      error: {
        code: -32600,
        data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'UNAUTHENTICATED' }],
      },
    });
  });

  it('guards every HTTP+JSON route of both versions, unknown paths included, in their error formats', async () => {
    t = await buildApp(whoAmI, { authenticate: bearerTokens(TOKENS) });
    const v03 = await rest(t.app, 'GET', '/v1/tasks/some-task');
    expect(v03.statusCode).toBe(401);
    expect(v03.headers['www-authenticate']).toBe('Bearer realm="a2a"');
    expect(v03.json()).toMatchObject({ code: -32600, message: expect.stringMatching(/^Authentication required/) });
    const unknown = await rest(t.app, 'GET', '/v1/no/such/route');
    expect(unknown.statusCode).toBe(401);
    const v10 = await rest(
      t.app,
      'POST',
      '/message:send',
      { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'x' }] } },
      { 'a2a-version': '1.0' },
    );
    expect(v10.statusCode).toBe(401);
    // application/json unless Accept names application/a2a+json (issue 23: 1.0 §11.1).
    expect(v10.headers['content-type']).toMatch(/^application\/json/);
    expect(v10.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
    const ok = await rest(
      t.app,
      'POST',
      '/v1/message:send',
      { request: protoMessage('hello'), configuration: { blocking: true } },
      alice,
    );
    expect(ok.statusCode).toBe(200);
    expect(ok.json().task.status.message.content[0].text).toBe('caller=alice roles= via=HTTP+JSON/0.3');
  });

  it('refuses a stream before it starts: 401 JSON, not an event stream', async () => {
    t = await buildApp(echoAgent, { authenticate: bearerTokens(TOKENS) });
    const res = await postJson(t.app, rpcBody('message/stream', { message: userMessage('hi') }), {
      accept: 'text/event-stream',
    });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  it('keeps the public card and the health check open, and declares the scheme in both versions’ shapes', async () => {
    t = await buildApp(echoAgent, { authenticate: bearerTokens(TOKENS, { description: 'Tokens from the ops team' }) });
    const card = await t.app.inject({ method: 'GET', url: '/.well-known/agent-card.json' });
    expect(card.statusCode).toBe(200);
    expect(card.json()).toMatchObject({
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'Tokens from the ops team',
          httpAuthSecurityScheme: { scheme: 'bearer', description: 'Tokens from the ops team' },
        },
      },
      security: [{ bearer: [] }],
      securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    });
    const health = await t.app.inject({ method: 'GET', url: '/a2a/health' });
    expect(health.statusCode).toBe(200);
  });

  it('refuses empty and malformed token tables at registration', async () => {
    expect(() => bearerTokens({})).toThrow('bearerTokens: give at least one');
    expect(() => bearerTokens({ ' ': 'x' })).toThrow('entry 0 has an empty secret');
    expect(() => bearerTokens({ tok: '' })).toThrow('principal id must be a non-empty string');
    expect(() => bearerTokens({ tok: { id: 'a', roles: 'admin' as never } })).toThrow(
      '"roles" must be an array of strings',
    );
  });
});

describe('API keys and several schemes', () => {
  it('accepts either scheme; the card lists both as alternatives; the 401 challenges for both', async () => {
    t = await buildApp(whoAmI, {
      authenticate: [bearerTokens(TOKENS), apiKeys({ 'key-of-carol-0123456789': 'carol' }, { header: 'X-Agent-Key' })],
    });
    const missing = await postJson(t.app, rpcBody('tasks/get', { id: 'x' }));
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['www-authenticate']).toEqual(['Bearer realm="a2a"', 'ApiKey header="X-Agent-Key"']);
    expect(missing.json()).toMatchObject({
      error: {
        message:
          'Authentication required: send an "Authorization: Bearer <token>" header or the API key in the header "X-Agent-Key".',
      },
    });
    const wrongKey = await postJson(t.app, rpcBody('tasks/get', { id: 'x' }), { 'x-agent-key': 'nope' });
    expect(wrongKey.statusCode).toBe(401);
    expect(wrongKey.headers['www-authenticate']).toEqual([
      'Bearer realm="a2a"',
      'ApiKey header="X-Agent-Key", error="invalid_token"',
    ]);
    const carol = await postJson(t.app, rpcBody('message/send', { message: userMessage('hi') }), {
      'x-agent-key': 'key-of-carol-0123456789',
    });
    expect((carol.json() as { result: Task }).result.status.message?.parts[0]).toMatchObject({
      text: expect.stringMatching(/^caller=carol/),
    });
    const card = (await t.app.inject({ method: 'GET', url: '/.well-known/agent-card.json' })).json();
    expect(card.securitySchemes.apiKey).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-Agent-Key',
      apiKeySecurityScheme: { location: 'header', name: 'X-Agent-Key' },
    });
    expect(card.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
  });

  it('refuses two authenticators with one scheme name, naming it', async () => {
    await expect(
      buildApp(whoAmI, { authenticate: [bearerTokens(TOKENS), bearerTokens({ other: 'x' })] }),
    ).rejects.toThrow('"authenticate" two security schemes are named "bearer"');
  });

  it('refuses an option that is not an authenticator', async () => {
    await expect(buildApp(whoAmI, { authenticate: [{}] as never })).rejects.toThrow(
      /"authenticate" must be a function/,
    );
  });
});

describe('a function of the application', () => {
  it('is the authentication; its refusal reason reaches the client; the card keeps the schemes the application declared', async () => {
    t = await buildApp(whoAmI, {
      agentCard: {
        name: 'Test agent',
        description: 'An agent for tests.',
        version: '1.0.0',
        securitySchemes: { session: { type: 'apiKey', in: 'cookie', name: 'sid' } },
        security: [{ session: [] }],
      },
      authenticate: (request) => {
        const cookie = request.headers.cookie ?? '';
        if (cookie === '') return null;
        if (cookie !== 'sid=dana-session') throw new CredentialsRejected('the session expired; sign in again');
        return { id: 'dana', roles: ['reader'] };
      },
    });
    const missing = await postJson(t.app, rpcBody('tasks/get', { id: 'x' }));
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['www-authenticate']).toBe('ApiKey cookie="sid"');
    expect(missing.json().error.message).toBe('Authentication required: send the API key in the cookie "sid".');
    const expired = await postJson(t.app, rpcBody('tasks/get', { id: 'x' }), { cookie: 'sid=old' });
    expect(expired.json().error.message).toBe('Authentication failed: the session expired; sign in again.');
    expect(expired.headers['www-authenticate']).toBe('ApiKey cookie="sid", error="invalid_token"');
    const ok = await postJson(t.app, rpcBody('message/send', { message: userMessage('hi') }), {
      cookie: 'sid=dana-session',
    });
    expect(ok.json().result.status.message.parts[0].text).toBe('caller=dana roles=reader via=JSONRPC/0.3');
    const card = (await t.app.inject({ method: 'GET', url: '/.well-known/agent-card.json' })).json();
    expect(card.securitySchemes).toEqual({
      session: { type: 'apiKey', in: 'cookie', name: 'sid', apiKeySecurityScheme: { location: 'cookie', name: 'sid' } },
    });
  });

  it('a function that throws something else is a 500 with nothing of the error, logged', async () => {
    t = await buildApp(whoAmI, {
      authenticate: () => {
        throw new Error('connection to ldap://10.0.0.7 refused');
      },
    });
    const res = await postJson(t.app, rpcBody('tasks/get', { id: 'x' }), alice);
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain('10.0.0.7');
    expect(res.json()).toMatchObject({ error: { code: -32603 } });
  });

  it('a principal without an id is the application’s bug: a 500, never an anonymous pass', async () => {
    t = await buildApp(whoAmI, { authenticate: () => ({ name: 'x' }) as never });
    const res = await postJson(t.app, rpcBody('message/send', { message: userMessage('hi') }));
    expect(res.statusCode).toBe(500);
  });
});

describe('without authenticate', () => {
  it('the agent sees an anonymous caller and the card declares no schemes', async () => {
    t = await buildApp(whoAmI);
    const res = await postJson(t.app, rpcBody('message/send', { message: userMessage('hi') }), alice);
    expect(res.json().result.status.message.parts[0].text).toBe('caller=anonymous roles= via=JSONRPC/0.3');
    const card = (await t.app.inject({ method: 'GET', url: '/.well-known/agent-card.json' })).json();
    expect(card.securitySchemes).toBeUndefined();
    expect(card.security).toBeUndefined();
  });
});

void bob;
