/**
 * `a2a config show` (read-only: each effective setting and its source, secrets masked, a2a-cli
 * SPEC.md v0.2 §6.4) and `a2a auth login|logout|status` (a token or API key stored per agent in
 * the user's configuration directory, mode 0600, sent on later calls to that agent).
 */

import { type Context, client } from './commands.js';
import {
  agentKey,
  credentialsPath,
  readCredentials,
  SECRET_OPTIONS,
  type StoredCredential,
  writeCredentials,
} from './config.js';
import { UsageError } from './errors.js';
import { oauthLogin } from './oauth.js';
import { GLOBAL, type Parsed, type Source, str } from './options.js';
import { redactUrlPassword } from './redact.js';

/** What applies when nothing sets an option, as `config show` names it. */
const BUILT_IN: Record<string, string> = {
  output: 'text',
  transport: "the card's order",
  'a2a-version': '1.0',
  'poll-interval': '2s',
  retries: '4',
  timeout: 'none',
  'api-key-header': "the card's apiKey scheme, else X-API-Key",
  debug: 'false',
  verbose: 'false',
  insecure: 'false',
  'trust-local-config': 'false',
};

/** Never shown: actions, not settings. */
const NOT_SETTINGS = new Set(['help', 'version']);

/** A credential as `config show` prints it: a file:/exec: source is a location, not the secret. */
function mask(name: string, value: string): string {
  // A URL's password (`-a http://user:pass@host`) is a credential whatever option holds it.
  if (!SECRET_OPTIONS.has(name) || /^(file|exec|exec-shell):/.test(value)) return redactUrlPassword(value);
  if (name === 'svc-param') {
    const key = /^([^:=\s]+)\s*[:=]/.exec(value)?.[1];
    return key === undefined ? '***' : `${key}:***`;
  }
  return '***';
}

function describe(source: Source | undefined): string {
  if (source === undefined) return 'built-in default';
  if (source.kind === 'flag') return 'flag';
  if (source.kind === 'environment') return `environment ${source.variable}`;
  return `file ${source.path} (${source.variable})`;
}

export function configShow(ctx: Context, parsed: Parsed): void {
  const { values, sources } = parsed;
  const names = [
    ...Object.keys(GLOBAL).filter((name) => !NOT_SETTINGS.has(name)),
    // A command's own option set from the environment or a file (say A2ACLI_CONTEXT_ID).
    ...Object.keys(sources).filter((name) => !(name in GLOBAL) && sources[name]?.kind !== 'flag'),
  ];
  const settings: Record<string, { value: string | string[] | null; source: string }> = {};
  for (const name of names) {
    const raw = values[name];
    const value =
      raw === undefined
        ? (BUILT_IN[name] ?? null)
        : Array.isArray(raw)
          ? raw.map((one) => mask(name, one))
          : mask(name, String(raw));
    settings[name] = { value, source: describe(raw === undefined ? undefined : sources[name]) };
  }
  const stored =
    values['agent-card'] === undefined ? undefined : readCredentials()[agentKey(String(values['agent-card']))];
  const credential =
    stored === undefined || values.bearer !== undefined || values['api-key'] !== undefined
      ? undefined
      : {
          kind: stored.bearer !== undefined ? 'bearer' : 'api-key',
          value: '***',
          source: `auth login ${credentialsPath()}`,
        };
  const files = {
    local: parsed.localPath ?? null,
    user: parsed.files.some((f) => f.scope === 'user') ? parsed.userPath : null,
    userExpectedAt: parsed.userPath,
  };
  if (ctx.format !== 'text') {
    ctx.printer.document({ files, settings, storedCredential: credential ?? null });
    return;
  }
  const { printer } = ctx;
  printer.field('Local File', files.local ?? `(none: no .env of yours in ${process.cwd()})`);
  printer.field('User File', files.user ?? `(none: ${files.userExpectedAt} does not exist)`);
  for (const [name, { value, source }] of Object.entries(settings)) {
    const shown = value === null ? '(unset)' : Array.isArray(value) ? value.join(', ') : value;
    printer.field(name, `${shown} [${source}]`);
  }
  if (credential !== undefined) printer.field('stored credential', `${credential.kind} *** [${credential.source}]`);
}

