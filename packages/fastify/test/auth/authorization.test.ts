/**
 * Authorization over HTTP (access rules and the authorize hook: 403 on every binding and version,
 * logged) and the authenticated extended card (A2A §7.10 / 1.0 GetExtendedAgentCard).
 */

import type { AgentCard } from '@fastify-a2a/core';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { echoAgent } from '../../../../test-support/agents.js';
import { a2aPlugin, bearerTokens, permissionDenied } from '../../src/index.js';
import { buildApp, capturedLogger, postJson, rpcBody, type TestApp, testCard, userMessage } from '../helpers.js';
import { protoMessage, rest } from '../rest-helpers.js';

const TOKENS = {
  'token-of-rita-0123456789': { id: 'rita', roles: ['reader'] },
  'token-of-walt-0123456789': { id: 'walt', roles: ['reader', 'writer'] },
};
const rita = { authorization: 'Bearer token-of-rita-0123456789' };
const walt = { authorization: 'Bearer token-of-walt-0123456789' };
const RULES = [
  { role: 'reader', allow: ['read'] },
  { role: 'writer', allow: ['write'] },
] as const;

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

describe('access rules', () => {
  it('a reader may read but not send: 403 with a JSON-RPC error naming the caller and operation, echoing the id', async () => {
    t = await buildApp(echoAgent, { authenticate: bearerTokens(TOKENS), accessRules: RULES });
    const sent = await postJson(t.app, rpcBody('message/send', { message: userMessage('hi') }, 'r-1'), walt);
    expect(sent.statusCode).toBe(200);
    const taskId = sent.json().result.id as string;
    const read = await postJson(t.app, rpcBody('tasks/get', { id: taskId }), rita);
    expect(read.statusCode).toBe(200);
    const denied = await postJson(t.app, rpcBody('message/send', { message: userMessage('hi') }, 'r-2'), rita);
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toEqual({
      jsonrpc: '2.0',
      id: 'r-2',
      error: {
        code: -32600,
        message: 'Permission denied: principal "rita" may not call sendMessage.',
        data: { operation: 'sendMessage' },
      },
    });
    const cancel = await postJson(t.app, rpcBody('tasks/cancel', { id: taskId }), rita);
    expect(cancel.statusCode).toBe(403);
  });

  it('refuses a stream with 403 JSON before any event', async () => {
    t = await buildApp(echoAgent, { authenticate: bearerTokens(TOKENS), accessRules: RULES });
    const res = await postJson(t.app, rpcBody('message/stream', { message: userMessage('hi') }), {
      ...rita,
      accept: 'text/event-stream',
    });
    expect(res.statusCode).toBe(403);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  it('answers 1.0 JSON-RPC with PERMISSION_DENIED details, and both HTTP+JSON versions with 403 in their formats', async () => {
    t = await buildApp(echoAgent, { authenticate: bearerTokens(TOKENS), accessRules: RULES });
    const v10 = await postJson(
      t.app,
      rpcBody('SendMessage', { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'x' }] } }),
      { ...rita, 'a2a-version': '1.0' },
    );
    expect(v10.statusCode).toBe(403);
    expect(v10.json()).toMatchObject({ error: { code: -32600, data: [{ reason: 'PERMISSION_DENIED' }] } });
    const rest03 = await rest(t.app, 'POST', '/v1/message:send', { request: protoMessage('x') }, rita);
    expect(rest03.statusCode).toBe(403);
    expect(rest03.json()).toMatchObject({ code: -32600, message: expect.stringMatching(/^Permission denied/) });
    const rest10 = await rest(
      t.app,
      'POST',
      '/message:send',
      { message: { messageId: 'm-2', role: 'ROLE_USER', parts: [{ text: 'x' }] } },
      { ...rita, 'a2a-version': '1.0' },
    );
    expect(rest10.statusCode).toBe(403);
    expect(rest10.json()).toMatchObject({ error: { code: 403, status: 'PERMISSION_DENIED' } });
  });

  it('logs each refusal with the principal and operation', async () => {
    const { logger, lines } = capturedLogger('warn');
    const app = Fastify({ logger });
    await app.register(a2aPlugin, {
      agentCard: testCard,
      executor: echoAgent,
      retention: false,
      authenticate: bearerTokens(TOKENS),
      accessRules: RULES,
    });
    const res = await postJson(app as never, rpcBody('tasks/cancel', { id: 'x' }), rita);
    await app.close();
    expect(res.statusCode).toBe(403);
    const refusal = lines
      .map((line) => JSON.parse(line))
      .find((entry) => entry.msg === 'a2a: call refused by authorize');
    expect(refusal).toMatchObject({ level: 40, operation: 'cancelTask', principal: 'rita' });
  });

  it('refuses a rule naming an operation that does not exist, at registration', async () => {
    await expect(
      buildApp(echoAgent, {
        authenticate: bearerTokens(TOKENS),
        accessRules: [{ role: 'x', allow: ['tasks/get' as never] }],
      }),
    ).rejects.toThrow(/"accessRules": access rule 0: "tasks\/get" is neither an operation/);
  });
});

