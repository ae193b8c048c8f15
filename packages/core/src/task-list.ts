/**
 * ListTasks between the service and the store: checking the request, the page token, and shaping
 * the tasks of a page. The runtime's `listTasks` is these three steps around one store call.
 */

import { createHash } from 'node:crypto';
import { A2AError } from './errors.js';
import { withHistoryLength } from './model/task-state.js';
import type { ListTasksParams, ListTasksResult, Task } from './model/types.js';
import type { CallContext } from './protocol/context.js';
import { ownerOf, TASK_STATES, type TaskListCursor, type TaskListPage, type TaskListQuery } from './store/index.js';

/** A2A 1.0 ListTasksRequest.pageSize: the default, and the bounds of what a client may ask for. */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

const TASK_STATE_NAMES: ReadonlySet<string> = new Set(TASK_STATES);

/** A ListTasks request, checked: the store query of its page, and how to shape what comes back. */
export interface TaskListRequest {
  query: TaskListQuery;
  pageSize: number;
  historyLength: number | undefined;
  includeArtifacts: boolean;
  /** Names the filters and scope a page token belongs to (see {@link pageTokenOf}). */
  scope: string;
}

const invalid = (field: string, problem: string): A2AError =>
  new A2AError('INVALID_PARAMS', `Invalid params: ${field} ${problem}.`, {
    data: { errors: [{ path: field, problem }] },
  });

/**
 * Checks `params` (the codec already checked their shapes; a direct caller may not have) and
 * builds the store query, decoding `pageToken`.
 * @throws {A2AError} INVALID_PARAMS naming the first offending field.
 */
export function taskListRequest(params: ListTasksParams, ctx: CallContext): TaskListRequest {
  const { contextId, status, statusTimestampAfter, pageSize = DEFAULT_PAGE_SIZE, historyLength } = params;
  if (contextId !== undefined && typeof contextId !== 'string') throw invalid('contextId', 'must be a string');
  if (status !== undefined && !TASK_STATE_NAMES.has(status)) {
    throw invalid('status', `must be a task state (${TASK_STATES.join(', ')})`);
  }
  let since: number | undefined;
  if (statusTimestampAfter !== undefined) {
    since = typeof statusTimestampAfter === 'string' ? Date.parse(statusTimestampAfter) : Number.NaN;
    if (!Number.isFinite(since)) {
      throw invalid('statusTimestampAfter', 'must be an ISO 8601 timestamp, e.g. "2026-01-01T00:00:00Z"');
    }
  }
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    throw invalid('pageSize', `must be an integer from 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE})`);
  }
  if (historyLength !== undefined && (!Number.isInteger(historyLength) || historyLength < 0)) {
    throw invalid('historyLength', 'must be an integer >= 0');
  }
  if (params.includeArtifacts !== undefined && typeof params.includeArtifacts !== 'boolean') {
    throw invalid('includeArtifacts', 'must be a boolean');
  }

  const query: TaskListQuery = { limit: pageSize };
  if (contextId !== undefined) query.contextId = contextId;
  if (status !== undefined) query.state = status;
  if (since !== undefined) query.statusTimestampAfter = since;
  // Only the caller's own tasks (their owner is the principal that created them, within the tenant
  // the call names; an anonymous caller lists the tasks created anonymously).
  query.owner = ownerOf(ctx) ?? null;
  const scope = scopeOf(query, ctx);
  const after = cursorOf(params.pageToken, scope);
  if (after !== undefined) query.after = after;
  return { query, pageSize, historyLength, includeArtifacts: params.includeArtifacts === true, scope };
}

/** The ListTasks response for one page of the store. */
export function taskListResult(page: TaskListPage, request: TaskListRequest): ListTasksResult {
  return {
    tasks: page.records.map(({ task }) => listedTask(task, request)),
    nextPageToken: page.next === undefined ? '' : pageTokenOf(page.next, request.scope),
    pageSize: request.pageSize,
    totalSize: page.total,
  };
}

/** ListTasksRequest.includeArtifacts: false (the default) leaves `artifacts` out entirely. */
function listedTask(task: Task, request: TaskListRequest): Task {
  const trimmed = withHistoryLength(task, request.historyLength);
  if (request.includeArtifacts || trimmed.artifacts === undefined) return trimmed;
  const { artifacts: _, ...rest } = trimmed;
  return rest;
}

// ---- Page tokens ----
//
// base64url of {"v":1,"ts":…,"id":"…","q":"…"}: the key of the last task of the page (the store's
// keyset cursor) and a digest of the filters and the caller it was issued for. Opaque to clients,
// and not signed: a forged token only moves the starting point within what the caller may list
// anyway, as the store applies the filters and the caller's scope again on every page. The digest
// refuses a token sent with other filters, where "continue after this task" would mean nothing.

const TOKEN_VERSION = 1;
/** Generous for a 64-bit timestamp, a digest and a task id of a few kilobytes. */
const MAX_TOKEN_LENGTH = 8192;

interface PageToken {
  v: number;
  ts: number;
  id: string;
  q: string;
}

function scopeOf(query: TaskListQuery, ctx: CallContext): string {
  const scope = [query.contextId, query.state, query.statusTimestampAfter, ctx.tenant, ctx.principal?.id];
  return createHash('sha256')
    .update(JSON.stringify(scope.map((part) => part ?? null)))
    .digest('base64url')
    .slice(0, 16);
}

function pageTokenOf(cursor: TaskListCursor, scope: string): string {
  const token: PageToken = { v: TOKEN_VERSION, ts: cursor.statusTimestamp, id: cursor.taskId, q: scope };
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

/** The cursor in `pageToken`; undefined for the first page (no token, or `""`: proto3's unset). */
function cursorOf(pageToken: unknown, scope: string): TaskListCursor | undefined {
  if (pageToken === undefined || pageToken === '') return undefined;
  const notOurs = invalid(
    'pageToken',
    'is not a page token this agent issued: pass the nextPageToken of the previous page unchanged, or leave it out to start from the first page',
  );
  if (typeof pageToken !== 'string' || pageToken.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(pageToken)) {
    throw notOurs;
  }
  let token: Partial<PageToken>;
  try {
    token = JSON.parse(Buffer.from(pageToken, 'base64url').toString('utf8')) as Partial<PageToken>;
  } catch {
    throw notOurs;
  }
  if (
    token === null ||
    typeof token !== 'object' ||
    token.v !== TOKEN_VERSION ||
    !Number.isSafeInteger(token.ts) ||
    typeof token.id !== 'string' ||
    typeof token.q !== 'string'
  ) {
    throw notOurs;
  }
  if (token.q !== scope) {
    throw invalid(
      'pageToken',
      'was issued for other filters (contextId, status, statusTimestampAfter): send the filters of the first page with it, or leave it out to start again',
    );
  }
  return { statusTimestamp: token.ts as number, taskId: token.id };
}
