import { MemoryStore } from '@fastify-a2a/store-memory';
import { protocolSuite, type StoreFixture } from './suite.js';

const store: StoreFixture = { name: 'memory', create: () => new MemoryStore() };

for (const version of ['0.3', '1.0'] as const) {
  protocolSuite({ binding: 'JSONRPC', store, version });
  protocolSuite({ binding: 'HTTP+JSON', store, version });
}
