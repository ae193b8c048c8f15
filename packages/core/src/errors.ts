/**
 * Every error fastify-a2a raises. Each has a stable `code` (string, ours), a message that says
 * what was wrong and how to fix it, an optional `data` payload for JSON-RPC `error.data`, and a
 * `cause`. One table ({@link ERROR_TABLE}) maps each code to a JSON-RPC error code (A2A spec §8
 * "Error Handling") and an HTTP status (the HTTP+JSON binding), and says whether the message may
 * be shown to the client.
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
  /** A2A 1.0. */
  ExtensionSupportRequired: -32008,
  /** A2A 1.0. */
  VersionNotSupported: -32009,
  /** A2A 1.1 draft (§3.2.7): `ifGenerationMatch` did not match the task's generation. */
  TaskGenerationMismatch: -32010,
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
  | 'INVALID_OPTIONS'
  | 'UNAVAILABLE'
  | 'UNAUTHENTICATED'
  | 'PERMISSION_DENIED'
  | 'EXTENSION_SUPPORT_REQUIRED'
  | 'VERSION_NOT_SUPPORTED'
  | 'PUSH_URL_REFUSED'
  | 'PUSH_DELIVERY_FAILED'
  | 'TASK_GENERATION_MISMATCH';

export interface ErrorMapping {
  /** The JSON-RPC `error.code` (§8.1, §8.2). */
  readonly jsonRpc: number;
  /** The error's type name in the specification (§8), e.g. `TaskNotFoundError`. */
  readonly type: string;
  /** The HTTP status of the HTTP+JSON binding (and of JSON-RPC answers that are not HTTP 200). */
  readonly http: number;
  /**
   * Whether the message was written for the client. The others (store failures, internal
   * invariants) can name hosts, users or schemas: they are logged, and the client gets a generic
   * message instead.
   */
  readonly expose: boolean;
}

/**
 * Each error code's JSON-RPC code and HTTP status. The HTTP statuses follow the HTTP+JSON binding's
 * error mapping (A2A §3.2.3 / §8): not found 404, not cancelable 409, unsupported 501…
 */
export const ERROR_TABLE: Readonly<Record<A2AErrorCode, ErrorMapping>> = {
  PARSE_ERROR: { jsonRpc: -32700, type: 'JSONParseError', http: 400, expose: true },
  INVALID_REQUEST: { jsonRpc: -32600, type: 'InvalidRequestError', http: 400, expose: true },
  METHOD_NOT_FOUND: { jsonRpc: -32601, type: 'MethodNotFoundError', http: 404, expose: true },
  INVALID_PARAMS: { jsonRpc: -32602, type: 'InvalidParamsError', http: 400, expose: true },
  INTERNAL: { jsonRpc: -32603, type: 'InternalError', http: 500, expose: false },
  TASK_NOT_FOUND: { jsonRpc: -32001, type: 'TaskNotFoundError', http: 404, expose: true },
  TASK_NOT_CANCELABLE: { jsonRpc: -32002, type: 'TaskNotCancelableError', http: 409, expose: true },
  PUSH_NOTIFICATION_NOT_SUPPORTED: {
    jsonRpc: -32003,
    type: 'PushNotificationNotSupportedError',
    http: 501,
    expose: true,
  },
  UNSUPPORTED_OPERATION: { jsonRpc: -32004, type: 'UnsupportedOperationError', http: 501, expose: true },
  CONTENT_TYPE_NOT_SUPPORTED: { jsonRpc: -32005, type: 'ContentTypeNotSupportedError', http: 415, expose: true },
  INVALID_AGENT_RESPONSE: { jsonRpc: -32006, type: 'InvalidAgentResponseError', http: 502, expose: true },
  EXTENDED_CARD_NOT_CONFIGURED: {
    jsonRpc: -32007,
    type: 'AuthenticatedExtendedCardNotConfiguredError',
    http: 404,
    expose: true,
  },
  VERSION_CONFLICT: { jsonRpc: -32603, type: 'InternalError', http: 500, expose: false },
  // A retried message id is answered with its task; one reused for other content is the caller's mistake.
  DUPLICATE_MESSAGE: { jsonRpc: -32602, type: 'InvalidParamsError', http: 400, expose: true },
  INVALID_TRANSITION: { jsonRpc: -32603, type: 'InternalError', http: 500, expose: false },
  STORE_UNAVAILABLE: { jsonRpc: -32603, type: 'InternalError', http: 503, expose: false },
  INVALID_OPTIONS: { jsonRpc: -32603, type: 'InternalError', http: 500, expose: false },
  // This worker cannot take the call now (it is shutting down); another one can.
  UNAVAILABLE: { jsonRpc: -32603, type: 'InternalError', http: 503, expose: true },
  UNAUTHENTICATED: { jsonRpc: -32600, type: 'InvalidRequestError', http: 401, expose: true },
  PERMISSION_DENIED: { jsonRpc: -32600, type: 'InvalidRequestError', http: 403, expose: true },
  // A2A 1.0 (§3.3.2): the client must use an extension the agent requires; the version asked for
  // (A2A-Version) is not served.
  EXTENSION_SUPPORT_REQUIRED: { jsonRpc: -32008, type: 'ExtensionSupportRequiredError', http: 400, expose: true },
  VERSION_NOT_SUPPORTED: { jsonRpc: -32009, type: 'VersionNotSupportedError', http: 400, expose: true },
  // A push notification URL this server will not call (a private address, a scheme other than
  // http/https, credentials in the URL…): the client's parameter is wrong, and the message says why.
  PUSH_URL_REFUSED: { jsonRpc: -32602, type: 'InvalidParamsError', http: 400, expose: true },
  // A webhook delivery that failed (timeout, refused connection, TLS…). It happens in the background,
  // so no client waits for it; its message names addresses, so it is logged, never shown.
  PUSH_DELIVERY_FAILED: { jsonRpc: -32603, type: 'InternalError', http: 502, expose: false },
  // A2A 1.1 draft (§3.2.7, opt-in `draft11.generations`): a follow-up sent with ifGenerationMatch
  // found the task at another generation (someone changed it since the client read it).
  TASK_GENERATION_MISMATCH: { jsonRpc: -32010, type: 'TaskGenerationMismatchError', http: 409, expose: true },
};

