/**
 * The ProtoJSON of A2A 0.3's HTTP+JSON binding (v0_3/proto-json.ts and the codec in v0_3/rest.ts):
 * what the model becomes on the wire, and every input form clients send (@a2a-js/sdk 0.3.14's
 * camelCase ProtoJSON, snake_case field names, the A2A TCK's mix, JSON-RPC-style `kind` tags).
 */
import { describe, expect, it } from 'vitest';
import { A2AError } from '../../src/errors.js';
import type {
  AgentCard,
  Message,
  Task,
  TaskArtifactUpdateEvent,
  TaskState,
  TaskStatusUpdateEvent,
} from '../../src/model/types.js';
import {
  artifactUpdateOut,
  cardOut,
  messageIn,
  messageOut,
  sendParamsIn,
  setPushParamsIn,
  statusUpdateOut,
  taskOut,
} from '../../src/protocol/v0_3/proto-json.js';
import { protoJson0_3 } from '../../src/protocol/v0_3/rest.js';

const message: Message = {
  kind: 'message',
  messageId: 'm1',
  contextId: 'c1',
  taskId: 't1',
  role: 'user',
  parts: [
    { kind: 'text', text: 'hello' },
    { kind: 'data', data: { n: 1, list: [1, 2], nested: { data: 'not a wrapper' } } },
    { kind: 'file', file: { uri: 'https://example.com/a.png', mimeType: 'image/png' } },
    { kind: 'file', file: { bytes: 'aGVsbG8=', mimeType: 'text/plain' } },
  ],
  metadata: { trace: 'x' },
  extensions: ['https://ext.example/v1'],
};

const task: Task = {
  kind: 'task',
  id: 't1',
  contextId: 'c1',
  status: {
    state: 'working',
    timestamp: '2025-01-01T00:00:00.000Z',
    message: { kind: 'message', messageId: 'a1', role: 'agent', parts: [{ kind: 'text', text: 'on it' }] },
  },
  history: [message],
  artifacts: [
    {
      artifactId: 'art',
      name: 'result',
      description: 'what came out',
      parts: [{ kind: 'data', data: { ok: true } }],
      metadata: { m: 1 },
    },
  ],
  metadata: { owner: 'me' },
};

function decodeError(operation: Parameters<typeof protoJson0_3.decode>[0], params: unknown): A2AError {
  try {
    protoJson0_3.decode(operation, params, 'params');
  } catch (error) {
    if (A2AError.is(error)) return error;
    throw error;
  }
  throw new Error('decoded');
}

