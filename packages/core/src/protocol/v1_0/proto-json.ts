/**
 * A2A 1.0 on the wire is the ProtoJSON of `a2a.proto` (v1.0.1), on both bindings: lowerCamelCase
 * names, enums as `TASK_STATE_*` / `ROLE_*` names (`TASK_STATE_CANCELED` with one L, unlike 0.3's
 * proto), no `kind`: a part is whichever of `text` / `raw` / `url` / `data` it carries, with
 * `mediaType` and `filename` beside it; a union is the name of its member (`{ "task": … }`).
 *
 * Requests are read in two steps: `read*` takes what a ProtoJSON reader must accept (the
 * lowerCamelCase and the snake_case field names, enum numbers) into lowerCamelCase, which the
 * 1.0 schemas check; `*ToModel` then builds the internal model. Responses are written from the
 * model with only the proto's fields, as a strict ProtoJSON reader expects.
 */

import { isJsonObject, type JsonObject } from '../../json.js';
import { DATA_PART_COMPAT_FLAG, dataPart, dataValue } from '../../model/data-part.js';
import type {
  AgentCard,
  Artifact,
  Message,
  Part,
  SecurityScheme,
  SupportedInterface,
  Task,
  TaskArtifactUpdateEvent,
  TaskState,
  TaskStatus,
  TaskStatusUpdateEvent,
} from '../../model/types.js';
import { isFinalState } from '../../model/types.js';
import { nonEmptyMembers, snakeCaseOf } from '../proto-json-results.js';

/** The value under the lowerCamelCase JSON name, else under the proto field name. */
function pick(object: JsonObject, camel: string, snake: string): unknown {
  return object[camel] !== undefined ? object[camel] : object[snake];
}

/**
 * A copy of `object` with each of `fields` under its lowerCamelCase name, read from either name;
 * `nested` fields are read with their own reader. Fields not listed are left out.
 */
function read(
  object: unknown,
  fields: readonly string[],
  nested: Readonly<Record<string, (value: unknown) => unknown>> = {},
): unknown {
  if (!isJsonObject(object)) return object;
  const out: JsonObject = {};
  for (const camel of fields) {
    const value = pick(object, camel, snakeCaseOf(camel));
    if (value === undefined) continue;
    const reader = nested[camel];
    out[camel] = reader === undefined ? value : reader(value);
  }
  return out;
}

const readArray =
  (reader: (value: unknown) => unknown) =>
  (value: unknown): unknown =>
    Array.isArray(value) ? value.map(reader) : value;

// ---- enums ----

export const STATE_TO_WIRE: Readonly<Record<TaskState, string>> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  completed: 'TASK_STATE_COMPLETED',
  canceled: 'TASK_STATE_CANCELED',
  failed: 'TASK_STATE_FAILED',
  rejected: 'TASK_STATE_REJECTED',
  'auth-required': 'TASK_STATE_AUTH_REQUIRED',
  unknown: 'TASK_STATE_UNSPECIFIED',
};

export const STATE_FROM_WIRE: Readonly<Record<string, TaskState>> = Object.fromEntries(
  Object.entries(STATE_TO_WIRE).map(([model, wire]) => [wire, model as TaskState]),
);

/** ProtoJSON readers accept an enum's number too (the proto's field numbers). */
const STATE_NUMBERS = [
  'TASK_STATE_UNSPECIFIED',
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
];
const ROLE_NUMBERS = ['ROLE_UNSPECIFIED', 'ROLE_USER', 'ROLE_AGENT'];

const enumName = (names: readonly string[]) => (value: unknown) =>
  typeof value === 'number' && Number.isInteger(value) ? (names[value] ?? value) : value;

export const readState = enumName(STATE_NUMBERS);

// ---- requests: reading ----

/**
 * An int64 field (the A2A 1.1 draft's generations): ProtoJSON writes int64 as a string, and JSON-RPC
 * clients send numbers; both are read as a number, exact up to 2^53 − 1 (the schemas refuse more).
 * Anything else is left as given, for validation to name.
 */
export function readInt64(value: unknown): unknown {
  return typeof value === 'string' && /^-?\d{1,20}$/.test(value) ? Number(value) : value;
}

export const readPart = (value: unknown): unknown =>
  read(value, ['text', 'raw', 'url', 'data', 'metadata', 'filename', 'mediaType']);

export const readMessage = (value: unknown): unknown =>
  read(value, ['messageId', 'contextId', 'taskId', 'role', 'parts', 'metadata', 'extensions', 'referenceTaskIds'], {
    role: enumName(ROLE_NUMBERS),
    parts: readArray(readPart),
  });

