/**
 * JSON Schemas (draft-07, for ajv) of the A2A 1.0 request messages, written for this project from
 * `specification/a2a.proto` (v1.0.1) in their ProtoJSON form. They check requests after
 * `proto-json.ts` has read them into lowerCamelCase (ProtoJSON readers also accept the proto field
 * names, which are snake_case). Unknown fields are ignored, as ProtoJSON readers should; fields
 * the proto marks REQUIRED are enforced.
 */

const nonEmptyString = { type: 'string', minLength: 1 } as const;
const struct = { type: 'object' } as const;
const int32 = { type: 'integer', minimum: -2147483648, maximum: 2147483647 } as const;
const nonNegative = { type: 'integer', minimum: 0, maximum: 2147483647 } as const;
/** An int64 generation (A2A 1.1 draft §3.2.7), read into a number: exact up to 2^53 − 1. */
const generation = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;

export const TASK_STATES_1_0 = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
] as const;

/** Part: exactly one of `text`, `raw` (base64), `url`, `data` (any JSON value), beside its media type and file name. */
export const partSchema = {
  type: 'object',
  properties: {
    text: { type: 'string' },
    raw: { type: 'string' },
    url: nonEmptyString,
    data: {},
    metadata: struct,
    filename: { type: 'string' },
    mediaType: { type: 'string' },
  },
  oneOf: [
    { required: ['text'], not: { anyOf: [{ required: ['raw'] }, { required: ['url'] }, { required: ['data'] }] } },
    { required: ['raw'], not: { anyOf: [{ required: ['text'] }, { required: ['url'] }, { required: ['data'] }] } },
    { required: ['url'], not: { anyOf: [{ required: ['text'] }, { required: ['raw'] }, { required: ['data'] }] } },
    { required: ['data'], not: { anyOf: [{ required: ['text'] }, { required: ['raw'] }, { required: ['url'] }] } },
  ],
} as const;

export const messageSchema = {
  type: 'object',
  required: ['messageId', 'role', 'parts'],
  properties: {
    messageId: nonEmptyString,
    contextId: nonEmptyString,
    taskId: nonEmptyString,
    role: { enum: ['ROLE_USER', 'ROLE_AGENT'] },
    parts: { type: 'array', minItems: 1, items: partSchema },
    metadata: struct,
    extensions: { type: 'array', items: { type: 'string' } },
    referenceTaskIds: { type: 'array', items: { type: 'string' } },
  },
} as const;

const authenticationInfoSchema = {
  type: 'object',
  required: ['scheme'],
  properties: { scheme: nonEmptyString, credentials: { type: 'string' } },
} as const;

/** TaskPushNotificationConfig: flattened in 1.0, and the whole request of CreateTaskPushNotificationConfig. */
export const taskPushNotificationConfigSchema = {
  type: 'object',
  required: ['url'],
  properties: {
    tenant: { type: 'string' },
    id: { type: 'string' },
    taskId: { type: 'string' },
    url: nonEmptyString,
    token: { type: 'string' },
    authentication: authenticationInfoSchema,
  },
} as const;

export const sendMessageRequestSchema = {
  type: 'object',
  required: ['message'],
  properties: {
    tenant: { type: 'string' },
    message: messageSchema,
    configuration: {
      type: 'object',
      properties: {
        acceptedOutputModes: { type: 'array', items: { type: 'string' } },
        taskPushNotificationConfig: taskPushNotificationConfigSchema,
        historyLength: nonNegative,
        returnImmediately: { type: 'boolean' },
        // A2A 1.1 draft §3.2.7 (opt-in `draft11.generations`).
        ifGenerationMatch: generation,
      },
    },
    metadata: struct,
  },
} as const;

export const getTaskRequestSchema = {
  type: 'object',
  required: ['id'],
  properties: {
    tenant: { type: 'string' },
    id: nonEmptyString,
    historyLength: nonNegative,
    // A2A 1.1 draft §3.2.7 long-poll (opt-in `draft11.generations`).
    currentGeneration: generation,
  },
} as const;

export const cancelTaskRequestSchema = {
  type: 'object',
  required: ['id'],
  properties: { tenant: { type: 'string' }, id: nonEmptyString, metadata: struct },
} as const;

export const subscribeToTaskRequestSchema = {
  type: 'object',
  required: ['id'],
  properties: { tenant: { type: 'string' }, id: nonEmptyString },
} as const;

export const listTasksRequestSchema = {
  type: 'object',
  properties: {
    tenant: { type: 'string' },
    contextId: { type: 'string' },
    status: { enum: TASK_STATES_1_0 },
    pageSize: { type: 'integer', minimum: 1, maximum: 100 },
    pageToken: { type: 'string' },
    historyLength: nonNegative,
    // RFC 3339 (§5.6.1); parsed by the codec, which names a value it cannot read.
    statusTimestampAfter: { type: 'string', minLength: 1 },
    includeArtifacts: { type: 'boolean' },
  },
} as const;

export const taskPushNotificationConfigRequestSchema = {
  type: 'object',
  required: ['taskId', 'id'],
  properties: { tenant: { type: 'string' }, taskId: nonEmptyString, id: nonEmptyString },
} as const;

export const listTaskPushNotificationConfigsRequestSchema = {
  type: 'object',
  required: ['taskId'],
  properties: { tenant: { type: 'string' }, taskId: nonEmptyString, pageSize: int32, pageToken: { type: 'string' } },
} as const;

export const getExtendedAgentCardRequestSchema = {
  type: 'object',
  properties: { tenant: { type: 'string' } },
} as const;
