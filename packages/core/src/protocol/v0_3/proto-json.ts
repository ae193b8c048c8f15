/**
 * A2A 0.3's HTTP+JSON binding speaks the ProtoJSON form of the 0.3 proto (`a2a.v1`), not the JSON
 * of the JSON-RPC binding: enums as `TASK_STATE_*` / `ROLE_*` names (`TASK_STATE_CANCELLED` with
 * two Ls), no `kind` discriminators, a part is whichever of `text` / `file` / `data` is present
 * (a data part nests its object as `data.data`), a message's parts are its `content`, and a
 * file is `fileWithUri` or `fileWithBytes` with `mimeType`.
 *
 * Output uses the proto's lowerCamelCase JSON names and only fields the proto has, so strict
 * ProtoJSON parsers accept it. Input is read leniently, as ProtoJSON parsers must: both the
 * lowerCamelCase and the original snake_case names, and also the JSON-RPC shapes (`kind`, `parts`,
 * `user`), so that clients which mix the two (the A2A TCK among them) are understood.
 */

import { isJsonObject, type JsonObject } from '../../json.js';
import type {
  AgentCard,
  Artifact,
  FilePart,
  Message,
  Part,
  PushNotificationConfig,
  SecurityScheme,
  Task,
  TaskArtifactUpdateEvent,
  TaskState,
  TaskStatus,
  TaskStatusUpdateEvent,
} from '../../model/types.js';
import { isFinalState } from '../../model/types.js';
import { definedMembers } from '../proto-json-results.js';

/**
 * The value under the lowerCamelCase JSON name, else under the proto field name; undefined for
 * neither. ProtoJSON reads `null` as a field's default value, i.e. as if it were absent.
 */
function pick(object: JsonObject, camel: string, snake: string): unknown {
  return object[camel] ?? object[snake] ?? undefined;
}

/** A string member of a FilePart: its proto3 default, the empty string, is no value (see {@link fileIn}). */
function fileString(value: unknown): unknown {
  return value === '' || value === null ? undefined : value;
}

// ---- enums ----

