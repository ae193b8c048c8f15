/**
 * The test client's side of ProtoJSON, the JSON of A2A 0.3's HTTP+JSON binding (the 0.3 proto's
 * JSON form: `TASK_STATE_*` / `ROLE_*` enums, no `kind`, a message's parts under `content`, a data
 * part nested as `data.data`). Requests are written as a ProtoJSON client writes them, and answers
 * are read back into the 0.3 JSON model, so every scenario of the protocol suite asserts once for
 * both bindings.
 *
 * Written apart from the server's own mapping (core's `v0_3/proto-json.ts`) on purpose: a test that
 * shared it would pass whatever it got wrong. Reading is strict: a JSON-RPC spelling where ProtoJSON
 * is due (`working`, `parts` in a message, `kind`) throws, and so fails the scenario.
 */

import type {
  Artifact,
  Message,
  MessageSendParams,
  Part,
  Task,
  TaskState,
  TaskStatus,
  TaskStatusUpdateEvent,
} from '@fastify-a2a/core';
import {
  answerReaders,
  array,
  copyOptional,
  type Json,
  object,
  ProtoJsonError,
  ROLES,
  string,
} from './proto-json-reading.js';

const STATES: Readonly<Record<string, TaskState>> = {
  TASK_STATE_SUBMITTED: 'submitted',
  TASK_STATE_WORKING: 'working',
  TASK_STATE_INPUT_REQUIRED: 'input-required',
  TASK_STATE_COMPLETED: 'completed',
  // Two Ls in the proto; one in the JSON-RPC model.
  TASK_STATE_CANCELLED: 'canceled',
  TASK_STATE_FAILED: 'failed',
  TASK_STATE_REJECTED: 'rejected',
  TASK_STATE_AUTH_REQUIRED: 'auth-required',
  TASK_STATE_UNSPECIFIED: 'unknown',
};

// ---- reading answers (ProtoJSON → the 0.3 JSON model) ----

function partFrom(wire: unknown, what: string): Part {
  const part = object(wire, what);
  const kinds = ['text', 'file', 'data'].filter((k) => part[k] !== undefined);
  if (kinds.length !== 1) throw new ProtoJsonError(`${what}: expected exactly one of text, file, data`);
  if (part.text !== undefined) return { kind: 'text', text: string(part.text, `${what}.text`) };
  if (part.file !== undefined) {
    const file = object(part.file, `${what}.file`);
    const mimeType = file.mimeType === undefined ? {} : { mimeType: string(file.mimeType, `${what}.file.mimeType`) };
    if (file.fileWithUri !== undefined)
      return { kind: 'file', file: { uri: string(file.fileWithUri, 'uri'), ...mimeType } };
    return { kind: 'file', file: { bytes: string(file.fileWithBytes, `${what}.file.fileWithBytes`), ...mimeType } };
  }
  const data = object(part.data, `${what}.data`);
  return { kind: 'data', data: object(data.data, `${what}.data.data`) };
}

export function messageFrom(wire: unknown, what = 'message'): Message {
  const message = object(wire, what);
  if (message.parts !== undefined) throw new ProtoJsonError(`${what}: a ProtoJSON message has "content", not "parts"`);
  const role = ROLES[string(message.role, `${what}.role`)];
  if (role === undefined) throw new ProtoJsonError(`${what}.role: not a ProtoJSON role: ${String(message.role)}`);
  const out: Message = {
    kind: 'message',
    role,
    messageId: string(message.messageId, `${what}.messageId`),
    parts: array(message.content, `${what}.content`).map((p, i) => partFrom(p, `${what}.content[${i}]`)),
  };
  return copyOptional(out, message, ['contextId', 'taskId', 'metadata', 'extensions', 'referenceTaskIds']);
}

function artifactFrom(wire: unknown, what: string): Artifact {
  const artifact = object(wire, what);
  const out: Artifact = {
    artifactId: string(artifact.artifactId, `${what}.artifactId`),
    parts: array(artifact.parts, `${what}.parts`).map((p, i) => partFrom(p, `${what}.parts[${i}]`)),
  };
  return copyOptional(out, artifact, ['name', 'description', 'metadata', 'extensions']);
}

