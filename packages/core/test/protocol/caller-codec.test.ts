/**
 * The caller's direction of each codec is the inverse of the server's: the model's parameters
 * encoded by the caller and decoded by the server come back unchanged, and so do results encoded
 * by the server and decoded by the caller. `@fastify-a2a/core/protocol` loads none of the runtime.
 */

import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  json0_3,
  json0_3Caller,
  type OperationName,
  type OperationParams,
  protoJson0_3,
  protoJson0_3Caller,
  protoJson1_0,
  protoJson1_0Caller,
  type StreamResult,
  type Task,
} from '../../src/protocol-entry.js';

const task: Task = {
  kind: 'task',
  id: 't1',
  contextId: 'c1',
  status: {
    state: 'input-required',
    timestamp: '2026-01-01T00:00:00.000Z',
    message: { kind: 'message', role: 'agent', messageId: 'm2', parts: [{ kind: 'text', text: 'Your name?' }] },
  },
  artifacts: [
    {
      artifactId: 'a1',
      name: 'out',
      parts: [
        { kind: 'text', text: 'hi' },
        { kind: 'file', file: { bytes: 'aGk=', mimeType: 'text/plain', name: 'hi.txt' } },
        { kind: 'file', file: { uri: 'https://example.com/x.pdf', mimeType: 'application/pdf' } },
        { kind: 'data', data: { answer: 42 } },
      ],
    },
  ],
  history: [{ kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'go' }], contextId: 'c1' }],
  metadata: { k: 'v' },
};

const PARAMS: { [K in OperationName]?: OperationParams<K> } = {
  sendMessage: {
    message: { kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'go' }], taskId: 't1' },
    configuration: {
      blocking: false,
      historyLength: 2,
      acceptedOutputModes: ['text/plain'],
      pushNotificationConfig: { id: 'p', url: 'https://hooks.example/x', token: 'tok' },
    },
    metadata: { trace: 'x' },
  },
  getTask: { id: 't1', historyLength: 3 },
  listTasks: { contextId: 'c1', status: 'working', pageSize: 10, pageToken: 'abc', includeArtifacts: true },
  cancelTask: { id: 't1' },
  subscribeToTask: { id: 't1' },
  setTaskPushNotificationConfig: { taskId: 't1', pushNotificationConfig: { id: 'p', url: 'https://hooks.example/x' } },
  getTaskPushNotificationConfig: { id: 't1', pushNotificationConfigId: 'p' },
  listTaskPushNotificationConfig: { id: 't1' },
  deleteTaskPushNotificationConfig: { id: 't1', pushNotificationConfigId: 'p' },
};

describe('the 1.0 caller codec inverts the server codec', () => {
  it.each(Object.entries(PARAMS))('%s parameters survive caller encode → server decode', (operation, params) => {
    const wire = protoJson1_0Caller.encodeParams(operation as OperationName, params as never);
    const decoded = protoJson1_0.decode(operation as OperationName, JSON.parse(JSON.stringify(wire)), 'params');
    // A blocking send is the default: the server fills `blocking: true` in when the caller said nothing.
    expect(decoded).toEqual(params);
  });

  it('results survive server encode → caller decode', () => {
    const through = <K extends 'getTask' | 'sendMessage' | 'cancelTask'>(operation: K, value: unknown) =>
      protoJson1_0Caller.decodeResult(
        operation,
        JSON.parse(JSON.stringify(protoJson1_0.encodeResult(operation, value as never))),
      );
    expect(through('getTask', task)).toEqual(task);
    expect(through('sendMessage', task)).toEqual(task);
    const message = { kind: 'message', role: 'agent', messageId: 'm9', parts: [{ kind: 'text', text: 'hi' }] };
    expect(through('sendMessage', message)).toEqual(message);
    const list = { tasks: [task], nextPageToken: 'n', pageSize: 1, totalSize: 3 };
    expect(
      protoJson1_0Caller.decodeResult(
        'listTasks',
        JSON.parse(JSON.stringify(protoJson1_0.encodeResult('listTasks', list))),
      ),
    ).toEqual(list);
    const config = { taskId: 't1', pushNotificationConfig: { id: 'p', url: 'https://h/x', token: 'tok' } };
    expect(
      protoJson1_0Caller.decodeResult(
        'getTaskPushNotificationConfig',
        protoJson1_0.encodeResult('getTaskPushNotificationConfig', config),
      ),
    ).toEqual(config);
  });

  it('stream items survive server encode → caller decode, `final` derived from the state', () => {
    const items: StreamResult[] = [
      task,
      { kind: 'status-update', taskId: 't1', contextId: 'c1', status: { state: 'working' }, final: false },
      { kind: 'status-update', taskId: 't1', contextId: 'c1', status: { state: 'completed' }, final: true },
      {
        kind: 'artifact-update',
        taskId: 't1',
        contextId: 'c1',
        artifact: { artifactId: 'a', parts: [{ kind: 'text', text: 'x' }] },
        append: true,
        lastChunk: true,
      },
    ];
    for (const item of items) {
      expect(
        protoJson1_0Caller.decodeStreamItem(JSON.parse(JSON.stringify(protoJson1_0.encodeStreamItem(item)))),
      ).toEqual(item);
    }
  });

  it('refuses an answer that is not the protocol, naming it', () => {
    expect(() => protoJson1_0Caller.decodeResult('getTask', '<html>')).toThrow(/not an object/);
    expect(() => protoJson1_0Caller.decodeResult('getTask', { status: {} })).toThrow(/no id or contextId/);
    expect(() => protoJson1_0Caller.decodeStreamItem({ other: 1 })).toThrow(/none of task, message/);
  });
});

