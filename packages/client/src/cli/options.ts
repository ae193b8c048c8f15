/**
 * The `a2a` command line's surface: every command and option (a2aproject/a2a-cli SPEC.md v0.2
 * §5), their help, and reading them from argv and `A2ACLI_<LONG_FLAG>` environment variables
 * (§5.2): the flag wins, `--stream`, `--help` and `--version` only from the command line.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Binding, Version } from '../card.js';
import { type ConfigFile, configFiles, envName, userConfigDir } from './config.js';
import { UsageError } from './errors.js';
import type { Format } from './render.js';

export type OptionSpec = { type: 'string' | 'boolean'; short?: string; multiple?: boolean };

/** Options of every command (§5.2). */
export const GLOBAL: Record<string, OptionSpec> = {
  'agent-card': { type: 'string', short: 'a' },
  endpoint: { type: 'string', short: 'e' },
  transport: { type: 'string', multiple: true },
  output: { type: 'string', short: 'o' },
  bearer: { type: 'string' },
  'api-key': { type: 'string' },
  'api-key-header': { type: 'string' },
  'svc-param': { type: 'string', multiple: true },
  tenant: { type: 'string' },
  timeout: { type: 'string' },
  'poll-interval': { type: 'string' },
  'a2a-version': { type: 'string' },
  config: { type: 'string' },
  retries: { type: 'string' },
  debug: { type: 'boolean' },
  verbose: { type: 'boolean' },
  insecure: { type: 'boolean' },
  'trust-local-config': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
};

export const PART_FLAGS = new Set(['text', 'text-part', 'file', 'file-part', 'data', 'data-part']);

/** Each command's own options. */
export const COMMANDS: Record<string, { options: Record<string, OptionSpec>; usage: string; summary: string }> = {
  'card get': {
    options: {
      extended: { type: 'boolean' },
      validate: { type: 'boolean' },
      verify: { type: 'boolean' },
      jwks: { type: 'string' },
      'trusted-jku': { type: 'string', multiple: true },
    },
    usage:
      'a2a card get [<agent-card>] [-a <agent-card>] [--extended] [--validate] [--verify --jwks <file|url> | --trusted-jku <url>]',
    summary:
      'Fetch and show the agent card; --validate checks it, --verify checks its signatures, --extended fetches the authenticated extended card.',
  },
  send: {
    options: {
      text: { type: 'string', multiple: true },
      'text-part': { type: 'string', multiple: true },
      file: { type: 'string', multiple: true },
      'file-part': { type: 'string', multiple: true },
      data: { type: 'string', multiple: true },
      'data-part': { type: 'string', multiple: true },
      'media-type': { type: 'string', multiple: true },
      stream: { type: 'boolean' },
      async: { type: 'boolean' },
      'return-immediately': { type: 'boolean' },
      'no-wait': { type: 'boolean' },
      wait: { type: 'boolean' },
      'max-wait': { type: 'string' },
      'task-id': { type: 'string' },
      'context-id': { type: 'string' },
      'message-id': { type: 'string' },
      history: { type: 'string' },
      metadata: { type: 'string' },
      'verify-card': { type: 'boolean' },
      jwks: { type: 'string' },
      'trusted-jku': { type: 'string', multiple: true },
      'if-generation': { type: 'string' },
    },
    usage:
      'a2a send -a <agent-card> [<text>] [--text <s>] [--file <path|url> [--media-type <t>]] [--data <path|->] [--stream | --async | --max-wait <d>] [--task-id <id> [--if-generation <n>]] [--context-id <id>] [--verify-card --jwks <file|url> | --trusted-jku <url>]',
    summary: 'Send a message; waits for a final or interrupted state unless --async, --stream or --max-wait.',
  },
  'task get': {
    options: { wait: { type: 'boolean' }, watch: { type: 'boolean' }, history: { type: 'string' } },
    usage: 'a2a task get -a <agent-card> <task-id> [--wait] [--history <n>]',
    summary:
      'Show a task; --wait polls until it is final or interrupted (long-polls where the agent declares task generations).',
  },
  'task cancel': {
    options: {},
    usage: 'a2a task cancel -a <agent-card> <task-id>',
    summary: 'Cancel a task and show its resulting state.',
  },
  'task list': {
    options: {
      'context-id': { type: 'string' },
      status: { type: 'string' },
      'page-size': { type: 'string' },
      'page-token': { type: 'string' },
      history: { type: 'string' },
      all: { type: 'boolean' },
    },
    usage:
      'a2a task list -a <agent-card> [--context-id <id>] [--status <state>] [--page-size <n>] [--page-token <t> | --all]',
    summary: 'List tasks, one page (or --all pages).',
  },
  'task subscribe': {
    options: { stream: { type: 'boolean' }, 'last-event-id': { type: 'string' } },
    usage: 'a2a task subscribe -a <agent-card> <task-id> [--stream]',
    summary: "Follow a task's events until it is final or interrupted (resumes after a drop).",
  },
  'task download': {
    options: { dir: { type: 'string' }, force: { type: 'boolean' } },
    usage: 'a2a task download -a <agent-card> <task-id> [--dir <directory>] [--force]',
    summary: "Save a task's artifacts as files (file parts as themselves, text as .txt, data as .json).",
  },
  'task push-config create': {
    options: { url: { type: 'string' }, token: { type: 'string' }, id: { type: 'string' } },
    usage: 'a2a task push-config create -a <agent-card> <task-id> --url <webhook> [--token <t>] [--id <config-id>]',
    summary: 'Register a push notification webhook for a task.',
  },
  'task push-config get': {
    options: {},
    usage: 'a2a task push-config get -a <agent-card> <task-id> [<config-id>]',
    summary: "Show one of a task's push notification configs.",
  },
  'task push-config list': {
    options: {},
    usage: 'a2a task push-config list -a <agent-card> <task-id>',
    summary: "List a task's push notification configs.",
  },
  'task push-config delete': {
    options: {},
    usage: 'a2a task push-config delete -a <agent-card> <task-id> <config-id>',
    summary: "Delete one of a task's push notification configs.",
  },
  'config show': {
    options: {},
    usage: 'a2a config show [--config <path>]',
    summary: 'Show each effective setting and where it came from (flag, environment, file, default); secrets masked.',
  },
  'auth login': {
    options: {
      'client-id': { type: 'string' },
      'client-secret': { type: 'string' },
      scope: { type: 'string' },
      flow: { type: 'string' },
    },
    usage:
      'a2a auth login -a <agent-card> (--client-id <id> [--client-secret <s>] [--flow client-credentials|device-code] [--scope <s>] | --bearer <token> | --api-key <key>)',
    summary:
      "Get an OAuth token (client credentials or device code, from the card's oauth2 scheme), or take a token or API key, and store it for that agent (mode 0600).",
  },
  'auth logout': {
    options: {},
    usage: 'a2a auth logout -a <agent-card>',
    summary: 'Remove the credential stored for one agent.',
  },
  'auth status': {
    options: {},
    usage: 'a2a auth status',
    summary: 'List the agents with a stored credential (the credential masked).',
  },
  conformance: {
    options: {},
    usage: 'a2a conformance -a <agent-card> [<text to send>]',
    summary:
      'Smoke-check a live agent: send, get, list, cancel, stream and errors on each binding; pass/fail per check.',
  },
  completion: {
    options: {},
    usage: 'a2a completion bash|zsh|fish',
    summary: 'Print a shell completion script (e.g. `source <(a2a completion bash)`).',
  },
};

