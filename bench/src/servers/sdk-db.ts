/**
 * The durable comparison point: the official SDK of the A2A 1.0 line, @a2a-js/sdk 1.3.0
 * `DefaultRequestHandler` + `DatabaseTaskStore` (Kysely) + express 5, with its v0.3 compatibility
 * layer on (`legacyCompat: { enabled: true }` and a card declaring a 0.3 JSON-RPC interface), so it
 * answers the same 0.3 `message/send`, `tasks/get` and `message/stream` requests as every other
 * bench server. The executor emits the same events as the 0.3.14 SDK server (sdk.ts) and the demo
 * echo agent, in the 1.0 model.
 *
 * BENCH_SDK_DB names the database:
 * - `sqlite:<file>`: Kysely's `SqliteDialect` on one better-sqlite3 connection, with the pragmas
 *   fastify-a2a's SQLite store sets (WAL, synchronous=NORMAL, busy_timeout 5000) unless
 *   BENCH_SDK_SQLITE_PRAGMAS=default leaves better-sqlite3's defaults (rollback journal,
 *   synchronous=FULL);
 * - `postgres://…`: Kysely's `PostgresDialect` on a pg `Pool` of BENCH_SDK_PG_POOL connections (10,
 *   pg's default and fastify-a2a's store's) whose sessions have `search_path` set to the schema
 *   BENCH_SDK_DB_SCHEMA (so the store's queries are the ones it runs on `public`, with no Kysely
 *   schema plugin rewriting them) and that schema as `application_name` (the bench's wait sampler
 *   finds its backends by it).
 * The table must exist: the parent creates it with the SDK's own `a2a-db upgrade` (bench/src/lib/sdk-db.ts).
 * The settings actually in effect are read back from the database and sent to the parent.
 */

import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import {
  type AgentCard,
  type Message,
  Role,
  type Task,
  type TaskArtifactUpdateEvent,
  TaskState,
  type TaskStatusUpdateEvent,
} from '@a2a-js/sdk-1';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk-1/server';
import { DatabaseTaskStore } from '@a2a-js/sdk-1/server/database';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk-1/server/express';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { fail, LISTEN, rssReport, serve, wantsGc } from './common.js';

// express ships no type declarations and @types/express is not a dependency: type what we use.
interface ExpressResponse {
  json(body: unknown): void;
}
interface ExpressApp {
  get(path: string, handler: (request: { url: string }, response: ExpressResponse) => void): void;
  use(path: string, handler: unknown): void;
  listen(port: number, host: string, callback: (error?: Error) => void): Server;
}
const express = createRequire(import.meta.url)('express') as () => ExpressApp;

/** Same as fastify-a2a's SQLite store (DEFAULT_BUSY_TIMEOUT_MS). */
const SQLITE_BUSY_TIMEOUT_MS = 5000;

const dbUrl = process.env.BENCH_SDK_DB;
if (!dbUrl) fail(new Error('BENCH_SDK_DB (sqlite:<file> or postgres://…) is required'));

/** The Kysely instance the store uses, its cleanup, and the settings in effect (reported to the parent). */
async function openDatabase(url: string): Promise<{
  db: Kysely<unknown>;
  close: () => Promise<void>;
  settings: Record<string, string>;
}> {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    const sqlite = new Database(file);
    const tuned = process.env.BENCH_SDK_SQLITE_PRAGMAS !== 'default';
    if (tuned) {
      sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
      sqlite.pragma('journal_mode = WAL');
      sqlite.pragma('synchronous = NORMAL');
    }
    const synchronous = ['OFF', 'NORMAL', 'FULL', 'EXTRA'][Number(sqlite.pragma('synchronous', { simple: true }))];
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: sqlite }) });
    return {
      db,
      close: () => db.destroy(),
      settings: {
        driver: 'better-sqlite3 (one connection, Kysely SqliteDialect)',
        pragmas: tuned ? "fastify-a2a's SQLite store's" : "better-sqlite3's defaults",
        journal_mode: String(sqlite.pragma('journal_mode', { simple: true })),
        synchronous: synchronous ?? '?',
        busy_timeout: String(sqlite.pragma('busy_timeout', { simple: true })),
      },
    };
  }
  const schema = process.env.BENCH_SDK_DB_SCHEMA;
  const max = Number(process.env.BENCH_SDK_PG_POOL ?? 10);
  const pool = new pg.Pool({
    connectionString: url,
    max,
    ...(schema ? { options: `-c search_path=${schema}`, application_name: schema } : {}),
  });
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
  const show = async (name: string): Promise<string> => {
    const { rows } = await sql<Record<string, string>>`SHOW ${sql.raw(name)}`.execute(db);
    return rows[0]?.[name] ?? '?';
  };
  return {
    db,
    close: () => db.destroy(),
    settings: {
      driver: `pg Pool max ${max} (Kysely PostgresDialect)`,
      search_path: await show('search_path'),
      synchronous_commit: await show('synchronous_commit'),
      fsync: await show('fsync'),
    },
  };
}