describe('output (model → ProtoJSON)', () => {
  it('a message: ROLE_*, parts under content in their proto forms, no kind', () => {
    expect(messageOut(message)).toEqual({
      messageId: 'm1',
      contextId: 'c1',
      taskId: 't1',
      role: 'ROLE_USER',
      content: [
        { text: 'hello' },
        { data: { data: { n: 1, list: [1, 2], nested: { data: 'not a wrapper' } } } },
        { file: { fileWithUri: 'https://example.com/a.png', mimeType: 'image/png' } },
        { file: { fileWithBytes: 'aGVsbG8=', mimeType: 'text/plain' } },
      ],
      metadata: { trace: 'x' },
      extensions: ['https://ext.example/v1'],
    });
    expect(messageOut({ kind: 'message', messageId: 'a', role: 'agent', parts: [] })).toEqual({
      messageId: 'a',
      role: 'ROLE_AGENT',
      content: [],
    });
  });

  it('a task: state names, status message, artifacts with parts, history', () => {
    expect(taskOut(task)).toEqual({
      id: 't1',
      contextId: 'c1',
      status: {
        state: 'TASK_STATE_WORKING',
        message: { messageId: 'a1', role: 'ROLE_AGENT', content: [{ text: 'on it' }] },
        timestamp: '2025-01-01T00:00:00.000Z',
      },
      artifacts: [
        {
          artifactId: 'art',
          name: 'result',
          description: 'what came out',
          parts: [{ data: { data: { ok: true } } }],
          metadata: { m: 1 },
        },
      ],
      history: [messageOut(message)],
      metadata: { owner: 'me' },
    });
  });

  it('every task state has its 0.3 proto name (CANCELLED with two Ls)', () => {
    const names: Record<TaskState, string> = {
      submitted: 'TASK_STATE_SUBMITTED',
      working: 'TASK_STATE_WORKING',
      'input-required': 'TASK_STATE_INPUT_REQUIRED',
      completed: 'TASK_STATE_COMPLETED',
      canceled: 'TASK_STATE_CANCELLED',
      failed: 'TASK_STATE_FAILED',
      rejected: 'TASK_STATE_REJECTED',
      'auth-required': 'TASK_STATE_AUTH_REQUIRED',
      unknown: 'TASK_STATE_UNSPECIFIED',
    };
    for (const [state, name] of Object.entries(names)) {
      expect(taskOut({ ...task, status: { state: state as TaskState } }).status).toEqual({ state: name });
    }
  });

  it('stream events under their oneof member names', () => {
    const status: TaskStatusUpdateEvent = {
      kind: 'status-update',
      taskId: 't1',
      contextId: 'c1',
      status: { state: 'completed' },
      final: true,
    };
    const artifact: TaskArtifactUpdateEvent = {
      kind: 'artifact-update',
      taskId: 't1',
      contextId: 'c1',
      artifact: { artifactId: 'a', parts: [{ kind: 'text', text: 'x' }] },
      append: true,
      lastChunk: false,
    };
    expect(statusUpdateOut(status)).toEqual({
      taskId: 't1',
      contextId: 'c1',
      status: { state: 'TASK_STATE_COMPLETED' },
      final: true,
    });
    expect(artifactUpdateOut(artifact)).toEqual({
      taskId: 't1',
      contextId: 'c1',
      artifact: { artifactId: 'a', parts: [{ text: 'x' }] },
      append: true,
      lastChunk: false,
    });
    expect(protoJson0_3.encodeStreamItem(task)).toEqual({ task: taskOut(task) });
    expect(protoJson0_3.encodeStreamItem(message)).toEqual({ message: messageOut(message) });
    expect(protoJson0_3.encodeStreamItem(status)).toEqual({ statusUpdate: statusUpdateOut(status) });
    expect(protoJson0_3.encodeStreamItem(artifact)).toEqual({ artifactUpdate: artifactUpdateOut(artifact) });
  });

  it('results: send wraps {task} or {message}; get and cancel are the bare task', () => {
    expect(protoJson0_3.encodeResult('sendMessage', task)).toEqual({ task: taskOut(task) });
    expect(protoJson0_3.encodeResult('sendMessage', message)).toEqual({ message: messageOut(message) });
    expect(protoJson0_3.encodeResult('getTask', task)).toEqual(taskOut(task));
    expect(protoJson0_3.encodeResult('cancelTask', task)).toEqual(taskOut(task));
  });

  it('push configs carry the resource name the 0.3.14 client reads the task id from', () => {
    const config = { taskId: 't1', pushNotificationConfig: { id: 'c1', url: 'https://hook.example' } };
    expect(protoJson0_3.encodeResult('getTaskPushNotificationConfig', config)).toEqual({
      name: 'tasks/t1/pushNotificationConfigs/c1',
      pushNotificationConfig: { id: 'c1', url: 'https://hook.example' },
    });
    expect(protoJson0_3.encodeResult('listTaskPushNotificationConfig', [config])).toEqual({
      configs: [{ name: 'tasks/t1/pushNotificationConfigs/c1', pushNotificationConfig: config.pushNotificationConfig }],
    });
  });

  it('the card: security schemes as oneof members, security requirements as lists', () => {
    const card: AgentCard = {
      protocolVersion: '0.3.0',
      name: 'a',
      description: 'd',
      url: 'https://a.example/a2a',
      preferredTransport: 'JSONRPC',
      additionalInterfaces: [{ url: 'https://a.example', transport: 'HTTP+JSON' }],
      version: '1',
      capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        key: { type: 'apiKey', name: 'X-Key', in: 'header' },
      },
      security: [{ bearer: ['read'] }],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 's', name: 'S', description: 'sd', tags: [], security: [{ key: [] }] }],
      supportsAuthenticatedExtendedCard: false,
    };
    const out = cardOut(card);
    expect(out.securitySchemes).toEqual({
      bearer: { httpAuthSecurityScheme: { scheme: 'bearer', bearerFormat: 'JWT' } },
      key: { apiKeySecurityScheme: { location: 'header', name: 'X-Key' } },
    });
    expect(out.security).toEqual([{ schemes: { bearer: { list: ['read'] } } }]);
    expect(out.skills).toEqual([
      { id: 's', name: 'S', description: 'sd', tags: [], security: [{ schemes: { key: { list: [] } } }] },
    ]);
    // stateTransitionHistory is not in the 0.3 proto's AgentCapabilities
    expect(out.capabilities).toEqual({ streaming: true, pushNotifications: false });
    expect(out.additionalInterfaces).toEqual(card.additionalInterfaces);
  });
});

