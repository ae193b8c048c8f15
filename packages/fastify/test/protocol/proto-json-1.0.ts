/**
 * The test client's side of A2A 1.0's ProtoJSON (both bindings): `TASK_STATE_*` (CANCELED with one
 * L) and `ROLE_*` enums, no `kind`, flattened parts (`text` / `raw` / `url` / `data` with
 * `mediaType` and `filename`), message parts under `parts`, unions by member name, no `final`.
 * Answers are read back into the 0.3 JSON model (a status update's `final` derived from its state,
 * as a 1.0 client derives the end of a stream), so every scenario asserts once for every version.
 *
 * Written apart from the server's mapping (core's `v1_0/proto-json.ts`) on purpose, and strict:
 * a 0.3 spelling (`kind`, `content`, `TASK_STATE_CANCELLED`, `final`) throws.
 */

import {
  type Artifact,
  isFinalState,
  type Message,
  type MessageSendParams,
  type Part,
  type Task,
  type TaskState,
  type TaskStatus,
  type TaskStatusUpdateEvent,
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
  TASK_STATE_CANCELED: 'canceled',
  TASK_STATE_FAILED: 'failed',
  TASK_STATE_REJECTED: 'rejected',
  TASK_STATE_AUTH_REQUIRED: 'auth-required',
  TASK_STATE_UNSPECIFIED: 'unknown',
};

// ---- reading answers (1.0 ProtoJSON → the 0.3 JSON model) ----

function partFrom(wire: unknown, what: string): Part {
  const part = object(wire, what);
  const members = ['text', 'raw', 'url', 'data'].filter((k) => part[k] !== undefined);
  if (members.length !== 1) throw new ProtoJsonError(`${what}: expected exactly one of text, raw, url, data`);
  const metadata = part.metadata === undefined ? {} : { metadata: object(part.metadata, `${what}.metadata`) };
  if (part.text !== undefined) return { kind: 'text', text: string(part.text, `${what}.text`), ...metadata };
  if (part.raw !== undefined || part.url !== undefined) {
    const file: Json =
      part.raw !== undefined ? { bytes: string(part.raw, `${what}.raw`) } : { uri: string(part.url, `${what}.url`) };
    if (part.mediaType !== undefined) file.mimeType = string(part.mediaType, `${what}.mediaType`);
    if (part.filename !== undefined) file.name = string(part.filename, `${what}.filename`);
    return { kind: 'file', file: file as { uri: string }, ...metadata };
  }
  // Any JSON value; the model keeps a non-object wrapped as the server does (`data_part_compat`).
  const { data } = part;
  if (data !== null && typeof data === 'object' && !Array.isArray(data))
    return { kind: 'data', data: data as Json, ...metadata };
  return { kind: 'data', data: { value: data }, metadata: { ...metadata.metadata, data_part_compat: true } };
}

