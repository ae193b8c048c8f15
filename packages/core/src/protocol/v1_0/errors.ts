/**
 * A2A 1.0 errors (§3.3.2, §5.4, §9.5, §11.6): each error code's `google.rpc.Code` and HTTP status,
 * and the `google.rpc.ErrorInfo` that carries its reason, on both bindings.
 */

import { type A2AError, type A2AErrorCode, ERROR_TABLE } from '../../errors.js';
import { isJsonObject } from '../../json.js';

type GrpcStatus =
  | 'INVALID_ARGUMENT'
  | 'NOT_FOUND'
  | 'FAILED_PRECONDITION'
  | 'ABORTED'
  | 'INTERNAL'
  | 'UNAVAILABLE'
  | 'UNAUTHENTICATED'
  | 'PERMISSION_DENIED'
  | 'UNIMPLEMENTED';

interface Mapping1_0 {
  /** The `google.rpc.Code` name (§5.4). */
  readonly status: GrpcStatus;
  readonly http: number;
  /** `ErrorInfo.reason`: the error's name in UPPER_SNAKE_CASE without "Error" (§10.6). */
  readonly reason: string;
}

const M = (status: GrpcStatus, http: number, reason: string): Mapping1_0 => ({ status, http, reason });

/** §5.4 (as amended in 1.0.1): the A2A errors are FAILED_PRECONDITION (400) unless named otherwise. */
export const ERROR_TABLE_1_0: Readonly<Record<A2AErrorCode, Mapping1_0>> = {
  PARSE_ERROR: M('INVALID_ARGUMENT', 400, 'JSON_PARSE'),
  INVALID_REQUEST: M('INVALID_ARGUMENT', 400, 'INVALID_REQUEST'),
  METHOD_NOT_FOUND: M('NOT_FOUND', 404, 'METHOD_NOT_FOUND'),
  INVALID_PARAMS: M('INVALID_ARGUMENT', 400, 'INVALID_PARAMS'),
  INTERNAL: M('INTERNAL', 500, 'INTERNAL'),
  TASK_NOT_FOUND: M('NOT_FOUND', 404, 'TASK_NOT_FOUND'),
  TASK_NOT_CANCELABLE: M('FAILED_PRECONDITION', 400, 'TASK_NOT_CANCELABLE'),
  PUSH_NOTIFICATION_NOT_SUPPORTED: M('FAILED_PRECONDITION', 400, 'PUSH_NOTIFICATION_NOT_SUPPORTED'),
  UNSUPPORTED_OPERATION: M('FAILED_PRECONDITION', 400, 'UNSUPPORTED_OPERATION'),
  // 1.0 §11.6: HTTP 415 on HTTP+JSON.
  CONTENT_TYPE_NOT_SUPPORTED: M('INVALID_ARGUMENT', 415, 'CONTENT_TYPE_NOT_SUPPORTED'),
  INVALID_AGENT_RESPONSE: M('INTERNAL', 500, 'INVALID_AGENT_RESPONSE'),
  EXTENDED_CARD_NOT_CONFIGURED: M('FAILED_PRECONDITION', 400, 'EXTENDED_AGENT_CARD_NOT_CONFIGURED'),
  EXTENSION_SUPPORT_REQUIRED: M('FAILED_PRECONDITION', 400, 'EXTENSION_SUPPORT_REQUIRED'),
  VERSION_NOT_SUPPORTED: M('FAILED_PRECONDITION', 400, 'VERSION_NOT_SUPPORTED'),
  VERSION_CONFLICT: M('INTERNAL', 500, 'INTERNAL'),
  DUPLICATE_MESSAGE: M('INVALID_ARGUMENT', 400, 'INVALID_PARAMS'),
  INVALID_TRANSITION: M('INTERNAL', 500, 'INTERNAL'),
  STORE_UNAVAILABLE: M('UNAVAILABLE', 503, 'UNAVAILABLE'),
  INVALID_OPTIONS: M('INTERNAL', 500, 'INTERNAL'),
  UNAVAILABLE: M('UNAVAILABLE', 503, 'UNAVAILABLE'),
  UNAUTHENTICATED: M('UNAUTHENTICATED', 401, 'UNAUTHENTICATED'),
  PERMISSION_DENIED: M('PERMISSION_DENIED', 403, 'PERMISSION_DENIED'),
  PUSH_URL_REFUSED: M('INVALID_ARGUMENT', 400, 'INVALID_PARAMS'),
  PUSH_DELIVERY_FAILED: M('INTERNAL', 500, 'INTERNAL'),
  // A2A 1.1 draft §3.2.7: a conditional write that lost (gRPC ABORTED, HTTP 409).
  TASK_GENERATION_MISMATCH: M('ABORTED', 409, 'TASK_GENERATION_MISMATCH'),
};

export const ERROR_DOMAIN = 'a2a-protocol.org';

/**
 * `error.data` / `details`: ProtoJSON `Any` entries. Every error carries an `ErrorInfo` (its
 * metadata is a map of strings, so values are written as strings); invalid params add a
 * `BadRequest` with one field violation per offending field.
 */
export function errorDetails(error: A2AError): Record<string, unknown>[] {
  const metadata: Record<string, string> = {};
  const data = error.data;
  if (isJsonObject(data)) {
    for (const [key, value] of Object.entries(data)) {
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
        metadata[key] = String(value);
      }
    }
  }
  const details: Record<string, unknown>[] = [
    {
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: ERROR_TABLE_1_0[error.code].reason,
      domain: ERROR_DOMAIN,
      ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    },
  ];
  const problems = (data as { errors?: unknown } | undefined)?.errors;
  if (Array.isArray(problems) && problems.length > 0) {
    details.push({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: problems.map((p: { path?: unknown; problem?: unknown }) => ({
        field: String(p.path ?? ''),
        description: String(p.problem ?? ''),
      })),
    });
  }
  return details;
}

/** §9.5: the JSON-RPC `error` member: the A2A code, the message, `data` as ProtoJSON `Any` entries. */
export function jsonRpcError1_0(error: A2AError): { code: number; message: string; data: unknown[] } {
  return { code: ERROR_TABLE[error.code].jsonRpc, message: error.message, data: errorDetails(error) };
}

/** §11.6: the HTTP+JSON answer: the status, and `{ error: google.rpc.Status }` in its AIP-193 JSON form. */
export function restError1_0(error: A2AError): { status: number; body: unknown } {
  const { http, status } = ERROR_TABLE_1_0[error.code];
  return {
    status: http,
    body: { error: { code: http, status, message: error.message, details: errorDetails(error) } },
  };
}
