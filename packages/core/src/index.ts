export * from './errors.js';
export * from './store.js';
export * from './task-state.js';
export * from './types.js';
