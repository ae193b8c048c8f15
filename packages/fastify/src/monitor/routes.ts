/**
 * The monitor's routes, under `<agent prefix><monitor prefix>`: the API (agents and workers, every
 * owner's tasks, a task's event log, the events stream), the operator actions, and the live page.
 *
 * Every API route runs the operator check first: 401 without credentials, 403 with credentials it
 * refuses. The page's three static files (HTML, script, style) are served without it: they hold no
 * data and a browser cannot send a bearer token when it navigates; the page asks for the token and
 * sends it with each of its requests. Every action is logged with the operator who took it.
 */

import {
  A2AError,
  ERROR_TABLE,
  NO_STATUS_TIMESTAMP,
  type TaskListCursor,
  type TaskRecord,
  type TaskState,
} from '@fastify-a2a/core';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { A2AAgent, A2AAgents } from '../agents.js';
import { MonitorHub } from './events.js';
import type { ResolvedMonitorOptions } from './options.js';
import { PAGE_HTML, PAGE_SCRIPT, PAGE_STYLE } from './page.js';
import { QueueView, taskView } from './view.js';

export interface MonitorRoutesOptions {
  monitor: ResolvedMonitorOptions;
  agent: A2AAgent;
  agents: A2AAgents;
  heartbeatIntervalMs: number;
}

const TASK_STATES: readonly TaskState[] = [
  'submitted',
  'working',
  'input-required',
  'auth-required',
  'completed',
  'canceled',
  'failed',
  'rejected',
  'unknown',
];
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;

/** The operator behind the request (set by the check). */
const OPERATOR = Symbol('a2a.monitor.operator');
type WithOperator = FastifyRequest & { [OPERATOR]?: string };

function badRequest(message: string): A2AError {
  return new A2AError('INVALID_PARAMS', message);
}

function pageTokenOf(cursor: TaskListCursor): string {
  return Buffer.from(JSON.stringify({ ts: cursor.statusTimestamp, id: cursor.taskId })).toString('base64url');
}

function cursorOf(token: string): TaskListCursor {
  try {
    const { ts, id } = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { ts?: unknown; id?: unknown };
    if (Number.isSafeInteger(ts) && typeof id === 'string') return { statusTimestamp: ts as number, taskId: id };
  } catch {
    // Reported below.
  }
  throw badRequest('pageToken is not a token this monitor gave out; leave it out to start from the first page.');
}

interface TaskQuery {
  state?: string;
  contextId?: string;
  owner?: string;
  worker?: string;
  pageSize?: string;
  pageToken?: string;
}

function pageSizeOf(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_PAGE_SIZE;
  const size = Number(value);
  if (!Number.isSafeInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
    throw badRequest(`pageSize must be a whole number from 1 to ${MAX_PAGE_SIZE}; got ${JSON.stringify(value)}.`);
  }
  return size;
}

function stateOf(value: string | undefined): TaskState | undefined {
  if (value === undefined || value === '') return undefined;
  if (!(TASK_STATES as readonly string[]).includes(value)) {
    throw badRequest(`state must be one of ${TASK_STATES.join(', ')}; got ${JSON.stringify(value)}.`);
  }
  return value as TaskState;
}

/** Newest first, as listTasks orders (status timestamp, then id, descending). */
function newestFirst(a: TaskRecord, b: TaskRecord): number {
  const ta = Date.parse(a.task.status.timestamp ?? '') || NO_STATUS_TIMESTAMP;
  const tb = Date.parse(b.task.status.timestamp ?? '') || NO_STATUS_TIMESTAMP;
  if (ta !== tb) return tb - ta;
  return a.task.id < b.task.id ? 1 : a.task.id > b.task.id ? -1 : 0;
}

