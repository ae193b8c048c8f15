/**
 * Errors on the gRPC binding (A2A 1.0 §10.6): each A2AError as the gRPC status code of the 1.0
 * error table, its message as the status details, and a `google.rpc.Status` in the
 * `grpc-status-details-bin` trailer whose details carry the same `google.rpc.ErrorInfo` (reason,
 * domain `a2a-protocol.org`, metadata) as the JSON-RPC and HTTP+JSON answers, plus a
 * `google.rpc.BadRequest` naming each invalid field.
 */

import { A2AError, ERROR_TABLE_1_0, errorDetails } from '@fastify-a2a/core';
import { status as GrpcStatus, Metadata, type StatusObject } from '@grpc/grpc-js';
import { encodeFromJson, root } from './proto.js';

/** The trailer gRPC's rich error model reads (the `google.rpc.Status` of the call, binary). */
export const STATUS_DETAILS_KEY = 'grpc-status-details-bin';

const statusType = root.lookupType('google.rpc.Status');
const detailTypes = new Map(
  ['google.rpc.ErrorInfo', 'google.rpc.BadRequest'].map((name) => [
    `type.googleapis.com/${name}`,
    root.lookupType(name),
  ]),
);

/** The status of a failed call: the code, the message, and the details trailer. */
export function grpcStatusOf(error: A2AError): StatusObject {
  const code = GrpcStatus[ERROR_TABLE_1_0[error.code].status];
  const details = errorDetails(error).flatMap(({ '@type': typeUrl, ...fields }) => {
    const type = detailTypes.get(typeUrl as string);
    return type === undefined ? [] : [{ type_url: typeUrl, value: encodeFromJson(type, fields) }];
  });
  const metadata = new Metadata();
  const encoded = statusType.encode(
    // protobufjs' bundled google.protobuf.Any keeps the proto's field name, `type_url`.
    statusType.fromObject({ code, message: error.message, details }),
  );
  metadata.set(STATUS_DETAILS_KEY, Buffer.from(encoded.finish()));
  return { code, details: error.message, metadata };
}

/** A request whose bytes are not the method's message (A2A 1.0 §10.6: INVALID_ARGUMENT). */
export function malformedRequest(method: string, cause: unknown): A2AError {
  return new A2AError(
    'INVALID_PARAMS',
    `Invalid request: the ${method} request is not a valid lf.a2a.v1 protobuf message (${(cause as Error).message}).`,
    { cause },
  );
}

/** A2AError for the options of serveGrpc: the fix is in the message. */
export function invalidGrpcOption(message: string): A2AError {
  return new A2AError('INVALID_OPTIONS', `@fastify-a2a/grpc: ${message}`);
}
