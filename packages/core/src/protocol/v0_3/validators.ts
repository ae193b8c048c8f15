/**
 * The parameters of every operation checked against A2A 0.3's shapes (the schemas of
 * `schemas.ts`), compiled once. Both 0.3 bindings validate with these: JSON-RPC params as they
 * come, HTTP+JSON bodies once converted from ProtoJSON.
 */

import type { OperationName, OperationParams } from '../operations.js';
import { createAjv, type Validator, validateParams } from '../validation.js';
import * as schemas from './schemas.js';

const ajv = createAjv();
const message = ajv.compile(schemas.messageSendParamsSchema);
const taskId = ajv.compile(schemas.taskIdParamsSchema);
const getPush = ajv.compile(schemas.getPushConfigParamsSchema);

const VALIDATORS: Readonly<Record<OperationName, Validator>> = {
  sendMessage: message,
  sendStreamingMessage: message,
  getTask: ajv.compile(schemas.taskQueryParamsSchema),
  listTasks: ajv.compile(schemas.listTasksParamsSchema),
  cancelTask: taskId,
  subscribeToTask: taskId,
  setTaskPushNotificationConfig: ajv.compile(schemas.setPushConfigParamsSchema),
  getTaskPushNotificationConfig: getPush,
  listTaskPushNotificationConfig: getPush,
  deleteTaskPushNotificationConfig: ajv.compile(schemas.deletePushConfigParamsSchema),
  getExtendedAgentCard: ajv.compile(schemas.emptyParamsSchema),
};

/** Operations whose params may be omitted. */
const PARAMS_OPTIONAL: ReadonlySet<OperationName> = new Set(['getExtendedAgentCard', 'listTasks']);

/**
 * Validates 0.3-shaped params of `operation`; `what` names the call in the message for missing params.
 * @throws {A2AError} INVALID_PARAMS naming each offending field under `root`.
 */
export function validate0_3<K extends OperationName>(
  operation: K,
  params: unknown,
  root: string,
  what: string,
): OperationParams<K> {
  if (params === undefined && PARAMS_OPTIONAL.has(operation)) return {} as OperationParams<K>;
  return withoutDraftFields(operation, validateParams<OperationParams<K>>(VALIDATORS[operation], params, root, what));
}

/**
 * The A2A 1.1 draft's request fields (`ifGenerationMatch`, `currentGeneration`, §3.2.7) are 1.0
 * binding features (docs/interop.md): the 0.3 schemas let unknown members through, so a 0.3 request
 * carrying one is read as 0.3 always was, without it. Copies only such a request.
 */
function withoutDraftFields<K extends OperationName>(operation: K, params: OperationParams<K>): OperationParams<K> {
  if (operation === 'getTask') {
    const query = params as OperationParams<'getTask'>;
    if (query.currentGeneration === undefined) return params;
    const { currentGeneration: _dropped, ...rest } = query;
    return rest as OperationParams<K>;
  }
  if (operation === 'sendMessage' || operation === 'sendStreamingMessage') {
    const send = params as OperationParams<'sendMessage'>;
    if (send.configuration?.ifGenerationMatch === undefined) return params;
    const { ifGenerationMatch: _dropped, ...configuration } = send.configuration;
    return { ...send, configuration } as OperationParams<K>;
  }
  return params;
}