describe('input (ProtoJSON and its relatives → model)', () => {
  it('round trip: a message written by messageOut reads back as the same message', () => {
    expect(messageIn(messageOut(message))).toEqual(message);
    const reply: Message = { kind: 'message', messageId: 'r', role: 'agent', parts: [{ kind: 'text', text: 'x' }] };
    expect(messageIn(messageOut(reply))).toEqual(reply);
  });

  it('round trip through the codec: a send request as @a2a-js/sdk 0.3.14 writes it decodes to the params', () => {
    const wire = {
      message: messageOut(message),
      configuration: { acceptedOutputModes: ['text/plain'], historyLength: 3, blocking: true },
      metadata: { req: 1 },
    };
    expect(protoJson0_3.decode('sendMessage', wire, 'params')).toEqual({
      message,
      configuration: { acceptedOutputModes: ['text/plain'], historyLength: 3, blocking: true },
      metadata: { req: 1 },
    });
  });

  it('snake_case field names', () => {
    expect(
      messageIn({
        message_id: 'm',
        context_id: 'c',
        task_id: 't',
        reference_task_ids: ['r'],
        role: 'ROLE_USER',
        content: [
          { file: { file_with_uri: 'https://x/y', mime_type: 'image/png' } },
          { file: { file_with_bytes: 'aGk=', mime_type: 'text/plain' } },
        ],
      }),
    ).toEqual({
      kind: 'message',
      messageId: 'm',
      contextId: 'c',
      taskId: 't',
      referenceTaskIds: ['r'],
      role: 'user',
      parts: [
        { kind: 'file', file: { uri: 'https://x/y', mimeType: 'image/png' } },
        { kind: 'file', file: { bytes: 'aGk=', mimeType: 'text/plain' } },
      ],
    });
    expect(
      sendParamsIn({
        message: { message_id: 'm', content: [{ text: 'x' }] },
        configuration: { accepted_output_modes: ['a/b'], history_length: 2, push_notification: { url: 'https://h' } },
      }),
    ).toMatchObject({
      configuration: {
        acceptedOutputModes: ['a/b'],
        historyLength: 2,
        pushNotificationConfig: { url: 'https://h' },
        blocking: false,
      },
    });
  });

  it("the TCK's message: no role (the user's), parts instead of content, part metadata kept", () => {
    expect(
      messageIn({
        message_id: 'm',
        parts: [{ text: 'x', metadata: { p: 1 } }, { data: { data: { k: 'v' } } }, {}],
        metadata: { m: 1 },
      }),
    ).toEqual({
      kind: 'message',
      messageId: 'm',
      role: 'user',
      parts: [{ kind: 'text', text: 'x', metadata: { p: 1 } }, { kind: 'data', data: { k: 'v' } }, {}],
      metadata: { m: 1 },
    });
  });

  it("the TCK's file parts: an empty string is proto3's default, no value (file_with_uri: '' beside the bytes)", () => {
    const partsOf = (wire: unknown) => (messageIn({ message_id: 'm', parts: [wire] }) as Message).parts;
    expect(partsOf({ file: { mime_type: '', file_with_uri: '', file_with_bytes: 'aGk=' } })).toEqual([
      { kind: 'file', file: { bytes: 'aGk=' } },
    ]);
    expect(partsOf({ file: { mime_type: 'text/plain', file_with_uri: 'https://x/y' } })).toEqual([
      { kind: 'file', file: { uri: 'https://x/y', mimeType: 'text/plain' } },
    ]);
  });

  it('null is a field left at its default, as ProtoJSON reads it', () => {
    expect(
      messageIn({
        message_id: 'm',
        messageId: null,
        context_id: null,
        role: null,
        metadata: null,
        content: [
          { text: 'x', metadata: null },
          { text: null, data: { data: { k: 1 } } },
        ],
      }),
    ).toEqual({
      kind: 'message',
      messageId: 'm',
      role: 'user',
      parts: [
        { kind: 'text', text: 'x' },
        { kind: 'data', data: { k: 1 } },
      ],
    });
    expect(
      sendParamsIn({
        message: { messageId: 'm', content: [{ text: 'x' }] },
        configuration: { blocking: null, historyLength: null, acceptedOutputModes: null },
        metadata: null,
      }),
    ).toEqual({
      message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'x' }] },
      configuration: { blocking: false },
    });
  });

  it('roles: proto names, JSON-RPC names, enum numbers; ROLE_UNSPECIFIED (proto3 default) is a missing role', () => {
    const roleOf = (role: unknown) => (messageIn({ messageId: 'm', role, content: [{ text: 'x' }] }) as Message).role;
    expect(roleOf('ROLE_USER')).toBe('user');
    expect(roleOf('ROLE_AGENT')).toBe('agent');
    expect(roleOf('user')).toBe('user');
    expect(roleOf('agent')).toBe('agent');
    expect(roleOf(1)).toBe('user');
    expect(roleOf(2)).toBe('agent');
    expect(roleOf(undefined)).toBe('user');
    expect(roleOf('ROLE_UNSPECIFIED')).toBe('user');
    expect(roleOf(0)).toBe('user');
    // anything else is left for validation to name
    expect(roleOf('ROLE_BOSS')).toBe('ROLE_BOSS');
    expect(
      decodeError('sendMessage', { message: { messageId: 'm', role: 'ROLE_BOSS', content: [{ text: 'x' }] } }).message,
    ).toMatch(/params\.message\.role/);
  });

  it('kind-tagged JSON-RPC parts pass as they are', () => {
    const parts = [
      { kind: 'text', text: 't', metadata: { a: 1 } },
      { kind: 'data', data: { data: 'a member called data, not a wrapper' } },
      { kind: 'file', file: { uri: 'https://x', name: 'x.pdf', mimeType: 'application/pdf' } },
    ];
    expect((messageIn({ kind: 'message', messageId: 'm', role: 'user', parts }) as Message).parts).toEqual(parts);
  });

  it('a data part without kind: the proto wrapper {data: {data: …}}, or the object itself', () => {
    const partsOf = (wire: unknown) => (messageIn({ messageId: 'm', content: [wire] }) as Message).parts;
    expect(partsOf({ data: { data: { x: 1 } } })).toEqual([{ kind: 'data', data: { x: 1 } }]);
    expect(partsOf({ data: { x: 1 } })).toEqual([{ kind: 'data', data: { x: 1 } }]);
    expect(partsOf({ data: { data: [1], total: 1 } })).toEqual([{ kind: 'data', data: { data: [1], total: 1 } }]);
  });

  it('a kind-tagged file part with ProtoJSON file members reads them', () => {
    const partsOf = (wire: unknown) => (messageIn({ messageId: 'm', content: [wire] }) as Message).parts;
    expect(partsOf({ kind: 'file', file: { fileWithUri: 'https://x', mimeType: 'a/b' } })).toEqual([
      { kind: 'file', file: { uri: 'https://x', mimeType: 'a/b' } },
    ]);
  });

  it('send configuration: blocking absent is false (proto3 default), historyLength 0 is no limit, top-level keys when there is no configuration', () => {
    const m = { messageId: 'm', content: [{ text: 'x' }] };
    expect(sendParamsIn({ message: m })).toMatchObject({ configuration: { blocking: false } });
    expect(sendParamsIn({ message: m, configuration: { blocking: true } })).toMatchObject({
      configuration: { blocking: true },
    });
    expect(
      (sendParamsIn({ message: m, configuration: { historyLength: 0 } }) as { configuration: object }).configuration,
    ).toEqual({
      blocking: false,
    });
    expect(
      sendParamsIn({ message: m, blocking: true, history_length: 1, accepted_output_modes: ['x/y'] }),
    ).toMatchObject({
      configuration: { blocking: true, historyLength: 1, acceptedOutputModes: ['x/y'] },
    });
    // an int32 may come as a decimal string in ProtoJSON
    expect(sendParamsIn({ message: m, configuration: { historyLength: '2' } })).toMatchObject({
      configuration: { historyLength: 2 },
    });
    expect(
      (sendParamsIn({ message: m, configuration: { historyLength: '0' } }) as { configuration: object }).configuration,
    ).toEqual({
      blocking: false,
    });
    expect(decodeError('sendMessage', { message: m, configuration: { historyLength: 'two' } }).message).toMatch(
      /params\.configuration\.historyLength/,
    );
    // ProtoJSON parsers accept the proto field name `request` for the message
    expect(sendParamsIn({ request: m })).toMatchObject({ message: { messageId: 'm', role: 'user' } });
    expect(
      sendParamsIn({ message: m, configuration: { pushNotification: { url: 'https://h', token: 't' } } }),
    ).toMatchObject({
      configuration: { pushNotificationConfig: { url: 'https://h', token: 't' } },
    });
  });

  it('push config to create: the bare config, the request wrapper (with config_id), or the PushNotificationConfig alone', () => {
    const expected = { taskId: 't1', pushNotificationConfig: { id: 'c1', url: 'https://hook' } };
    expect(
      setPushParamsIn('t1', {
        name: 'tasks/t1/pushNotificationConfigs/c1',
        pushNotificationConfig: { id: 'c1', url: 'https://hook' },
      }),
    ).toEqual(expected);
    expect(
      setPushParamsIn('t1', {
        parent: 'tasks/t1',
        config_id: 'c1',
        config: { name: 'tasks/t1/pushNotificationConfigs/c1', push_notification_config: { url: 'https://hook' } },
      }),
    ).toEqual(expected);
    expect(
      setPushParamsIn('t1', {
        parent: 'tasks/t1',
        configId: 'c1',
        config: { pushNotificationConfig: { url: 'https://hook' } },
      }),
    ).toEqual(expected);
    expect(setPushParamsIn('t1', { id: 'c1', url: 'https://hook' })).toEqual(expected);
    expect(
      setPushParamsIn('t1', { url: 'https://hook', authentication: { schemes: ['Bearer'], credentials: 'x' } }),
    ).toEqual({
      taskId: 't1',
      pushNotificationConfig: { url: 'https://hook', authentication: { schemes: ['Bearer'], credentials: 'x' } },
    });
  });

  it('validation names the field the client wrote: content for a ProtoJSON message, parts for a TCK one', () => {
    const proto = decodeError('sendMessage', { message: { messageId: 'm', content: [] } });
    expect(proto.code).toBe('INVALID_PARAMS');
    expect(proto.message).toMatch(/params\.message\.content\b/);
    expect(JSON.stringify(proto.data)).toMatch(/params\.message\.content/);
    expect(JSON.stringify(proto.data)).not.toMatch(/message\.parts/);
    const tck = decodeError('sendMessage', { message: { messageId: 'm', parts: [] } });
    expect(tck.message).toMatch(/params\.message\.parts\b/);
    const missing = decodeError('sendMessage', { message: { messageId: 'm' } });
    expect(missing.message).toMatch(/params\.message\.content is required/);
    expect(decodeError('getTask', { id: 't', historyLength: 'abc' }).message).toMatch(/historyLength/);
  });
});