function statusFrom(wire: unknown, what: string): TaskStatus {
  const status = object(wire, what);
  const state = STATES[string(status.state, `${what}.state`)];
  if (state === undefined)
    throw new ProtoJsonError(`${what}.state: not a ProtoJSON task state: ${String(status.state)}`);
  const out: TaskStatus = { state };
  if (status.message !== undefined) out.message = messageFrom(status.message, `${what}.message`);
  if (status.timestamp !== undefined) out.timestamp = string(status.timestamp, `${what}.timestamp`);
  return out;
}

export function taskFrom(wire: unknown, what = 'task'): Task {
  const task = object(wire, what);
  const out: Task = {
    kind: 'task',
    id: string(task.id, `${what}.id`),
    contextId: string(task.contextId, `${what}.contextId`),
    status: statusFrom(task.status, `${what}.status`),
  };
  if (task.artifacts !== undefined) {
    out.artifacts = array(task.artifacts, `${what}.artifacts`).map((a, i) =>
      artifactFrom(a, `${what}.artifacts[${i}]`),
    );
  }
  if (task.history !== undefined) {
    out.history = array(task.history, `${what}.history`).map((m, i) => messageFrom(m, `${what}.history[${i}]`));
  }
  return copyOptional(out, task, ['metadata']);
}

function statusUpdateFrom(wire: unknown): TaskStatusUpdateEvent {
  const event = object(wire, 'statusUpdate');
  const out: TaskStatusUpdateEvent = {
    kind: 'status-update',
    taskId: string(event.taskId, 'statusUpdate.taskId'),
    contextId: string(event.contextId, 'statusUpdate.contextId'),
    status: statusFrom(event.status, 'statusUpdate.status'),
    // ProtoJSON may leave out a field at its default (false).
    final: event.final === undefined ? false : (event.final as boolean),
  };
  return copyOptional(out, event, ['metadata']);
}

const answers = answerReaders({ taskFrom, messageFrom, statusUpdateFrom, artifactFrom });
export const sendResultFrom = answers.sendResultFrom;
export const streamItemFrom = answers.streamItemFrom;

// ---- writing requests (the 0.3 JSON model → ProtoJSON) ----

function partTo(part: Part): Json {
  switch (part.kind) {
    case 'text':
      return { text: part.text };
    case 'file':
      return {
        file: {
          ...('uri' in part.file ? { fileWithUri: part.file.uri } : { fileWithBytes: part.file.bytes }),
          ...(part.file.mimeType === undefined ? {} : { mimeType: part.file.mimeType }),
        },
      };
    case 'data':
      return { data: { data: part.data } };
  }
}

export function messageTo(message: Message): Json {
  const out: Json = {
    messageId: message.messageId,
    role: message.role === 'agent' ? 'ROLE_AGENT' : 'ROLE_USER',
    content: message.parts.map(partTo),
  };
  return copyOptional(out, message as unknown as Json, ['contextId', 'taskId', 'metadata', 'extensions']);
}

/**
 * §7.1 SendMessageRequest as a ProtoJSON client sends it. A JSON-RPC send blocks unless told not
 * to; in ProtoJSON an absent `blocking` is false, so this client states it, as @a2a-js/sdk does.
 */
export function sendRequestTo(params: MessageSendParams): Json {
  const { configuration } = params;
  const config: Json = { blocking: configuration?.blocking !== false };
  if (configuration?.historyLength !== undefined) config.historyLength = configuration.historyLength;
  if (configuration?.acceptedOutputModes !== undefined) config.acceptedOutputModes = configuration.acceptedOutputModes;
  // The 0.3 proto's MessageSendConfiguration.push_notification: the config as it is.
  if (configuration?.pushNotificationConfig !== undefined)
    config.pushNotification = configuration.pushNotificationConfig;
  const out: Json = { message: messageTo(params.message), configuration: config };
  if (params.metadata !== undefined) out.metadata = params.metadata;
  return out;
}
