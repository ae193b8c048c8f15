/**
 * Every error the client raises: one class, a `kind` saying which layer failed, and for an error
 * the agent answered with, the A2A error by name (`TaskNotFoundError`, §3.3.2 of 1.0) beside our
 * code for it. Messages say what to do, and never carry a credential (see `redact` in headers.ts).
 */

import { type A2AErrorCode, ERROR_TABLE } from '@fastify-a2a/core/protocol';

const BRAND = Symbol.for('fastify-a2a.client-error');

export type ClientErrorKind =
  /** DNS, connection refused or reset, TLS: nothing answered (after the retries). */
  | 'unreachable'
  /** The whole call's timeout, or a request's, expired. */
  | 'timeout'
  /** The caller's AbortSignal fired. */
  | 'aborted'
  /** 401/403, or a credential source that could not be read. */
  | 'auth'
  /** No agent card at the reference given. */
  | 'card-not-found'
  /** A card was read but is not an A2A agent card. */
  | 'card-invalid'
  /** The card's signatures did not verify with a trusted key (`verifyCard`, 1.0 §8.4.3). */
  | 'card-unverified'
  /** The card names no interface this client speaks (or none the caller allowed). */
  | 'no-interface'
  /** The agent answered with something that is not the protocol: HTML, a bad event, an oversized one. */
  | 'invalid-response'
  /** The agent answered with an A2A error (see `a2aCode`, `a2aName`). */
  | 'protocol'
  /** The caller's input was wrong (a bad option, a part that cannot be read). */
  | 'usage';

export interface ClientErrorOptions {
  cause?: unknown;
  /** Our code for the A2A error the agent answered with. */
  a2aCode?: A2AErrorCode | undefined;
  /** What the agent sent as its error code (JSON-RPC number, google.rpc status name, HTTP status). */
  wireCode?: number | string | undefined;
  /** The HTTP status of the answer, when there was one. */
  status?: number | undefined;
  /** The error's `data` / details as the agent sent them. */
  data?: unknown;
}

export class A2AClientError extends Error {
  override readonly name = 'A2AClientError';
  readonly kind: ClientErrorKind;
  readonly a2aCode: A2AErrorCode | undefined;
  readonly wireCode: number | string | undefined;
  readonly status: number | undefined;
  readonly data: unknown;

  constructor(kind: ClientErrorKind, message: string, options: ClientErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.a2aCode = options.a2aCode;
    this.wireCode = options.wireCode;
    this.status = options.status;
    this.data = options.data;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** The A2A error's name in the specification (`TaskNotFoundError`), for a protocol error. */
  get a2aName(): string | undefined {
    return this.a2aCode === undefined ? undefined : ERROR_TABLE[this.a2aCode].type;
  }

  /** True for this class from any copy of the package (branded with `Symbol.for`). */
  static is(value: unknown): value is A2AClientError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}

const BY_JSON_RPC = new Map<number, A2AErrorCode>();
for (const [code, mapping] of Object.entries(ERROR_TABLE) as [A2AErrorCode, (typeof ERROR_TABLE)[A2AErrorCode]][]) {
  // The first code of each JSON-RPC number is its canonical one (the table lists those first).
  if (!BY_JSON_RPC.has(mapping.jsonRpc)) BY_JSON_RPC.set(mapping.jsonRpc, code);
}

/** Our code for a JSON-RPC error code (0.3 §8, 1.0 §9.5), or undefined for one A2A does not define. */
export function codeForJsonRpc(code: unknown): A2AErrorCode | undefined {
  return typeof code === 'number' ? BY_JSON_RPC.get(code) : undefined;
}

/** Our code for a 1.0 `ErrorInfo.reason` (§10.6: the error's name in UPPER_SNAKE_CASE). */
export function codeForReason(reason: unknown): A2AErrorCode | undefined {
  if (typeof reason !== 'string') return undefined;
  if (reason === 'EXTENDED_AGENT_CARD_NOT_CONFIGURED') return 'EXTENDED_CARD_NOT_CONFIGURED';
  if (reason === 'JSON_PARSE') return 'PARSE_ERROR';
  return Object.hasOwn(ERROR_TABLE, reason) ? (reason as A2AErrorCode) : undefined;
}
