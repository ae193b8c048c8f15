/**
 * Load over gRPC: `concurrency` unary calls kept in flight for `duration` seconds on one HTTP/2
 * connection (as a gRPC client multiplexes them), each a fresh request. The client is gRPC's wire
 * format written by hand on node:http2 (a length-prefixed protobuf message, the status in the
 * trailers), not grpc-js: grpc-js' client costs about a millisecond of CPU per call, which on a
 * shared machine would measure the load generator rather than the server (autocannon, for the
 * HTTP scenarios, costs a small fraction of that). The result has the shape of an autocannon run, so
 * the report shows it beside the HTTP ones.
 */

import { connect } from 'node:http2';
import { encodeFromJson, protoRoot, SERVICE_NAME } from '@fastify-a2a/grpc';
import type { HttpLoadResult } from './load.js';

export interface GrpcLoad {
  /** `host:port` */
  target: string;
  /** The rpc, e.g. `SendMessage`. */
  method: string;
  /** A fresh request (ProtoJSON) per call. */
  request: () => Record<string, unknown>;
  concurrency: number;
  /** Seconds. */
  duration: number;
  /** Checks the decoded response message (protobufjs object). */
  verify?: (response: Record<string, unknown>) => boolean;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** One gRPC message frame: compressed flag 0, big-endian length, the message. */
function frame(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + message.length);
  out.writeUInt8(0, 0);
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

export async function grpcLoad(load: GrpcLoad): Promise<HttpLoadResult> {
  const method = protoRoot.lookupService(SERVICE_NAME).methods[load.method];
  if (method === undefined) throw new Error(`no rpc ${load.method}`);
  method.resolve();
  const requestType = method.resolvedRequestType;
  const responseType = method.resolvedResponseType;
  if (requestType === null || responseType === null) throw new Error(`rpc ${load.method} did not resolve`);
  const session = connect(`http://${load.target}`);
  session.on('error', () => undefined);
  const headers = {
    ':method': 'POST',
    ':path': `/${SERVICE_NAME}/${load.method}`,
    'content-type': 'application/grpc',
    te: 'trailers',
    'a2a-version': '1.0',
  };
  const latencies: number[] = [];
  const errors = { socket: 0, timeouts: 0, non2xx: 0, badBody: 0 };
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const sent = performance.now();
      const stream = session.request(headers);
      const chunks: Buffer[] = [];
      let status: string | undefined;
      stream.on('response', (h) => {
        status = h['grpc-status'] as string | undefined; // a trailers-only answer (an error)
      });
      stream.on('trailers', (t) => {
        status = t['grpc-status'] as string | undefined;
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', () => {
        errors.socket++;
        resolve();
      });
      stream.on('close', () => {
        if (status !== '0') {
          if (status !== undefined) errors.non2xx++;
          resolve();
          return;
        }
        const body = Buffer.concat(chunks);
        if (load.verify !== undefined) {
          const message = responseType.toObject(responseType.decode(body.subarray(5)), { enums: String });
          if (!load.verify(message)) {
            errors.badBody++;
            resolve();
            return;
          }
        }
        latencies.push(performance.now() - sent);
        resolve();
      });
      stream.end(frame(encodeFromJson(requestType, load.request())));
    });
  const started = performance.now();
  const end = started + load.duration * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) await one();
  };
  try {
    await Promise.all(Array.from({ length: load.concurrency }, worker));
  } finally {
    session.close();
  }
  const durationS = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return {
    reqPerSec: latencies.length / durationS,
    total: latencies.length,
    durationS,
    latencyMs: {
      p50: round(percentile(latencies, 50)),
      p90: round(percentile(latencies, 90)),
      p99: round(percentile(latencies, 99)),
      avg: round(latencies.reduce((sum, ms) => sum + ms, 0) / Math.max(1, latencies.length)),
      max: round(latencies.at(-1) ?? 0),
    },
    errors,
  };
}
