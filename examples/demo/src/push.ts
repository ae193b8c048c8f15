/**
 * The demo's push notifications, from the environment. They are on for the echo agent; the allow-lists let
 * webhooks reach trusted internal receivers, which the SSRF guard refuses otherwise:
 * - `A2A_PUSH_ALLOWED_HOSTS="hooks.internal,127.0.0.1:9000"`: host names (or IP literals), with an
 *   optional port;
 * - `A2A_PUSH_ALLOWED_CIDRS="10.1.0.0/16,fd00:1::/64"`: address blocks;
 * - `A2A_PUSH_THROTTLE_MS`: the throttle of non-final updates (default 1500).
 * Comma-separated, like protoAgent's `PUSH_NOTIFICATION_ALLOWED_*`.
 */

import type { A2APluginOptions } from 'fastify-a2a';

type PushSettings = Pick<
  A2APluginOptions,
  'pushNotifications' | 'pushAllowedHosts' | 'pushAllowedCidrs' | 'pushThrottleMs'
>;

const list = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');

/**
 * The plugin's push options from `env`.
 * @throws {Error} for an A2A_PUSH_THROTTLE_MS that is not a number of milliseconds.
 */
export function demoPush(env: NodeJS.ProcessEnv): PushSettings {
  const settings: PushSettings = { pushNotifications: true };
  const hosts = list(env.A2A_PUSH_ALLOWED_HOSTS);
  const cidrs = list(env.A2A_PUSH_ALLOWED_CIDRS);
  if (hosts.length > 0) settings.pushAllowedHosts = hosts;
  if (cidrs.length > 0) settings.pushAllowedCidrs = cidrs;
  if (env.A2A_PUSH_THROTTLE_MS !== undefined && env.A2A_PUSH_THROTTLE_MS !== '') {
    const ms = Number(env.A2A_PUSH_THROTTLE_MS);
    if (!Number.isFinite(ms) || ms < 0) {
      throw new Error(`A2A_PUSH_THROTTLE_MS must be a number of milliseconds; got "${env.A2A_PUSH_THROTTLE_MS}".`);
    }
    settings.pushThrottleMs = ms;
  }
  return settings;
}

/** One line for the start-up log. */
export function pushSummary(settings: PushSettings): string {
  if (!settings.pushNotifications) return 'push notifications off';
  const allowed = [...(settings.pushAllowedHosts ?? []), ...(settings.pushAllowedCidrs ?? [])];
  return allowed.length === 0 ? 'push: public receivers only' : `push: also ${allowed.join(', ')}`;
}