export function messageFrom(wire: unknown, what = 'message'): Message {
  const message = object(wire, what);
  if (message.content !== undefined) throw new ProtoJsonError(`${what}: a 1.0 message has "parts", not "content"`);
  const role = ROLES[string(message.role, `${what}.role`)];
  if (role === undefined) throw new ProtoJsonError(`${what}.role: not a 1.0 role: ${String(message.role)}`);
  const out: Message = {
    kind: 'message',
    role,
    messageId: string(message.messageId, `${what}.messageId`),
    parts: array(message.parts, `${what}.parts`).map((p, i) => partFrom(p, `${what}.parts[${i}]`)),
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
  if (state === undefined) throw new ProtoJsonError(`${what}.state: not a 1.0 task state: ${String(status.state)}`);
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
  // ProtoJSON leaves an empty list out; the 0.3 model has `history: []` there (historyLength 0).
  out.history =
    task.history === undefined
      ? []
      : array(task.history, `${what}.history`).map((m, i) => messageFrom(m, `${what}.history[${i}]`));
  return copyOptional(out, task, ['metadata']);
}

function statusUpdateFrom(wire: unknown): TaskStatusUpdateEvent {
  const event = object(wire, 'statusUpdate');
  if ('final' in event) throw new ProtoJsonError('statusUpdate: A2A 1.0 has no "final"');
  const status = statusFrom(event.status, 'statusUpdate.status');
  const out: TaskStatusUpdateEvent = {
    kind: 'status-update',
    taskId: string(event.taskId, 'statusUpdate.taskId'),
    contextId: string(event.contextId, 'statusUpdate.contextId'),
    status,
    // A 1.0 client tells the end of a stream from the state (terminal or interrupted).
    final: isFinalState(status.state),
  };
  return copyOptional(out, event, ['metadata']);
}

const answers = answerReaders({ taskFrom, messageFrom, statusUpdateFrom, artifactFrom });
export const sendResultFrom = answers.sendResultFrom;
export const streamItemFrom = answers.streamItemFrom;

// ---- writing requests (the 0.3 JSON model → 1.0 ProtoJSON) ----

function partTo(part: Part): Json {
  const metadata = part.metadata === undefined ? {} : { metadata: part.metadata };
  switch (part.kind) {
    case 'text':
      return { text: part.text, ...metadata };
    case 'file':
      return {
        ...('uri' in part.file ? { url: part.file.uri } : { raw: part.file.bytes }),
        ...(part.file.mimeType === undefined ? {} : { mediaType: part.file.mimeType }),
        ...(part.file.name === undefined ? {} : { filename: part.file.name }),
        ...metadata,
      };
    case 'data':
      return { data: part.data, ...metadata };
  }
}

export function messageTo(message: Message): Json {
  const out: Json = {
    messageId: message.messageId,
    role: message.role === 'agent' ? 'ROLE_AGENT' : 'ROLE_USER',
    parts: message.parts.map(partTo),
  };
  return copyOptional(out, message as unknown as Json, [
    'contextId',
    'taskId',
    'metadata',
    'extensions',
    'referenceTaskIds',
  ]);
}

/** SendMessageRequest: 0.3's `blocking: false` is 1.0's `returnImmediately: true` (§3.2.2). */
export function sendRequestTo(params: MessageSendParams): Json {
  const { configuration } = params;
  const config: Json = {};
  if (configuration?.blocking === false) config.returnImmediately = true;
  if (configuration?.historyLength !== undefined) config.historyLength = configuration.historyLength;
  if (configuration?.acceptedOutputModes !== undefined) config.acceptedOutputModes = configuration.acceptedOutputModes;
  const push = configuration?.pushNotificationConfig;
  if (push !== undefined) {
    // 1.0's TaskPushNotificationConfig is flat, with one authentication scheme.
    const { authentication, ...rest } = push;
    config.taskPushNotificationConfig = {
      ...rest,
      ...(authentication === undefined
        ? {}
        : { authentication: { scheme: authentication.schemes[0], credentials: authentication.credentials } }),
    };
  }
  const out: Json = { message: messageTo(params.message) };
  if (Object.keys(config).length > 0) out.configuration = config;
  if (params.metadata !== undefined) out.metadata = params.metadata;
  return out;
}

/** The A2A JSON-RPC code of a 1.0 HTTP+JSON error (`{ error: google.rpc.Status }`), from its ErrorInfo reason. */
const CODES: Readonly<Record<string, number>> = {
  TASK_NOT_FOUND: -32001,
  TASK_NOT_CANCELABLE: -32002,
  PUSH_NOTIFICATION_NOT_SUPPORTED: -32003,
  UNSUPPORTED_OPERATION: -32004,
  CONTENT_TYPE_NOT_SUPPORTED: -32005,
  INVALID_AGENT_RESPONSE: -32006,
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: -32007,
  EXTENSION_SUPPORT_REQUIRED: -32008,
  VERSION_NOT_SUPPORTED: -32009,
  INVALID_PARAMS: -32602,
  INVALID_REQUEST: -32600,
  JSON_PARSE: -32700,
  METHOD_NOT_FOUND: -32601,
  INTERNAL: -32603,
};

export function restFailureFrom(body: unknown): { code: number; message: string } {
  const error = object(object(body, 'error body').error, 'error body.error');
  const info = array(error.details, 'error.details').find(
    (d) => (d as Json)['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo',
  ) as Json | undefined;
  const reason = info === undefined ? undefined : string(info.reason, 'ErrorInfo.reason');
  const code = reason === undefined ? undefined : CODES[reason];
  if (code === undefined) throw new ProtoJsonError(`error body: no known ErrorInfo reason: ${JSON.stringify(body)}`);
  return { code, message: string(error.message, 'error.message') };
}
