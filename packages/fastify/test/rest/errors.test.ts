/**
 * The HTTP+JSON (REST) binding of A2A 0.3 (§3.5.6 and the REST tabs of §7) through the plugin:
 * unsupported push configs, the card route, request errors and a failing store.
 * Input as @a2a-js/sdk 0.3.14 and the A2A TCK send it (see the research notes rest-0.3.md and
 * tck.md §4), ProtoJSON output, SSE framing, and errors as HTTP status plus `{code, error, message}`.
 */
import type { StoredEvent, TaskRecord } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { echoAgent } from '../../../../test-support/agents.js';
import { a2aPlugin } from '../../src/index.js';
import { listen, testCard } from '../helpers.js';
import { expectRestError, protoMessage, readRestStream, rest } from '../rest-helpers.js';
import { build, extraApps, sendTask, useRestApps } from './fixture.js';

useRestApps();

describe('push notification configs (not supported: the card says pushNotifications: false)', () => {
  it('every route answers 501 PushNotificationNotSupportedError', async () => {
    const { app } = await build(echoAgent);
    const sent = await sendTask(app, { message: protoMessage('x'), configuration: { blocking: true } });
    const base = `/v1/tasks/${sent.id}/pushNotificationConfigs`;
    const calls: [Parameters<typeof rest>[1], string, unknown?][] = [
      // what @a2a-js/sdk 0.3.14 sends: the bare TaskPushNotificationConfig
      [
        'POST',
        base,
        {
          name: `tasks/${sent.id}/pushNotificationConfigs/c1`,
          pushNotificationConfig: { id: 'c1', url: 'https://hook.example/a' },
        },
      ],
      // what the TCK and a2a-python send: the request, snake_case
      [
        'POST',
        base,
        {
          parent: `tasks/${sent.id}`,
          config_id: 'c2',
          config: { name: 'n', push_notification_config: { url: 'https://hook.example/b' } },
        },
      ],
      ['GET', base],
      ['GET', `${base}/c1`],
      ['DELETE', `${base}/c1`],
    ];
    for (const [method, url, body] of calls) {
      expectRestError(await rest(app, method, url, body), 501, -32003, 'PushNotificationNotSupportedError');
    }
  });

  it('still validates the parameters first', async () => {
    const { app } = await build(echoAgent);
    const body = expectRestError(
      await rest(app, 'POST', '/v1/tasks/t1/pushNotificationConfigs', { pushNotificationConfig: { token: 'x' } }),
      400,
      -32602,
      'InvalidParamsError',
    );
    expect(body.message).toMatch(/url/);
  });
});

describe('GET /v1/card', () => {
  it('answers 404 AuthenticatedExtendedCardNotConfiguredError (-32007): the card declares no extended card', async () => {
    const { app } = await build(echoAgent);
    expectRestError(await rest(app, 'GET', '/v1/card'), 404, -32007, 'AuthenticatedExtendedCardNotConfiguredError');
  });
});