/** What is never read from the environment or a file (§5.2, §9.3). */
const FLAG_ONLY = new Set(['stream', 'help', 'version']);

/**
 * What the working directory's `.env` may set unless the user trusts it: how output looks, how
 * long to wait, which binding and version, and a credential given as itself. Not the agent
 * (`A2ACLI_AGENT_CARD`, `A2ACLI_ENDPOINT`: the credentials would go where the file says), not a
 * credential read from a file or a command (`file:`, `exec:`, `exec-shell:`: a file could send
 * the user's files, or run commands as the user), not TLS verification, nor where a download is
 * written or whether it overwrites. A file found in a directory may come from anyone (a cloned
 * repository, an archive, a file an agent sent), so what it may do is listed, not what it may not.
 */
export const LOCAL_FILE_OPTIONS = new Set([
  'output',
  'transport',
  'a2a-version',
  'timeout',
  'poll-interval',
  'retries',
  'debug',
  'verbose',
  'tenant',
  'api-key-header',
  'bearer',
  'api-key',
  'svc-param',
]);

/** `file:`, `exec:` or `exec-shell:`: a value read from elsewhere (headers.ts). */
const SOURCE = /^(file|exec|exec-shell):/;

/** Whether an untrusted local file may set this option to this value. */
function localFileMay(name: string, value: string): boolean {
  if (!LOCAL_FILE_OPTIONS.has(name)) return false;
  if (name === 'svc-param') return !SOURCE.test(/^[^:=\s]+\s*[:=]\s*(.*)$/s.exec(value)?.[1] ?? value);
  return !SOURCE.test(value);
}

/** Where an option's value came from (`a2a config show`). */
export type Source =
  | { kind: 'flag' }
  | { kind: 'environment'; variable: string }
  | { kind: 'file'; path: string; variable: string };

export const version = (): string => {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return manifest.version;
};