describe('the 0.3 caller codec', () => {
  it('sends the model as is and checks the kind of what comes back', () => {
    const params = PARAMS.sendMessage as OperationParams<'sendMessage'>;
    expect(json0_3.decode('sendMessage', json0_3Caller.encodeParams('sendMessage', params), 'params')).toEqual(params);
    expect(json0_3Caller.decodeResult('getTask', json0_3.encodeResult('getTask', task))).toEqual(task);
    expect(() => json0_3Caller.decodeResult('getTask', { id: 'x' })).toThrow(/not one of task/);
    expect(() => json0_3Caller.decodeStreamItem({ kind: 'other' })).toThrow(/stream event/);
  });
});

describe('the 0.3 HTTP+JSON caller codec inverts protoJson0_3', () => {
  it('send parameters, results and stream items survive the round trip', () => {
    const params = PARAMS.sendMessage as OperationParams<'sendMessage'>;
    const { pushNotificationConfig: _push, ...configuration } = params.configuration ?? {};
    const plain = { ...params, configuration };
    const wire = JSON.parse(JSON.stringify(protoJson0_3Caller.encodeParams('sendMessage', plain)));
    expect(protoJson0_3.decode('sendMessage', wire, 'params')).toEqual(plain);
    const through = (operation: 'getTask' | 'sendMessage', value: unknown) =>
      protoJson0_3Caller.decodeResult(
        operation,
        JSON.parse(JSON.stringify(protoJson0_3.encodeResult(operation, value as never))),
      );
    // 0.3's proto has no file name and no data-part wrapper metadata: compare what it carries.
    const carried = {
      ...task,
      artifacts: task.artifacts?.map((a) => ({
        ...a,
        parts: a.parts.map((p) => (p.kind === 'file' ? { ...p, file: { ...p.file, name: undefined } } : p)),
      })),
    };
    const strip = (value: unknown) => JSON.parse(JSON.stringify(value));
    expect(strip(through('getTask', task))).toEqual(strip(carried));
    expect(strip(through('sendMessage', task))).toEqual(strip(carried));
    for (const item of [
      { kind: 'status-update', taskId: 't1', contextId: 'c1', status: { state: 'canceled' }, final: true },
      {
        kind: 'artifact-update',
        taskId: 't1',
        contextId: 'c1',
        artifact: { artifactId: 'a', parts: [{ kind: 'text', text: 'x' }] },
        append: true,
      },
    ] as StreamResult[]) {
      expect(
        protoJson0_3Caller.decodeStreamItem(JSON.parse(JSON.stringify(protoJson0_3.encodeStreamItem(item)))),
      ).toEqual(item);
    }
  });
});

describe('@fastify-a2a/core/protocol', () => {
  it('loads no module of the runtime, the store contract or push delivery', () => {
    // The graph of value imports (type-only imports are erased) from the entry, read from source.
    const src = fileURLToPath(new URL('../../src/', import.meta.url));
    const seen = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+'(\.[^']+)'/gms)) {
        visit(resolve(dirname(file), (match[1] as string).replace(/\.js$/, '.ts')));
      }
    };
    visit(join(src, 'protocol-entry.ts'));
    const loaded = [...seen].map((file) => relative(src, file));
    expect(loaded).toContain('protocol/v1_0/codec.ts');
    const forbidden = loaded.filter((file) =>
      /^(runtime|push|testing)\/|^(runtime|store|coordination|executor|task-list)\.ts$/.test(file),
    );
    expect(forbidden).toEqual([]);
  });
});
