/** The task runtime's public surface; its parts live in ./runtime/ (see runtime/runtime.ts). */

export type { StreamSignal } from './protocol/context.js';
export type { StreamFrame } from './protocol/operations.js';
export { notificationHeaders, PUSH_DEFAULTS } from './runtime/jobs/push.js';
export { OperatorActions } from './runtime/operator.js';
export type {
  A2ARuntimeOptions,
  Draft11Options,
  InterruptedExpiryOptions,
  PushDestinationOptions,
  PushNotificationEncoder,
  PushOptions,
  RetentionOptions,
  RuntimeLogger,
  StreamOptions,
} from './runtime/options.js';
export { LONG_POLL_DEFAULT_MS, LONG_POLL_MAX_MS } from './runtime/options.js';
export { checkPushOptions, configIdOf } from './runtime/push-configs.js';
export { A2ARuntime } from './runtime/runtime.js';
export type { DrainSummary } from './runtime/scheduler.js';