const card: AgentCard = {
  name: 'SDK 1.3 echo agent',
  description: 'Echoes your words back as a streamed artifact (bench comparison point, durable store).',
  supportedInterfaces: [
    // legacyCompat routes a request without A2A-Version (0.3) to the compat layer only if the card
    // declares a 0.3 interface for the binding.
    { url: 'http://127.0.0.1/a2a', protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
    { url: 'http://127.0.0.1/a2a', protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
  ],
  provider: undefined,
  version: '0.1.0',
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'echo',
      name: 'Echo',
      description: 'Streams the message back word by word.',
      tags: ['demo'],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    },
  ],
  signatures: [],
};

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

const textPart = (value: string) => ({
  content: { $case: 'text' as const, value },
  metadata: undefined,
  filename: '',
  mediaType: '',
});

/** The events of sdk.ts's executor (and the demo echo agent), in the 1.0 model. */
class EchoExecutor implements AgentExecutor {
  readonly #running = new Map<string, AbortController>();

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage, task } = context;
    const controller = new AbortController();
    this.#running.set(taskId, controller);
    const timestamp = () => new Date().toISOString();
    const agentMessage = (text: string): Message => ({
      messageId: randomUUID(),
      contextId,
      taskId,
      role: Role.ROLE_AGENT,
      parts: [textPart(text)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    });
    const status = (state: TaskState, text?: string): void => {
      const event: TaskStatusUpdateEvent = {
        taskId,
        contextId,
        status: { state, timestamp: timestamp(), message: text === undefined ? undefined : agentMessage(text) },
        metadata: undefined,
      };
      bus.publish(AgentEvent.statusUpdate(event));
    };
    try {
      // 1.0 wants a task (or message) first on every turn; the bench's turns all start new tasks.
      const initial: Task = task ?? {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: timestamp(), message: undefined },
        artifacts: [],
        history: [userMessage],
        metadata: undefined,
      };
      bus.publish(AgentEvent.task(initial));
      status(TaskState.TASK_STATE_WORKING);
      const text = userMessage.parts
        .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
        .join('')
        .trim();
      const sleepMatch = /^sleep:(\d+)$/.exec(text);
      if (sleepMatch) {
        const ms = Number(sleepMatch[1]);
        status(TaskState.TASK_STATE_WORKING, `Sleeping for ${ms} ms.`);
        await sleep(ms, controller.signal);
        if (controller.signal.aborted) return;
        status(TaskState.TASK_STATE_COMPLETED, `Slept for ${ms} ms.`);
        return;
      }
      const words = text.split(/(\s+)/).filter((w) => w !== '');
      const artifactId = `echo-${taskId}`;
      for (let i = 0; i < words.length; i++) {
        const event: TaskArtifactUpdateEvent = {
          taskId,
          contextId,
          artifact: {
            artifactId,
            name: 'echo',
            description: '',
            parts: [textPart(words[i] as string)],
            metadata: undefined,
            extensions: [],
          },
          append: i > 0,
          lastChunk: i === words.length - 1,
          metadata: undefined,
        };
        bus.publish(AgentEvent.artifactUpdate(event));
      }
      status(TaskState.TASK_STATE_COMPLETED);
    } finally {
      this.#running.delete(taskId);
      bus.finished();
    }
  }

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    this.#running.get(taskId)?.abort();
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: '',
        status: { state: TaskState.TASK_STATE_CANCELED, timestamp: new Date().toISOString(), message: undefined },
        metadata: undefined,
      }),
    );
  };
}

try {
  const database = await openDatabase(dbUrl as string);
  const requestHandler = new DefaultRequestHandler(card, new DatabaseTaskStore(database.db), new EchoExecutor());
  const app = express();
  app.get('/__rss', (request, response) => response.json(rssReport(wantsGc(request.url))));
  app.use(
    '/.well-known/agent-card.json',
    agentCardHandler({ agentCardProvider: requestHandler, legacyCompat: { enabled: true } }),
  );
  app.use(
    '/a2a',
    jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } }),
  );
  const server = app.listen(LISTEN.port, LISTEN.host, (error) => {
    if (error) fail(error);
    const address = server.address();
    serve(
      typeof address === 'object' && address ? address.port : 0,
      () =>
        new Promise((resolve) => {
          server.close(() => resolve(database.close()));
          server.closeAllConnections();
        }),
      database.settings,
    );
  });
} catch (error) {
  fail(error);
}
