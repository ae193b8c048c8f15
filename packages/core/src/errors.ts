/**
 * Every error fastify-a2a raises. Each has a stable `code` (string, ours), a message that says
 * what was wrong and how to fix it, an optional `data` payload for JSON-RPC `error.data`, and a
 * `cause`. One table maps codes to JSON-RPC error codes (A2A spec §8 "Error Handling").
 */

const BRAND = Symbol.for('fastify-a2a.error');

/** JSON-RPC 2.0 standard codes and the A2A-specific ones (§8.1, §8.2). */
export const JsonRpcErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  TaskNotFound: -32001,
  TaskNotCancelable: -32002,
  PushNotificationNotSupported: -32003,
  UnsupportedOperation: -32004,
  ContentTypeNotSupported: -32005,
  InvalidAgentResponse: -32006,
  AuthenticatedExtendedCardNotConfigured: -32007,
} as const;

export type A2AErrorCode =
  | 'PARSE_ERROR'
  | 'INVALID_REQUEST'
  | 'METHOD_NOT_FOUND'
  | 'INVALID_PARAMS'
  | 'INTERNAL'
  | 'TASK_NOT_FOUND'
  | 'TASK_NOT_CANCELABLE'
  | 'PUSH_NOTIFICATION_NOT_SUPPORTED'
  | 'UNSUPPORTED_OPERATION'
  | 'CONTENT_TYPE_NOT_SUPPORTED'
  | 'INVALID_AGENT_RESPONSE'
  | 'EXTENDED_CARD_NOT_CONFIGURED'
  | 'VERSION_CONFLICT'
  | 'DUPLICATE_MESSAGE'
  | 'INVALID_TRANSITION'
  | 'STORE_UNAVAILABLE'
  | 'INVALID_OPTIONS';

/** Our codes to JSON-RPC codes. Codes that never reach a client map to -32603. */
export const jsonRpcCodeFor: Record<A2AErrorCode, number> = {
  PARSE_ERROR: JsonRpcErrorCode.ParseError,
  INVALID_REQUEST: JsonRpcErrorCode.InvalidRequest,
  METHOD_NOT_FOUND: JsonRpcErrorCode.MethodNotFound,
  INVALID_PARAMS: JsonRpcErrorCode.InvalidParams,
  INTERNAL: JsonRpcErrorCode.InternalError,
  TASK_NOT_FOUND: JsonRpcErrorCode.TaskNotFound,
  TASK_NOT_CANCELABLE: JsonRpcErrorCode.TaskNotCancelable,
  PUSH_NOTIFICATION_NOT_SUPPORTED: JsonRpcErrorCode.PushNotificationNotSupported,
  UNSUPPORTED_OPERATION: JsonRpcErrorCode.UnsupportedOperation,
  CONTENT_TYPE_NOT_SUPPORTED: JsonRpcErrorCode.ContentTypeNotSupported,
  INVALID_AGENT_RESPONSE: JsonRpcErrorCode.InvalidAgentResponse,
  EXTENDED_CARD_NOT_CONFIGURED: JsonRpcErrorCode.AuthenticatedExtendedCardNotConfigured,
  VERSION_CONFLICT: JsonRpcErrorCode.InternalError,
  DUPLICATE_MESSAGE: JsonRpcErrorCode.InvalidParams,
  INVALID_TRANSITION: JsonRpcErrorCode.InternalError,
  STORE_UNAVAILABLE: JsonRpcErrorCode.InternalError,
  INVALID_OPTIONS: JsonRpcErrorCode.InternalError,
};

export interface A2AErrorOptions {
  data?: unknown;
  cause?: unknown;
}

export class A2AError extends Error {
  readonly code: A2AErrorCode;
  readonly data: unknown;

  constructor(code: A2AErrorCode, message: string, options: A2AErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'A2AError';
    this.code = code;
    this.data = options.data;
    Object.defineProperty(this, BRAND, { value: true });
  }

  get jsonRpcCode(): number {
    return jsonRpcCodeFor[this.code];
  }

  /** Works across two installed copies of this package, where `instanceof` would not. */
  static is(value: unknown): value is A2AError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return A2AError.is(value);
  }
}

export const taskNotFound = (taskId: string): A2AError =>
  new A2AError('TASK_NOT_FOUND', `Task not found: no task with id "${taskId}" exists (it may have expired).`, {
    data: { taskId },
  });

export const taskNotCancelable = (taskId: string, state: string): A2AError =>
  new A2AError('TASK_NOT_CANCELABLE', `Task "${taskId}" cannot be canceled: it is already ${state}.`, {
    data: { taskId, state },
  });

export const invalidParams = (message: string, data?: unknown): A2AError =>
  new A2AError('INVALID_PARAMS', message, { data });

/** Raised by a store when a task was written by someone else since it was read. */
export class VersionConflictError extends A2AError {
  constructor(taskId: string, expected: number, actual: number | undefined) {
    super(
      'VERSION_CONFLICT',
      `Task "${taskId}" was modified concurrently: expected version ${expected}, found ${actual ?? 'none'}. Reload the task and retry.`,
      { data: { taskId, expected, actual } },
    );
    this.name = 'VersionConflictError';
  }
}

/**
 * Raised by a store's commit when a user message id is already indexed: a retried message/send
 * (the runtime answers with the original task) or a client reusing a message id.
 */
export class DuplicateMessageError extends A2AError {
  readonly messageId: string;

  constructor(messageId: string, existing?: { taskId: string; contextId: string }) {
    super(
      'DUPLICATE_MESSAGE',
      `Message "${messageId}" was already received${existing ? ` (task "${existing.taskId}")` : ''}; message ids must be unique.`,
      { data: { messageId, ...existing } },
    );
    this.name = 'DuplicateMessageError';
    this.messageId = messageId;
  }
}
