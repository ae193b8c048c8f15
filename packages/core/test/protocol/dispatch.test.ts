/**
 * The one dispatch every binding calls: validate and decode → authorize → capability gate → call,
 * and errors as the client may see them. Tested with a stub service and the real 0.3 codec.
 */
import { describe, expect, it, vi } from 'vitest';
import { A2AError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { Task } from '../../src/model/types.js';
import type { ProtocolCodec } from '../../src/protocol/codec.js';
import { callContext } from '../../src/protocol/context.js';
import {
  type AuthorizeHook,
  type DeclaredCapabilities,
  type Dispatched,
  Dispatcher,
  type DispatcherOptions,
} from '../../src/protocol/dispatch.js';
import type { A2AService, StreamFrame } from '../../src/protocol/operations.js';
import { json0_3 } from '../../src/protocol/v0_3/jsonrpc.js';

const task: Task = {
  kind: 'task',
  id: 't-1',
  contextId: 'c-1',
  status: { state: 'completed' },
};

const ALL: DeclaredCapabilities = { streaming: true, pushNotifications: true, extendedAgentCard: true };
const NONE: DeclaredCapabilities = { streaming: false, pushNotifications: false, extendedAgentCard: false };

async function* frames(): AsyncGenerator<StreamFrame> {
  yield { seq: 1, result: task };
}

/** A service whose every operation is a spy; `getTask` answers `task` unless told otherwise. */
function stubService(order: string[] = []) {
  const call =
    <T>(result: () => T) =>
    async (): Promise<T> => {
      order.push('call');
      return result();
    };
  const service = {
    sendMessage: vi.fn(call(() => task)),
    sendStreamingMessage: vi.fn(call(() => frames())),
    getTask: vi.fn(call(() => task)),
    listTasks: vi.fn(call(() => ({ tasks: [task], nextPageToken: '', pageSize: 50, totalSize: 1 }))),
    cancelTask: vi.fn(call(() => task)),
    subscribeToTask: vi.fn(call(() => frames())),
    setTaskPushNotificationConfig: vi.fn(call(() => ({ taskId: 't-1', pushNotificationConfig: { url: 'u' } }))),
    getTaskPushNotificationConfig: vi.fn(call(() => ({ taskId: 't-1', pushNotificationConfig: { url: 'u' } }))),
    listTaskPushNotificationConfig: vi.fn(call(() => [])),
    deleteTaskPushNotificationConfig: vi.fn(call(() => null)),
    getExtendedAgentCard: vi.fn(call(() => ({}) as never)),
  } satisfies A2AService;
  return service;
}

function spyLogger() {
  return { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() } satisfies Logger;
}

/** A codec that records each decode, to see where validation falls in the order. */
function recordingCodec(order: string[]): ProtocolCodec {
  return {
    ...json0_3,
    decode(operation, params, root) {
      order.push('validate');
      return json0_3.decode(operation, params, root);
    },
  };
}

const ctx = callContext({ principal: { id: 'alice' }, tenant: 'acme' });

function expectError(outcome: Dispatched): Extract<Dispatched, { kind: 'error' }> {
  if (outcome.kind !== 'error') throw new Error(`expected an error, got ${outcome.kind}`);
  return outcome;
}

function dispatcher(options: Partial<DispatcherOptions> & { service: A2AService }): Dispatcher {
  return new Dispatcher({ capabilities: ALL, ...options });
}

describe('Dispatcher order: validate → authorize → capability gate → call', () => {
  it('runs the steps in that order and calls the service with the decoded params and the context', async () => {
    const order: string[] = [];
    const service = stubService(order);
    const authorize = vi.fn<AuthorizeHook>(() => {
      order.push('authorize');
      return true;
    });
    const capabilities = vi.fn(() => {
      order.push('capabilities');
      return ALL;
    });
    const outcome = await dispatcher({ service, authorize, capabilities }).dispatch(
      recordingCodec(order),
      'setTaskPushNotificationConfig',
      { taskId: 't-1', pushNotificationConfig: { url: 'https://example.com/hook' } },
      ctx,
    );
    expect(order).toEqual(['validate', 'authorize', 'capabilities', 'call']);
    expect(outcome).toEqual({ kind: 'result', result: { taskId: 't-1', pushNotificationConfig: { url: 'u' } } });
    expect(service.setTaskPushNotificationConfig).toHaveBeenCalledWith(
      { taskId: 't-1', pushNotificationConfig: { url: 'https://example.com/hook' } },
      ctx,
    );
    expect(authorize).toHaveBeenCalledWith(ctx, 'setTaskPushNotificationConfig', {
      taskId: 't-1',
      pushNotificationConfig: { url: 'https://example.com/hook' },
    });
  });

  it('invalid params answer INVALID_PARAMS; neither authorize nor the service is called', async () => {
    const service = stubService();
    const authorize = vi.fn<AuthorizeHook>(() => true);
    const outcome = expectError(await dispatcher({ service, authorize }).dispatch(json0_3, 'getTask', {}, ctx));
    expect(outcome.error.code).toBe('INVALID_PARAMS');
    expect(outcome.error.message).toMatch(/params\.id is required/);
    expect(outcome.validated).toBe(false);
    expect(authorize).not.toHaveBeenCalled();
    expect(service.getTask).not.toHaveBeenCalled();
  });

  it('an authorize hook returning false answers PERMISSION_DENIED, logs the refusal and calls nothing further', async () => {
    const service = stubService();
    const log = spyLogger();
    const capabilities = vi.fn(() => NONE);
    const outcome = expectError(
      await dispatcher({ service, authorize: () => false, capabilities, logger: log }).dispatch(
        json0_3,
        'setTaskPushNotificationConfig',
        { taskId: 't-1', pushNotificationConfig: { url: 'https://example.com/hook' } },
        ctx,
      ),
    );
    // Refused before the gate: a caller that may not call it learns nothing of what the card supports.
    expect(outcome.error.code).toBe('PERMISSION_DENIED');
    expect(outcome.error.httpStatus).toBe(403);
    expect(outcome.validated).toBe(true);
    expect(capabilities).not.toHaveBeenCalled();
    expect(service.setTaskPushNotificationConfig).not.toHaveBeenCalled();
    expect(log.warn).toHaveBeenCalledWith(
      { operation: 'setTaskPushNotificationConfig', principal: 'alice' },
      expect.stringMatching(/refused by authorize/),
    );
  });

  it('an authorize hook returning undefined allows the call; one throwing an A2AError answers with it', async () => {
    const service = stubService();
    const allowed = await dispatcher({ service, authorize: async () => undefined }).dispatch(
      json0_3,
      'getTask',
      { id: 't-1' },
      ctx,
    );
    expect(allowed).toEqual({ kind: 'result', result: task });
    const thrown = expectError(
      await dispatcher({
        service,
        authorize: () => {
          throw new A2AError('UNAUTHENTICATED', 'Sign in first: send a bearer token.');
        },
      }).dispatch(json0_3, 'getTask', { id: 't-1' }, ctx),
    );
    expect(thrown.error.code).toBe('UNAUTHENTICATED');
    expect(thrown.error.message).toBe('Sign in first: send a bearer token.');
    expect(service.getTask).toHaveBeenCalledTimes(1);
  });
});

describe('Dispatcher capability gate', () => {
  it.each([
    [
      'setTaskPushNotificationConfig',
      { taskId: 't', pushNotificationConfig: { url: 'https://example.com/hook' } },
      'PUSH_NOTIFICATION_NOT_SUPPORTED',
      -32003,
    ],
    ['getTaskPushNotificationConfig', { id: 't' }, 'PUSH_NOTIFICATION_NOT_SUPPORTED', -32003],
    ['getExtendedAgentCard', undefined, 'EXTENDED_CARD_NOT_CONFIGURED', -32007],
    ['subscribeToTask', { id: 't' }, 'UNSUPPORTED_OPERATION', -32004],
  ] as const)('%s is refused when the card lacks its capability (%s)', async (operation, params, code, jsonRpc) => {
    const service = stubService();
    const outcome = expectError(
      await dispatcher({ service, capabilities: NONE }).dispatch(json0_3, operation, params, ctx),
    );
    expect(outcome.error.code).toBe(code);
    expect(outcome.error.jsonRpcCode).toBe(jsonRpc);
    expect(outcome.validated).toBe(true);
    expect(service[operation]).not.toHaveBeenCalled();
  });

  it('refuses only after validation: invalid params of an unsupported operation are INVALID_PARAMS', async () => {
    const service = stubService();
    const outcome = expectError(
      await dispatcher({ service, capabilities: NONE }).dispatch(
        json0_3,
        'setTaskPushNotificationConfig',
        { taskId: 't' },
        ctx,
      ),
    );
    expect(outcome.error.code).toBe('INVALID_PARAMS');
    expect(outcome.validated).toBe(false);
  });

  it('reads the capabilities on every call when given a function', async () => {
    const service = stubService();
    let declared = NONE;
    const d = dispatcher({ service, capabilities: () => declared });
    const before = await d.dispatch(json0_3, 'getTaskPushNotificationConfig', { id: 't' }, ctx);
    declared = ALL;
    const after = await d.dispatch(json0_3, 'getTaskPushNotificationConfig', { id: 't' }, ctx);
    expect(before.kind).toBe('error');
    expect(after.kind).toBe('result');
  });

  it('a streaming operation answers with its frames', async () => {
    const service = stubService();
    const outcome = await dispatcher({ service }).dispatch(json0_3, 'subscribeToTask', { id: 't-1' }, ctx);
    if (outcome.kind !== 'stream') throw new Error(`expected a stream, got ${outcome.kind}`);
    const items: StreamFrame[] = [];
    for await (const frame of outcome.frames) items.push(frame);
    expect(items).toEqual([{ seq: 1, result: task }]);
  });
});

describe('Dispatcher errors', () => {
  it('passes an A2AError written for clients as it is, without logging it as an internal error', async () => {
    const service = stubService();
    const notFound = new A2AError('TASK_NOT_FOUND', 'Task not found: no task with id "t-9" exists.');
    service.getTask.mockRejectedValueOnce(notFound);
    const log = spyLogger();
    const outcome = expectError(
      await dispatcher({ service, logger: log }).dispatch(json0_3, 'getTask', { id: 't-9' }, ctx),
    );
    expect(outcome.error).toBe(notFound);
    expect(outcome.validated).toBe(true);
    expect(log.error).not.toHaveBeenCalled();
  });

  it('a store that is unavailable becomes a generic UNAVAILABLE without its detail, and is logged', async () => {
    const service = stubService();
    const cause = new A2AError(
      'STORE_UNAVAILABLE',
      'could not reach postgres://a2a_rw@db-7.internal.example:5432/agents (ECONNREFUSED)',
    );
    service.getTask.mockRejectedValueOnce(cause);
    const log = spyLogger();
    const outcome = expectError(
      await dispatcher({ service, logger: log }).dispatch(json0_3, 'getTask', { id: 't-1' }, ctx),
    );
    expect(outcome.error.code).toBe('UNAVAILABLE');
    expect(outcome.error.httpStatus).toBe(503);
    expect(outcome.error.message).not.toMatch(/db-7|internal\.example|a2a_rw|5432|ECONNREFUSED/);
    expect(log.error).toHaveBeenCalledWith({ err: cause, operation: 'getTask' }, expect.any(String));
  });

  it.each([
    ['a plain Error naming a host', new Error('getaddrinfo ENOTFOUND pg-primary.prod.internal')],
    ['a non-exposed A2AError', new A2AError('VERSION_CONFLICT', 'Task "t-1" in schema "tenant_acme" conflicted')],
    ['a thrown string', 'pg-primary.prod.internal is down'],
  ])('%s becomes a generic INTERNAL error whose message has no detail, and is logged', async (_what, thrown) => {
    const service = stubService();
    service.cancelTask.mockRejectedValueOnce(thrown);
    const log = spyLogger();
    const outcome = expectError(
      await dispatcher({ service, logger: log }).dispatch(json0_3, 'cancelTask', { id: 't-1' }, ctx),
    );
    expect(outcome.error.code).toBe('INTERNAL');
    expect(outcome.error.jsonRpcCode).toBe(-32603);
    expect(outcome.error.message).not.toMatch(/pg-primary|prod\.internal|tenant_acme|ENOTFOUND/);
    expect(outcome.error.message).toMatch(/Internal error/);
    expect(log.error).toHaveBeenCalledWith({ err: thrown, operation: 'cancelTask' }, expect.any(String));
  });
});
