/**
 * A2A 0.3.0 over HTTP+JSON (§3.5.6 and the REST tabs of §7): the routes under `/v1`, the ProtoJSON
 * shapes of `proto-json.ts`, and errors as an HTTP status with a JSON body.
 */

import { A2AError, ERROR_TABLE } from '../../errors.js';
import { isJsonObject, type JsonObject } from '../../json.js';
import type { Message, StreamResult, Task, TaskPushNotificationConfig } from '../../model/types.js';
import type { CallerCodec, ProtocolCodec, RestErrorResponse, RestMapping, RestRequest, RestRoute } from '../codec.js';
import type { OperationName, OperationParams, OperationResult } from '../operations.js';
import { expectObject, type ProtoJsonWriters, protoJsonResult, protoJsonStreamItem } from '../proto-json-results.js';
import {
  artifactUpdateIn,
  artifactUpdateOut,
  cardOut,
  messageIn,
  messageOut,
  pushConfigResponseIn,
  STATE_OUT,
  sendParamsIn,
  sendParamsOut,
  setPushParamsIn,
  statusUpdateIn,
  statusUpdateOut,
  taskIn,
  taskOut,
} from './proto-json.js';
import { validate0_3 } from './validators.js';

/** A query parameter that must be a non-negative integer: a number when it is one, else as given (validation names it). */
function integerQuery(value: unknown): unknown {
  const text = Array.isArray(value) ? value[0] : value;
  return typeof text === 'string' && /^\d+$/.test(text) ? Number(text) : text;
}

function objectBody(request: RestRequest): JsonObject {
  const { body } = request;
  return isJsonObject(body) ? body : {};
}

function taskQuery(request: RestRequest): unknown {
  const historyLength = request.query.historyLength ?? request.query.history_length;
  return historyLength === undefined
    ? { id: request.path.id }
    : { id: request.path.id, historyLength: integerQuery(historyLength) };
}

/** A query flag: `true` / `false` as booleans, anything else as given (validation names it). */
function booleanQuery(value: unknown): unknown {
  const text = Array.isArray(value) ? value[0] : value;
  return text === 'true' ? true : text === 'false' ? false : text;
}

/** A task state in a query: the proto's name (`TASK_STATE_WORKING`) or the JSON-RPC one (`working`). */
const STATE_IN: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(STATE_OUT).map(([model, wire]) => [wire, model]),
);

/** `GET /v1/tasks`: ListTasks' filters and paging from the query, in either naming. */
function listQuery(request: RestRequest): unknown {
  const { query } = request;
  const read = (camel: string, snake: string): unknown => {
    const value = query[camel] ?? query[snake];
    return Array.isArray(value) ? value[0] : value;
  };
  const params: Record<string, unknown> = {};
  const set = (name: string, value: unknown) => {
    if (value !== undefined) params[name] = value;
  };
  set('contextId', read('contextId', 'context_id'));
  const status = read('status', 'status');
  set('status', typeof status === 'string' ? (STATE_IN[status] ?? status) : status);
  set('statusTimestampAfter', read('statusTimestampAfter', 'status_timestamp_after'));
  set('pageSize', integerQuery(read('pageSize', 'page_size')));
  set('pageToken', read('pageToken', 'page_token'));
  set('historyLength', integerQuery(read('historyLength', 'history_length')));
  set('includeArtifacts', booleanQuery(read('includeArtifacts', 'include_artifacts')));
  return params;
}

/** The routes of §3.5.6. Subscribe is POST in §7's text and GET in the 0.3 proto: both are served. */
const ROUTES: readonly RestRoute[] = [
  { method: 'POST', path: '/v1/message:send', operation: 'sendMessage', params: (r) => r.body },
  { method: 'POST', path: '/v1/message:stream', operation: 'sendStreamingMessage', params: (r) => r.body },
  {
    method: 'POST',
    path: '/v1/tasks/{id}:cancel',
    operation: 'cancelTask',
    params: (r) => ({ ...metadataOf(r), id: r.path.id }),
  },
  {
    method: 'POST',
    path: '/v1/tasks/{id}:subscribe',
    operation: 'subscribeToTask',
    params: (r) => ({ ...metadataOf(r), id: r.path.id }),
  },
  { method: 'GET', path: '/v1/tasks/{id}:subscribe', operation: 'subscribeToTask', params: (r) => ({ id: r.path.id }) },
  { method: 'GET', path: '/v1/tasks/{id}', operation: 'getTask', params: taskQuery },
  { method: 'GET', path: '/v1/tasks', operation: 'listTasks', params: listQuery },
  {
    method: 'POST',
    path: '/v1/tasks/{id}/pushNotificationConfigs',
    operation: 'setTaskPushNotificationConfig',
    params: (r) => ({ taskId: r.path.id, body: r.body }),
  },
  {
    method: 'GET',
    path: '/v1/tasks/{id}/pushNotificationConfigs/{configId}',
    operation: 'getTaskPushNotificationConfig',
    params: (r) => ({ id: r.path.id, pushNotificationConfigId: r.path.configId }),
  },
  {
    method: 'GET',
    path: '/v1/tasks/{id}/pushNotificationConfigs',
    operation: 'listTaskPushNotificationConfig',
    params: (r) => ({ id: r.path.id }),
  },
  {
    method: 'DELETE',
    path: '/v1/tasks/{id}/pushNotificationConfigs/{configId}',
    operation: 'deleteTaskPushNotificationConfig',
    params: (r) => ({ id: r.path.id, pushNotificationConfigId: r.path.configId }),
  },
  { method: 'GET', path: '/v1/card', operation: 'getExtendedAgentCard', params: () => ({}) },
];

