/**
 * Results and stream items in ProtoJSON, the form both A2A 0.3's HTTP+JSON binding and A2A 1.0
 * (either binding) write: the same response messages of the proto, differing only in how each
 * version writes a task, a message, a push config or a card. A version's codec passes its own
 * writers, so which member carries what is decided here once. A caller reading such results
 * checks each is an object with {@link expectObject}.
 */

import { A2AError } from '../errors.js';
import { isJsonObject, type JsonObject } from '../json.js';
import type {
  AgentCard,
  ListTasksResult,
  Message,
  StreamResult,
  Task,
  TaskArtifactUpdateEvent,
  TaskPushNotificationConfig,
  TaskStatusUpdateEvent,
} from '../model/types.js';
import type { OperationName, OperationResult } from './operations.js';

/**
 * `value` under `key` of `out`, as an own data property even for a key named `__proto__` (what an
 * object literal or a spread would make of it).
 */
function setMember(out: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value as JsonObject[string];
}

/**
 * A copy of `object` without its `undefined` members, in the same order. A copy rather than
 * `delete`: an object that loses a property turns into a slow dictionary-mode object for every
 * later read and for JSON.stringify, on every result written (bench/PROFILE.md).
 */
export function definedMembers<T extends JsonObject>(object: T): T {
  const out: JsonObject = {};
  for (const key in object) {
    const value = object[key];
    if (value !== undefined) setMember(out, key, value);
  }
  return out as T;
}

/** {@link definedMembers}, and without empty arrays too: ProtoJSON leaves out unset fields and empty repeated ones. */
export function nonEmptyMembers(object: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key in object) {
    const value = object[key];
    if (value !== undefined && !(Array.isArray(value) && value.length === 0)) setMember(out, key, value);
  }
  return out;
}

/** The snake_case proto field name of a lowerCamelCase JSON name, worked out once per name. */
export function snakeCaseOf(camel: string): string {
  let snake = SNAKE_CASE.get(camel);
  if (snake === undefined) {
    snake = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    SNAKE_CASE.set(camel, snake);
  }
  return snake;
}
const SNAKE_CASE = new Map<string, string>();

/** How one protocol version writes each model object in ProtoJSON. */
export interface ProtoJsonWriters {
  task(task: Task): unknown;
  message(message: Message): unknown;
  statusUpdate(event: TaskStatusUpdateEvent): unknown;
  artifactUpdate(event: TaskArtifactUpdateEvent): unknown;
  pushConfig(config: TaskPushNotificationConfig): unknown;
  card(card: AgentCard): unknown;
  /**
   * The members ListTaskPushNotificationConfigResponse carries besides `configs` (1.0 marks its
   * `nextPageToken` REQUIRED, so it is written even empty; 0.3 has none).
   */
  readonly pushConfigListExtras: Readonly<Record<string, unknown>>;
  /** The answer for an operation with no unary result form (the streaming ones). */
  noResultForm(operation: OperationName, result: unknown): unknown;
}

/** The proto's response message for a unary operation's result. */
export function protoJsonResult<K extends OperationName>(
  writers: ProtoJsonWriters,
  operation: K,
  result: OperationResult<K>,
): unknown {
  switch (operation) {
    case 'sendMessage': {
      // SendMessageResponse: the task or the message under its member name.
      const value = result as Task | Message;
      return value.kind === 'message' ? { message: writers.message(value) } : { task: writers.task(value) };
    }
    case 'getTask':
    case 'cancelTask':
      return writers.task(result as Task);
    case 'listTasks': {
      // ListTasksResponse: every member is REQUIRED in 1.0, so each is written, `nextPageToken: ""`
      // too; 0.3's text shows a bare list, but the page token needs a place, and later protos and
      // the TCK read this form.
      const { tasks, nextPageToken, pageSize, totalSize } = result as ListTasksResult;
      return { tasks: tasks.map((task) => writers.task(task)), nextPageToken, pageSize, totalSize };
    }
    case 'setTaskPushNotificationConfig':
    case 'getTaskPushNotificationConfig':
      return writers.pushConfig(result as TaskPushNotificationConfig);
    case 'listTaskPushNotificationConfig':
      return {
        configs: (result as TaskPushNotificationConfig[]).map((config) => writers.pushConfig(config)),
        ...writers.pushConfigListExtras,
      };
    case 'deleteTaskPushNotificationConfig':
      return {};
    case 'getExtendedAgentCard':
      return writers.card(result as AgentCard);
    default:
      return writers.noResultForm(operation, result);
  }
}

/** StreamResponse: the item under the member naming its kind. */
export function protoJsonStreamItem(writers: ProtoJsonWriters, item: StreamResult): unknown {
  switch (item.kind) {
    case 'task':
      return { task: writers.task(item) };
    case 'message':
      return { message: writers.message(item) };
    case 'status-update':
      return { statusUpdate: writers.statusUpdate(item) };
    case 'artifact-update':
      return { artifactUpdate: writers.artifactUpdate(item) };
  }
}

/** What a result must be to be read at all (a caller reading an agent's answer); names what it got. */
export function expectObject(value: unknown, what: string): JsonObject {
  if (!isJsonObject(value)) {
    throw new A2AError(
      'INVALID_AGENT_RESPONSE',
      `The agent answered ${what} with ${JSON.stringify(value)?.slice(0, 80)}, not an object.`,
    );
  }
  return value;
}