describe('request errors', () => {
  it('malformed JSON is 400 -32700', async () => {
    const { app } = await build(echoAgent);
    expectRestError(await rest(app, 'POST', '/v1/message:send', '{"message": '), 400, -32700, 'JSONParseError');
  });

  it('a body that is not JSON by its Content-Type is 415 (issue 31); an empty one with any type is no body', async () => {
    const { app } = await build(echoAgent);
    const body = expectRestError(
      await rest(app, 'POST', '/v1/message:send', JSON.stringify({ message: protoMessage('x') }), {
        'content-type': 'text/plain',
      }),
      415,
      -32005,
      'ContentTypeNotSupportedError',
    );
    expect(body.message).toMatch(/Content-Type/);
    expectRestError(
      await rest(app, 'POST', '/v1/tasks/nope:cancel', undefined, { 'content-type': 'text/plain' }),
      404,
      -32001,
      'TaskNotFoundError',
    );
  });

  it('a body over the limit is 413 with the binding error body', async () => {
    const { app } = await build(echoAgent, { bodyLimit: 1024 });
    const res = await rest(app, 'POST', '/v1/message:send', { message: protoMessage('x'.repeat(4096)) });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: -32600, error: 'InvalidRequestError' });
  });

  it("keeps the status of an error from the application's hooks (401 from authentication, 429 from a rate limiter, 503 from load shedding)", async () => {
    const app = Fastify();
    extraApps.push(app);
    app.addHook('onRequest', async (request, reply) => {
      if (request.headers['x-test-refuse'] === 'auth') {
        throw Object.assign(new Error('Missing bearer token.'), { statusCode: 401 });
      }
      if (request.headers['x-test-refuse'] === 'shed') {
        throw Object.assign(new Error('event loop delay 900 ms on host db-7'), { statusCode: 503 });
      }
      if (request.headers['x-test-refuse'] === 'rate') {
        reply.header('retry-after', '7');
        throw Object.assign(new Error('Rate limit exceeded, retry in 7 seconds.'), { statusCode: 429 });
      }
    });
    await app.register(a2aPlugin, {
      agentCard: testCard,
      executor: echoAgent,
      store: new MemoryStore(),
      retention: false,
    });
    await app.ready();
    const auth = expectRestError(
      await rest(app, 'GET', '/v1/tasks/t1', undefined, { 'x-test-refuse': 'auth' }),
      401,
      -32600,
      'InvalidRequestError',
    );
    expect(auth.message).toMatch(/Missing bearer token/);
    const limited = await rest(
      app,
      'POST',
      '/v1/message:send',
      { message: protoMessage('x') },
      { 'x-test-refuse': 'rate' },
    );
    expectRestError(limited, 429, -32600, 'InvalidRequestError');
    expect(limited.headers['retry-after']).toBe('7');
    // a server error keeps its status but not its message
    const shed = await rest(app, 'GET', '/v1/tasks/t1', undefined, { 'x-test-refuse': 'shed' });
    expectRestError(shed, 503, -32603, 'InternalError');
    expect(shed.body).not.toMatch(/db-7|900 ms/);
  });

  it('an unknown path or method under /v1 is 404 MethodNotFoundError', async () => {
    const { app } = await build(echoAgent);
    const cases: [Parameters<typeof rest>[1], string, RegExp][] = [
      ['GET', '/v1/nope', /not found/i],
      ['POST', '/v1/tasks/t1:frobnicate', /not allowed|not found/i],
      ['GET', '/v1/tasks/t1/nested/deeper', /not found/i],
      ['PUT', '/v1/tasks/t1', /not allowed/i],
      ['DELETE', '/v1/message:send', /not allowed/i],
      ['GET', '/v1/message:send', /not allowed/i],
    ];
    for (const [method, url, message] of cases) {
      const body = expectRestError(await rest(app, method, url), 404, -32601, 'MethodNotFoundError');
      expect(body.message, `${method} ${url}`).toMatch(message);
    }
  });
});

describe('a failing store', () => {
  const SECRET = 'connect ECONNREFUSED db.internal:5432 user=secret';

  /** A store that fails the way a database driver does, naming its host and user. */
  class FailingStore extends MemoryStore {
    failGetTask = false;
    failReadEvents = false;
    override async getTask(...args: Parameters<MemoryStore['getTask']>): Promise<TaskRecord | undefined> {
      if (this.failGetTask) throw new Error(SECRET);
      return super.getTask(...args);
    }
    override async readEvents(...args: Parameters<MemoryStore['readEvents']>): Promise<StoredEvent[]> {
      if (this.failReadEvents) throw new Error(SECRET);
      return super.readEvents(...args);
    }
  }

  it('answers a generic 500 -32603 that never carries the store message', async () => {
    const store = new FailingStore();
    const { app } = await build(echoAgent, { store });
    store.failGetTask = true;
    for (const [method, url] of [
      ['GET', '/v1/tasks/t1'],
      ['POST', '/v1/tasks/t1:cancel'],
      ['POST', '/v1/tasks/t1:subscribe'],
    ] as const) {
      const res = await rest(app, method, url);
      expectRestError(res, 500, -32603, 'InternalError');
      expect(res.body, `${method} ${url}`).not.toMatch(/db\.internal|secret|5432/);
    }
  });

  it('a failure after the stream started is an `event: error` with {code, message}, without the store message', async () => {
    const store = new FailingStore();
    // The turn ends with the task still working, so the stream waits on the log.
    const { app } = await build(async (turn) => turn.working('still going'), { store });
    const base = await listen(app);
    const sent = await sendTask(app, { message: protoMessage('x'), configuration: { blocking: true } });
    store.failReadEvents = true;
    const { response, text, events } = await readRestStream(`${base}/v1/tasks/${sent.id}:subscribe`);
    expect(response.status).toBe(200);
    expect(events[0]?.data.task).toMatchObject({ id: sent.id });
    const last = events.at(-1);
    expect(last?.event).toBe('error');
    expect(last?.dataLines).toHaveLength(1);
    expect(last?.data).toMatchObject({ code: -32603, error: 'InternalError' });
    expect(typeof last?.data.message).toBe('string');
    expect(text).not.toMatch(/db\.internal|secret|5432/);
  });
});
