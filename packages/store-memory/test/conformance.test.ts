import { storeConformance } from '@fastify-a2a/core/testing';
import { describe, it } from 'vitest';
import { MemoryStore } from '../src/index.js';

storeConformance({ test: it, describe, factory: ({ clock }) => new MemoryStore({ clock }) });
