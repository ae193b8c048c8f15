import { MemoryStore } from '@fastify-a2a/store-memory';
import { sdk0_3GrpcSuite } from './sdk-0.3-client.js';

sdk0_3GrpcSuite({ name: 'memory', create: () => new MemoryStore() });