/** Our codes to JSON-RPC codes (the `jsonRpc` column of {@link ERROR_TABLE}). */
export const jsonRpcCodeFor: Readonly<Record<A2AErrorCode, number>> = Object.fromEntries(
  Object.entries(ERROR_TABLE).map(([code, mapping]) => [code, mapping.jsonRpc]),
) as Record<A2AErrorCode, number>;

export interface A2AErrorOptions {
  data?: unknown;
  cause?: unknown;
  /** Overrides the code's {@link ErrorMapping.expose}: this message was written for the client. */
  expose?: boolean;
}

export class A2AError extends Error {
  readonly code: A2AErrorCode;
  readonly data: unknown;
  readonly #expose: boolean | undefined;

  constructor(code: A2AErrorCode, message: string, options: A2AErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'A2AError';
    this.code = code;
    this.data = options.data;
    this.#expose = options.expose;
    Object.defineProperty(this, BRAND, { value: true });
  }

  get jsonRpcCode(): number {
    return ERROR_TABLE[this.code].jsonRpc;
  }

  get httpStatus(): number {
    return ERROR_TABLE[this.code].http;
  }

  /** Whether the message may be shown to the client (see {@link ErrorMapping.expose}). */
  get exposed(): boolean {
    return this.#expose ?? ERROR_TABLE[this.code].expose;
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

/**
 * A stream resumed with a Last-Event-ID this server never sent for the task (the ids are the
 * task's event sequence numbers): following from there would wait for events that are already
 * past, so the request is refused rather than left hanging.
 */
export const lastEventIdPastEnd = (taskId: string, lastEventId: number, latest: number): A2AError =>
  invalidParams(
    `Invalid Last-Event-ID ${lastEventId}: task "${taskId}" has no such event (its latest event is ${latest}). Reconnect with the id of the last event received, or without Last-Event-ID to start from the task's current state.`,
    { taskId, lastEventId, latestEventId: latest },
  );

/** A2A 1.1 draft §3.2.7: the task is not at the generation the client's `ifGenerationMatch` expects. */
export const taskGenerationMismatch = (
  taskId: string,
  expectedGeneration: number,
  currentGeneration: number,
): A2AError =>
  new A2AError(
    'TASK_GENERATION_MISMATCH',
    `Task "${taskId}" is at generation ${currentGeneration}, not ${expectedGeneration} as ifGenerationMatch expects: it changed since it was read. Get the task again and decide on its current state.`,
    { data: { taskId, expectedGeneration, currentGeneration } },
  );

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
