/**
 * Microtasks for the per-chunk paths (issue 30). Node's `queueMicrotask` makes an AsyncResource and
 * a bound function for every call, so that the callback runs in the caller's async context; a
 * streamed chunk took three (the turn's pump, the store's notification, the follower's wake). A
 * reaction to a settled promise runs at the same point, in the same context, without them.
 */

const SETTLED = Promise.resolve();

/**
 * Runs `callback` in a microtask, as `queueMicrotask` would. It must not throw: a throw becomes an
 * unhandled rejection (from `queueMicrotask`, an uncaught exception; the process ends either way).
 */
export function runInMicrotask(callback: () => void): void {
  void SETTLED.then(callback);
}
