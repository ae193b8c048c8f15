import { MemoryStore } from '@fastify-a2a/store-memory';
import { protocolSuite } from '../../../fastify/test/protocol/suite.js';
import { grpcListenerBinding } from './grpc-client.js';

// The protocol suite of packages/fastify, over gRPC (A2A 1.0 only: the gRPC service is 1.0's).
protocolSuite({
  binding: grpcListenerBinding(),
  store: { name: 'memory', create: () => new MemoryStore() },
  version: '1.0',
});