function metadataOf(request: RestRequest): Record<string, unknown> {
  const { metadata } = objectBody(request);
  return metadata === undefined ? {} : { metadata };
}

const NAMES: Readonly<Record<OperationName, string>> = Object.fromEntries(
  ROUTES.map((route) => [route.operation, `${route.method} ${route.path}`]),
) as Record<OperationName, string>;

function pushConfigOut(config: TaskPushNotificationConfig): Record<string, unknown> {
  const id = config.pushNotificationConfig.id ?? '';
  return {
    name: `tasks/${config.taskId}/pushNotificationConfigs/${id}`,
    pushNotificationConfig: config.pushNotificationConfig,
  };
}

/**
 * A validation error about a message's parts, named as the client wrote them: the validators check
 * the JSON-RPC shape, where they are `parts`, while ProtoJSON (and so @a2a-js/sdk) calls them
 * `content`. Only a client that sent `parts` (the A2A TCK) reads `parts`.
 */
function namedAsSent(error: unknown, wire: unknown, root: string): unknown {
  if (!A2AError.is(error) || error.code !== 'INVALID_PARAMS') return error;
  const body = wire !== null && typeof wire === 'object' ? (wire as Record<string, unknown>) : {};
  const message = (body.message ?? body.request) as Record<string, unknown> | null | undefined;
  if (message !== null && typeof message === 'object' && message.parts !== undefined && message.content === undefined) {
    return error;
  }
  const from = `${root}.message.parts`;
  const to = `${root}.message.content`;
  const rename = (text: string) => text.split(from).join(to);
  const data = error.data as { errors?: { path: string; problem: string }[] } | undefined;
  return new A2AError('INVALID_PARAMS', rename(error.message), {
    data:
      data?.errors === undefined
        ? data
        : { ...data, errors: data.errors.map((detail) => ({ ...detail, path: rename(detail.path) })) },
    cause: error,
  });
}

/** ProtoJSON of the 0.3 proto. */
const WRITERS: ProtoJsonWriters = {
  task: taskOut,
  message: messageOut,
  statusUpdate: statusUpdateOut,
  artifactUpdate: artifactUpdateOut,
  pushConfig: pushConfigOut,
  card: cardOut,
  pushConfigListExtras: {},
  noResultForm: (_operation, result) => result,
};

export const protoJson0_3: ProtocolCodec = {
  version: '0.3',
  decode<K extends OperationName>(operation: K, params: unknown, root: string): OperationParams<K> {
    if (operation === 'sendMessage' || operation === 'sendStreamingMessage') {
      try {
        return validate0_3(operation, sendParamsIn(params), root, NAMES[operation]);
      } catch (error) {
        throw namedAsSent(error, params, root);
      }
    }
    let shaped = params;
    if (operation === 'setTaskPushNotificationConfig') {
      const { taskId, body } = params as { taskId: string; body: unknown };
      shaped = setPushParamsIn(taskId, body);
    }
    return validate0_3(operation, shaped, root, NAMES[operation]);
  },
  encodeResult<K extends OperationName>(operation: K, result: OperationResult<K>): unknown {
    return protoJsonResult(WRITERS, operation, result);
  },
  encodeStreamItem(item: StreamResult): unknown {
    return protoJsonStreamItem(WRITERS, item);
  },
  encodeCard: cardOut,
};

/**
 * An error body both kinds of REST client read: the JSON-RPC `code` (what @a2a-js/sdk maps errors
 * by), the A2A error type in `error` (what the A2A TCK maps them by), and the message.
 */
function errorBody(error: A2AError): Record<string, unknown> {
  const { jsonRpc, type } = ERROR_TABLE[error.code];
  const body: Record<string, unknown> = { code: jsonRpc, error: type, message: error.message };
  if (error.data !== undefined) body.data = error.data;
  return body;
}

