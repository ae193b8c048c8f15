import { A2AError } from '../errors.js';
import type { CommitRequest } from './contract.js';
import type { SavePushConfigRequest } from './push.js';

/**
 * The checks every store makes on a commit request before touching its data; stores call it so
 * that they refuse the same requests with the same messages.
 * @throws {A2AError} `INTERNAL` naming what is wrong with the request.
 */
export function checkCommitRequest(request: CommitRequest, storeName: string): void {
  const problem = commitRequestProblem(request);
  if (problem !== undefined) {
    throw new A2AError('INTERNAL', `${storeName}: commit() for task "${request.taskId}" ${problem}.`, {
      data: { taskId: request.taskId },
    });
  }
}

function commitRequestProblem(request: CommitRequest): string | undefined {
  const { taskId, expectedVersion, task, events, finishTurn, owner } = request;
  if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 0) {
    return `needs expectedVersion to be an integer >= 0, got ${String(expectedVersion)}`;
  }
  // The empty string is refused so that no principal can share the anonymous scope of the
  // message index, which the SQL stores key as ''.
  if (owner !== undefined && (typeof owner !== 'string' || owner === '')) {
    return `got owner ${JSON.stringify(owner) ?? String(owner)}; pass the principal's id (a non-empty string), or leave owner out for none`;
  }
  if (!Array.isArray(events) || events.length === 0) return 'has no events; send at least one';
  const { traceContext } = request;
  if (traceContext !== undefined && (typeof traceContext !== 'string' || traceContext.length > 256)) {
    return 'got a traceContext that is not a string of at most 256 characters (a W3C traceparent); leave it out for none';
  }
  if (task?.id !== taskId) return `carries the snapshot of task "${String(task?.id)}"; they must match`;
  if (finishTurn !== undefined && (finishTurn.taskId !== taskId || finishTurn.contextId !== task.contextId)) {
    return `was asked to finish a turn of task "${finishTurn.taskId}" in context "${finishTurn.contextId}"; only a turn of this task can end with its commit`;
  }
  return undefined;
}

/**
 * The checks every store makes on a push config before saving it, so that they refuse the same
 * requests with the same messages. The runtime validates what clients send; this guards against
 * its own bugs (a config without an id would be impossible to address).
 * @throws {A2AError} `INTERNAL` naming what is wrong with the request.
 */
export function checkPushConfigRequest(request: SavePushConfigRequest, storeName: string): void {
  const problem = pushConfigRequestProblem(request);
  if (problem !== undefined) {
    throw new A2AError('INTERNAL', `${storeName}: savePushConfig() for task "${String(request?.taskId)}" ${problem}.`, {
      data: { taskId: request?.taskId },
    });
  }
}

function pushConfigRequestProblem(request: SavePushConfigRequest): string | undefined {
  const { taskId, config, protocolVersion } = request ?? {};
  if (typeof taskId !== 'string' || taskId === '') return 'needs a taskId';
  if (typeof config !== 'object' || config === null) return 'needs a config';
  if (typeof config.id !== 'string' || config.id === '') {
    return 'got a config without an id; assign one (the runtime does when the client gave none)';
  }
  if (typeof config.url !== 'string' || config.url === '') return `got config "${config.id}" without a url`;
  if (protocolVersion !== '0.3' && protocolVersion !== '1.0') {
    return `got protocolVersion ${JSON.stringify(protocolVersion)}; it must be '0.3' or '1.0'`;
  }
  return undefined;
}
