/**
 * The A2A service as operations on the internal model, independent of protocol version and
 * binding: every binding (JSON-RPC, HTTP+JSON) and every version's codec maps its requests onto
 * these, and one dispatch runs them (`dispatch.ts`). A new method is a row here and in the codecs'
 * name tables; nothing else changes.
 */

import type {
  AgentCard,
  DeleteTaskPushNotificationConfigParams,
  GetTaskPushNotificationConfigParams,
  ListTaskPushNotificationConfigParams,
  ListTasksParams,
  ListTasksResult,
  Message,
  MessageSendParams,
  StreamResult,
  Task,
  TaskIdParams,
  TaskPushNotificationConfig,
  TaskQueryParams,
} from '../model/types.js';
import type { CallContext } from './context.js';

/** One item of a stream with the sequence number of the event it came from (the SSE `id`). */
export interface StreamFrame {
  seq: number;
  result: StreamResult;
}

/** A capability an operation needs the agent's card to declare (§5.5.2 `capabilities`). */
export type Capability = 'streaming' | 'pushNotifications' | 'extendedAgentCard';

export interface OperationSpec {
  /** Answers with a stream of frames (SSE) instead of one result. */
  readonly streaming: boolean;
  /** Refused, after validation, unless the card declares this capability. */
  readonly requires?: Capability;
  /** Whether it only reads (`read`) or changes tasks (`write`): the groups access rules name. */
  readonly access: 'read' | 'write';
}

/** Every operation of the service. Names follow the A2A 1.0 method names, in lowerCamelCase. */
export const OPERATIONS = {
  sendMessage: { streaming: false, access: 'write' },
  sendStreamingMessage: { streaming: true, requires: 'streaming', access: 'write' },
  getTask: { streaming: false, access: 'read' },
  // A core method of A2A 1.0, with no card capability: a store that cannot list makes the runtime
  // answer UNSUPPORTED_OPERATION.
  listTasks: { streaming: false, access: 'read' },
  cancelTask: { streaming: false, access: 'write' },
  subscribeToTask: { streaming: true, requires: 'streaming', access: 'read' },
  setTaskPushNotificationConfig: { streaming: false, requires: 'pushNotifications', access: 'write' },
  getTaskPushNotificationConfig: { streaming: false, requires: 'pushNotifications', access: 'read' },
  listTaskPushNotificationConfig: { streaming: false, requires: 'pushNotifications', access: 'read' },
  deleteTaskPushNotificationConfig: { streaming: false, requires: 'pushNotifications', access: 'write' },
  getExtendedAgentCard: { streaming: false, requires: 'extendedAgentCard', access: 'read' },
} as const satisfies Record<string, OperationSpec>;

export type OperationName = keyof typeof OPERATIONS;

/** The parameters and result of each operation, in the internal model. */
export interface OperationTypes {
  sendMessage: { params: MessageSendParams; result: Task | Message };
  sendStreamingMessage: { params: MessageSendParams; result: AsyncGenerator<StreamFrame> };
  getTask: { params: TaskQueryParams; result: Task };
  listTasks: { params: ListTasksParams; result: ListTasksResult };
  cancelTask: { params: TaskIdParams; result: Task };
  subscribeToTask: { params: TaskIdParams; result: AsyncGenerator<StreamFrame> };
  setTaskPushNotificationConfig: { params: TaskPushNotificationConfig; result: TaskPushNotificationConfig };
  getTaskPushNotificationConfig: { params: GetTaskPushNotificationConfigParams; result: TaskPushNotificationConfig };
  listTaskPushNotificationConfig: {
    params: ListTaskPushNotificationConfigParams;
    result: TaskPushNotificationConfig[];
  };
  deleteTaskPushNotificationConfig: { params: DeleteTaskPushNotificationConfigParams; result: null };
  getExtendedAgentCard: { params: Record<string, never>; result: AgentCard };
}

export type OperationParams<K extends OperationName> = OperationTypes[K]['params'];
export type OperationResult<K extends OperationName> = OperationTypes[K]['result'];

/** The service every binding calls through dispatch: one method per operation, each `(params, ctx)`. */
export type A2AService = {
  [K in OperationName]: (params: OperationParams<K>, ctx: CallContext) => Promise<OperationResult<K>>;
};

export function isOperationName(name: string): name is OperationName {
  return Object.hasOwn(OPERATIONS, name);
}
