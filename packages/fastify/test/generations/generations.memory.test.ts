import { MemoryStore } from '@fastify-a2a/store-memory';
import { generationSuite } from './suite.js';

generationSuite({ name: 'memory', create: () => new MemoryStore() });
