export { createMemoryStore, MemoryStore, type MemoryStoreOptions } from './memory-store.js';
