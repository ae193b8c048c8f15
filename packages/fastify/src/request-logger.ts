/**
 * Request loggers made on first use (issue 22). Fastify gives every request a child of its logger
 * carrying the request id (`request.log`, `reply.log`): with pino that is a new logger object whose
 * bindings are serialized on creation, for every request, although a server logging at `warn` writes
 * nothing for nearly all of them (Fastify's own "incoming request" / "request completed" lines are
 * `info`). {@link a2aChildLoggerFactory} hands out a stand-in instead: it answers every call a
 * logger gets, and makes the real child (the same `logger.child(bindings)` Fastify makes) only when
 * a line is logged at an enabled level or the caller needs the child itself (`child`, `bindings`,
 * setting `level`). So a line still carries `reqId`, exactly as before, and a request that logs
 * nothing makes no child. What a request logger costs either way: bench/PROFILE.md.
 */

import type { FastifyBaseLogger } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildLoggerOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;

/** The logger's methods Fastify requires (`validateLogger`), plus what pino adds that a caller may use. */
type ParentLogger = FastifyBaseLogger & {
  isLevelEnabled?: (level: string) => boolean;
  levels?: { values?: Record<string, number> };
  bindings?: () => Bindings;
  setBindings?: (bindings: Bindings) => void;
  readonly levelVal?: number;
};

/** The pino levels Fastify's logger type names (`silent` is no level: pino's is a no-op). */
const STANDARD_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

const BINDINGS = Symbol('fastify-a2a.requestLogger.bindings');
const CHILD = Symbol('fastify-a2a.requestLogger.child');

/** A request's stand-in: the bindings Fastify asked for, and the real child once made. */
interface RequestLogger {
  [BINDINGS]: Bindings;
  [CHILD]: ParentLogger | undefined;
}

type LogMethod = (this: unknown, ...args: unknown[]) => void;

/**
 * The prototype of one parent's stand-ins: the parent itself underneath (so everything not
 * overridden — `levels`, `version`, `flush`, `silent`, pino's symbols — reads as the parent's,
 * which is what a pino child inherits too), and over it the methods that must reach the child.
 */
function standInPrototypeOf(parent: ParentLogger): object {
  const isLevelEnabled = (parent.isLevelEnabled as (level: string) => boolean).bind(parent);
  const childOf = (standIn: RequestLogger): ParentLogger => {
    let child = standIn[CHILD];
    if (child === undefined) {
      // No options: what Fastify's default factory makes with the `{}` it passes (pino takes a
      // shorter path without them, to the same logger).
      child = parent.child(standIn[BINDINGS]) as ParentLogger;
      standIn[CHILD] = child;
    }
    return child;
  };
  const current = (standIn: RequestLogger): ParentLogger => standIn[CHILD] ?? parent;

  const prototype = Object.create(parent) as object;
  const define = (name: string, value: unknown) =>
    Object.defineProperty(prototype, name, { value, writable: true, configurable: true });
  // Every level the parent logs at, custom levels included (pino's `levels.values`).
  const levels = new Set<string>([...STANDARD_LEVELS, ...Object.keys(parent.levels?.values ?? {})]);
  for (const level of levels) {
    if (typeof (parent as unknown as Record<string, unknown>)[level] !== 'function') continue;
    const log = function (this: RequestLogger, ...args: unknown[]): void {
      const child = this[CHILD];
      if (child !== undefined) {
        (child as unknown as Record<string, LogMethod>)[level]?.apply(child, args);
      } else if (isLevelEnabled(level)) {
        // Checked when the line is logged, as a pino child does (its level methods are the
        // parent's until its own level is set).
        const made = childOf(this);
        (made as unknown as Record<string, LogMethod>)[level]?.apply(made, args);
      }
    };
    define(level, log);
  }
  define('isLevelEnabled', function (this: RequestLogger, level: string): boolean {
    return (current(this).isLevelEnabled as (level: string) => boolean)(level);
  });
  define('child', function (this: RequestLogger, bindings: Bindings, options?: ChildLoggerOptions) {
    return childOf(this).child(bindings, options);
  });
  if (typeof parent.bindings === 'function') {
    define('bindings', function (this: RequestLogger): Bindings {
      return (childOf(this).bindings as () => Bindings)();
    });
  }
  if (typeof parent.setBindings === 'function') {
    define('setBindings', function (this: RequestLogger, bindings: Bindings): void {
      (childOf(this).setBindings as (bindings: Bindings) => void)(bindings);
    });
  }
  Object.defineProperty(prototype, 'level', {
    get(this: RequestLogger) {
      return current(this).level;
    },
    // A request's own level is the child's, as with Fastify's default child.
    set(this: RequestLogger, level: string) {
      childOf(this).level = level;
    },
    configurable: true,
  });
  if ('levelVal' in parent) {
    Object.defineProperty(prototype, 'levelVal', {
      get(this: RequestLogger) {
        return current(this).levelVal;
      },
      configurable: true,
    });
  }
  return prototype;
}

/** Stand-in prototypes by parent: Fastify's request loggers all have the server's logger as parent. */
const prototypes = new WeakMap<object, object>();
let lastParent: object | undefined;
let lastPrototype: object | undefined;

function prototypeFor(parent: ParentLogger): object {
  if (parent === lastParent) return lastPrototype as object;
  let prototype = prototypes.get(parent);
  if (prototype === undefined) {
    prototype = standInPrototypeOf(parent);
    prototypes.set(parent, prototype);
  }
  lastParent = parent;
  lastPrototype = prototype;
  return prototype;
}

/** Whether Fastify passed child options (a route's `logLevel` or `logSerializers`). */
function hasOptions(options: ChildLoggerOptions | undefined): boolean {
  for (const _ in options) return true;
  return false;
}

/**
 * Fastify's `childLoggerFactory` server option, for request loggers made on first use:
 * `Fastify({ logger: { level: 'warn' }, childLoggerFactory: a2aChildLoggerFactory })`. A request
 * that logs nothing at an enabled level (every plain request at `warn`) then makes no pino child;
 * one that does logs with its `reqId` as before. The request logger answers what Fastify and
 * plugins use of pino: the level methods, `child`, `bindings`, `setBindings`, `level` (get and set),
 * `levelVal`, `isLevelEnabled`, `flush`, `silent`. A route with its own `logLevel` or
 * `logSerializers`, and a logger without `isLevelEnabled`, get the child made at once, as without
 * this option. For every route of the server, the plugin's and the application's.
 */
export function a2aChildLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  const parent = logger as ParentLogger;
  if (typeof parent.isLevelEnabled !== 'function' || hasOptions(options)) return logger.child(bindings, options);
  const standIn = Object.create(prototypeFor(parent)) as RequestLogger;
  standIn[BINDINGS] = bindings;
  standIn[CHILD] = undefined;
  return standIn as unknown as FastifyBaseLogger;
}