describe('the authorize hook', () => {
  it('runs after the rules, sees the validated params, and may refuse with its own reason', async () => {
    const seen: string[] = [];
    t = await buildApp(echoAgent, {
      authenticate: bearerTokens(TOKENS),
      accessRules: RULES,
      authorize: (ctx, operation, params) => {
        seen.push(`${ctx.principal?.id}:${operation}`);
        if (operation === 'sendMessage' && JSON.stringify(params).includes('forbidden')) {
          throw permissionDenied('messages about "forbidden" are not allowed here.');
        }
        return true;
      },
    });
    const ok = await postJson(t.app, rpcBody('message/send', { message: userMessage('fine') }), walt);
    expect(ok.statusCode).toBe(200);
    const refused = await postJson(t.app, rpcBody('message/send', { message: userMessage('forbidden topic') }), walt);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.message).toBe('Permission denied: messages about "forbidden" are not allowed here.');
    // The rules refused rita's send before the hook ran.
    await postJson(t.app, rpcBody('message/send', { message: userMessage('x') }), rita);
    expect(seen).toEqual(['walt:sendMessage', 'walt:sendMessage']);
  });
});

describe('the authenticated extended card', () => {
  const publicSkill = { id: 'echo', name: 'Echo', description: 'Echoes.', tags: ['demo'] };
  const secretSkill = { id: 'admin', name: 'Admin', description: 'For members.', tags: ['internal'] };
  const card = { ...testCard, skills: [publicSkill] };

  it('is -32007 when none is configured, and the public card says so', async () => {
    t = await buildApp(echoAgent, { authenticate: bearerTokens(TOKENS) });
    const res = await postJson(t.app, rpcBody('agent/getAuthenticatedExtendedCard'), rita);
    expect(res.json()).toMatchObject({ error: { code: -32007 } });
    const publicCard = (await t.app.inject({ method: 'GET', url: '/.well-known/agent-card.json' })).json();
    expect(publicCard.supportsAuthenticatedExtendedCard).toBe(false);
    expect(publicCard.capabilities.extendedAgentCard).toBe(false);
  });

  it('answers an authenticated caller on every binding and version; the public card declares it; anonymous callers get 401', async () => {
    t = await buildApp(echoAgent, {
      agentCard: card,
      authenticate: bearerTokens(TOKENS),
      extendedAgentCard: { skills: [publicSkill, secretSkill], description: 'The members’ edition.' },
    });
    const publicCard = (await t.app.inject({ method: 'GET', url: '/.well-known/agent-card.json' })).json();
    expect(publicCard.supportsAuthenticatedExtendedCard).toBe(true);
    expect(publicCard.capabilities.extendedAgentCard).toBe(true);
    expect(publicCard.skills.map((s: { id: string }) => s.id)).toEqual(['echo']);

    const v03 = await postJson(t.app, rpcBody('agent/getAuthenticatedExtendedCard'), rita);
    const extended = v03.json().result as AgentCard;
    expect(extended.skills.map((s) => s.id)).toEqual(['echo', 'admin']);
    expect(extended).toMatchObject({
      name: testCard.name,
      description: 'The members’ edition.',
      protocolVersion: '0.3.0',
      url: expect.stringMatching(/\/a2a$/),
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      supportsAuthenticatedExtendedCard: true,
    });

    const v10 = await postJson(t.app, rpcBody('GetExtendedAgentCard', {}), { ...rita, 'a2a-version': '1.0' });
    const card10 = v10.json().result;
    expect(card10.skills.map((s: { id: string }) => s.id)).toEqual(['echo', 'admin']);
    expect(card10.securitySchemes).toEqual({ bearer: { httpAuthSecurityScheme: { scheme: 'bearer' } } });
    expect(card10.capabilities.extendedAgentCard).toBe(true);
    expect(card10.url).toBeUndefined();

    const rest03 = await rest(t.app, 'GET', '/v1/card', undefined, rita);
    expect(rest03.statusCode).toBe(200);
    expect(rest03.json().skills).toHaveLength(2);
    const rest10 = await rest(t.app, 'GET', '/extendedAgentCard', undefined, { ...rita, 'a2a-version': '1.0' });
    expect(rest10.statusCode).toBe(200);
    expect(rest10.json().skills).toHaveLength(2);

    const anonymous = await postJson(t.app, rpcBody('agent/getAuthenticatedExtendedCard'));
    expect(anonymous.statusCode).toBe(401);
    const anonymousRest = await rest(t.app, 'GET', '/v1/card');
    expect(anonymousRest.statusCode).toBe(401);
  });

  it('a function of the caller decides what each one sees', async () => {
    t = await buildApp(echoAgent, {
      agentCard: card,
      authenticate: bearerTokens(TOKENS),
      extendedAgentCard: async (principal, request) => ({
        skills: (principal.roles ?? []).includes('writer') ? [publicSkill, secretSkill] : [publicSkill],
        description: `For ${principal.id} (${request.headers['user-agent'] ?? 'no agent'}).`,
      }),
    });
    const forRita = (await postJson(t.app, rpcBody('agent/getAuthenticatedExtendedCard'), rita)).json().result;
    const forWalt = (await postJson(t.app, rpcBody('agent/getAuthenticatedExtendedCard'), walt)).json().result;
    expect(forRita.skills).toHaveLength(1);
    expect(forWalt.skills).toHaveLength(2);
    expect(forWalt.description).toMatch(/^For walt \(/);
  });

  it('needs authentication: registering it on an open agent fails, saying why', async () => {
    await expect(buildApp(echoAgent, { extendedAgentCard: { skills: [] } })).rejects.toThrow(
      '"extendedAgentCard" needs "authenticate"',
    );
  });
});