const readAuthentication = (value: unknown): unknown => read(value, ['scheme', 'credentials']);

export const readPushConfig = (value: unknown): unknown =>
  read(value, ['tenant', 'id', 'taskId', 'url', 'token', 'authentication'], { authentication: readAuthentication });

export const readSendMessageRequest = (value: unknown): unknown =>
  read(value, ['tenant', 'message', 'configuration', 'metadata'], {
    message: readMessage,
    configuration: (config) =>
      read(
        config,
        [
          'acceptedOutputModes',
          'taskPushNotificationConfig',
          'historyLength',
          'returnImmediately',
          'ifGenerationMatch',
        ],
        { taskPushNotificationConfig: readPushConfig, ifGenerationMatch: readInt64 },
      ),
  });

// ---- requests: to the internal model ----

function partToModel(part: JsonObject): Part {
  const metadata = part.metadata as Record<string, unknown> | undefined;
  const withMetadata = <P extends Part>(p: P): P => (metadata === undefined ? p : { ...p, metadata });
  if (part.text !== undefined) return withMetadata({ kind: 'text', text: part.text as string });
  if (part.raw !== undefined || part.url !== undefined) {
    const file: JsonObject = part.raw !== undefined ? { bytes: part.raw } : { uri: part.url };
    if (part.mediaType !== undefined && part.mediaType !== '') file.mimeType = part.mediaType;
    if (part.filename !== undefined && part.filename !== '') file.name = part.filename;
    return withMetadata({ kind: 'file', file: file as { bytes: string } });
  }
  return dataPart(part.data, metadata);
}

export function messageToModel(message: JsonObject): Message {
  const out: Message = {
    kind: 'message',
    messageId: message.messageId as string,
    role: message.role === 'ROLE_AGENT' ? 'agent' : 'user',
    parts: (message.parts as JsonObject[]).map(partToModel),
  };
  for (const key of ['contextId', 'taskId', 'metadata', 'extensions', 'referenceTaskIds'] as const) {
    if (message[key] !== undefined) (out as unknown as JsonObject)[key] = message[key];
  }
  return out;
}

/** 1.0's flattened TaskPushNotificationConfig as the model's (0.3's) nested one. */
export function pushConfigToModel(config: JsonObject): {
  id?: string;
  url: string;
  token?: string;
  authentication?: { schemes: string[]; credentials?: string };
} {
  const out: {
    id?: string;
    url: string;
    token?: string;
    authentication?: { schemes: string[]; credentials?: string };
  } = { url: config.url as string };
  if (config.id !== undefined && config.id !== '') out.id = config.id as string;
  if (config.token !== undefined && config.token !== '') out.token = config.token as string;
  const authentication = config.authentication as { scheme: string; credentials?: string } | undefined;
  if (authentication !== undefined) {
    out.authentication =
      authentication.credentials === undefined
        ? { schemes: [authentication.scheme] }
        : { schemes: [authentication.scheme], credentials: authentication.credentials };
  }
  return out;
}

// ---- responses: writing ----

function partOut(part: Part): JsonObject {
  switch (part.kind) {
    case 'text':
      return nonEmptyMembers({ text: part.text, metadata: part.metadata });
    case 'file': {
      const { file } = part;
      return nonEmptyMembers({
        ...('bytes' in file ? { raw: file.bytes } : { url: file.uri }),
        mediaType: file.mimeType,
        filename: file.name,
        metadata: part.metadata,
      });
    }
    case 'data': {
      const { [DATA_PART_COMPAT_FLAG]: _flag, ...metadata } = part.metadata ?? {};
      return nonEmptyMembers({
        data: dataValue(part),
        metadata: Object.keys(metadata).length > 0 ? metadata : undefined,
      });
    }
  }
}

export function messageOut(message: Message): JsonObject {
  return nonEmptyMembers({
    messageId: message.messageId,
    contextId: message.contextId,
    taskId: message.taskId,
    role: message.role === 'agent' ? 'ROLE_AGENT' : 'ROLE_USER',
    parts: message.parts.map(partOut),
    metadata: message.metadata,
    extensions: message.extensions,
    referenceTaskIds: message.referenceTaskIds,
  });
}

function artifactOut(artifact: Artifact): JsonObject {
  return nonEmptyMembers({
    artifactId: artifact.artifactId,
    name: artifact.name,
    description: artifact.description,
    parts: artifact.parts.map(partOut),
    metadata: artifact.metadata,
    extensions: artifact.extensions,
  });
}

