/**
 * A gRPC client of our own, with grpc-js and the package's service definition (ProtoJSON in and
 * out), for what the official client cannot send or does not show: malformed bytes, the status
 * details trailer, deadlines, a cancelled stream.
 */

import {
  type Client,
  type ClientReadableStream,
  credentials,
  Metadata as GrpcMetadata,
  type Metadata,
  makeGenericClientConstructor,
  type ServiceError,
} from '@grpc/grpc-js';
import { a2aServiceDefinition, GRPC_1_0, type GrpcServiceVersion, STATUS_DETAILS_KEY } from '../src/index.js';
import { root } from '../src/proto.js';

type Json = Record<string, unknown>;

export interface RawClient {
  unary(method: string, request: unknown, metadata?: Record<string, string>, deadlineMs?: number): Promise<Json>;
  stream(
    method: string,
    request: unknown,
    metadata?: Record<string, string>,
    deadlineMs?: number,
  ): ClientReadableStream<Json>;
  close(): void;
}

type Caller = (
  request: unknown,
  metadata: Metadata,
  options: { deadline?: number },
  callback?: (error: ServiceError | null, response: Json) => void,
) => unknown;

function metadataOf(entries: Record<string, string>): Metadata {
  const metadata = new GrpcMetadata();
  for (const [key, value] of Object.entries(entries)) metadata.set(key, value);
  return metadata;
}

/**
 * A client of `lf.a2a.v1.A2AService` at `target` (of `a2a.v1.A2AService` with `version: GRPC_0_3`).
 * With `rawRequests`, requests are sent as the given Buffer, unencoded: for malformed bytes.
 */
export function rawClient(
  target: string,
  { rawRequests = false, version = GRPC_1_0 }: { rawRequests?: boolean; version?: GrpcServiceVersion } = {},
): RawClient {
  const definition = a2aServiceDefinition(version);
  if (rawRequests) {
    for (const method of Object.values(definition))
      (method as { requestSerialize: unknown }).requestSerialize = (b: Buffer) => b;
  }
  const Constructor = makeGenericClientConstructor(definition, 'A2AService');
  const client = new Constructor(target, credentials.createInsecure()) as Client & Record<string, Caller>;
  const caller = (method: string): Caller => {
    const call = client[method.charAt(0).toLowerCase() + method.slice(1)];
    if (call === undefined) throw new Error(`no method ${method}`);
    return call.bind(client) as Caller;
  };
  return {
    unary(method, request, metadata = {}, deadlineMs) {
      return new Promise((resolve, reject) => {
        caller(method)(
          request,
          metadataOf(metadata),
          deadlineMs === undefined ? {} : { deadline: Date.now() + deadlineMs },
          (error, response) => (error === null ? resolve(response) : reject(error)),
        );
      });
    },
    stream(method, request, metadata = {}, deadlineMs) {
      return caller(method)(
        request,
        metadataOf(metadata),
        deadlineMs === undefined ? {} : { deadline: Date.now() + deadlineMs },
      ) as ClientReadableStream<Json>;
    },
    close: () => client.close(),
  };
}

/** The call's error, or a failure when it succeeded. */
export async function failureOf(promise: Promise<unknown>): Promise<ServiceError> {
  return promise.then(
    (value) => {
      throw new Error(`expected the call to fail, got ${JSON.stringify(value)}`);
    },
    (error: ServiceError) => error,
  );
}

/** Every item of a stream, and how it ended (its error, or undefined when it ended OK). */
export function collect(
  stream: ClientReadableStream<Json>,
): Promise<{ items: Json[]; error: ServiceError | undefined }> {
  const items: Json[] = [];
  return new Promise((resolve) => {
    stream.on('data', (item: Json) => items.push(item));
    stream.on('error', (error: ServiceError) => resolve({ items, error }));
    stream.on('end', () => setImmediate(() => resolve({ items, error: undefined })));
  });
}

/** The `google.rpc.Status` of the status details trailer, its details decoded by type. */
export function statusDetails(error: ServiceError): { code: number; message: string; details: Json[] } {
  const [bytes] = error.metadata.get(STATUS_DETAILS_KEY);
  if (!Buffer.isBuffer(bytes)) throw new Error(`no ${STATUS_DETAILS_KEY} trailer on ${error.code} ${error.details}`);
  const statusType = root.lookupType('google.rpc.Status');
  const status = statusType.toObject(statusType.decode(bytes), { defaults: false }) as {
    code: number;
    message: string;
    details?: { type_url: string; value: Uint8Array }[];
  };
  return {
    code: status.code,
    message: status.message,
    details: (status.details ?? []).map(({ type_url, value }) => {
      const type = root.lookupType(type_url.replace('type.googleapis.com/', ''));
      return { '@type': type_url, ...(type.toObject(type.decode(value), { defaults: false }) as Json) };
    }),
  };
}
