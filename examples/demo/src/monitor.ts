/**
 * The demo's monitor: on when A2A_MONITOR_TOKEN is set (the operators' bearer token), at /monitor
 * (the API, the events stream and the live page); off otherwise. See docs/monitor.md.
 */

import { type A2APluginOptions, operatorTokens } from 'fastify-a2a';

export function demoMonitor(env: NodeJS.ProcessEnv): Pick<A2APluginOptions, 'monitor'> {
  // Trimmed as the metrics token is (telemetry.ts): a trailing newline from a secret file would
  // otherwise make a token no Authorization header can carry.
  const token = env.A2A_MONITOR_TOKEN?.trim();
  if (token === undefined || token === '') return {};
  if (token.length < 16) {
    throw new Error(
      'A2A_MONITOR_TOKEN must be at least 16 characters: it opens every caller’s tasks to whoever has it.',
    );
  }
  return { monitor: { authorize: operatorTokens({ [token]: 'operator' }) } };
}

export const monitorSummary = (options: Pick<A2APluginOptions, 'monitor'>): string =>
  options.monitor === undefined ? 'monitor off' : 'monitor at /monitor/';
