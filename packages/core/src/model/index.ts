export * from './data-part.js';
export * from './task-state.js';
export * from './types.js';