export const STATE_OUT: Readonly<Record<TaskState, string>> = {
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

/**
 * Roles as clients spell them: proto names, enum numbers, JSON-RPC names. ROLE_UNSPECIFIED (0) is
 * proto3's default, which ProtoJSON writers may send for a role they did not set (the TCK does): it
 * reads as a missing role, the user's.
 */
const ROLE_IN: Readonly<Record<string, 'user' | 'agent'>> = {
  ROLE_USER: 'user',
  ROLE_AGENT: 'agent',
  ROLE_UNSPECIFIED: 'user',
  user: 'user',
  agent: 'agent',
  '0': 'user',
  '1': 'user',
  '2': 'agent',
};

// ---- requests (wire → the 0.3 JSON shapes the validators check) ----

/**
 * A FilePart's members in ProtoJSON (`fileWithUri`, `fileWithBytes`, `mimeType`, or snake_case) or
 * JSON-RPC (`uri`, `bytes`). Empty strings are proto3's defaults, so no value: the A2A TCK sends
 * `file_with_uri: ""` and `mime_type: ""` beside `file_with_bytes` for an inline file.
 */
function fileIn(file: JsonObject): JsonObject {
  const out: JsonObject = {};
  const uri = fileString(pick(file, 'fileWithUri', 'file_with_uri')) ?? fileString(file.uri);
  const bytes = fileString(pick(file, 'fileWithBytes', 'file_with_bytes')) ?? fileString(file.bytes);
  const mimeType = fileString(pick(file, 'mimeType', 'mime_type'));
  if (uri !== undefined) out.uri = uri;
  if (bytes !== undefined) out.bytes = bytes;
  if (mimeType !== undefined) out.mimeType = mimeType;
  if (file.name != null) out.name = file.name;
  return out;
}

/**
 * A part is whichever of `text`, `file`, `data` is present. The proto's DataPart wraps its object
 * (`{data: {data: {…}}}`); a part whose `data` is not that wrapper (any other member beside `data`,
 * or none called so) is a JSON-RPC DataPart without its `kind`, and its `data` is the object.
 */
function partIn(wire: unknown): unknown {
  if (!isJsonObject(wire)) return wire;
  if (typeof wire.kind === 'string') {
    // JSON-RPC-shaped, but a file's members may still be ProtoJSON's.
    return wire.kind === 'file' && isJsonObject(wire.file) ? { ...wire, file: fileIn(wire.file) } : wire;
  }
  const metadata = wire.metadata == null ? {} : { metadata: wire.metadata };
  if (wire.text != null) return { kind: 'text', text: wire.text, ...metadata };
  if (wire.file != null) {
    return { kind: 'file', file: isJsonObject(wire.file) ? fileIn(wire.file) : wire.file, ...metadata };
  }
  if (wire.data != null) {
    const inner = wire.data;
    const wrapped = isJsonObject(inner) && Object.keys(inner).length === 1 && inner.data != null;
    return { kind: 'data', data: wrapped ? inner.data : inner, ...metadata };
  }
  return wire;
}

/** An int32 field: ProtoJSON parsers accept a decimal string as well as a number. Anything else is left for validation. */
function int32In(value: unknown): unknown {
  return typeof value === 'string' && /^-?\d{1,10}$/.test(value) ? Number(value) : value;
}

/** A message from a client. A missing role is the user's: only users send messages to an agent. */
export function messageIn(wire: unknown): unknown {
  if (!isJsonObject(wire)) return wire;
  const message: JsonObject = { kind: 'message' };
  const copy = (camel: string, snake: string, to = camel): void => {
    const value = pick(wire, camel, snake);
    if (value !== undefined) message[to] = value;
  };
  copy('messageId', 'message_id');
  copy('contextId', 'context_id');
  copy('taskId', 'task_id');
  copy('referenceTaskIds', 'reference_task_ids');
  copy('extensions', 'extensions');
  copy('metadata', 'metadata');
  const role = wire.role ?? 'ROLE_USER';
  message.role = ROLE_IN[String(role)] ?? role;
  const parts = wire.content ?? wire.parts;
  message.parts = Array.isArray(parts) ? parts.map(partIn) : parts;
  return message;
}

/**
 * §7.1 SendMessageRequest: `{ message, configuration?, metadata? }`. The configuration's members are
 * also read at the top level, where some clients put them. ProtoJSON leaves out fields at their
 * default, so an absent `blocking` is false, as proto3 defines it (clients that want to block send
 * `blocking: true`), and an absent or zero `historyLength` sets no limit.
 */
export function sendParamsIn(wire: unknown): unknown {
  if (!isJsonObject(wire)) return wire;
  const config = isJsonObject(wire.configuration) ? wire.configuration : wire;
  const configuration: JsonObject = {};
  const acceptedOutputModes = pick(config, 'acceptedOutputModes', 'accepted_output_modes');
  if (acceptedOutputModes !== undefined) configuration.acceptedOutputModes = acceptedOutputModes;
  const historyLength = int32In(pick(config, 'historyLength', 'history_length'));
  if (historyLength !== undefined && historyLength !== 0) configuration.historyLength = historyLength;
  const push =
    pick(config, 'pushNotification', 'push_notification') ??
    pick(config, 'pushNotificationConfig', 'push_notification_config');
  if (push !== undefined) configuration.pushNotificationConfig = pushConfigIn(push);
  configuration.blocking = config.blocking ?? false;
  const params: JsonObject = { message: messageIn(wire.message ?? wire.request), configuration };
  if (wire.metadata != null) params.metadata = wire.metadata;
  return params;
}

function pushConfigIn(wire: unknown): unknown {
  if (!isJsonObject(wire)) return wire;
  const config: JsonObject = {};
  for (const key of ['id', 'url', 'token'] as const) if (wire[key] != null) config[key] = wire[key];
  if (isJsonObject(wire.authentication)) {
    const { schemes, credentials } = wire.authentication;
    config.authentication = credentials == null ? { schemes } : { schemes, credentials };
  }
  return config;
}

/**
 * A TaskPushNotificationConfig to create, in any of the forms clients send: the bare config
 * (`{ name, pushNotificationConfig }`), the request (`{ parent, configId, config: {…} }`), or a
 * PushNotificationConfig alone. The task is the one in the path.
 */
export function setPushParamsIn(taskId: string, wire: unknown): unknown {
  const request = isJsonObject(wire) && isJsonObject(wire.config) ? wire : undefined;
  let config = request === undefined ? wire : request.config;
  if (isJsonObject(config)) {
    const inner = pick(config, 'pushNotificationConfig', 'push_notification_config');
    if (inner !== undefined) config = inner;
  }
  const pushNotificationConfig = pushConfigIn(config);
  // The request names the config's id beside it (`configId`) when the config itself has none.
  const configId = request === undefined ? undefined : pick(request, 'configId', 'config_id');
  if (configId !== undefined && isJsonObject(pushNotificationConfig) && pushNotificationConfig.id === undefined) {
    pushNotificationConfig.id = configId;
  }
  return { taskId, pushNotificationConfig };
}

// ---- responses (model → ProtoJSON) ----

function partOut(part: Part): JsonObject {
  switch (part.kind) {
    case 'text':
      return { text: part.text };
    case 'file':
      return { file: fileOut(part.file) };
    case 'data':
      return { data: { data: part.data } };
  }
}

function fileOut(file: FilePart['file']): JsonObject {
  const out: JsonObject = 'bytes' in file ? { fileWithBytes: file.bytes } : { fileWithUri: file.uri };
  if (file.mimeType !== undefined) out.mimeType = file.mimeType;
  return out;
}

export function messageOut(message: Message): JsonObject {
  return definedMembers({
    messageId: message.messageId,
    contextId: message.contextId,
    taskId: message.taskId,
    role: message.role === 'agent' ? 'ROLE_AGENT' : 'ROLE_USER',
    content: message.parts.map(partOut),
    metadata: message.metadata,
    extensions: message.extensions,
  });
}

function artifactOut(artifact: Artifact): JsonObject {
  return definedMembers({
    artifactId: artifact.artifactId,
    name: artifact.name,
    description: artifact.description,
    parts: artifact.parts.map(partOut),
    metadata: artifact.metadata,
    extensions: artifact.extensions,
  });
}

function statusOut(status: TaskStatus): JsonObject {
  return definedMembers({
    state: STATE_OUT[status.state],
    message: status.message === undefined ? undefined : messageOut(status.message),
    timestamp: status.timestamp,
  });
}

export function taskOut(task: Task): JsonObject {
  return definedMembers({
    id: task.id,
    contextId: task.contextId,
    status: statusOut(task.status),
    artifacts: task.artifacts?.map(artifactOut),
    history: task.history?.map(messageOut),
    metadata: task.metadata,
  });
}

export function statusUpdateOut(event: TaskStatusUpdateEvent): JsonObject {
  return definedMembers({
    taskId: event.taskId,
    contextId: event.contextId,
    status: statusOut(event.status),
    final: event.final,
    metadata: event.metadata,
  });
}

export function artifactUpdateOut(event: TaskArtifactUpdateEvent): JsonObject {
  return definedMembers({
    taskId: event.taskId,
    contextId: event.contextId,
    artifact: artifactOut(event.artifact),
    append: event.append,
    lastChunk: event.lastChunk,
    metadata: event.metadata,
  });
}

function securitySchemeOut(scheme: SecurityScheme): JsonObject {
  switch (scheme.type) {
    case 'apiKey':
      return {
        apiKeySecurityScheme: definedMembers({
          description: scheme.description,
          location: scheme.in,
          name: scheme.name,
        }),
      };
    case 'http':
      return {
        httpAuthSecurityScheme: definedMembers({
          description: scheme.description,
          scheme: scheme.scheme,
          bearerFormat: scheme.bearerFormat,
        }),
      };
    case 'oauth2':
      return {
        oauth2SecurityScheme: definedMembers({
          description: scheme.description,
          flows: scheme.flows,
          oauth2MetadataUrl: scheme.oauth2MetadataUrl,
        }),
      };
    case 'openIdConnect':
      return {
        openIdConnectSecurityScheme: definedMembers({
          description: scheme.description,
          openIdConnectUrl: scheme.openIdConnectUrl,
        }),
      };
    case 'mutualTLS':
      return { mtlsSecurityScheme: definedMembers({ description: scheme.description }) };
  }
}

/** `[{ name: [scopes] }]` as the proto's `[{ schemes: { name: { list: [scopes] } } }]`. */
function securityOut(security: Record<string, string[]>[]): JsonObject[] {
  return security.map((requirement) => ({
    schemes: Object.fromEntries(Object.entries(requirement).map(([name, list]) => [name, { list }])),
  }));
}

export function cardOut(card: AgentCard): JsonObject {
  return definedMembers({
    protocolVersion: card.protocolVersion,
    name: card.name,
    description: card.description,
    url: card.url,
    preferredTransport: card.preferredTransport,
    additionalInterfaces: card.additionalInterfaces,
    provider: card.provider,
    version: card.version,
    documentationUrl: card.documentationUrl,
    capabilities: definedMembers({
      streaming: card.capabilities.streaming,
      pushNotifications: card.capabilities.pushNotifications,
      extensions: card.capabilities.extensions,
    }),
    securitySchemes:
      card.securitySchemes === undefined
        ? undefined
        : Object.fromEntries(Object.entries(card.securitySchemes).map(([n, s]) => [n, securitySchemeOut(s)])),
    security: card.security === undefined ? undefined : securityOut(card.security),
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills.map((skill) =>
      definedMembers({ ...skill, security: skill.security === undefined ? undefined : securityOut(skill.security) }),
    ),
    supportsAuthenticatedExtendedCard: card.supportsAuthenticatedExtendedCard,
    signatures: card.signatures,
  });
}

// ---- responses, read by a caller (ProtoJSON → the model) ----
//
// The inverse of the writers above, for a client of a 0.3 HTTP+JSON server: read as leniently as
// requests are (either field name, `TASK_STATE_CANCELED` with one L too).

const STATE_IN: Readonly<Record<string, TaskState>> = {
  ...Object.fromEntries(Object.entries(STATE_OUT).map(([model, wire]) => [wire, model as TaskState])),
  TASK_STATE_CANCELED: 'canceled',
};

function stateIn(value: unknown): TaskState {
  if (typeof value !== 'string') return 'unknown';
  return STATE_IN[value] ?? (Object.hasOwn(STATE_OUT, value) ? (value as TaskState) : 'unknown');
}

function statusIn(wire: unknown): TaskStatus {
  const status = isJsonObject(wire) ? wire : {};
  const out: TaskStatus = { state: stateIn(status.state) };
  const message = pick(status, 'message', 'update');
  if (isJsonObject(message)) out.message = messageIn(message) as Message;
  if (typeof status.timestamp === 'string') out.timestamp = status.timestamp;
  return out;
}

function artifactIn(wire: unknown): Artifact {
  const artifact = isJsonObject(wire) ? wire : {};
  const parts = Array.isArray(artifact.parts) ? artifact.parts : [];
  const out: Artifact = {
    artifactId: pick(artifact, 'artifactId', 'artifact_id') as string,
    parts: parts.map(partIn) as Part[],
  };
  for (const key of ['name', 'description', 'metadata', 'extensions'] as const) {
    if (artifact[key] != null) (out as unknown as JsonObject)[key] = artifact[key];
  }
  return out;
}

export function taskIn(wire: unknown): Task {
  const task = isJsonObject(wire) ? wire : {};
  const out: Task = {
    kind: 'task',
    id: task.id as string,
    contextId: pick(task, 'contextId', 'context_id') as string,
    status: statusIn(task.status),
  };
  if (Array.isArray(task.artifacts)) out.artifacts = task.artifacts.map(artifactIn);
  if (Array.isArray(task.history)) out.history = task.history.map((m) => messageIn(m) as Message);
  if (task.metadata != null) out.metadata = task.metadata as Record<string, unknown>;
  return out;
}

export function statusUpdateIn(wire: unknown): TaskStatusUpdateEvent {
  const event = isJsonObject(wire) ? wire : {};
  const status = statusIn(event.status);
  const out: TaskStatusUpdateEvent = {
    kind: 'status-update',
    taskId: pick(event, 'taskId', 'task_id') as string,
    contextId: pick(event, 'contextId', 'context_id') as string,
    status,
    final: event.final === true || isFinalState(status.state),
  };
  if (event.metadata != null) out.metadata = event.metadata as Record<string, unknown>;
  return out;
}

export function artifactUpdateIn(wire: unknown): TaskArtifactUpdateEvent {
  const event = isJsonObject(wire) ? wire : {};
  const out: TaskArtifactUpdateEvent = {
    kind: 'artifact-update',
    taskId: pick(event, 'taskId', 'task_id') as string,
    contextId: pick(event, 'contextId', 'context_id') as string,
    artifact: artifactIn(event.artifact),
  };
  if (event.append === true) out.append = true;
  if (pick(event, 'lastChunk', 'last_chunk') === true) out.lastChunk = true;
  if (event.metadata != null) out.metadata = event.metadata as Record<string, unknown>;
  return out;
}

/** `{ name: "tasks/{id}/pushNotificationConfigs/{configId}", pushNotificationConfig }` as the model's. */
export function pushConfigResponseIn(wire: unknown): {
  taskId: string;
  pushNotificationConfig: PushNotificationConfig;
} {
  const config = isJsonObject(wire) ? wire : {};
  const name = typeof config.name === 'string' ? config.name : '';
  const taskId = /^tasks\/([^/]+)\//.exec(name)?.[1] ?? '';
  const inner = pick(config, 'pushNotificationConfig', 'push_notification_config');
  return { taskId: decodeURIComponent(taskId), pushNotificationConfig: pushConfigIn(inner) as PushNotificationConfig };
}

/** The model's send parameters as 0.3's SendMessageRequest (blocking written out: absent is false). */
export function sendParamsOut(params: {
  message: Message;
  configuration?: {
    blocking?: boolean;
    historyLength?: number;
    acceptedOutputModes?: string[];
    pushNotificationConfig?: PushNotificationConfig;
  };
  metadata?: Record<string, unknown>;
}): JsonObject {
  const config = params.configuration ?? {};
  return definedMembers({
    message: messageOut(params.message),
    configuration: definedMembers({
      blocking: config.blocking !== false,
      historyLength: config.historyLength,
      acceptedOutputModes: config.acceptedOutputModes,
      pushNotification: config.pushNotificationConfig,
    }),
    metadata: params.metadata,
  });
}
