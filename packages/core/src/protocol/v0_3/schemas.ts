/**
 * JSON Schemas (draft-07, for ajv) of the A2A v0.3.0 method parameters, written for this project
 * from the specification's object definitions (§6, §7). Unknown properties are allowed, so newer
 * clients that send extra fields keep working; what the spec requires is enforced.
 */

const nonEmptyString = { type: 'string', minLength: 1 } as const;
const metadata = { type: 'object' } as const;

const textPart = {
  type: 'object',
  required: ['kind', 'text'],
  properties: { kind: { const: 'text' }, text: { type: 'string' }, metadata },
} as const;

const filePart = {
  type: 'object',
  required: ['kind', 'file'],
  properties: {
    kind: { const: 'file' },
    file: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        mimeType: { type: 'string' },
        bytes: { type: 'string' },
        uri: { type: 'string', minLength: 1 },
      },
      // §6.6.1: a file is given either inline (bytes) or by reference (uri), not both.
      oneOf: [
        { required: ['bytes'], not: { required: ['uri'] } },
        { required: ['uri'], not: { required: ['bytes'] } },
      ],
    },
    metadata,
  },
} as const;

const dataPart = {
  type: 'object',
  required: ['kind', 'data'],
  properties: { kind: { const: 'data' }, data: { type: 'object' }, metadata },
} as const;

export const partSchema = {
  type: 'object',
  required: ['kind'],
  discriminator: { propertyName: 'kind' },
  oneOf: [textPart, filePart, dataPart],
} as const;

export const messageSchema = {
  type: 'object',
  required: ['messageId', 'role', 'parts'],
  properties: {
    // `kind` is the discriminator of Message in results; some clients omit it in requests, so it
    // is accepted when missing and must be "message" when present.
    kind: { const: 'message' },
    messageId: nonEmptyString,
    role: { enum: ['user', 'agent'] },
    parts: { type: 'array', minItems: 1, items: partSchema },
    contextId: nonEmptyString,
    taskId: nonEmptyString,
    referenceTaskIds: { type: 'array', items: { type: 'string' } },
    extensions: { type: 'array', items: { type: 'string' } },
    metadata,
  },
} as const;

const pushNotificationConfigSchema = {
  type: 'object',
  required: ['url'],
  properties: {
    id: { type: 'string' },
    url: nonEmptyString,
    token: { type: 'string' },
    authentication: {
      type: 'object',
      required: ['schemes'],
      properties: { schemes: { type: 'array', items: { type: 'string' } }, credentials: { type: 'string' } },
    },
  },
} as const;

const historyLength = { type: 'integer', minimum: 0 } as const;

export const messageSendParamsSchema = {
  type: 'object',
  required: ['message'],
  properties: {
    message: messageSchema,
    configuration: {
      type: 'object',
      properties: {
        acceptedOutputModes: { type: 'array', items: { type: 'string' } },
        historyLength,
        pushNotificationConfig: pushNotificationConfigSchema,
        blocking: { type: 'boolean' },
      },
    },
    metadata,
  },
} as const;

export const taskIdParamsSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: nonEmptyString, metadata },
} as const;

export const taskQueryParamsSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: nonEmptyString, historyLength, metadata },
} as const;

export const setPushConfigParamsSchema = {
  type: 'object',
  required: ['taskId', 'pushNotificationConfig'],
  properties: { taskId: nonEmptyString, pushNotificationConfig: pushNotificationConfigSchema },
} as const;

export const getPushConfigParamsSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: nonEmptyString, pushNotificationConfigId: { type: 'string' }, metadata },
} as const;

export const deletePushConfigParamsSchema = {
  type: 'object',
  required: ['id', 'pushNotificationConfigId'],
  properties: { id: nonEmptyString, pushNotificationConfigId: nonEmptyString, metadata },
} as const;

/**
 * `GET /v1/tasks` (§3.5.6 lists it for the HTTP+JSON binding only; 0.3 has no JSON-RPC method for
 * it): the filters and paging of ListTasks, read from the query into the model's names.
 */
export const listTasksParamsSchema = {
  type: 'object',
  properties: {
    contextId: nonEmptyString,
    status: {
      enum: ['submitted', 'working', 'input-required', 'completed', 'canceled', 'failed', 'rejected', 'auth-required'],
    },
    statusTimestampAfter: nonEmptyString,
    pageSize: { type: 'integer', minimum: 1, maximum: 100 },
    pageToken: { type: 'string' },
    historyLength,
    includeArtifacts: { type: 'boolean' },
  },
} as const;

/** agent/getAuthenticatedExtendedCard takes no parameters; an object is tolerated. */
export const emptyParamsSchema = { type: 'object' } as const;
