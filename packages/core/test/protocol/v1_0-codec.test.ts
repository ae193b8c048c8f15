import { describe, expect, it } from 'vitest';
import { A2AError } from '../../src/errors.js';
import type { AgentCard, Message, Task } from '../../src/model/types.js';
import { jsonRpc1_0, protoJson1_0, rest1_0 } from '../../src/protocol/v1_0/index.js';

const codec = protoJson1_0;

function invalid(run: () => unknown): A2AError {
  try {
    run();
  } catch (error) {
    if (A2AError.is(error)) return error;
    throw error;
  }
  throw new Error('expected an A2AError');
}

const task: Task = {
  kind: 'task',
  id: 't1',
  contextId: 'c1',
  status: {
    state: 'canceled',
    timestamp: '2026-11-23T10:00:00.000Z',
    message: { kind: 'message', role: 'agent', messageId: 'a1', parts: [{ kind: 'text', text: 'stopped' }] },
  },
  history: [
    {
      kind: 'message',
      role: 'user',
      messageId: 'u1',
      taskId: 't1',
      contextId: 'c1',
      parts: [
        { kind: 'text', text: 'hi', metadata: { lang: 'en' } },
        { kind: 'file', file: { uri: 'https://example.com/a.pdf', mimeType: 'application/pdf', name: 'a.pdf' } },
        { kind: 'file', file: { bytes: 'aGk=' } },
        { kind: 'data', data: { value: [1, 2] }, metadata: { data_part_compat: true } },
        { kind: 'data', data: { a: 1 } },
      ],
    },
  ],
  artifacts: [],
};

describe('A2A 1.0 requests → the internal model', () => {
  it('reads SendMessageRequest in lowerCamelCase and snake_case, with enum names or numbers', () => {
    for (const request of [
      {
        message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hello' }], contextId: 'c9' },
        configuration: { returnImmediately: true, historyLength: 2, acceptedOutputModes: ['text/plain'] },
        metadata: { trace: 'x' },
      },
      {
        message: { message_id: 'm1', role: 1, parts: [{ text: 'hello' }], context_id: 'c9' },
        configuration: { return_immediately: true, history_length: 2, accepted_output_modes: ['text/plain'] },
        metadata: { trace: 'x' },
      },
    ]) {
      expect(codec.decode('sendMessage', request, 'params')).toEqual({
        message: {
          kind: 'message',
          messageId: 'm1',
          role: 'user',
          parts: [{ kind: 'text', text: 'hello' }],
          contextId: 'c9',
        },
        configuration: { acceptedOutputModes: ['text/plain'], historyLength: 2, blocking: false },
        metadata: { trace: 'x' },
      });
    }
  });

  it('blocks unless returnImmediately is true (§3.2.2)', () => {
    const params = codec.decode(
      'sendMessage',
      { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } },
      'params',
    );
    expect(params.configuration?.blocking).toBe(true);
  });

  it('turns flattened parts into the model’s: raw/url into files, any data value into a data part', () => {
    const params = codec.decode(
      'sendMessage',
      {
        message: {
          messageId: 'm',
          role: 'ROLE_USER',
          parts: [
            { raw: 'aGk=', mediaType: 'text/plain', filename: 'hi.txt' },
            { url: 'https://example.com/x', mediaType: 'image/png' },
            { data: { a: 1 }, metadata: { m: true } },
            { data: [1, 2, 3] },
            { data: 'just a string' },
          ],
        },
      },
      'params',
    );
    expect(params.message.parts).toEqual([
      { kind: 'file', file: { bytes: 'aGk=', mimeType: 'text/plain', name: 'hi.txt' } },
      { kind: 'file', file: { uri: 'https://example.com/x', mimeType: 'image/png' } },
      { kind: 'data', data: { a: 1 }, metadata: { m: true } },
      { kind: 'data', data: { value: [1, 2, 3] }, metadata: { data_part_compat: true } },
      { kind: 'data', data: { value: 'just a string' }, metadata: { data_part_compat: true } },
    ]);
  });

  it('names each offending field in 1.0 terms', () => {
    const noRole = invalid(() =>
      codec.decode('sendMessage', { message: { messageId: 'm', parts: [{ text: 'x' }] } }, 'params'),
    );
    expect(noRole.code).toBe('INVALID_PARAMS');
    expect(noRole.message).toMatch(/params\.message\.role is required/);
    const twoKinds = invalid(() =>
      codec.decode(
        'sendMessage',
        { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x', url: 'u' }] } },
        'params',
      ),
    );
    expect(twoKinds.message).toMatch(
      /params\.message\.parts\[0\] must have exactly one of "text", "raw", "url", "data"/,
    );
    const kind03 = invalid(() =>
      codec.decode(
        'sendMessage',
        { message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'x' }] } },
        'params',
      ),
    );
    expect(kind03.message).toMatch(/role must be one of "ROLE_USER", "ROLE_AGENT"/);
    expect(invalid(() => codec.decode('getTask', { id: 't', historyLength: -1 }, 'params')).message).toMatch(
      /historyLength/,
    );
    expect(invalid(() => codec.decode('getTask', undefined, 'params')).message).toMatch(
      /"GetTask" requires a params object/,
    );
  });

  it('reads GetTask, CancelTask, SubscribeToTask and the push-config requests, and GetExtendedAgentCard without params', () => {
    expect(codec.decode('getTask', { id: 't', history_length: 0, tenant: 'acme' }, 'params')).toEqual({
      id: 't',
      historyLength: 0,
    });
    expect(codec.decode('cancelTask', { id: 't', metadata: { why: 'x' } }, 'params')).toEqual({
      id: 't',
      metadata: { why: 'x' },
    });
    expect(codec.decode('subscribeToTask', { id: 't' }, 'params')).toEqual({ id: 't' });
    expect(
      codec.decode(
        'setTaskPushNotificationConfig',
        {
          taskId: 't',
          id: 'c',
          url: 'https://hook',
          token: 'tok',
          authentication: { scheme: 'Bearer', credentials: 'x' },
        },
        'params',
      ),
    ).toEqual({
      taskId: 't',
      pushNotificationConfig: {
        id: 'c',
        url: 'https://hook',
        token: 'tok',
        authentication: { schemes: ['Bearer'], credentials: 'x' },
      },
    });
    // 1.0's `id` is the config, `taskId` the task; the model keeps 0.3's names.
    expect(codec.decode('getTaskPushNotificationConfig', { taskId: 't', id: 'c' }, 'params')).toEqual({
      id: 't',
      pushNotificationConfigId: 'c',
    });
    expect(codec.decode('getExtendedAgentCard', undefined, 'params')).toEqual({});
  });
});

