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
  StreamResult,
  Task,
  TaskArtifactUpdateEvent,
  TaskState,
  TaskStatus,
  TaskStatusUpdateEvent,
} from '@fastify-a2a/core';

type Json = Record<string, unknown>;

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

const ROLES: Readonly<Record<string, Message['role']>> = { ROLE_USER: 'user', ROLE_AGENT: 'agent' };

class ProtoJsonError extends Error {
  override name = 'ProtoJsonError';
}

function object(value: unknown, what: string): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ProtoJsonError(`${what}: expected an object, got ${JSON.stringify(value)}`);
  }
  if ('kind' in value) throw new ProtoJsonError(`${what}: ProtoJSON has no "kind" member: ${JSON.stringify(value)}`);
  return value as Json;
}

function array(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new ProtoJsonError(`${what}: expected an array, got ${JSON.stringify(value)}`);
  return value;
}

function string(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new ProtoJsonError(`${what}: expected a string, got ${JSON.stringify(value)}`);
  return value;
}

/** Copies the optional members that are the same in both shapes. */
function copyOptional<T extends object>(target: T, from: Json, keys: readonly string[]): T {
  for (const key of keys) if (from[key] !== undefined) (target as Json)[key] = from[key];
  return target;
}

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

function artifactUpdateFrom(wire: unknown): TaskArtifactUpdateEvent {
  const event = object(wire, 'artifactUpdate');
  const out: TaskArtifactUpdateEvent = {
    kind: 'artifact-update',
    taskId: string(event.taskId, 'artifactUpdate.taskId'),
    contextId: string(event.contextId, 'artifactUpdate.contextId'),
    artifact: artifactFrom(event.artifact, 'artifactUpdate.artifact'),
  };
  return copyOptional(out, event, ['append', 'lastChunk', 'metadata']);
}

/** §7.1 SendMessageResponse: `{ task }` or `{ message }`. */
export function sendResultFrom(wire: unknown): Task | Message {
  const result = object(wire, 'SendMessageResponse');
  const members = Object.keys(result);
  if (members.length !== 1) throw new ProtoJsonError(`SendMessageResponse: expected one of task, message: ${members}`);
  if (result.task !== undefined) return taskFrom(result.task);
  if (result.message !== undefined) return messageFrom(result.message);
  throw new ProtoJsonError(`SendMessageResponse: expected task or message, got ${members}`);
}

/** §7.2 StreamResponse: exactly one of `task`, `message`, `statusUpdate`, `artifactUpdate`. */
export function streamItemFrom(wire: unknown): StreamResult {
  const item = object(wire, 'StreamResponse');
  const members = Object.keys(item);
  if (members.length !== 1) throw new ProtoJsonError(`StreamResponse: expected exactly one member, got ${members}`);
  if (item.task !== undefined) return taskFrom(item.task);
  if (item.message !== undefined) return messageFrom(item.message);
  if (item.statusUpdate !== undefined) return statusUpdateFrom(item.statusUpdate);
  if (item.artifactUpdate !== undefined) return artifactUpdateFrom(item.artifactUpdate);
  throw new ProtoJsonError(`StreamResponse: unknown member ${members}`);
}

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
