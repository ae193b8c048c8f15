/**
 * `@fastify-a2a/core/protocol`: the protocol alone — the model, errors, wire schemas and the
 * codecs of every version in both directions — without the runtime, the store contract or push
 * delivery, so a client (`@fastify-a2a/client`) can depend on it without pulling any of them in.
 * Nothing here may import a runtime value; `test/protocol-entry.test.ts` keeps it that way.
 */

export * from './errors.js';
export * from './json.js';
export type { Logger } from './logger.js';
export * from './model/index.js';
export * from './protocol/index.js';