describe('ListTasks', () => {
  it('reads its filters (status by enum name or number) into the model, and takes no params at all', () => {
    expect(
      codec.decode(
        'listTasks',
        { contextId: 'c', status: 'TASK_STATE_CANCELED', page_size: 10, pageToken: 'tok', include_artifacts: true },
        'params',
      ),
    ).toEqual({ contextId: 'c', status: 'canceled', pageSize: 10, pageToken: 'tok', includeArtifacts: true });
    expect(codec.decode('listTasks', { status: 6 }, 'params')).toEqual({ status: 'input-required' });
    expect(codec.decode('listTasks', undefined, 'params')).toEqual({});
    expect(invalid(() => codec.decode('listTasks', { pageSize: 101 }, 'params')).message).toMatch(/pageSize/);
    expect(invalid(() => codec.decode('listTasks', { status: 'working' }, 'params')).message).toMatch(
      /status must be one of/,
    );
  });

  it('writes every member of ListTasksResponse, nextPageToken "" included', () => {
    expect(codec.encodeResult('listTasks', { tasks: [task], nextPageToken: '', pageSize: 50, totalSize: 1 })).toEqual({
      tasks: [expect.objectContaining({ id: 't1', status: expect.objectContaining({ state: 'TASK_STATE_CANCELED' }) })],
      nextPageToken: '',
      pageSize: 50,
      totalSize: 1,
    });
  });
});

