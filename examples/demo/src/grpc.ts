/**
 * The demo's gRPC binding: with A2A_GRPC_PORT set, A2A 1.0 (`lf.a2a.v1.A2AService`) and A2A 0.3
 * (`a2a.v1.A2AService`) over gRPC on one port, 127.0.0.1:<port>, beside HTTP (@fastify-a2a/grpc);
 * listed in the card's supportedInterfaces (both versions) and, for 0.3 clients, its
 * additionalInterfaces; closed with the app.
 */

import { serveGrpc } from '@fastify-a2a/grpc';
import type { FastifyInstance } from 'fastify';

/** Starts gRPC when A2A_GRPC_PORT asks for it; returns the part of the "ready" line that says so. */
export async function demoGrpc(app: FastifyInstance, env: NodeJS.ProcessEnv): Promise<string> {
  const value = env.A2A_GRPC_PORT?.trim();
  if (value === undefined || value === '') return '';
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`A2A_GRPC_PORT must be a port number from 1 to 65535; got "${value}".`);
  }
  const grpc = await serveGrpc(app, { port, host: '127.0.0.1' });
  return `; gRPC on ${grpc.url}`;
}
