export * from './errors.js';
export * from './executor.js';
export * from './jsonrpc.js';
export * from './runtime.js';
export * as schemas from './schemas.js';
export * from './store.js';
export * from './store-url.js';
export * from './task-state.js';
export * from './types.js';