describe('the internal model → A2A 1.0 ProtoJSON', () => {
  it('writes a task with TASK_STATE_CANCELED (one L), ROLE_*, flattened parts, unwrapped data values and no empty lists', () => {
    expect(codec.encodeResult('getTask', task)).toEqual({
      id: 't1',
      contextId: 'c1',
      status: {
        state: 'TASK_STATE_CANCELED',
        timestamp: '2026-11-23T10:00:00.000Z',
        message: { messageId: 'a1', role: 'ROLE_AGENT', parts: [{ text: 'stopped' }] },
      },
      history: [
        {
          messageId: 'u1',
          taskId: 't1',
          contextId: 'c1',
          role: 'ROLE_USER',
          parts: [
            { text: 'hi', metadata: { lang: 'en' } },
            { url: 'https://example.com/a.pdf', mediaType: 'application/pdf', filename: 'a.pdf' },
            { raw: 'aGk=' },
            { data: [1, 2] },
            { data: { a: 1 } },
          ],
        },
      ],
    });
  });

  it('wraps a send result and stream items under their member names; status updates carry no `final`', () => {
    const reply: Message = { kind: 'message', role: 'agent', messageId: 'r', parts: [{ kind: 'text', text: 'ok' }] };
    expect(codec.encodeResult('sendMessage', reply)).toEqual({
      message: { messageId: 'r', role: 'ROLE_AGENT', parts: [{ text: 'ok' }] },
    });
    expect(codec.encodeResult('sendMessage', task)).toMatchObject({ task: { id: 't1' } });
    expect(
      codec.encodeStreamItem({
        kind: 'status-update',
        taskId: 't1',
        contextId: 'c1',
        final: true,
        status: { state: 'input-required' },
      }),
    ).toEqual({ statusUpdate: { taskId: 't1', contextId: 'c1', status: { state: 'TASK_STATE_INPUT_REQUIRED' } } });
    expect(
      codec.encodeStreamItem({
        kind: 'artifact-update',
        taskId: 't1',
        contextId: 'c1',
        append: false,
        lastChunk: true,
        artifact: { artifactId: 'a', parts: [{ kind: 'text', text: 'x' }] },
      }),
    ).toEqual({
      artifactUpdate: {
        taskId: 't1',
        contextId: 'c1',
        lastChunk: true,
        artifact: { artifactId: 'a', parts: [{ text: 'x' }] },
      },
    });
  });

  it('writes the card in 1.0’s shape: supportedInterfaces, capabilities.extendedAgentCard, wrapped security schemes', () => {
    const card: AgentCard = {
      protocolVersion: '0.3.0',
      name: 'n',
      description: 'd',
      url: 'http://h/a2a',
      version: '1',
      capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 's', name: 'S', description: 'x', tags: [], security: [{ bearer: [] }] }],
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      security: [{ bearer: ['read'] }],
      supportsAuthenticatedExtendedCard: false,
      supportedInterfaces: [{ url: 'http://h/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    };
    expect(codec.encodeCard(card)).toEqual({
      name: 'n',
      description: 'd',
      version: '1',
      supportedInterfaces: [{ url: 'http://h/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'bearer' } } },
      securityRequirements: [{ schemes: { bearer: { list: ['read'] } } }],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 's', name: 'S', description: 'x', securityRequirements: [{ schemes: { bearer: { list: [] } } }] }],
    });
  });
});

describe('A2A 1.0 errors', () => {
  const notFound = new A2AError('TASK_NOT_FOUND', 'Task not found: "x".', { data: { taskId: 'x' } });

  it('JSON-RPC: the code, and data as ProtoJSON Any entries with a google.rpc.ErrorInfo (string metadata)', () => {
    expect(jsonRpc1_0.error(notFound)).toEqual({
      code: -32001,
      message: 'Task not found: "x".',
      data: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'TASK_NOT_FOUND',
          domain: 'a2a-protocol.org',
          metadata: { taskId: 'x' },
        },
      ],
    });
    const versionError = new A2AError('VERSION_NOT_SUPPORTED', 'no', {
      data: { requested: '2.0', supported: '0.3, 1.0' },
    });
    expect(jsonRpc1_0.error(versionError)).toMatchObject({ code: -32009 });
  });

  it('HTTP+JSON: the status, and { error: google.rpc.Status } with the HTTP code, the status name and the details', () => {
    expect(rest1_0.error(notFound)).toEqual({
      status: 404,
      body: {
        error: {
          code: 404,
          status: 'NOT_FOUND',
          message: 'Task not found: "x".',
          details: [expect.objectContaining({ reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' })],
        },
      },
    });
    expect(rest1_0.error(new A2AError('TASK_NOT_CANCELABLE', 'no')).status).toBe(400);
    const invalidParams = new A2AError('INVALID_PARAMS', 'Invalid params', {
      data: { errors: [{ path: 'params.id', problem: 'is required' }] },
    });
    expect((rest1_0.error(invalidParams).body as { error: { details: unknown[] } }).error.details).toContainEqual({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field: 'params.id', description: 'is required' }],
    });
  });

  it('maps every 1.0 method name to an operation, and routes have tenant forms', () => {
    expect([...jsonRpc1_0.methods.keys()].sort()).toEqual(
      [
        'CancelTask',
        'CreateTaskPushNotificationConfig',
        'DeleteTaskPushNotificationConfig',
        'GetExtendedAgentCard',
        'GetTask',
        'GetTaskPushNotificationConfig',
        'ListTaskPushNotificationConfigs',
        'ListTasks',
        'SendMessage',
        'SendStreamingMessage',
        'SubscribeToTask',
      ].sort(),
    );
    const paths = rest1_0.routes.map((r) => `${r.method} ${r.path}`);
    expect(paths).toContain('POST /message:send');
    expect(paths).toContain('POST /{tenant}/message:send');
    expect(paths).toContain('GET /{tenant}/tasks/{id}');
    expect(paths).toContain('GET /tasks');
  });
});
