/**
 * A2A 0.3.0 over JSON-RPC. The internal model has this binding's shape, so decoding is validation
 * (with the schemas written from §6–§7) and encoding is the identity; what this file adds is 0.3's
 * method names (§7) and error codes (§8).
 */

import { A2AError, ERROR_TABLE } from '../../errors.js';
import { isJsonObject, type JsonObject } from '../../json.js';
import { dataPart } from '../../model/data-part.js';
import type { AgentCard, ListTasksResult, StreamResult, Task } from '../../model/types.js';
import type { JsonRpcErrorObject } from '../bindings/jsonrpc.js';
import type { CallerCodec, JsonRpcMapping, ProtocolCodec } from '../codec.js';
import type { OperationName, OperationParams, OperationResult } from '../operations.js';
import { validate0_3 } from './validators.js';

export const A2A_0_3_VERSION = '0.3.0';

/** §7: each JSON-RPC method of 0.3 and the operation it calls. */
const METHODS: readonly (readonly [string, OperationName])[] = [
  ['message/send', 'sendMessage'],
  ['message/stream', 'sendStreamingMessage'],
  ['tasks/get', 'getTask'],
  ['tasks/cancel', 'cancelTask'],
  ['tasks/resubscribe', 'subscribeToTask'],
  ['tasks/pushNotificationConfig/set', 'setTaskPushNotificationConfig'],
  ['tasks/pushNotificationConfig/get', 'getTaskPushNotificationConfig'],
  ['tasks/pushNotificationConfig/list', 'listTaskPushNotificationConfig'],
  ['tasks/pushNotificationConfig/delete', 'deleteTaskPushNotificationConfig'],
  ['agent/getAuthenticatedExtendedCard', 'getExtendedAgentCard'],
];

const NAMES = new Map(METHODS.map(([method, operation]) => [operation, `"${method}"`]));

/**
 * Parts read leniently where a client's intent is clear, before validation:
 * - a file given by `url` where 0.3 says `uri` (§6.6.2 FileWithUri) is read as `uri`: the name
 *   A2A 1.0 uses, which some 0.3 clients send (the A2A TCK's file-part tests among them);
 * - a data part whose `data` is not an object (an array, a string…; A2A 1.0 allows any JSON value,
 *   and the TCK sends arrays) is kept wrapped, as a 1.0 client's would be (see `model/data-part.ts`).
 * The params are copied only where a part needs it.
 */
function withLenientParts(params: unknown): unknown {
  if (!isJsonObject(params) || !isJsonObject(params.message) || !Array.isArray(params.message.parts)) return params;
  const { parts } = params.message;
  const reread = (part: unknown): unknown => {
    if (!isJsonObject(part)) return part;
    if (
      part.kind === 'file' &&
      isJsonObject(part.file) &&
      typeof part.file.url === 'string' &&
      part.file.uri === undefined &&
      part.file.bytes === undefined
    ) {
      const { url, ...file } = part.file;
      return { ...part, file: { ...file, uri: url } };
    }
    if (part.kind === 'data' && part.data !== undefined && !isJsonObject(part.data)) {
      return { ...part, ...dataPart(part.data, isJsonObject(part.metadata) ? part.metadata : undefined) };
    }
    return part;
  };
  const copy = parts.map(reread);
  if (copy.every((part, i) => part === parts[i])) return params;
  return { ...params, message: { ...params.message, parts: copy } };
}

/**
 * `value` without the A2A 1.1 draft's `generation` (§3.2.7), which the model's tasks carry (and a
 * stream's events, when `draft11.generations` is on) but 0.3 does not have: a copy only of what
 * has one, so the usual item passes through unchanged.
 */
function without0_3Generation<T extends { generation?: number }>(value: T): T {
  if (value.generation === undefined) return value;
  const { generation: _dropped, ...rest } = value;
  return rest as T;
}

/** A result as 0.3 has it: the model's, less any task's `generation`. */
function result0_3(operation: OperationName, result: unknown): unknown {
  switch (operation) {
    case 'sendMessage':
    case 'getTask':
    case 'cancelTask':
      return without0_3Generation(result as Task);
    case 'listTasks': {
      const list = result as ListTasksResult;
      return list.tasks.some((task) => task.generation !== undefined)
        ? { ...list, tasks: list.tasks.map(without0_3Generation) }
        : list;
    }
    default:
      return result;
  }
}

/** A Task as 0.3 sends it (a push notification's body, §9.5): without the draft's `generation`. */
export function task0_3(task: Task): Task {
  return without0_3Generation(task);
}

/** The JSON of 0.3's JSON Schema: the internal model's own shape (less the 1.1 draft's `generation`). */
export const json0_3: ProtocolCodec = {
  version: '0.3',
  decode<K extends OperationName>(operation: K, params: unknown, root: string): OperationParams<K> {
    const shaped =
      operation === 'sendMessage' || operation === 'sendStreamingMessage' ? withLenientParts(params) : params;
    return validate0_3(operation, shaped, root, NAMES.get(operation) ?? operation);
  },
  encodeResult<K extends OperationName>(operation: K, result: OperationResult<K>): unknown {
    return result0_3(operation, result);
  },
  encodeStreamItem(item: StreamResult): unknown {
    return item.kind === 'message' ? item : without0_3Generation(item);
  },
  encodeCard(card: AgentCard): unknown {
    return card;
  },
};

export const jsonRpc0_3: JsonRpcMapping = {
  codec: json0_3,
  versionString: A2A_0_3_VERSION,
  methods: new Map(METHODS),
  refusedStreamAsEvent: true,
  error(error: A2AError): JsonRpcErrorObject {
    const object: JsonRpcErrorObject = { code: ERROR_TABLE[error.code].jsonRpc, message: error.message };
    if (error.data !== undefined) object.data = error.data;
    return object;
  },
};

const STREAM_KINDS = new Set(['task', 'message', 'status-update', 'artifact-update']);

/** A result a caller reads: an object, and for a stream item or task one of the model's kinds. */
function expectKind(value: unknown, what: string, kinds: ReadonlySet<string>): JsonObject {
  if (!isJsonObject(value) || typeof value.kind !== 'string' || !kinds.has(value.kind)) {
    const shown = JSON.stringify(value)?.slice(0, 120);
    throw new A2AError(
      'INVALID_AGENT_RESPONSE',
      `The agent's ${what} is not one of ${[...kinds].join(', ')}: ${shown}`,
    );
  }
  return value;
}

/**
 * The caller's direction of {@link json0_3}: the model is 0.3's JSON, so parameters go out as they
 * are and results come in as they are, once checked to be the kind of object the method returns.
 */
export const json0_3Caller: CallerCodec = {
  version: '0.3',
  encodeParams<K extends OperationName>(_operation: K, params: OperationParams<K>): unknown {
    return params;
  },
  decodeResult(operation, wire) {
    switch (operation) {
      case 'sendMessage':
        return expectKind(wire, 'message/send result', new Set(['task', 'message'])) as never;
      case 'getTask':
      case 'cancelTask':
        return expectKind(wire, `${operation} result`, new Set(['task'])) as never;
      case 'listTaskPushNotificationConfig':
        return (Array.isArray(wire) ? wire : []) as never;
      case 'deleteTaskPushNotificationConfig':
        return null as never;
      default:
        if (!isJsonObject(wire)) {
          throw new A2AError('INVALID_AGENT_RESPONSE', `The agent's ${operation} result is not an object.`);
        }
        return wire as never;
    }
  },
  decodeStreamItem(wire: unknown): StreamResult {
    return expectKind(wire, 'stream event', STREAM_KINDS) as unknown as StreamResult;
  },
};
