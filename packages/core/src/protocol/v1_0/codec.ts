/**
 * A2A 1.0 at the edge (both bindings speak the same ProtoJSON): each request read, checked against
 * the 1.0 schemas and turned into the internal model's operation parameters; each result, stream
 * item and card written back as 1.0 ProtoJSON.
 */

import { A2AError } from '../../errors.js';
import type { JsonObject } from '../../json.js';
import type {
  AgentCard,
  MessageSendConfiguration,
  MessageSendParams,
  StreamResult,
  Task,
  TaskPushNotificationConfig,
  TaskState,
} from '../../model/types.js';
import type { CallerCodec, ProtocolCodec } from '../codec.js';
import type { OperationName, OperationParams, OperationResult } from '../operations.js';
import {
  definedMembers,
  expectObject,
  type ProtoJsonWriters,
  protoJsonResult,
  protoJsonStreamItem,
  snakeCaseOf,
} from '../proto-json-results.js';
import { createAjv, type Validator, validateParams } from '../validation.js';
import {
  artifactUpdateFromWire,
  artifactUpdateOut,
  cardOut,
  messageFromWire,
  messageOut,
  messageToModel,
  pushConfigToModel,
  readInt64,
  readPushConfig,
  readSendMessageRequest,
  readState,
  STATE_FROM_WIRE,
  STATE_TO_WIRE,
  statusUpdateFromWire,
  statusUpdateOut,
  taskFromWire,
  taskOut,
  withGeneration,
} from './proto-json.js';
import * as schemas from './schemas.js';

const ajv = createAjv();
const sendMessage = ajv.compile(schemas.sendMessageRequestSchema);
const pushConfigRequest = ajv.compile(schemas.taskPushNotificationConfigRequestSchema);
const createPushConfig = ajv.compile({
  ...schemas.taskPushNotificationConfigSchema,
  required: ['taskId', 'url'],
} as const);

/** How each operation's request is read (field names) and checked, with the 1.0 method name for messages. */
const REQUESTS: Readonly<Record<OperationName, { name: string; fields?: readonly string[]; validate: Validator }>> = {
  sendMessage: { name: 'SendMessage', validate: sendMessage },
  sendStreamingMessage: { name: 'SendStreamingMessage', validate: sendMessage },
  getTask: {
    name: 'GetTask',
    fields: ['tenant', 'id', 'historyLength', 'currentGeneration'],
    validate: ajv.compile(schemas.getTaskRequestSchema),
  },
  listTasks: {
    name: 'ListTasks',
    fields: [
      'tenant',
      'contextId',
      'status',
      'pageSize',
      'pageToken',
      'historyLength',
      'statusTimestampAfter',
      'includeArtifacts',
    ],
    validate: ajv.compile(schemas.listTasksRequestSchema),
  },
  cancelTask: {
    name: 'CancelTask',
    fields: ['tenant', 'id', 'metadata'],
    validate: ajv.compile(schemas.cancelTaskRequestSchema),
  },
  subscribeToTask: {
    name: 'SubscribeToTask',
    fields: ['tenant', 'id'],
    validate: ajv.compile(schemas.subscribeToTaskRequestSchema),
  },
  setTaskPushNotificationConfig: { name: 'CreateTaskPushNotificationConfig', validate: createPushConfig },
  getTaskPushNotificationConfig: {
    name: 'GetTaskPushNotificationConfig',
    fields: ['tenant', 'taskId', 'id'],
    validate: pushConfigRequest,
  },
  listTaskPushNotificationConfig: {
    name: 'ListTaskPushNotificationConfigs',
    fields: ['tenant', 'taskId', 'pageSize', 'pageToken'],
    validate: ajv.compile(schemas.listTaskPushNotificationConfigsRequestSchema),
  },
  deleteTaskPushNotificationConfig: {
    name: 'DeleteTaskPushNotificationConfig',
    fields: ['tenant', 'taskId', 'id'],
    validate: pushConfigRequest,
  },
  getExtendedAgentCard: {
    name: 'GetExtendedAgentCard',
    fields: ['tenant'],
    validate: ajv.compile(schemas.getExtendedAgentCardRequestSchema),
  },
};