export const rest0_3: RestMapping = {
  codec: protoJson0_3,
  routes: ROUTES,
  mediaType: 'application/json',
  error(error: A2AError): RestErrorResponse {
    return { status: ERROR_TABLE[error.code].http, body: errorBody(error) };
  },
  streamError(error: A2AError) {
    return { event: 'error', data: errorBody(error) };
  },
};

// ---- the caller's direction ----

function checkedTaskIn(value: unknown, what: string): Task {
  const task = taskIn(expectObject(value, what));
  if (typeof task.id !== 'string' || typeof task.contextId !== 'string') {
    throw new A2AError('INVALID_AGENT_RESPONSE', `The agent's ${what} has no id or contextId: not a Task.`);
  }
  return task;
}

/**
 * The caller's side of {@link protoJson0_3}: each operation's request as the route's path
 * parameters (`id`, `configId`) beside its body or query members, and the ProtoJSON answers back
 * into the model. Binding clients fill `{name}` in a route's path from the member of that name.
 */
export const protoJson0_3Caller: CallerCodec = {
  version: '0.3',
  encodeParams<K extends OperationName>(operation: K, params: OperationParams<K>): unknown {
    const p = params as unknown as Record<string, unknown>;
    switch (operation) {
      case 'sendMessage':
      case 'sendStreamingMessage':
        return sendParamsOut(params as OperationParams<'sendMessage'>);
      case 'getTask':
        return p.historyLength === undefined ? { id: p.id } : { id: p.id, historyLength: p.historyLength };
      case 'listTasks': {
        const out: Record<string, unknown> = { ...p };
        if (typeof p.status === 'string') out.status = STATE_OUT[p.status as keyof typeof STATE_OUT];
        return out;
      }
      case 'cancelTask':
      case 'subscribeToTask':
      case 'listTaskPushNotificationConfig':
        return { id: p.id };
      case 'setTaskPushNotificationConfig':
        return { id: p.taskId, pushNotificationConfig: p.pushNotificationConfig };
      case 'getTaskPushNotificationConfig':
      case 'deleteTaskPushNotificationConfig':
        return { id: p.id, configId: p.pushNotificationConfigId };
      default:
        return {};
    }
  },
  decodeResult(operation, wire) {
    switch (operation) {
      case 'sendMessage': {
        const response = expectObject(wire, 'message:send');
        const message = response.message ?? response.msg;
        if (message !== undefined) return messageIn(expectObject(message, 'message:send')) as never;
        return checkedTaskIn(response.task, 'message:send task') as never;
      }
      case 'getTask':
      case 'cancelTask':
        return checkedTaskIn(wire, operation) as never;
      case 'listTasks': {
        const response = expectObject(wire, 'tasks list');
        const tasks = Array.isArray(response.tasks) ? response.tasks : [];
        return {
          tasks: tasks.map((task) => checkedTaskIn(task, 'listed task')),
          nextPageToken: typeof response.nextPageToken === 'string' ? response.nextPageToken : '',
          pageSize: typeof response.pageSize === 'number' ? response.pageSize : tasks.length,
          totalSize: typeof response.totalSize === 'number' ? response.totalSize : tasks.length,
        } as never;
      }
      case 'setTaskPushNotificationConfig':
      case 'getTaskPushNotificationConfig':
        return pushConfigResponseIn(expectObject(wire, 'a push notification config')) as never;
      case 'listTaskPushNotificationConfig': {
        const response = Array.isArray(wire) ? { configs: wire } : expectObject(wire, 'push notification configs');
        return (Array.isArray(response.configs) ? response.configs : []).map(pushConfigResponseIn) as never;
      }
      case 'deleteTaskPushNotificationConfig':
        return null as never;
      default:
        return expectObject(wire, operation) as never;
    }
  },
  decodeStreamItem(wire: unknown): StreamResult {
    const item = expectObject(wire, 'a stream event');
    if (item.task !== undefined) return checkedTaskIn(item.task, 'stream task');
    if (item.message !== undefined || item.msg !== undefined)
      return messageIn(expectObject(item.message ?? item.msg, 'stream message')) as Message;
    const status = item.statusUpdate ?? item.status_update;
    if (status !== undefined) return statusUpdateIn(expectObject(status, 'statusUpdate'));
    const artifact = item.artifactUpdate ?? item.artifact_update;
    if (artifact !== undefined) return artifactUpdateIn(expectObject(artifact, 'artifactUpdate'));
    throw new A2AError(
      'INVALID_AGENT_RESPONSE',
      `A stream event had none of task, message, statusUpdate, artifactUpdate: ${JSON.stringify(wire).slice(0, 120)}`,
    );
  },
};