export async function authLogin(ctx: Context): Promise<void> {
  const { values } = ctx;
  const reference = ctx.reference;
  if (reference === undefined) throw new UsageError('auth login needs the agent.', 'Pass -a/--agent-card <url>.');
  const bearer = str(values, 'bearer');
  const apiKey = str(values, 'api-key');
  const clientId = str(values, 'client-id');
  const given = [bearer, apiKey, clientId].filter((v) => v !== undefined).length;
  if (given !== 1) {
    throw new UsageError(
      'auth login stores one credential: give --client-id (OAuth), --bearer <token> or --api-key <key>.',
      'A2ACLI_CLIENT_SECRET / A2ACLI_BEARER / A2ACLI_API_KEY keep secrets out of ps and shell history.',
    );
  }
  const key = agentKey(reference);
  const storedAt = new Date().toISOString();
  let entry: StoredCredential;
  if (clientId !== undefined) {
    ctx.credentialsGiven = true;
    // The card is read without any credential stored for the agent: login replaces it.
    const agent = await client({
      ...ctx,
      values: { ...values, bearer: undefined, 'api-key': undefined, 'client-id': clientId },
    });
    const token = await oauthLogin(ctx, agent.card, {
      flow: str(values, 'flow'),
      clientId,
      clientSecret: str(values, 'client-secret'),
      scope: str(values, 'scope'),
    });
    ctx.redactors.push((text) => text.split(token.accessToken).join('***'));
    entry = {
      bearer: token.accessToken,
      storedAt,
      flow: token.flow,
      ...(token.expiresAt ? { expiresAt: token.expiresAt } : {}),
    };
  } else {
    entry = {
      ...(bearer !== undefined ? { bearer } : { apiKey, apiKeyHeader: str(values, 'api-key-header') }),
      storedAt,
      flow: 'given',
    };
  }
  const agents = readCredentials();
  agents[key] = entry;
  const path = writeCredentials(agents);
  report(ctx, {
    agent: key,
    stored: entry.bearer !== undefined ? 'bearer' : 'api-key',
    flow: entry.flow ?? 'given',
    ...(entry.expiresAt ? { expiresAt: entry.expiresAt } : {}),
    file: path,
  });
}

export function authLogout(ctx: Context): void {
  const reference = ctx.reference;
  if (reference === undefined) throw new UsageError('auth logout needs the agent.', 'Pass -a/--agent-card <url>.');
  const agents = readCredentials();
  const key = agentKey(reference);
  const had = key in agents;
  delete agents[key];
  const path = had ? writeCredentials(agents) : credentialsPath();
  report(ctx, { agent: key, removed: had, file: path });
}

export function authStatus(ctx: Context): void {
  const agents = Object.entries(readCredentials()).map(([agent, stored]) => ({
    agent,
    kind: stored.bearer !== undefined ? 'bearer' : 'api-key',
    flow: stored.flow ?? 'given',
    storedAt: stored.storedAt,
    expiresAt: stored.expiresAt ?? null,
  }));
  if (ctx.format !== 'text') {
    ctx.printer.document({ file: credentialsPath(), agents });
    return;
  }
  ctx.printer.field('File', credentialsPath());
  if (agents.length === 0) ctx.printer.field('Agents', 'none');
  for (const { agent, kind, flow, storedAt, expiresAt } of agents) {
    const expiry = expiresAt === null ? '' : `, expires ${expiresAt}`;
    ctx.printer.field('Agent', `${agent} ${kind} *** (${flow}, stored ${storedAt}${expiry})`);
  }
}

function report(ctx: Context, fields: Record<string, string | boolean>): void {
  if (ctx.format !== 'text') {
    ctx.printer.document(fields);
    return;
  }
  for (const [label, value] of Object.entries(fields)) {
    ctx.printer.field(label.charAt(0).toUpperCase() + label.slice(1), String(value));
  }
}
