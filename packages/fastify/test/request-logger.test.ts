/**
 * a2aChildLoggerFactory (issue 22): request loggers made on first use. A request that logs nothing
 * at an enabled level makes no pino child; every line a request does log carries its reqId, as with
 * Fastify's default child; and the request logger answers pino's API as that child does.
 */

import { Writable } from 'node:stream';
import { MemoryStore } from '@fastify-a2a/store-memory';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { echoAgent } from '../../../test-support/agents.js';
import { a2aChildLoggerFactory, a2aPlugin } from '../src/index.js';
import { rpcBody, testCard, userMessage } from './helpers.js';

interface Line {
  level: number;
  msg?: string;
  reqId?: string;
  [key: string]: unknown;
}

/** Pino options at `level` writing parsed lines into `lines` (no timestamps, so two loggers' lines compare equal). */
function captured(level: string, extra: Record<string, unknown> = {}) {
  const lines: Line[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const text of chunk.toString().split('\n')) if (text !== '') lines.push(JSON.parse(text) as Line);
      done();
    },
  });
  return { logger: { level, stream, timestamp: false, ...extra }, lines };
}

/** A memory store whose ping fails once `unreachable` is set: the health route then logs at warn. */
class FlakyStore extends MemoryStore {
  unreachable = false;
  override async ping(): Promise<void> {
    if (this.unreachable) throw new Error('the store does not answer');
    return super.ping();
  }
}

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** The plugin with the echo agent on a server with the factory, counting the pino children made (pino's `onChild`). */
async function server(level: string, options: Partial<FastifyServerOptions> = {}) {
  const children = { made: 0 };
  const { logger, lines } = captured(level, { onChild: () => void children.made++ });
  const app = Fastify({
    logger,
    childLoggerFactory: a2aChildLoggerFactory,
    requestIdHeader: 'x-request-id',
    ...options,
  });
  apps.push(app);
  const store = new FlakyStore();
  await app.register(a2aPlugin, { agentCard: testCard, executor: echoAgent, store, retention: false });
  return { app, store, lines, children };
}

async function sendAndGet(app: FastifyInstance, requestId: string): Promise<void> {
  const sent = await app.inject({
    method: 'POST',
    url: '/a2a',
    headers: { 'x-request-id': `${requestId}-send` },
    payload: rpcBody('message/send', { message: userMessage('hello'), configuration: { blocking: true } }),
  });
  const taskId = (sent.json() as { result: { id: string } }).result.id;
  const got = await app.inject({
    method: 'POST',
    url: '/a2a',
    headers: { 'x-request-id': requestId },
    payload: rpcBody('tasks/get', { id: taskId }),
  });
  expect((got.json() as { result: { id: string } }).result.id).toBe(taskId);
}

describe('a2aChildLoggerFactory on a server', () => {
  it('at warn, plain requests make no pino child; a request that logs at warn or error logs its reqId', async () => {
    const { app, store, lines, children } = await server('warn');
    app.addHook('preHandler', async (request) => {
      if (request.headers['x-fail'] !== undefined) throw new Error('an application hook failed');
    });
    await app.ready();
    const before = children.made;
    await sendAndGet(app, 'plain');
    expect(children.made).toBe(before);
    expect(lines).toEqual([]);

    store.unreachable = true;
    const health = await app.inject({ method: 'GET', url: '/a2a/health', headers: { 'x-request-id': 'health-1' } });
    expect(health.statusCode).toBe(503);
    const failed = await app.inject({
      method: 'POST',
      url: '/a2a',
      headers: { 'x-request-id': 'rpc-1', 'x-fail': '1' },
      payload: rpcBody('tasks/get', { id: 'any' }),
    });
    expect(failed.json()).toMatchObject({ error: { code: -32603 } });

    expect(lines.find((line) => line.msg === 'a2a: health check: the store does not answer')).toMatchObject({
      level: 40,
      reqId: 'health-1',
    });
    expect(lines.find((line) => line.msg === 'a2a: JSON-RPC request failed')).toMatchObject({
      level: 50,
      reqId: 'rpc-1',
      err: { message: 'an application hook failed' },
    });
    // Fastify's request lines are info: none at warn.
    expect(lines.filter((line) => line.level < 40)).toEqual([]);
  });

  it('at info, every request logs both request lines with its reqId', async () => {
    const { app, lines } = await server('info');
    await app.ready();
    await sendAndGet(app, 'get-1');
    const ofGet = lines.filter((line) => line.reqId === 'get-1');
    expect(ofGet.map((line) => line.msg)).toEqual(['incoming request', 'request completed']);
    expect(ofGet[0]).toMatchObject({ level: 30, req: { method: 'POST', url: '/a2a' } });
    expect(ofGet[1]).toMatchObject({ level: 30, res: { statusCode: 200 } });
    expect(typeof ofGet[1]?.responseTime).toBe('number');
    expect(lines.filter((line) => line.reqId === 'get-1-send').map((line) => line.msg)).toEqual([
      'incoming request',
      'request completed',
    ]);
  });

  it("keeps a route's own logLevel: its request logs at that level", async () => {
    const { app, lines } = await server('warn');
    app.get('/chatty', { logLevel: 'debug' }, async (request) => {
      request.log.debug('a debug line');
      return 'ok';
    });
    await app.ready();
    await app.inject({ method: 'GET', url: '/chatty', headers: { 'x-request-id': 'chatty-1' } });
    expect(lines.find((line) => line.msg === 'a debug line')).toMatchObject({ level: 20, reqId: 'chatty-1' });
  });
});

/** A server logger at `level`, Fastify's default request logger and the factory's, both with `reqId`. */
function pair(level: string, extra: Record<string, unknown> = {}) {
  const { logger, lines } = captured(level, extra);
  const app = Fastify({ logger });
  apps.push(app);
  const root = app.log;
  const made = (reqId: string) => ({
    eager: root.child({ reqId }, {}),
    lazy: a2aChildLoggerFactory(root, { reqId }, {}),
  });
  return { root, lines, made };
}

/** Lines without errors' stacks, which name the line that made each error. */
function withoutStacks(lines: Line[]): Line[] {
  return JSON.parse(JSON.stringify(lines, (key, value) => (key === 'stack' ? undefined : value))) as Line[];
}

/** The lines `use` writes through Fastify's default request logger, then through the factory's. */
function bothWays(level: string, use: (log: FastifyBaseLogger) => void, extra: Record<string, unknown> = {}) {
  const { lines, made } = pair(level, extra);
  const { eager, lazy } = made('r-1');
  use(eager);
  const eagerLines = withoutStacks(lines.splice(0));
  use(lazy);
  return { eagerLines, lazyLines: withoutStacks(lines.splice(0)) };
}

describe("the factory's request logger answers pino's API as Fastify's default child does", () => {
  const everyLevel = (log: FastifyBaseLogger) => {
    log.trace('a trace');
    log.debug({ n: 1 }, 'a debug');
    log.info({ nested: { a: [1, 2] } }, 'an info %s', 'formatted');
    log.warn('a warn');
    log.error({ err: new Error('boom') }, 'an error');
    log.error(new Error('thrown'));
    log.fatal('a fatal');
    log.silent('never');
  };

  it.each(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])(
    'writes the same lines at every level (server at %s)',
    (level) => {
      const { eagerLines, lazyLines } = bothWays(level, everyLevel);
      expect(lazyLines).toEqual(eagerLines);
      for (const line of lazyLines) expect(line.reqId).toBe('r-1');
    },
  );

  it('writes lines of custom levels with the reqId', () => {
    const { eagerLines, lazyLines } = bothWays(
      'info',
      (log) => (log as FastifyBaseLogger & { audit: (msg: string) => void }).audit('an audit'),
      { customLevels: { audit: 35 } },
    );
    expect(lazyLines).toEqual(eagerLines);
    expect(lazyLines).toMatchObject([{ level: 35, reqId: 'r-1', msg: 'an audit' }]);
  });

  it("follows the server logger's level until its own is set, and setting it leaves the server's alone", () => {
    const { root, lines, made } = pair('warn');
    const { lazy } = made('r-1');
    const pinoLike = lazy as FastifyBaseLogger & { isLevelEnabled(level: string): boolean; levelVal: number };
    expect(lazy.level).toBe('warn');
    expect(pinoLike.levelVal).toBe(40);
    expect(pinoLike.isLevelEnabled('info')).toBe(false);
    root.level = 'debug';
    expect(lazy.level).toBe('debug');
    expect(pinoLike.isLevelEnabled('debug')).toBe(true);
    lazy.debug('seen at debug');
    root.level = 'warn';
    lazy.debug('not seen at warn');
    lazy.level = 'trace';
    expect(root.level).toBe('warn');
    expect(lazy.level).toBe('trace');
    expect(pinoLike.levelVal).toBe(10);
    expect(pinoLike.isLevelEnabled('trace')).toBe(true);
    lazy.trace('seen at the request level');
    root.info('the server logger is still at warn');
    expect(lines.map(({ level, msg, reqId }) => ({ level, msg, reqId }))).toEqual([
      { level: 20, msg: 'seen at debug', reqId: 'r-1' },
      { level: 10, msg: 'seen at the request level', reqId: 'r-1' },
    ]);
  });

  it('answers child, bindings and setBindings as the default child does', () => {
    const use = (log: FastifyBaseLogger) => {
      const pinoLike = log as FastifyBaseLogger & {
        bindings(): Record<string, unknown>;
        setBindings(bindings: Record<string, unknown>): void;
      };
      expect(pinoLike.bindings()).toEqual({ reqId: 'r-1' });
      log.child({ taskId: 't-1' }).warn('from a child');
      log.child({ taskId: 't-2' }, { level: 'debug' }).debug('from a child at debug');
      pinoLike.setBindings({ tenant: 'acme' });
      log.warn('after setBindings');
    };
    const { eagerLines, lazyLines } = bothWays('warn', use);
    expect(lazyLines).toEqual(eagerLines);
    expect(lazyLines).toMatchObject([
      { reqId: 'r-1', taskId: 't-1', msg: 'from a child' },
      { reqId: 'r-1', taskId: 't-2', msg: 'from a child at debug' },
      { reqId: 'r-1', tenant: 'acme', msg: 'after setBindings' },
    ]);
  });

  it('flushes through the server logger', async () => {
    const { made } = pair('warn');
    const { lazy } = made('r-1');
    await new Promise<void>((resolve, reject) =>
      (lazy as FastifyBaseLogger & { flush(cb: (error?: Error) => void): void }).flush((error) =>
        error ? reject(error) : resolve(),
      ),
    );
  });

  it('makes the child at once for a logger without isLevelEnabled, and for child options', () => {
    const child = { marker: 'child' } as unknown as FastifyBaseLogger;
    const calls: unknown[][] = [];
    const minimal = {
      child: (...args: unknown[]) => {
        calls.push(args);
        return child;
      },
    } as unknown as FastifyBaseLogger;
    expect(a2aChildLoggerFactory(minimal, { reqId: 'r-1' }, {})).toBe(child);
    const { root } = pair('warn');
    const withLevel = a2aChildLoggerFactory(root, { reqId: 'r-2' }, { level: 'debug' });
    expect(withLevel.level).toBe('debug');
    expect(calls).toEqual([[{ reqId: 'r-1' }, {}]]);
  });
});
