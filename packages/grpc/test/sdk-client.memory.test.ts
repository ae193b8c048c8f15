import { MemoryStore } from '@fastify-a2a/store-memory';
import { sdkGrpcSuite } from './sdk-client.js';

sdkGrpcSuite({ name: 'memory', create: () => new MemoryStore() });
