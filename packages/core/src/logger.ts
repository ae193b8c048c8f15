/**
 * The logger every layer writes to: dispatch and the bindings (protocol), the runtime and its jobs.
 * It sits below both so that neither imports the other for it, and a caller that uses only the
 * protocol layer (`@fastify-a2a/core/protocol`) never loads the runtime to name it.
 */

/** The subset of a pino / Fastify logger the library uses. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** A logger that drops everything: the default where none is given. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