export const monitorRoutes: FastifyPluginAsync<MonitorRoutesOptions> = async (scope, options) => {
  const { monitor, agent, agents } = options;
  const { store, runtime } = agent;
  const hub = new MonitorHub({
    store,
    workerId: runtime.workerId,
    agentPrefix: agent.prefix,
    maxBufferedEvents: monitor.maxBufferedEvents,
    heartbeatIntervalMs: options.heartbeatIntervalMs,
    onError: (error) => scope.log.warn({ err: error }, 'a2a monitor: could not read the store for the events stream'),
  });
  scope.addHook('preClose', async () => hub.close());

  scope.setErrorHandler((error, request, reply) => {
    if (A2AError.is(error)) {
      const status = ERROR_TABLE[error.code].http;
      const exposed = ERROR_TABLE[error.code].expose;
      if (!exposed) request.log.error({ err: error }, 'a2a monitor: request failed');
      return reply.code(status).send({
        error: error.code,
        message: exposed ? error.message : 'The store could not be read; try again shortly.',
      });
    }
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return reply.code(status).send({ error: 'BAD_REQUEST', message: (error as Error).message });
    }
    request.log.error({ err: error }, 'a2a monitor: request failed');
    return reply.code(500).send({ error: 'INTERNAL', message: 'The monitor failed to answer; see the server log.' });
  });

  const operatorCheck = async (request: WithOperator, reply: FastifyReply): Promise<void> => {
    let operator: string | null | undefined;
    try {
      operator = await monitor.authorize(request);
    } catch (error) {
      request.log.warn({ err: error }, 'a2a monitor: the operator check failed; refusing');
      operator = undefined;
    }
    if (typeof operator === 'string' && operator !== '') {
      request[OPERATOR] = operator;
      return;
    }
    const credentials = request.headers.authorization !== undefined;
    reply.header('cache-control', 'no-store');
    if (!credentials) reply.header('www-authenticate', 'Bearer realm="a2a-monitor"');
    await reply.code(credentials ? 403 : 401).send({
      error: credentials ? 'FORBIDDEN' : 'UNAUTHENTICATED',
      message: credentials
        ? 'These credentials are not an operator’s: the monitor is for the operators its authorize check accepts.'
        : 'The monitor needs an operator’s credentials (Authorization: Bearer <token>).',
    });
  };

  const operatorOf = (request: FastifyRequest): string => (request as WithOperator)[OPERATOR] ?? 'unknown';
  const logAction = (request: FastifyRequest, action: string, target: Record<string, unknown>): void => {
    request.log.info({ operator: operatorOf(request), action, ...target }, `a2a monitor: operator action ${action}`);
  };

  // ---- The page (static, see the header comment) ----
  const staticHeaders = {
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
  scope.get('/', async (request, reply) => {
    // The page loads page.js and page.css by relative URLs: they resolve under the prefix only
    // from the address with its trailing slash.
    const path = request.url.split('?')[0] as string;
    // Relative (`monitor/`): behind a proxy that strips a prefix, an absolute path would lose it.
    if (!path.endsWith('/')) return reply.redirect(`${path.slice(path.lastIndexOf('/') + 1)}/`, 308);
    return reply
      .headers({
        ...staticHeaders,
        'content-type': 'text/html; charset=utf-8',
        'x-frame-options': 'DENY',
        // Nothing from elsewhere, no inline script: task text the page shows cannot run as code.
        'content-security-policy':
          "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      })
      .send(PAGE_HTML);
  });
  scope.get('/page.js', async (_request, reply) =>
    reply.headers({ ...staticHeaders, 'content-type': 'text/javascript; charset=utf-8' }).send(PAGE_SCRIPT),
  );
  scope.get('/page.css', async (_request, reply) =>
    reply.headers({ ...staticHeaders, 'content-type': 'text/css; charset=utf-8' }).send(PAGE_STYLE),
  );

  // ---- The API: everything below runs the operator check ----
  await scope.register(async (api) => {
    api.addHook('onRequest', operatorCheck);
    api.addHook('onSend', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
    });

    api.get('/agents', async () => {
      const queue = await QueueView.read(store);
      return {
        workerId: runtime.workerId,
        agents: agents.list().map((served) => {
          const card = served.card();
          return {
            prefix: served.prefix,
            name: card.name,
            store: {
              kind: served.store.constructor.name,
              namespace: served.store.namespace ?? null,
              supports: served.store.supports,
            },
            capabilities: card.capabilities,
          };
        }),
        workers: queue.workerViews(Date.now()),
      };
    });

    api.get<{ Querystring: TaskQuery }>('/tasks', async (request) => {
      const query = request.query;
      const state = stateOf(query.state);
      const limit = pageSizeOf(query.pageSize);
      const queue = await QueueView.read(store);
      const now = Date.now();
      const matches = (record: TaskRecord): boolean =>
        (state === undefined || record.task.status.state === state) &&
        (query.contextId === undefined || query.contextId === '' || record.task.contextId === query.contextId) &&
        (query.owner === undefined || query.owner === '' || record.owner === query.owner);
      if (query.worker !== undefined && query.worker !== '') {
        // A worker's turns are few (they are running or queued): one page, no token.
        const records = (await Promise.all(queue.tasksOf(query.worker).map((id) => store.getTask(id))))
          .filter((record): record is TaskRecord => record !== undefined && matches(record))
          .sort(newestFirst);
        return {
          tasks: await Promise.all(records.map((record) => taskView(store, record, queue, now))),
          totalSize: records.length,
          pageSize: limit,
          nextPageToken: '',
        };
      }
      if (store.listTasks === undefined) {
        throw new A2AError(
          'UNSUPPORTED_OPERATION',
          'This store cannot list tasks (store.supports.listTasks is false).',
        );
      }
      const page = await store.listTasks({
        limit,
        ...(state !== undefined ? { state } : {}),
        ...(query.contextId ? { contextId: query.contextId } : {}),
        ...(query.owner ? { owner: query.owner } : {}),
        ...(query.pageToken ? { after: cursorOf(query.pageToken) } : {}),
      });
      return {
        tasks: await Promise.all(page.records.map((record) => taskView(store, record, queue, now))),
        totalSize: page.total,
        pageSize: limit,
        nextPageToken: page.next === undefined ? '' : pageTokenOf(page.next),
      };
    });

    api.get<{ Params: { id: string } }>('/tasks/:id', async (request) => {
      const record = await store.getTask(request.params.id);
      if (record === undefined) throw new A2AError('TASK_NOT_FOUND', `No task "${request.params.id}".`);
      const queue = await QueueView.read(store);
      const events = await store.readEvents(record.task.id, 0);
      return {
        ...(await taskView(store, record, queue, Date.now())),
        task: record.task,
        events: events.map(({ seq, createdAt, event }) => ({ seq, at: createdAt, kind: event.kind, event })),
      };
    });

    api.get('/events', async (request, reply) => {
      const lastEventId = request.headers['last-event-id'];
      await hub.open(reply, typeof lastEventId === 'string' ? lastEventId : undefined);
    });

    // ---- Operator actions ----
    const reasonOf = (request: FastifyRequest, what: string): string => {
      const body = request.body as { reason?: unknown } | undefined;
      const given = typeof body?.reason === 'string' && body.reason.trim() !== '' ? `: ${body.reason.trim()}` : '';
      return `${what} by operator "${operatorOf(request)}"${given.slice(0, 500)}`;
    };

    api.post<{ Params: { id: string } }>('/tasks/:id/cancel', async (request) => {
      logAction(request, 'cancel', { taskId: request.params.id });
      const task = await runtime.operator.cancel(request.params.id, reasonOf(request, 'Canceled'));
      return { id: task.id, state: task.status.state };
    });

    api.post<{ Params: { id: string } }>('/tasks/:id/fail', async (request) => {
      logAction(request, 'fail-turn', { taskId: request.params.id });
      const task = await runtime.operator.failTurn(request.params.id, reasonOf(request, 'Turn failed'));
      return { id: task.id, state: task.status.state };
    });

    api.post<{ Params: { contextId: string }; Body: { position?: unknown } | undefined }>(
      '/contexts/:contextId/release',
      async (request) => {
        const position = request.body?.position;
        if (position !== undefined && !Number.isSafeInteger(position)) {
          throw badRequest(
            'position must be the whole number a task\'s "turn.position" shows; leave it out for the head.',
          );
        }
        logAction(request, 'release-slot', { contextId: request.params.contextId, position });
        const slot = await runtime.operator.releaseSlot(request.params.contextId, position as number | undefined);
        return { released: slot };
      },
    );

    api.post<{ Params: { id: string; configId: string } }>('/tasks/:id/push/:configId/retry', async (request) => {
      logAction(request, 'retry-push', { taskId: request.params.id, configId: request.params.configId });
      await runtime.operator.retryPush(request.params.id, request.params.configId);
      return { retried: true };
    });
  });
};