function statusOut(status: TaskStatus): JsonObject {
  return nonEmptyMembers({
    state: STATE_TO_WIRE[status.state],
    message: status.message === undefined ? undefined : messageOut(status.message),
    timestamp: status.timestamp,
  });
}

export function taskOut(task: Task): JsonObject {
  return nonEmptyMembers({
    id: task.id,
    contextId: task.contextId,
    status: statusOut(task.status),
    artifacts: task.artifacts?.map(artifactOut),
    history: task.history?.map(messageOut),
    metadata: task.metadata,
  });
}

/**
 * The A2A 1.1 draft's `generation` (§3.2.7) beside what {@link taskOut}, {@link statusUpdateOut} and
 * {@link artifactUpdateOut} write, for an agent with `draft11.generations` on. A JSON number on
 * both bindings (the issue asks numbers on JSON-RPC; readers take the ProtoJSON string too). A task
 * last changed before generations were kept has none: 0, the draft's "not counted".
 */
export function withGeneration(out: JsonObject, generation: number | undefined): JsonObject {
  out.generation = generation ?? 0;
  return out;
}

/** §4.2 TaskStatusUpdateEvent: no `final` in 1.0; a stream's end follows from the state. */
export function statusUpdateOut(event: TaskStatusUpdateEvent): JsonObject {
  return nonEmptyMembers({
    taskId: event.taskId,
    contextId: event.contextId,
    status: statusOut(event.status),
    metadata: event.metadata,
  });
}

export function artifactUpdateOut(event: TaskArtifactUpdateEvent): JsonObject {
  return nonEmptyMembers({
    taskId: event.taskId,
    contextId: event.contextId,
    artifact: artifactOut(event.artifact),
    append: event.append === true ? true : undefined,
    lastChunk: event.lastChunk === true ? true : undefined,
    metadata: event.metadata,
  });
}

export function securitySchemeOut(scheme: SecurityScheme): JsonObject {
  switch (scheme.type) {
    case 'apiKey':
      return {
        apiKeySecurityScheme: nonEmptyMembers({
          description: scheme.description,
          location: scheme.in,
          name: scheme.name,
        }),
      };
    case 'http':
      return {
        httpAuthSecurityScheme: nonEmptyMembers({
          description: scheme.description,
          scheme: scheme.scheme,
          bearerFormat: scheme.bearerFormat,
        }),
      };
    case 'oauth2':
      return {
        oauth2SecurityScheme: nonEmptyMembers({
          description: scheme.description,
          flows: scheme.flows,
          oauth2MetadataUrl: scheme.oauth2MetadataUrl,
        }),
      };
    case 'openIdConnect':
      return {
        openIdConnectSecurityScheme: nonEmptyMembers({
          description: scheme.description,
          openIdConnectUrl: scheme.openIdConnectUrl,
        }),
      };
    case 'mutualTLS':
      return { mtlsSecurityScheme: nonEmptyMembers({ description: scheme.description }) };
  }
}

/** `[{ name: [scopes] }]` as 1.0's `[{ schemes: { name: { list: [scopes] } } }]`. */
export function securityRequirementsOut(security: Record<string, string[]>[]): JsonObject[] {
  return security.map((requirement) => ({
    schemes: Object.fromEntries(Object.entries(requirement).map(([name, list]) => [name, { list }])),
  }));
}

/** The card in 1.0's shape alone (the extended card of a 1.0 client), from the model's card and the interfaces served. */
export function cardOut(card: AgentCard, interfaces: readonly SupportedInterface[]): JsonObject {
  return nonEmptyMembers({
    name: card.name,
    description: card.description,
    supportedInterfaces: interfaces,
    provider: card.provider,
    version: card.version,
    documentationUrl: card.documentationUrl,
    capabilities: nonEmptyMembers({
      streaming: card.capabilities.streaming,
      pushNotifications: card.capabilities.pushNotifications,
      extensions: card.capabilities.extensions,
      extendedAgentCard: card.supportsAuthenticatedExtendedCard ?? false,
    }),
    securitySchemes:
      card.securitySchemes === undefined
        ? undefined
        : Object.fromEntries(Object.entries(card.securitySchemes).map(([n, s]) => [n, securitySchemeOut(s)])),
    securityRequirements: card.security === undefined ? undefined : securityRequirementsOut(card.security),
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills.map((skill) => {
      const { security, ...rest } = skill;
      return nonEmptyMembers({
        ...rest,
        securityRequirements: security === undefined ? undefined : securityRequirementsOut(security),
      });
    }),
    signatures: card.signatures,
    iconUrl: card.iconUrl,
  });
}