const GLOBAL_HELP = `Global options (each also from A2ACLI_<OPTION>, e.g. A2ACLI_AGENT_CARD; the flag wins):
  -a, --agent-card <ref>   The agent: a host, a base URL (well-known card paths tried), a card URL, or a file
  -e, --endpoint <url>     Call this interface URL directly, without reading a card
  --transport <binding>    JSONRPC or HTTP+JSON; repeatable, first preferred (default: the card's order)
  --a2a-version <v>        1.0 (default); 0.3 talks to 0.3 agents (explicit opt-in)
  -o, --output <format>    text (default), json (one document), jsonl (one object per line)
  --bearer <token>         Authorization: Bearer <token> (A2ACLI_BEARER is safer: flags show in ps and history)
  --api-key <key>          API key, in the card's apiKey header (default X-API-Key; --api-key-header to set)
  --svc-param <k:v>        A service parameter sent as a header; repeatable
                           (values here and in --bearer/--api-key may be file:PATH or exec:COMMAND)
  --tenant <id>            Routing identifier for every request (default: the interface's)
  --config <path>          A .env file used in place of the local one (default: ./.env, if it is yours)
  --trust-local-config     Take every setting from ./.env, the agent and file:/exec: credentials too
                           (default: only output, timing, transport and literal credentials)
  --timeout <duration>     Whole-command limit, e.g. 30s, 2m (default: none)
  --poll-interval <d>      Polling interval while waiting (default 2s, backing off)
  --retries <n>            Tries on network errors and 502/503/504 (default 4)
  --debug                  Requests, retries and resumes on stderr (credentials redacted)
  --verbose                Also show metadata, timestamps and descriptions (default: concise)
  --insecure               Skip TLS verification (development only; warns)
  -h, --help               Show help;  -v, --version  Show the version`;

export function help(command?: string): string {
  if (command !== undefined && COMMANDS[command]) {
    const spec = COMMANDS[command];
    const own = Object.keys(spec.options)
      .map((name) => `--${name}`)
      .join(' ');
    return `${spec.summary}\n\nUsage: ${spec.usage}\n\nOptions: ${own || '(none of its own)'}\n\n${GLOBAL_HELP}\n`;
  }
  const list = Object.entries(COMMANDS)
    .map(([name, spec]) => `  ${name.padEnd(24)} ${spec.summary}`)
    .join('\n');
  return `a2a ${version()}: an A2A client (a2a-cli spec 0.2) with retries and resuming streams.\n\nUsage: a2a <command> [arguments] [options]\n\nCommands:\n${list}\n  help [command]           Show help\n\nDefaults: the card's transport order, A2A 1.0, wait for the task, text output, TLS verified.\n\n${GLOBAL_HELP}\n`;
}

/** `30s`, `500ms`, `2m`, `1h`, or a number of seconds, in ms. */
export function parseDuration(value: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (!match) throw new UsageError(`--${flag} "${value}" is not a duration; write e.g. 30s, 500ms or 2m.`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? 's'] as number;
  return Math.round(Number(match[1]) * unit);
}