/** The 1.0 method name of each operation. */
export const METHOD_NAMES_1_0: Readonly<Record<OperationName, string>> = Object.fromEntries(
  Object.entries(REQUESTS).map(([operation, { name }]) => [operation, name]),
) as Record<OperationName, string>;

function readFields(value: unknown, fields: readonly string[]): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const object = value as JsonObject;
  const out: JsonObject = {};
  for (const camel of fields) {
    const field = object[camel] !== undefined ? object[camel] : object[snakeCaseOf(camel)];
    if (field !== undefined) out[camel] = field;
  }
  return out;
}

function toModel(operation: OperationName, request: JsonObject): unknown {
  switch (operation) {
    case 'sendMessage':
    case 'sendStreamingMessage': {
      const config = (request.configuration ?? {}) as JsonObject;
      // §3.2.2: `returnImmediately` (default false) is 0.3's `blocking` turned around.
      const configuration: MessageSendConfiguration = definedMembers({
        acceptedOutputModes: config.acceptedOutputModes as string[] | undefined,
        historyLength: config.historyLength as number | undefined,
        blocking: config.returnImmediately !== true,
        pushNotificationConfig:
          config.taskPushNotificationConfig === undefined
            ? undefined
            : pushConfigToModel(config.taskPushNotificationConfig as JsonObject),
        ifGenerationMatch: config.ifGenerationMatch as number | undefined,
      });
      return definedMembers({
        message: messageToModel(request.message as JsonObject),
        configuration,
        metadata: request.metadata,
      });
    }
    case 'getTask':
      return definedMembers({
        id: request.id,
        historyLength: request.historyLength,
        currentGeneration: request.currentGeneration,
      });
    case 'listTasks':
      return definedMembers({
        contextId: request.contextId,
        status: request.status === undefined ? undefined : STATE_FROM_WIRE[request.status as string],
        statusTimestampAfter: request.statusTimestampAfter,
        pageSize: request.pageSize,
        pageToken: request.pageToken,
        historyLength: request.historyLength,
        includeArtifacts: request.includeArtifacts,
      });
    case 'cancelTask':
      return definedMembers({ id: request.id, metadata: request.metadata });
    case 'subscribeToTask':
      return { id: request.id };
    case 'setTaskPushNotificationConfig':
      return { taskId: request.taskId, pushNotificationConfig: pushConfigToModel(request) };
    case 'getTaskPushNotificationConfig':
    case 'deleteTaskPushNotificationConfig':
      return { id: request.taskId, pushNotificationConfigId: request.id };
    case 'listTaskPushNotificationConfig':
      return { id: request.taskId };
    case 'getExtendedAgentCard':
      return {};
  }
}

/** 1.0's flattened config from the model's nested one. */
function pushConfigOut(config: TaskPushNotificationConfig): JsonObject {
  const { id, url, token, authentication } = config.pushNotificationConfig;
  const out: JsonObject = { taskId: config.taskId, url };
  if (id !== undefined) out.id = id;
  if (token !== undefined) out.token = token;
  const scheme = authentication?.schemes[0];
  if (scheme !== undefined) {
    out.authentication =
      authentication?.credentials === undefined ? { scheme } : { scheme, credentials: authentication.credentials };
  }
  return out;
}

/** A card as 1.0 writes it: its interfaces are the ones it declares. */
function cardOut1_0(card: AgentCard): unknown {
  return cardOut(card, card.supportedInterfaces ?? []);
}

const WRITERS: ProtoJsonWriters = {
  task: taskOut,
  message: messageOut,
  statusUpdate: statusUpdateOut,
  artifactUpdate: artifactUpdateOut,
  pushConfig: pushConfigOut,
  card: cardOut1_0,
  // Every member of ListTaskPushNotificationConfigResponse is REQUIRED.
  pushConfigListExtras: { nextPageToken: '' },
  noResultForm(operation) {
    throw new A2AError('INTERNAL', `No 1.0 result form for ${operation}.`);
  },
};

/**
 * The writers of an agent with `draft11.generations` on: Task, TaskStatusUpdateEvent and
 * TaskArtifactUpdateEvent carry the A2A 1.1 draft's `generation` (§3.2.7). A stream sets it on the
 * events it sends (runtime/follower.ts); a snapshot keeps it.
 */
