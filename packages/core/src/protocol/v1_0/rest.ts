/**
 * A2A 1.0 over HTTP+JSON (§11 and the proto's `google.api.http` rules): routes without a version
 * prefix, each also under `/{tenant}`; bodies in ProtoJSON as `application/a2a+json`; errors as
 * `google.rpc.Status`.
 */

import type { A2AError } from '../../errors.js';
import { isJsonObject, type JsonObject } from '../../json.js';
import type { RestErrorResponse, RestMapping, RestRequest, RestRoute } from '../codec.js';
import { protoJson1_0, protoJson1_0WithGenerations } from './codec.js';
import { restError1_0 } from './errors.js';

function body(request: RestRequest): JsonObject {
  const value = request.body;
  return isJsonObject(value) ? value : {};
}

/** A query parameter that must be an integer: a number when it is one, else as given (validation names it). */
function integer(value: unknown): unknown {
  const text = Array.isArray(value) ? value[0] : value;
  return typeof text === 'string' && /^-?\d+$/.test(text) ? Number(text) : text;
}

/** A query flag: `true` / `false` as booleans, anything else as given (validation names it). */
function boolean(value: unknown): unknown {
  const text = Array.isArray(value) ? value[0] : value;
  return text === 'true' ? true : text === 'false' ? false : text;
}

/** §11.5: ListTasks' fields as query parameters (camelCase; enums by name; timestamps as ISO 8601). */
function listQuery(request: RestRequest): unknown {
  const { query } = request;
  const params: JsonObject = {};
  const first = (value: unknown) => (Array.isArray(value) ? value[0] : value);
  for (const [name, read] of [
    ['contextId', first],
    ['status', first],
    ['statusTimestampAfter', first],
    ['pageToken', first],
    ['pageSize', integer],
    ['historyLength', integer],
    ['includeArtifacts', boolean],
  ] as const) {
    if (query[name] !== undefined) params[name] = read(query[name]);
  }
  return params;
}

/** The routes of the proto, relative to the interface URL. The path wins over the same field in the body. */
const PLAIN_ROUTES: readonly RestRoute[] = [
  { method: 'POST', path: '/message:send', operation: 'sendMessage', params: (r) => r.body },
  { method: 'POST', path: '/message:stream', operation: 'sendStreamingMessage', params: (r) => r.body },
  {
    method: 'POST',
    path: '/tasks/{id}:cancel',
    operation: 'cancelTask',
    params: (r) => ({ ...body(r), id: r.path.id }),
  },
  // §11.3 says POST, the proto's rule says GET: both are served.
  { method: 'POST', path: '/tasks/{id}:subscribe', operation: 'subscribeToTask', params: (r) => ({ id: r.path.id }) },
  { method: 'GET', path: '/tasks/{id}:subscribe', operation: 'subscribeToTask', params: (r) => ({ id: r.path.id }) },
  { method: 'GET', path: '/tasks', operation: 'listTasks', params: listQuery },
  {
    method: 'GET',
    path: '/tasks/{id}',
    operation: 'getTask',
    params: (r) => {
      const params: JsonObject = { id: r.path.id };
      if (r.query.historyLength !== undefined) params.historyLength = integer(r.query.historyLength) as number;
      // A2A 1.1 draft §3.2.7 long-poll (opt-in `draft11.generations`): `?currentGeneration=N`.
      if (r.query.currentGeneration !== undefined) {
        params.currentGeneration = integer(r.query.currentGeneration) as number;
      }
      return params;
    },
  },
  {
    method: 'POST',
    path: '/tasks/{taskId}/pushNotificationConfigs',
    operation: 'setTaskPushNotificationConfig',
    params: (r) => ({ ...body(r), taskId: r.path.taskId }),
  },
  {
    method: 'GET',
    path: '/tasks/{taskId}/pushNotificationConfigs/{id}',
    operation: 'getTaskPushNotificationConfig',
    params: (r) => ({ taskId: r.path.taskId, id: r.path.id }),
  },
  {
    method: 'GET',
    path: '/tasks/{taskId}/pushNotificationConfigs',
    operation: 'listTaskPushNotificationConfig',
    params: (r) => ({
      taskId: r.path.taskId,
      ...(r.query.pageSize === undefined ? {} : { pageSize: integer(r.query.pageSize) }),
      ...(r.query.pageToken === undefined ? {} : { pageToken: r.query.pageToken }),
    }),
  },
  {
    method: 'DELETE',
    path: '/tasks/{taskId}/pushNotificationConfigs/{id}',
    operation: 'deleteTaskPushNotificationConfig',
    params: (r) => ({ taskId: r.path.taskId, id: r.path.id }),
  },
  { method: 'GET', path: '/extendedAgentCard', operation: 'getExtendedAgentCard', params: () => ({}) },
];

/**
 * Every route again under `/{tenant}` (§11.4). Listed after the plain ones, so a path both could
 * read (`GET /tasks/tasks`) is the plain route's.
 */
const TENANT_ROUTES: readonly RestRoute[] = PLAIN_ROUTES.map((route) => ({
  ...route,
  path: `/{tenant}${route.path}`,
  params: (request: RestRequest) => {
    const params = route.params(request);
    return params !== null && typeof params === 'object'
      ? { ...(params as JsonObject), tenant: request.path.tenant }
      : params;
  },
}));

export const rest1_0: RestMapping = {
  codec: protoJson1_0,
  routes: [...PLAIN_ROUTES, ...TENANT_ROUTES],
  // §11.1 (1.0.1): bodies SHOULD be application/a2a+json; application/json is accepted too.
  mediaType: 'application/a2a+json',
  error(error: A2AError): RestErrorResponse {
    return restError1_0(error);
  },
  streamError(error: A2AError) {
    // The spec leaves a failure inside a stream open; the official SDKs send an `error` event
    // whose data is the HTTP+JSON error body.
    return { event: 'error', data: restError1_0(error).body };
  },
};

/** {@link rest1_0} with the A2A 1.1 draft's task generations (`draft11.generations`). */
export const rest1_0WithGenerations: RestMapping = { ...rest1_0, codec: protoJson1_0WithGenerations };
