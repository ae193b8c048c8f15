/**
 * Errors on the gRPC binding (A2A 1.0 §10.6): each A2AError as the gRPC status code of the 1.0
 * error table, its message as the status details, and a `google.rpc.Status` in the
 * `grpc-status-details-bin` trailer whose details carry the same `google.rpc.ErrorInfo` (reason,
 * domain `a2a-protocol.org`, metadata) as the JSON-RPC and HTTP+JSON answers, plus a
 * `google.rpc.BadRequest` naming each invalid field.
 *
 * A2A 0.3's gRPC service gets the same, with two codes of its own: 0.3's specification lists its
 * errors by JSON-RPC code (§8) and gives no gRPC status for each, and its clients (@a2a-js/sdk 0.3)
 * read UNIMPLEMENTED as PushNotificationNotSupported and UnsupportedOperation, where 1.0 says
 * FAILED_PRECONDITION.
 */

import { A2AError, type A2AErrorCode, ERROR_TABLE_1_0, errorDetails, type ProtocolVersion } from '@fastify-a2a/core';
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

/** Where A2A 0.3's service answers with another status than 1.0's table (see the file's comment). */
const STATUS_0_3: Partial<Record<A2AErrorCode, GrpcStatus>> = {
  PUSH_NOTIFICATION_NOT_SUPPORTED: GrpcStatus.UNIMPLEMENTED,
  UNSUPPORTED_OPERATION: GrpcStatus.UNIMPLEMENTED,
};

/** The status of a failed call on the service of `version`: the code, the message, and the details trailer. */
export function grpcStatusOf(error: A2AError, version: ProtocolVersion = '1.0'): StatusObject {
  const code =
    (version === '0.3' ? STATUS_0_3[error.code] : undefined) ?? GrpcStatus[ERROR_TABLE_1_0[error.code].status];
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
export function malformedRequest(method: string, protoPackage: string, cause: unknown): A2AError {
  return new A2AError(
    'INVALID_PARAMS',
    `Invalid request: the ${method} request is not a valid ${protoPackage} protobuf message (${(cause as Error).message}).`,
    { cause },
  );
}

/** A2AError for the options of serveGrpc: the fix is in the message. */
export function invalidGrpcOption(message: string): A2AError {
  return new A2AError('INVALID_OPTIONS', `@fastify-a2a/grpc: ${message}`);
}
