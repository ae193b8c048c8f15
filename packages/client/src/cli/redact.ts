/**
 * Secrets the CLI never prints, wherever the text goes (stdout, stderr, `--debug`, errors,
 * `config show`): the password in a URL's userinfo (`http://user:pass@host`), and the members of
 * a protocol body that carry a credential — a push config's `token` and its
 * `authentication.credentials` (A2A §4.3.1, `PushNotificationConfig`), and OAuth's secrets and
 * tokens (RFC 6749 §4.4, §5.1). The credential values the CLI itself sends are redacted by value
 * elsewhere (main.ts, headers.ts); these are the ones it cannot know beforehand.
 */

import type { TaskPushNotificationConfig } from '@fastify-a2a/core/protocol';

/** JSON members whose string value is a secret, in either spelling the bindings use. */
const SECRET_MEMBERS = [
  'token',
  'credentials',
  'password',
  'client_secret',
  'clientSecret',
  'access_token',
  'accessToken',
  'refresh_token',
  'refreshToken',
  'id_token',
];

const MEMBER = new RegExp(`("(?:${SECRET_MEMBERS.join('|')})"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, 'g');

/** `scheme://user:password@` → `scheme://user:***@`. */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@:]*):([^\s/?#@]*)@/gi;

export const redactUrlPassword = (text: string): string => text.replace(USERINFO, '$1$2:***@');

/** Secret JSON members and URL passwords in any text (a debug line, an error message). */
export const redactSecrets = (text: string): string => redactUrlPassword(text.replace(MEMBER, '$1"***"'));

/** A push config as printed: its token and authentication credentials masked. */
export function maskPushConfig(config: TaskPushNotificationConfig): TaskPushNotificationConfig {
  const inner = { ...config.pushNotificationConfig };
  if (inner.token !== undefined) inner.token = '***';
  if (inner.authentication?.credentials !== undefined)
    inner.authentication = { ...inner.authentication, credentials: '***' };
  return { ...config, pushNotificationConfig: inner };
}
