export { createMemoryStore, MemoryStore, type MemoryStoreOptions } from './store.js';
