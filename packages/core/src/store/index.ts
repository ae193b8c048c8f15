/**
 * The store kit: the contract every adapter implements, what it declares it supports, and the
 * helpers every adapter shares (so that a new store writes its queries, not its logic again).
 */

export * from './call-context.js';
export * from './capabilities.js';
export * from './clock.js';
export * from './contract.js';
export * from './coordination.js';
export * from './kit.js';
export * from './message-digest.js';
export * from './owner.js';
export * from './push.js';
export * from './recent-events.js';
export * from './request-checks.js';
export * from './sql-rows.js';
export * from './subscribers.js';
