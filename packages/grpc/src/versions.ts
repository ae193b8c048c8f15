/**
 * The two gRPC services one listener serves, one per A2A version, told apart by the service name in
 * each call's path: `lf.a2a.v1.A2AService` (A2A 1.0, §10) and `a2a.v1.A2AService` (A2A 0.3). Each is
 * the protobuf service, the codec its ProtoJSON goes through, its rpc → operation table, and how a
 * request message becomes the codec's parameters.
 *
 * No codec of its own for 0.3: 0.3's gRPC messages are those of its proto, whose ProtoJSON is what
 * 0.3's HTTP+JSON binding speaks, so the core's `protoJson0_3` reads and writes them. What differs
 * is where a task is named: HTTP+JSON carries the id in the path (`/v1/tasks/{id}`), gRPC in the
 * request as a resource name (`name: "tasks/{id}"`, `parent`, `…/pushNotificationConfigs/{configId}`),
 * which this file turns into the ids the codec reads, as the HTTP+JSON routes do with their paths.
 */

import {
  A2AError,
  type JsonObject,
  METHOD_NAMES_1_0,
  type OperationName,
  type ProtocolCodec,
  type ProtocolVersion,
  protoJson0_3,
  protoJson1_0,
} from '@fastify-a2a/core';
import type protobuf from 'protobufjs';
import { SERVICE_NAME, SERVICE_NAME_0_3, service, service0_3 } from './proto.js';

export interface GrpcServiceVersion {
  /** The A2A version the service speaks (the call context's `version`). */
  readonly version: ProtocolVersion;
  /** The fully qualified service name, the first segment of each call's path. */
  readonly serviceName: string;
  /** The proto package, for messages about malformed requests. */
  readonly protoPackage: string;
  readonly service: protobuf.Service;
  readonly codec: ProtocolCodec;
  /** Each rpc and the operation it runs; an rpc not listed is UNIMPLEMENTED. */
  readonly operations: ReadonlyMap<string, OperationName>;
  /**
   * The request's ProtoJSON as the codec's wire parameters.
   * @throws {A2AError} INVALID_PARAMS for a resource name that names no task.
   */
  params(operation: OperationName, request: JsonObject): unknown;
  /** The tenant a request addresses (1.0 §10: its `tenant` field; 0.3 has none). */
  tenantOf(request: JsonObject): string | undefined;
}

/** A2A 1.0: the rpc names are the 1.0 method names, and requests are the codec's parameters as they are. */
export const GRPC_1_0: GrpcServiceVersion = {
  version: '1.0',
  serviceName: SERVICE_NAME,
  protoPackage: 'lf.a2a.v1',
  service,
  codec: protoJson1_0,
  operations: new Map(
    Object.entries(METHOD_NAMES_1_0).map(([operation, method]) => [method, operation as OperationName]),
  ),
  params: (_operation, request) => request,
  tenantOf: ({ tenant }) => (typeof tenant === 'string' && tenant !== '' ? tenant : undefined),
};

// ---- A2A 0.3 ----

/** `tasks/{id}`: a task's resource name (ids are one path segment, as in the HTTP+JSON routes). */
const TASK_NAME = /^tasks\/([^/]+)$/;
/** `tasks/{id}/pushNotificationConfigs/{configId}`. */
const PUSH_CONFIG_NAME = /^tasks\/([^/]+)\/pushNotificationConfigs\/([^/]+)$/;

/** INVALID_PARAMS naming the field, in the shape the other bindings' validation errors have. */
function badName(field: string, value: unknown, form: string): A2AError {
  const problem = `must be a resource name of the form "${form}" (got ${JSON.stringify(value ?? '')})`;
  return new A2AError('INVALID_PARAMS', `Invalid params: request.${field} ${problem}.`, {
    data: { errors: [{ path: `request.${field}`, problem }] },
  });
}

/** The task id of a `tasks/{id}` in `field`. */
function taskIdOf(request: JsonObject, field: 'name' | 'parent'): string {
  const value = request[field];
  const match = typeof value === 'string' ? TASK_NAME.exec(value) : null;
  if (match === null) throw badName(field, value, 'tasks/{id}');
  return match[1] as string;
}

/** The task and config ids of a `tasks/{id}/pushNotificationConfigs/{configId}` in `name`. */
function pushConfigIdsOf(request: JsonObject): { id: string; pushNotificationConfigId: string } {
  const match = typeof request.name === 'string' ? PUSH_CONFIG_NAME.exec(request.name) : null;
  if (match === null) throw badName('name', request.name, 'tasks/{id}/pushNotificationConfigs/{configId}');
  return { id: match[1] as string, pushNotificationConfigId: match[2] as string };
}

/** A2A 0.3's rpcs (its proto's names) and the operations they run; 0.3's gRPC has no ListTasks. */
const OPERATIONS_0_3: ReadonlyMap<string, OperationName> = new Map<string, OperationName>([
  ['SendMessage', 'sendMessage'],
  ['SendStreamingMessage', 'sendStreamingMessage'],
  ['GetTask', 'getTask'],
  ['CancelTask', 'cancelTask'],
  ['TaskSubscription', 'subscribeToTask'],
  ['CreateTaskPushNotificationConfig', 'setTaskPushNotificationConfig'],
  ['GetTaskPushNotificationConfig', 'getTaskPushNotificationConfig'],
  ['ListTaskPushNotificationConfig', 'listTaskPushNotificationConfig'],
  ['DeleteTaskPushNotificationConfig', 'deleteTaskPushNotificationConfig'],
  ['GetAgentCard', 'getExtendedAgentCard'],
]);

/**
 * Each 0.3 request as the parameters the 0.3 HTTP+JSON routes hand the same codec (see rest.ts in
 * the core): the ids from the resource names, the rest of the message as it is.
 */
function params0_3(operation: OperationName, request: JsonObject): unknown {
  switch (operation) {
    case 'getTask': {
      // proto3: a history_length of 0 is the field unset, so no limit (as SendMessage reads it).
      const { historyLength } = request;
      const id = taskIdOf(request, 'name');
      return historyLength === undefined || historyLength === 0 ? { id } : { id, historyLength };
    }
    case 'cancelTask':
    case 'subscribeToTask':
      return { id: taskIdOf(request, 'name') };
    case 'setTaskPushNotificationConfig':
      // The request form `{ parent, configId, config: { name, pushNotificationConfig } }` is one the
      // codec reads as the body of `POST /v1/tasks/{id}/pushNotificationConfigs`.
      return { taskId: taskIdOf(request, 'parent'), body: request };
    case 'getTaskPushNotificationConfig':
    case 'deleteTaskPushNotificationConfig':
      return pushConfigIdsOf(request);
    case 'listTaskPushNotificationConfig':
      return { id: taskIdOf(request, 'parent') };
    case 'getExtendedAgentCard':
      return {};
    default:
      return request;
  }
}

/** A2A 0.3: the core's 0.3 ProtoJSON codec (the HTTP+JSON binding's), with ids from resource names. */
export const GRPC_0_3: GrpcServiceVersion = {
  version: '0.3',
  serviceName: SERVICE_NAME_0_3,
  protoPackage: 'a2a.v1',
  service: service0_3,
  codec: protoJson0_3,
  operations: OPERATIONS_0_3,
  params: params0_3,
  tenantOf: () => undefined,
};
