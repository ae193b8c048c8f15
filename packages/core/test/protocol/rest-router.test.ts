/**
 * The HTTP+JSON route table (bindings/rest.ts) on its own: which route and path parameters a method
 * and a raw (still percent-encoded) path select, for the routes of A2A 0.3 (§3.5.6) and a few made
 * up to probe the matcher.
 */
import { describe, expect, it } from 'vitest';
import { A2AError } from '../../src/errors.js';
import { RestRouter } from '../../src/protocol/bindings/rest.js';
import type { RestRoute } from '../../src/protocol/codec.js';
import { rest0_3 } from '../../src/protocol/v0_3/rest.js';

const router = new RestRouter(rest0_3.routes);

function matched(method: string, path: string): { operation: string; path: Record<string, string> } {
  const found = router.match(method, path);
  return { operation: found.route.operation, path: { ...found.path } };
}

function refusal(routes: RestRouter, method: string, path: string): A2AError {
  try {
    routes.match(method, path);
  } catch (error) {
    if (A2AError.is(error)) return error;
    throw error;
  }
  throw new Error(`${method} ${path} matched`);
}

describe('RestRouter over the 0.3 routes', () => {
  it('matches each operation', () => {
    expect(matched('POST', '/v1/message:send')).toEqual({ operation: 'sendMessage', path: {} });
    expect(matched('POST', '/v1/message:stream')).toEqual({ operation: 'sendStreamingMessage', path: {} });
    expect(matched('GET', '/v1/tasks/t1')).toEqual({ operation: 'getTask', path: { id: 't1' } });
    expect(matched('POST', '/v1/tasks/t1:cancel')).toEqual({ operation: 'cancelTask', path: { id: 't1' } });
    expect(matched('POST', '/v1/tasks/t1:subscribe')).toEqual({ operation: 'subscribeToTask', path: { id: 't1' } });
    // §7's text says POST, the 0.3 proto says GET: both are served
    expect(matched('GET', '/v1/tasks/t1:subscribe')).toEqual({ operation: 'subscribeToTask', path: { id: 't1' } });
    expect(matched('POST', '/v1/tasks/t1/pushNotificationConfigs')).toEqual({
      operation: 'setTaskPushNotificationConfig',
      path: { id: 't1' },
    });
    expect(matched('GET', '/v1/tasks/t1/pushNotificationConfigs')).toEqual({
      operation: 'listTaskPushNotificationConfig',
      path: { id: 't1' },
    });
    expect(matched('GET', '/v1/tasks/t1/pushNotificationConfigs/c1')).toEqual({
      operation: 'getTaskPushNotificationConfig',
      path: { id: 't1', configId: 'c1' },
    });
    expect(matched('DELETE', '/v1/tasks/t1/pushNotificationConfigs/c1')).toEqual({
      operation: 'deleteTaskPushNotificationConfig',
      path: { id: 't1', configId: 'c1' },
    });
    expect(matched('GET', '/v1/card')).toEqual({ operation: 'getExtendedAgentCard', path: {} });
  });

  it('a suffix route wins over the plain one whatever the order of the table', () => {
    const reversed = new RestRouter([...rest0_3.routes].reverse());
    for (const routes of [router, reversed]) {
      expect(routes.match('GET', '/v1/tasks/t1:subscribe').route.operation).toBe('subscribeToTask');
      expect(routes.match('GET', '/v1/tasks/t1').route.operation).toBe('getTask');
    }
  });

  it('ids may contain `:`, literally or as %3A; the suffix is the last `:verb` written literally', () => {
    expect(matched('GET', '/v1/tasks/a:b')).toEqual({ operation: 'getTask', path: { id: 'a:b' } });
    expect(matched('GET', '/v1/tasks/a%3Ab')).toEqual({ operation: 'getTask', path: { id: 'a:b' } });
    expect(matched('POST', '/v1/tasks/a:b:cancel')).toEqual({ operation: 'cancelTask', path: { id: 'a:b' } });
    expect(matched('POST', '/v1/tasks/a%3Ab:cancel')).toEqual({ operation: 'cancelTask', path: { id: 'a:b' } });
    // an encoded `:cancel` is part of the id, not the custom method
    expect(matched('GET', '/v1/tasks/x%3Acancel')).toEqual({ operation: 'getTask', path: { id: 'x:cancel' } });
    expect(matched('POST', '/v1/tasks/x%3Acancel:cancel')).toEqual({
      operation: 'cancelTask',
      path: { id: 'x:cancel' },
    });
    expect(refusal(router, 'POST', '/v1/tasks/x%3Acancel').message).toMatch(/^Method not allowed/);
  });

  it('decodes each parameter on its own: an encoded `/` stays inside its segment', () => {
    expect(matched('GET', '/v1/tasks/t%2F1/pushNotificationConfigs/c%3A1')).toEqual({
      operation: 'getTaskPushNotificationConfig',
      path: { id: 't/1', configId: 'c:1' },
    });
    expect(matched('GET', '/v1/tasks/caf%C3%A9')).toEqual({ operation: 'getTask', path: { id: 'café' } });
    // a literal `/` is a segment boundary
    expect(refusal(router, 'GET', '/v1/tasks/t/1').code).toBe('METHOD_NOT_FOUND');
  });

  it('an empty id matches no route', () => {
    expect(refusal(router, 'GET', '/v1/tasks/').code).toBe('METHOD_NOT_FOUND');
    // `:cancel` alone is an id (for GET), never a cancel of the empty id
    expect(matched('GET', '/v1/tasks/:cancel')).toEqual({ operation: 'getTask', path: { id: ':cancel' } });
    expect(refusal(router, 'POST', '/v1/tasks/:cancel').message).toMatch(/^Method not allowed/);
  });

  it('says "not found" for a path no route has, "method not allowed" for a path another method has', () => {
    const missing = refusal(router, 'GET', '/v1/nope');
    expect(missing.code).toBe('METHOD_NOT_FOUND');
    expect(missing.message).toMatch(/^Not found: GET \/v1\/nope/);
    expect(missing.data).toEqual({ method: 'GET', path: '/v1/nope' });
    for (const [method, path] of [
      ['DELETE', '/v1/message:send'],
      ['GET', '/v1/message:send'],
      ['PUT', '/v1/tasks/t1'],
      ['POST', '/v1/tasks/t1'],
      ['DELETE', '/v1/tasks/t1/pushNotificationConfigs'],
    ] as const) {
      const refused = refusal(router, method, path);
      expect(refused.code, `${method} ${path}`).toBe('METHOD_NOT_FOUND');
      expect(refused.message, `${method} ${path}`).toMatch(/^Method not allowed/);
    }
    expect(refusal(router, 'GET', '/v1/card/extra').message).toMatch(/^Not found/);
    expect(refusal(router, 'GET', '/v2/card').message).toMatch(/^Not found/);
  });

  it('refuses a malformed percent-encoding as INVALID_REQUEST naming the segment', () => {
    for (const path of ['/v1/tasks/%E0%A4%A', '/v1/tasks/%zz:cancel', '/v1/tasks/%']) {
      const method = path.endsWith(':cancel') ? 'POST' : 'GET';
      const error = refusal(router, method, path);
      expect(error.code, path).toBe('INVALID_REQUEST');
      expect(error.message, path).toMatch(/percent-encoding/);
    }
  });

  it('treats the literal parts of a route as text, not as patterns', () => {
    const routes: RestRoute[] = [
      { method: 'GET', path: '/v1/a.b/{id}', operation: 'getTask', params: () => ({}) },
      { method: 'GET', path: '/v1/x+/{id}:go(now)', operation: 'cancelTask', params: () => ({}) },
    ];
    const custom = new RestRouter(routes);
    expect(custom.match('GET', '/v1/a.b/1').route.operation).toBe('getTask');
    expect(refusal(custom, 'GET', '/v1/aXb/1').code).toBe('METHOD_NOT_FOUND');
    expect(custom.match('GET', '/v1/x+/1:go(now)').path).toEqual({ id: '1' });
    expect(refusal(custom, 'GET', '/v1/xx/1:gonow').code).toBe('METHOD_NOT_FOUND');
    expect(custom.routes).toHaveLength(2);
  });
});