const GENERATION_WRITERS: ProtoJsonWriters = {
  ...WRITERS,
  task: (task) => withGeneration(taskOut(task), task.generation),
  statusUpdate: (event) => withGeneration(statusUpdateOut(event), event.generation),
  artifactUpdate: (event) => withGeneration(artifactUpdateOut(event), event.generation),
};

/** The 1.0 codec writing with `writers`; it reads the draft's fields whichever it writes. */
function codec1_0(writers: ProtoJsonWriters): ProtocolCodec {
  return {
    version: '1.0',
    decode<K extends OperationName>(operation: K, params: unknown, root: string): OperationParams<K> {
      const spec = REQUESTS[operation];
      // GetExtendedAgentCard and ListTasks may come without params (§9.4.8; ListTasks has no
      // required field); every other request has some.
      const given =
        params === undefined && (operation === 'getExtendedAgentCard' || operation === 'listTasks') ? {} : params;
      let request: unknown;
      if (operation === 'sendMessage' || operation === 'sendStreamingMessage') request = readSendMessageRequest(given);
      else if (operation === 'setTaskPushNotificationConfig') request = readPushConfig(given);
      else request = readFields(given, spec.fields ?? []);
      if (operation === 'listTasks' && request !== null && typeof request === 'object') {
        const list = request as JsonObject;
        if (list.status !== undefined) list.status = readState(list.status);
        // proto3: a field at its default is unset (clients built on generated code send the defaults).
        if (list.status === 'TASK_STATE_UNSPECIFIED') delete list.status;
        for (const field of ['contextId', 'pageToken', 'statusTimestampAfter'])
          if (list[field] === '') delete list[field];
      }
      if (operation === 'getTask' && request !== null && typeof request === 'object') {
        const get = request as JsonObject;
        if (get.currentGeneration !== undefined) get.currentGeneration = readInt64(get.currentGeneration) as number;
      }
      validateParams<JsonObject>(spec.validate, request, root, `"${spec.name}"`);
      return toModel(operation, request as JsonObject) as OperationParams<K>;
    },
    encodeResult<K extends OperationName>(operation: K, result: OperationResult<K>): unknown {
      return protoJsonResult(writers, operation, result);
    },
    encodeStreamItem(item: StreamResult): unknown {
      return protoJsonStreamItem(writers, item);
    },
    encodeCard: cardOut1_0,
  };
}

/** A2A 1.0 as the specification (v1.0.1) has it. */
export const protoJson1_0: ProtocolCodec = codec1_0(WRITERS);

/**
 * A2A 1.0 with the A2A 1.1 draft's task generations (`draft11.generations`, opt-in, tracking a
 * draft): `generation` on Task and on both update events. Chosen where the bindings are composed.
 */
export const protoJson1_0WithGenerations: ProtocolCodec = codec1_0(GENERATION_WRITERS);

// ---- the caller's direction: requests out, results in ----

function checkedTask(value: unknown, what: string): Task {
  const task = taskFromWire(expectObject(value, what));
  if (typeof task.id !== 'string' || typeof task.contextId !== 'string') {
    throw new A2AError('INVALID_AGENT_RESPONSE', `The agent's ${what} has no id or contextId: not a Task.`);
  }
  return task;
}