// ---- responses: reading (the caller's side) ----
//
// The inverse of the writers above, for a client reading a 1.0 server's answers: ProtoJSON (either
// field name, enums by name or number) into the internal model. What a server left out stays out.

const readStatus = (value: unknown): unknown =>
  read(value, ['state', 'message', 'timestamp'], { state: readState, message: readMessage });

const readArtifact = (value: unknown): unknown =>
  read(value, ['artifactId', 'name', 'description', 'parts', 'metadata', 'extensions'], {
    parts: readArray(readPart),
  });

const asObject = (value: unknown): JsonObject => (isJsonObject(value) ? value : {});

function statusToModel(value: unknown): TaskStatus {
  const status = asObject(readStatus(value));
  const out: TaskStatus = { state: STATE_FROM_WIRE[status.state as string] ?? 'unknown' };
  if (isJsonObject(status.message)) out.message = messageFromWire(status.message);
  if (typeof status.timestamp === 'string') out.timestamp = status.timestamp;
  return out;
}

function artifactToModel(value: unknown): Artifact {
  const artifact = asObject(readArtifact(value));
  const parts = Array.isArray(artifact.parts) ? (artifact.parts as JsonObject[]) : [];
  const out: Artifact = { artifactId: artifact.artifactId as string, parts: parts.map(partToModel) };
  for (const key of ['name', 'description', 'metadata', 'extensions'] as const) {
    if (artifact[key] !== undefined) (out as unknown as JsonObject)[key] = artifact[key];
  }
  return out;
}

/** A 1.0 Message answer (either field name) as the model's. */
export function messageFromWire(value: unknown): Message {
  const message = asObject(readMessage(value));
  return messageToModel(Array.isArray(message.parts) ? message : { ...message, parts: [] });
}

/** A 1.0 Task answer as the model's (0.3-shaped) Task. */
export function taskFromWire(value: unknown): Task {
  const task = asObject(read(value, ['id', 'contextId', 'status', 'artifacts', 'history', 'metadata', 'generation']));
  const out: Task = {
    kind: 'task',
    id: task.id as string,
    contextId: task.contextId as string,
    status: statusToModel(task.status),
  };
  if (Array.isArray(task.artifacts)) out.artifacts = task.artifacts.map(artifactToModel);
  if (Array.isArray(task.history)) out.history = task.history.map(messageFromWire);
  if (task.metadata !== undefined) out.metadata = task.metadata as Record<string, unknown>;
  const generation = generationFromWire(task.generation);
  if (generation !== undefined) out.generation = generation;
  return out;
}

/** A 1.1 draft `generation` an agent sent (number or ProtoJSON string); undefined when absent or not one. */
function generationFromWire(value: unknown): number | undefined {
  const number = readInt64(value);
  return typeof number === 'number' && Number.isSafeInteger(number) && number >= 0 ? number : undefined;
}

/** §4.2 TaskStatusUpdateEvent: 1.0 has no `final`; the model's follows from the state (§7.2 of 0.3). */
export function statusUpdateFromWire(value: unknown): TaskStatusUpdateEvent {
  const event = asObject(read(value, ['taskId', 'contextId', 'status', 'metadata', 'generation']));
  const status = statusToModel(event.status);
  const out: TaskStatusUpdateEvent = {
    kind: 'status-update',
    taskId: event.taskId as string,
    contextId: event.contextId as string,
    status,
    final: isFinalState(status.state),
  };
  if (event.metadata !== undefined) out.metadata = event.metadata as Record<string, unknown>;
  const generation = generationFromWire(event.generation);
  if (generation !== undefined) out.generation = generation;
  return out;
}

export function artifactUpdateFromWire(value: unknown): TaskArtifactUpdateEvent {
  const event = asObject(
    read(value, ['taskId', 'contextId', 'artifact', 'append', 'lastChunk', 'metadata', 'generation']),
  );
  const out: TaskArtifactUpdateEvent = {
    kind: 'artifact-update',
    taskId: event.taskId as string,
    contextId: event.contextId as string,
    artifact: artifactToModel(event.artifact),
  };
  if (event.append === true) out.append = true;
  if (event.lastChunk === true) out.lastChunk = true;
  if (event.metadata !== undefined) out.metadata = event.metadata as Record<string, unknown>;
  const generation = generationFromWire(event.generation);
  if (generation !== undefined) out.generation = generation;
  return out;
}
