/**
 * The `monitor` option: an operator's view of the whole cluster (every owner's tasks, every worker
 * of the store), off unless asked for, and never without an operator check of its own: the agent's
 * callers are not operators, so `authenticate` and `authorize` of the agent do not open it.
 */

import type { FastifyRequest } from 'fastify';
import { SecretTable } from '../auth/constant-time.js';

/**
 * Decides whether a request comes from an operator: the operator's name (recorded with every
 * action they take), or `null`/`undefined` to refuse. Refused requests get 401 when they carry no
 * `Authorization` header, 403 otherwise.
 */
export type OperatorCheck = (request: FastifyRequest) => string | null | undefined | Promise<string | null | undefined>;

export interface MonitorOptions {
  /** @default true (giving the option turns the monitor on) */
  enabled?: boolean;
  /** Where the monitor's API and page are served, under the agent's prefix. @default '/monitor' */
  prefix?: string;
  /** The operator check (required): see {@link OperatorCheck} and {@link operatorTokens}. */
  authorize: OperatorCheck;
  /**
   * Live events an operator's connection to `<prefix>/events` may have waiting to be written before it
   * is told to resync and closed (a slow reader never holds memory without limit). @default 1000
   */
  maxBufferedEvents?: number;
}

export interface ResolvedMonitorOptions {
  prefix: string;
  authorize: OperatorCheck;
  maxBufferedEvents: number;
}

/** The option's check, for the plugin's option spec: a message naming what is wrong, or undefined. */
export function checkMonitorOption(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return 'must be { authorize, prefix?, enabled? }';
  }
  const { enabled, prefix, authorize, maxBufferedEvents } = value as Partial<MonitorOptions>;
  if (enabled !== undefined && typeof enabled !== 'boolean') return '.enabled must be true or false';
  if (enabled === false) return undefined;
  if (typeof authorize !== 'function') {
    return '.authorize is required: the monitor shows every caller\'s tasks, so it needs an operator check of its own, e.g. operatorTokens({ "<secret token>": "alice" })';
  }
  if (prefix !== undefined && (typeof prefix !== 'string' || !/^\/[^?#]*[^/?#]$/.test(prefix))) {
    return '.prefix must start with "/" and not end with one (e.g. "/monitor")';
  }
  if (maxBufferedEvents !== undefined && !(Number.isSafeInteger(maxBufferedEvents) && maxBufferedEvents > 0)) {
    return '.maxBufferedEvents must be a positive whole number';
  }
  return undefined;
}

/** The monitor's settings, or undefined when it is off. */
export function resolveMonitorOptions(value: MonitorOptions | undefined): ResolvedMonitorOptions | undefined {
  if (value === undefined || value.enabled === false) return undefined;
  return {
    prefix: value.prefix ?? '/monitor',
    authorize: value.authorize,
    maxBufferedEvents: value.maxBufferedEvents ?? 1000,
  };
}

/**
 * An operator check by bearer token: `Authorization: Bearer <token>` names the operator the
 * token stands for. Tokens are compared in constant time.
 *
 * ```ts
 * monitor: { authorize: operatorTokens({ [process.env.A2A_MONITOR_TOKEN]: 'operator' }) }
 * ```
 */
export function operatorTokens(tokens: Readonly<Record<string, string>>): OperatorCheck {
  const entries = Object.entries(tokens);
  if (entries.length === 0 || entries.some(([token, name]) => token === '' || typeof name !== 'string')) {
    throw new TypeError('operatorTokens() needs at least one token, each a non-empty string mapped to a name');
  }
  const table = new SecretTable(entries);
  return (request) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    return match === null ? undefined : table.find(match[1] as string);
  };
}
