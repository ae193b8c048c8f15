/**
 * The few things every query of this package derives from the store's location. Identifiers (the
 * schema, the notification channel) go through {@link escapeIdentifier} and nothing else; values
 * are always `$n` parameters.
 */

import { createHash } from 'node:crypto';
import pg from 'pg';

/** Quotes an identifier for SQL text (`my"schema` → `"my""schema"`). The one place we do it. */
export const escapeIdentifier: (identifier: string) => string = pg.escapeIdentifier;

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * The `pg_advisory_xact_lock` key that serialises migrations of `schema`: the same for every
 * process, different per schema. A signed 64-bit integer, as a string for a `$1::bigint` parameter.
 */
export function migrationLockKey(schema: string): string {
  return digest(`fastify-a2a/store-postgres:migrate:${schema}`).readBigInt64BE(0).toString();
}

/**
 * The `pg_advisory_xact_lock` key that serialises enqueueTurn() on one context, so positions follow
 * commit order. The same for every process; different per schema, namespace and context (a
 * collision between two contexts only makes them wait for each other, never breaks the order).
 */
export function turnLockKey(schema: string, namespace: string, contextId: string): string {
  return digest(`fastify-a2a/store-postgres:turns:${schema}\u0000${namespace}\u0000${contextId}`)
    .readBigInt64BE(0)
    .toString();
}

/**
 * The LISTEN/NOTIFY channel of one namespace in one schema. Hashed so that any schema and namespace
 * fit Postgres' 63-byte identifier limit; lower-case hex so quoting never changes it.
 */
export function notificationChannel(schema: string, namespace: string): string {
  return `a2a_${digest(`${schema}\u0000${namespace}`).toString('hex').slice(0, 32)}`;
}