export function parseInteger(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${flag} "${value}" is not a non-negative integer.`);
  return Number(value);
}

export interface Parsed {
  command: string;
  positionals: string[];
  values: Record<string, string | boolean | string[] | undefined>;
  tokens: { kind: string; name?: string; value?: string | undefined; index: number }[];
  /** Where each option given a value got it. */
  sources: Record<string, Source>;
  /** The configuration files read, highest precedence first. */
  files: ConfigFile[];
  localPath: string | undefined;
  userPath: string;
  /** Problems with those files, for stderr. */
  warnings: string[];
}

export function parse(argv: string[]): Parsed {
  const all: Record<string, OptionSpec> = { ...GLOBAL };
  for (const spec of Object.values(COMMANDS)) Object.assign(all, spec.options);
  let result: ReturnType<typeof parseArgs>;
  try {
    result = parseArgs({ args: argv, options: all as never, allowPositionals: true, strict: true, tokens: true });
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0] as string);
  }
  const positionals = [...result.positionals];
  let command = positionals.shift() ?? '';
  if (command === 'task' || command === 'card' || command === 'config' || command === 'auth') {
    command = `${command} ${positionals.shift() ?? ''}`.trim();
    if (command === 'task push-config') command = `${command} ${positionals.shift() ?? ''}`.trim();
  }
  const values = result.values as Parsed['values'];
  const sources: Record<string, Source> = {};
  for (const name of Object.keys(values)) sources[name] = { kind: 'flag' };
  const spec = COMMANDS[command];
  const explicitConfig = (values.config as string | undefined) ?? (process.env[envName('config')] || undefined);
  if (values.config === undefined && explicitConfig !== undefined) {
    values.config = explicitConfig;
    sources.config = { kind: 'environment', variable: envName('config') };
  }
  // Help and version need no configuration: a broken file must not stop them.
  const wantsConfig = spec !== undefined && values.help !== true && values.version !== true;
  const found = wantsConfig
    ? configFiles(explicitConfig)
    : { files: [], warnings: [], localPath: undefined, userPath: '' };
  if (spec !== undefined) {
    const own = spec.options;
    for (const name of Object.keys(values)) {
      if (!(name in GLOBAL) && !(name in own))
        throw new UsageError(`${command} has no option --${name}.`, `Run \`a2a ${command} --help\`.`);
    }
    // The local file is trusted on the user's word only: a flag, the environment or the user
    // file, never the local file itself.
    const trustFlag = envName('trust-local-config');
    const trustRaw =
      values['trust-local-config'] === true
        ? 'true'
        : process.env[trustFlag] || found.files.find((f) => f.scope === 'user')?.entries.get(trustFlag);
    if (trustRaw !== undefined && /^(1|true|yes)$/i.test(trustRaw)) for (const file of found.files) file.trusted = true;
    const ignored = new Map<string, string[]>();
    for (const name of [...Object.keys(GLOBAL), ...Object.keys(own)]) {
      if (values[name] !== undefined || FLAG_ONLY.has(name) || name === 'config') continue;
      const variable = envName(name);
      let raw = process.env[variable];
      let source: Source = { kind: 'environment', variable };
      if (raw === undefined || raw === '') {
        const file = found.files.find((f) => {
          const value = f.entries.get(variable) ?? '';
          if (value === '' || (name === 'trust-local-config' && f.scope === 'local')) return false;
          if (f.trusted || localFileMay(name, value)) return true;
          ignored.set(f.path, [...(ignored.get(f.path) ?? []), variable]);
          return false;
        });
        if (file === undefined) continue;
        raw = file.entries.get(variable) as string;
        source = { kind: 'file', path: file.path, variable };
      }
      const option = GLOBAL[name] ?? own[name];
      values[name] = option?.type === 'boolean' ? /^(1|true|yes)$/i.test(raw) : option?.multiple ? [raw] : raw;
      sources[name] = source;
    }
    for (const [path, variables] of ignored) {
      found.warnings.push(
        `ignored ${variables.join(', ')} in ${path}: a .env found in the working directory may not choose the agent, read a credential from a file or command, or change TLS or downloads. Pass them as flags, or trust the file with --trust-local-config (or A2ACLI_TRUST_LOCAL_CONFIG=true in ${join(userConfigDir(), '.env')}).`,
      );
    }
  }
  return {
    command,
    positionals,
    values,
    tokens: (result.tokens ?? []) as Parsed['tokens'],
    sources,
    ...found,
  };
}

export const str = (values: Parsed['values'], name: string): string | undefined => values[name] as string | undefined;
export const list = (values: Parsed['values'], name: string): string[] => (values[name] as string[] | undefined) ?? [];

export function outputFormat(values: Parsed['values']): Format {
  const format = str(values, 'output') ?? 'text';
  if (format !== 'text' && format !== 'json' && format !== 'jsonl') {
    throw new UsageError(`-o/--output "${format}" is not text, json or jsonl.`);
  }
  return format;
}

const BINDINGS: Record<string, Binding> = {
  JSONRPC: 'JSONRPC',
  'JSON-RPC': 'JSONRPC',
  'HTTP+JSON': 'HTTP+JSON',
  HTTP_JSON: 'HTTP+JSON',
  REST: 'HTTP+JSON',
};

export function binding(value: string): Binding {
  const found = BINDINGS[value.toUpperCase()];
  if (found === undefined) {
    throw new UsageError(
      `--transport "${value}" is not one this CLI speaks: use JSONRPC or HTTP+JSON (gRPC is not supported).`,
    );
  }
  return found;
}

export function versions(values: Parsed['values']): Version[] {
  const asked = str(values, 'a2a-version');
  if (asked === undefined) return ['1.0'];
  const normal = /^(\d+\.\d+)/.exec(asked)?.[1];
  if (normal === '1.0') return ['1.0'];
  if (normal === '0.3') return ['0.3'];
  throw new UsageError(`--a2a-version "${asked}" is not one this CLI speaks: 1.0, or 0.3 for legacy agents.`);
}

/** `k:v` (or `k=v`) service parameters as headers. */
export function serviceParameters(values: Parsed['values']): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const entry of list(values, 'svc-param')) {
    const match = /^([^:=\s]+)\s*[:=]\s*(.*)$/s.exec(entry);
    if (!match) throw new UsageError(`--svc-param "${entry.split(/[:=]/)[0]}…" is not key:value.`);
    headers[match[1] as string] = match[2] as string;
  }
  return headers;
}