/** The inverse of {@link toModel}: the model's parameters as the 1.0 request of each operation. */
function toWire(operation: OperationName, params: JsonObject): JsonObject {
  switch (operation) {
    case 'sendMessage':
    case 'sendStreamingMessage': {
      const { message, configuration, metadata } = params as unknown as MessageSendParams;
      const config: JsonObject = {};
      if (configuration?.acceptedOutputModes !== undefined)
        config.acceptedOutputModes = configuration.acceptedOutputModes;
      if (configuration?.historyLength !== undefined) config.historyLength = configuration.historyLength;
      // §3.2.2: `returnImmediately` is 0.3's `blocking` turned around.
      if (configuration?.blocking === false) config.returnImmediately = true;
      if (configuration?.ifGenerationMatch !== undefined) config.ifGenerationMatch = configuration.ifGenerationMatch;
      if (configuration?.pushNotificationConfig !== undefined) {
        const { taskId: _unset, ...flat } = pushConfigOut({
          taskId: '',
          pushNotificationConfig: configuration.pushNotificationConfig,
        });
        config.taskPushNotificationConfig = flat;
      }
      return definedMembers({
        message: messageOut(message),
        configuration: Object.keys(config).length > 0 ? config : undefined,
        metadata,
      });
    }
    case 'getTask':
      return definedMembers({
        id: params.id,
        historyLength: params.historyLength,
        currentGeneration: params.currentGeneration,
      });
    case 'listTasks':
      return definedMembers({
        ...params,
        status: params.status === undefined ? undefined : STATE_TO_WIRE[params.status as TaskState],
      });
    case 'cancelTask':
      return definedMembers({ id: params.id, metadata: params.metadata });
    case 'subscribeToTask':
      return { id: params.id };
    case 'setTaskPushNotificationConfig':
      return pushConfigOut(params as unknown as TaskPushNotificationConfig);
    case 'getTaskPushNotificationConfig':
    case 'deleteTaskPushNotificationConfig':
      return definedMembers({ taskId: params.id, id: params.pushNotificationConfigId });
    case 'listTaskPushNotificationConfig':
      return { taskId: params.id };
    case 'getExtendedAgentCard':
      return {};
  }
}

function pushConfigFromWire(value: unknown): TaskPushNotificationConfig {
  const config = expectObject(readPushConfig(value), 'a push notification config');
  return { taskId: config.taskId as string, pushNotificationConfig: pushConfigToModel(config) };
}

export const protoJson1_0Caller: CallerCodec = {
  version: '1.0',
  encodeParams<K extends OperationName>(operation: K, params: OperationParams<K>): unknown {
    return toWire(operation, params as unknown as JsonObject);
  },
  decodeResult(operation, wire) {
    switch (operation) {
      case 'sendMessage': {
        const response = expectObject(wire, 'SendMessage');
        if (response.message !== undefined) return messageFromWire(expectObject(response.message, 'SendMessage'));
        return checkedTask(response.task, 'SendMessage task');
      }
      case 'getTask':
      case 'cancelTask':
        return checkedTask(wire, operation === 'getTask' ? 'GetTask' : 'CancelTask');
      case 'listTasks': {
        const response = expectObject(wire, 'ListTasks');
        const tasks = Array.isArray(response.tasks) ? response.tasks : [];
        return {
          tasks: tasks.map((task) => checkedTask(task, 'ListTasks task')),
          nextPageToken: typeof response.nextPageToken === 'string' ? response.nextPageToken : '',
          pageSize: typeof response.pageSize === 'number' ? response.pageSize : tasks.length,
          totalSize: typeof response.totalSize === 'number' ? response.totalSize : tasks.length,
        };
      }
      case 'setTaskPushNotificationConfig':
      case 'getTaskPushNotificationConfig':
        return pushConfigFromWire(wire);
      case 'listTaskPushNotificationConfig': {
        const response = expectObject(wire, 'ListTaskPushNotificationConfigs');
        return (Array.isArray(response.configs) ? response.configs : []).map(pushConfigFromWire);
      }
      case 'deleteTaskPushNotificationConfig':
        return null;
      case 'getExtendedAgentCard':
        return expectObject(wire, 'GetExtendedAgentCard');
    }
    // biome-ignore lint/suspicious/noExplicitAny: the switch covers every operation; this satisfies the generic return.
    return undefined as any;
  },
  decodeStreamItem(wire: unknown): StreamResult {
    const item = expectObject(wire, 'a stream event');
    if (item.task !== undefined) return checkedTask(item.task, 'stream task');
    if (item.message !== undefined) return messageFromWire(expectObject(item.message, 'stream message'));
    if (item.statusUpdate !== undefined || item.status_update !== undefined) {
      return statusUpdateFromWire(expectObject(item.statusUpdate ?? item.status_update, 'statusUpdate'));
    }
    if (item.artifactUpdate !== undefined || item.artifact_update !== undefined) {
      return artifactUpdateFromWire(expectObject(item.artifactUpdate ?? item.artifact_update, 'artifactUpdate'));
    }
    throw new A2AError(
      'INVALID_AGENT_RESPONSE',
      `A stream event had none of task, message, statusUpdate, artifactUpdate: ${JSON.stringify(wire).slice(0, 120)}`,
    );
  },
};
