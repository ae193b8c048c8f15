/**
 * `a2a`: the command line of a2aproject/a2a-cli `specification/SPEC.md` v0.2 (see
 * docs/compliance.md for what is covered), on this package's client — so a send is retried with
 * its messageId, and a stream resumes after a drop by itself.
 *
 * Options come from the command line, else from `A2ACLI_<LONG_FLAG>` environment variables
 * (§5.2), else the built-in defaults; `--stream`, `--help` and `--version` only from the command
 * line. Output is `text` (labelled fields), `json` (one document) or JSON Lines (`--stream`, or
 * `-o jsonl`); errors are the spec's envelope, and the exit status says whether the CLI did its
 * job, never how the task ended (§4.6).
 */

import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parseArgs } from 'node:util';
import {
  dataPart,
  isFinalState,
  type ListTasksParams,
  type ListTasksResult,
  type Message,
  type Part,
  STATE_FROM_WIRE_1_0,
  type Task,
  type TaskState,
} from '@fastify-a2a/core/protocol';
import { type AgentEndpoint, type Binding, checkCard, endpointsOf, type Version } from '../card.js';
import { type A2AClient, type ConnectOptions, connect, connectEndpoint, endsStream } from '../client.js';
import { A2AClientError } from '../errors.js';
import { classify, UsageError } from './errors.js';
import { type Format, json, Printer, stateName } from './render.js';

type OptionSpec = { type: 'string' | 'boolean'; short?: string; multiple?: boolean };

/** Options of every command (§5.2). */
const GLOBAL: Record<string, OptionSpec> = {
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
  retries: { type: 'string' },
  debug: { type: 'boolean' },
  verbose: { type: 'boolean' },
  insecure: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
};

const PART_FLAGS = new Set(['text', 'text-part', 'file', 'file-part', 'data', 'data-part']);

/** Each command's own options. */
const COMMANDS: Record<string, { options: Record<string, OptionSpec>; usage: string; summary: string }> = {
  'card get': {
    options: { extended: { type: 'boolean' }, validate: { type: 'boolean' } },
    usage: 'a2a card get [<agent-card>] [-a <agent-card>] [--extended] [--validate]',
    summary: 'Fetch and show the agent card; --validate checks it, --extended fetches the authenticated extended card.',
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
    },
    usage:
      'a2a send -a <agent-card> [<text>] [--text <s>] [--file <path|url> [--media-type <t>]] [--data <path|->] [--stream | --async | --max-wait <d>] [--task-id <id>] [--context-id <id>]',
    summary: 'Send a message; waits for a final or interrupted state unless --async, --stream or --max-wait.',
  },
  'task get': {
    options: { wait: { type: 'boolean' }, watch: { type: 'boolean' }, history: { type: 'string' } },
    usage: 'a2a task get -a <agent-card> <task-id> [--wait] [--history <n>]',
    summary: 'Show a task; --wait polls until it is final or interrupted.',
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
};

/** What is never read from the environment (§5.2, §9.3). */
const FLAG_ONLY = new Set(['stream', 'help', 'version']);

const envName = (flag: string) => `A2ACLI_${flag.replace(/-/g, '_').toUpperCase()}`;

const version = (): string => {
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
  --timeout <duration>     Whole-command limit, e.g. 30s, 2m (default: none)
  --poll-interval <d>      Polling interval while waiting (default 2s, backing off)
  --retries <n>            Tries on network errors and 502/503/504 (default 4)
  --debug                  Requests, retries and resumes on stderr (credentials redacted)
  --verbose                Also show metadata, timestamps and descriptions (default: concise)
  --insecure               Skip TLS verification (development only; warns)
  -h, --help               Show help;  -v, --version  Show the version`;

function help(command?: string): string {
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

function parseInteger(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${flag} "${value}" is not a non-negative integer.`);
  return Number(value);
}

interface Parsed {
  command: string;
  positionals: string[];
  values: Record<string, string | boolean | string[] | undefined>;
  tokens: { kind: string; name?: string; value?: string | undefined; index: number }[];
}

function parse(argv: string[]): Parsed {
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
  if (command === 'task' || command === 'card') {
    command = `${command} ${positionals.shift() ?? ''}`.trim();
    if (command === 'task push-config') command = `${command} ${positionals.shift() ?? ''}`.trim();
  }
  const values = result.values as Parsed['values'];
  const spec = COMMANDS[command];
  if (spec !== undefined) {
    const own = spec.options;
    for (const name of Object.keys(values)) {
      if (!(name in GLOBAL) && !(name in own))
        throw new UsageError(`${command} has no option --${name}.`, `Run \`a2a ${command} --help\`.`);
    }
    for (const name of [...Object.keys(GLOBAL), ...Object.keys(own)]) {
      if (values[name] !== undefined || FLAG_ONLY.has(name)) continue;
      const fromEnv = process.env[envName(name)];
      if (fromEnv === undefined || fromEnv === '') continue;
      const spec = GLOBAL[name] ?? own[name];
      values[name] = spec?.type === 'boolean' ? /^(1|true|yes)$/i.test(fromEnv) : spec?.multiple ? [fromEnv] : fromEnv;
    }
  }
  return { command, positionals, values, tokens: (result.tokens ?? []) as Parsed['tokens'] };
}

const str = (values: Parsed['values'], name: string): string | undefined => values[name] as string | undefined;
const list = (values: Parsed['values'], name: string): string[] => (values[name] as string[] | undefined) ?? [];

function outputFormat(values: Parsed['values']): Format {
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

function binding(value: string): Binding {
  const found = BINDINGS[value.toUpperCase()];
  if (found === undefined) {
    throw new UsageError(
      `--transport "${value}" is not one this CLI speaks: use JSONRPC or HTTP+JSON (gRPC is not supported).`,
    );
  }
  return found;
}

function versions(values: Parsed['values']): Version[] {
  const asked = str(values, 'a2a-version');
  if (asked === undefined) return ['1.0'];
  const normal = /^(\d+\.\d+)/.exec(asked)?.[1];
  if (normal === '1.0') return ['1.0'];
  if (normal === '0.3') return ['0.3'];
  throw new UsageError(`--a2a-version "${asked}" is not one this CLI speaks: 1.0, or 0.3 for legacy agents.`);
}

/** `k:v` (or `k=v`) service parameters as headers. */
function serviceParameters(values: Parsed['values']): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const entry of list(values, 'svc-param')) {
    const match = /^([^:=\s]+)\s*[:=]\s*(.*)$/s.exec(entry);
    if (!match) throw new UsageError(`--svc-param "${entry.split(/[:=]/)[0]}…" is not key:value.`);
    headers[match[1] as string] = match[2] as string;
  }
  return headers;
}

interface Context {
  values: Parsed['values'];
  printer: Printer;
  format: Format;
  reference: string | undefined;
  timeoutMs: number | undefined;
  pollIntervalMs: number;
  signal: AbortSignal;
  credentialsGiven: boolean;
  stderr: NodeJS.WritableStream;
}

async function client(ctx: Context, options: { reference?: string | undefined } = {}): Promise<A2AClient> {
  const { values } = ctx;
  const transports = list(values, 'transport').map(binding);
  const allowed = versions(values);
  const retries = parseInteger(str(values, 'retries'), 'retries');
  const connectOptions: ConnectOptions = {
    bearer: str(values, 'bearer'),
    apiKey: str(values, 'api-key'),
    apiKeyHeader: str(values, 'api-key-header'),
    headers: serviceParameters(values),
    versions: allowed,
    // §11.1: the card's order unless the caller gave theirs (first offered match wins).
    preferences: transports.length > 0 ? transports.map((b) => ({ binding: b })) : 'card',
    timeoutMs: ctx.timeoutMs,
    retry: retries === undefined ? undefined : { attempts: Math.max(1, retries) },
    debug: values.debug ? (line) => ctx.stderr.write(`[debug] ${line}\n`) : undefined,
  };
  const endpointUrl = str(values, 'endpoint');
  const tenant = str(values, 'tenant');
  let connected: A2AClient;
  if (endpointUrl !== undefined && options.reference === undefined) {
    const endpoint: AgentEndpoint = {
      url: endpointUrl,
      binding: transports[0] ?? 'JSONRPC',
      version: allowed[0] as string,
      tenant,
    };
    connected = connectEndpoint(endpoint, connectOptions);
  } else {
    const reference = options.reference ?? ctx.reference;
    if (reference === undefined) {
      throw new UsageError(
        'No agent given.',
        'Pass -a/--agent-card <url> (or set A2ACLI_AGENT_CARD), or -e/--endpoint <url>.',
      );
    }
    connected = await connect(reference, connectOptions);
    if (tenant !== undefined) connected.endpoint.tenant = tenant;
  }
  return connected;
}

function requireCapability(
  agent: A2AClient,
  capability: 'streaming' | 'pushNotifications' | 'extendedAgentCard',
  what: string,
) {
  // §11.3: check the card before a capability-gated call.
  if (!agent.capabilities[capability]) {
    throw new A2AClientError('protocol', `The agent's card does not declare ${capability}, which ${what} needs.`, {
      a2aCode: capability === 'pushNotifications' ? 'PUSH_NOTIFICATION_NOT_SUPPORTED' : 'UNSUPPORTED_OPERATION',
    });
  }
}

// ---- send ----

const MEDIA_TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.json': 'application/json',
  '.csv': 'text/csv',
  '.html': 'text/html',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.svg': 'image/svg+xml',
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
};

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The message's parts, in the order their flags were given (§8.2); `--media-type` binds to the flag before it. */
async function messageParts(parsed: Parsed): Promise<Part[]> {
  const parts: Part[] = [];
  const text = parsed.positionals.join(' ');
  if (text !== '') parts.push({ kind: 'text', text });
  let last: { flag: string; part: Part } | undefined;
  for (const token of parsed.tokens) {
    if (token.kind !== 'option' || token.name === undefined) continue;
    const value = token.value ?? '';
    if (token.name === 'media-type') {
      if (last === undefined)
        throw new UsageError('--media-type must follow the part flag it describes (--text, --file or --data).');
      if (last.part.kind === 'file') last.part.file.mimeType = value;
      else last.part.metadata = { ...last.part.metadata, mediaType: value };
      continue;
    }
    if (!PART_FLAGS.has(token.name)) continue;
    let part: Part;
    if (token.name.startsWith('text')) part = { kind: 'text', text: value };
    else if (token.name.startsWith('file')) {
      if (/^https?:\/\//i.test(value)) part = { kind: 'file', file: { uri: value } };
      else {
        let bytes: Buffer;
        try {
          bytes = await readFile(value);
        } catch (error) {
          throw new UsageError(`--file ${value}: ${(error as Error).message}`, null);
        }
        const name = value.split(/[\\/]/).pop() as string;
        const mimeType = MEDIA_TYPES[extname(value).toLowerCase()];
        part = { kind: 'file', file: { bytes: bytes.toString('base64'), name, ...(mimeType ? { mimeType } : {}) } };
      }
    } else {
      let source: string;
      try {
        source = value === '-' ? await readStdin() : await readFile(value, 'utf8');
      } catch (error) {
        throw new UsageError(`--data ${value}: ${(error as Error).message}`, null);
      }
      try {
        part = dataPart(JSON.parse(source));
      } catch {
        throw new UsageError(`--data ${value === '-' ? '(stdin)' : value} is not JSON.`, null);
      }
    }
    parts.push(part);
    last = { flag: token.name, part };
  }
  if (parts.length === 0)
    throw new UsageError('Nothing to send: give the text, or --text / --file / --data.', 'a2a send -a <url> "hello"');
  return parts;
}

function reportOutcome(ctx: Context, result: Task | Message, done: boolean): void {
  const reference = ctx.reference ?? str(ctx.values, 'endpoint') ?? '<url>';
  const flag = ctx.reference !== undefined ? '-a' : '-e';
  if (result.kind === 'message') return;
  const state = result.status.state;
  // §6.3: print the command that continues or follows the task.
  if (ctx.format === 'text') {
    if (state === 'input-required' || state === 'auth-required')
      ctx.printer.field('Resume', `a2a send ${flag} ${reference} --task-id ${result.id} "<reply>"`);
    else if (!done) ctx.printer.field('Follow', `a2a task get ${flag} ${reference} --wait ${result.id}`);
  }
  // §9.6: a non-success or paused outcome is named on stderr; the exit status stays 0.
  if (state === 'failed' || state === 'rejected' || state === 'canceled')
    ctx.stderr.write(`Warning: task ${result.id} ended ${stateName(state)}.\n`);
  else if (state === 'input-required' || state === 'auth-required')
    ctx.stderr.write(`Warning: task ${result.id} is waiting: ${stateName(state)}.\n`);
  else if (!done)
    ctx.stderr.write(`Note: task ${result.id} is still ${stateName(state)}; follow it with \`a2a task get --wait\`.\n`);
}

function printResult(ctx: Context, result: Task | Message): void {
  if (ctx.format === 'text') {
    if (result.kind === 'task') ctx.printer.task(result);
    else ctx.printer.message(result);
  } else ctx.printer.document(json.sendResponse(result));
}

async function followStream(
  ctx: Context,
  events: AsyncIterable<{ result: import('@fastify-a2a/core/protocol').StreamResult }>,
) {
  let last: import('@fastify-a2a/core/protocol').StreamResult | undefined;
  let ids: { taskId?: string; contextId?: string; state?: TaskState } = {};
  for await (const { result } of events) {
    last = result;
    if (result.kind === 'task') ids = { taskId: result.id, contextId: result.contextId, state: result.status.state };
    else if (result.kind === 'status-update')
      ids = { taskId: result.taskId, contextId: result.contextId, state: result.status.state };
    else if (result.kind === 'artifact-update') ids = { ...ids, taskId: result.taskId, contextId: result.contextId };
    if (ctx.format === 'text') ctx.printer.streamItem(result);
    else ctx.printer.line(json.streamItem(result));
  }
  if (ctx.format === 'text' && last !== undefined && last.kind !== 'message') {
    // §9.2: the last lines restate the ids and the state.
    ctx.printer.field('Task ID', ids.taskId);
    ctx.printer.field('Context ID', ids.contextId);
    if (ids.state) ctx.printer.field('State', stateName(ids.state));
  }
  return { last, ids };
}

async function send(ctx: Context, parsed: Parsed): Promise<void> {
  const { values } = ctx;
  const parts = await messageParts(parsed);
  let metadata: Record<string, unknown> | undefined;
  const rawMetadata = str(values, 'metadata');
  if (rawMetadata !== undefined) {
    try {
      metadata = JSON.parse(rawMetadata) as Record<string, unknown>;
    } catch {
      throw new UsageError('--metadata is not a JSON object.');
    }
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata))
      throw new UsageError('--metadata is not a JSON object.');
  }
  const asynchronous = values.async === true || values['return-immediately'] === true || values['no-wait'] === true;
  const maxWait = str(values, 'max-wait');
  if ([asynchronous, values.stream === true, maxWait !== undefined].filter(Boolean).length > 1) {
    throw new UsageError('Choose one of --stream, --async and --max-wait.');
  }
  const agent = await client(ctx);
  const input = {
    parts,
    taskId: str(values, 'task-id'),
    contextId: str(values, 'context-id'),
    messageId: str(values, 'message-id'),
    historyLength: parseInteger(str(values, 'history'), 'history'),
    metadata,
  };
  const call = { signal: ctx.signal, timeoutMs: ctx.timeoutMs };
  if (values.stream === true) {
    if (agent.capabilities.streaming) {
      const { last, ids } = await followStream(ctx, agent.stream(input, call));
      if (last !== undefined && last.kind !== 'message' && ids.taskId !== undefined && ids.state !== undefined) {
        reportOutcome(
          ctx,
          { kind: 'task', id: ids.taskId, contextId: ids.contextId ?? '', status: { state: ids.state } },
          true,
        );
      }
      return;
    }
    // §9.3: no streaming capability: the result as one JSONL line, never a hang.
    ctx.stderr.write('Note: the agent does not stream; sent without --stream.\n');
    const { result, done } = await agent.send(input, call);
    if (ctx.format === 'text') ctx.printer.streamItem(result);
    else ctx.printer.line(json.streamItem(result));
    reportOutcome(ctx, result, done);
    return;
  }
  let sent = asynchronous
    ? await agent.send(input, { ...call, blocking: false })
    : maxWait !== undefined
      ? await agent.send(input, {
          ...call,
          maxWaitMs: parseDuration(maxWait, 'max-wait'),
          pollIntervalMs: ctx.pollIntervalMs,
        })
      : await agent.send(input, call);
  if (!asynchronous && maxWait === undefined && !sent.done && sent.result.kind === 'task') {
    // A server may answer a blocking send early: keep waiting by polling (§7.3).
    if (process.stderr.isTTY) ctx.stderr.write(`Waiting for task ${sent.result.id}…\n`);
    const task = await agent.waitForTask(sent.result.id, { ...call, pollIntervalMs: ctx.pollIntervalMs });
    sent = { ...sent, result: task, done: isFinalState(task.status.state) };
  }
  printResult(ctx, sent.result);
  reportOutcome(ctx, sent.result, sent.done);
}

// ---- task ----

function taskId(parsed: Parsed, what = 'task id'): string {
  const id = parsed.positionals[0];
  if (id === undefined || id === '')
    throw new UsageError(`Give the ${what}.`, `Usage: ${COMMANDS[parsed.command]?.usage}`);
  return id;
}

async function taskGet(ctx: Context, parsed: Parsed): Promise<void> {
  const id = taskId(parsed);
  const agent = await client(ctx);
  const historyLength = parseInteger(str(ctx.values, 'history'), 'history');
  const wait = ctx.values.wait === true || ctx.values.watch === true;
  if (wait && process.stderr.isTTY) ctx.stderr.write(`Waiting for task ${id}…\n`);
  const task = wait
    ? await agent.waitForTask(id, {
        historyLength,
        signal: ctx.signal,
        timeoutMs: ctx.timeoutMs,
        pollIntervalMs: ctx.pollIntervalMs,
      })
    : await agent.getTask(id, { historyLength, signal: ctx.signal, timeoutMs: ctx.timeoutMs });
  if (ctx.format === 'text') ctx.printer.task(task);
  else ctx.printer.document(json.task(task));
  reportOutcome(ctx, task, isFinalState(task.status.state));
}

async function taskCancel(ctx: Context, parsed: Parsed): Promise<void> {
  const id = taskId(parsed);
  const agent = await client(ctx);
  const task = await agent.cancelTask(id, { signal: ctx.signal, timeoutMs: ctx.timeoutMs });
  if (ctx.format === 'text') ctx.printer.task(task);
  else ctx.printer.document(json.task(task));
}

async function taskList(ctx: Context): Promise<void> {
  const { values } = ctx;
  const params: ListTasksParams = {};
  const contextId = str(values, 'context-id');
  if (contextId !== undefined) params.contextId = contextId;
  const status = str(values, 'status');
  if (status !== undefined) {
    const upper = status.toUpperCase().replace(/-/g, '_');
    const state = STATE_FROM_WIRE_1_0[upper.startsWith('TASK_STATE_') ? upper : `TASK_STATE_${upper}`];
    if (state === undefined)
      throw new UsageError(`--status "${status}" is not a task state (e.g. working, TASK_STATE_COMPLETED).`);
    params.status = state;
  }
  const pageSize = parseInteger(str(values, 'page-size'), 'page-size');
  if (pageSize !== undefined) params.pageSize = pageSize;
  const pageToken = str(values, 'page-token');
  if (pageToken !== undefined) params.pageToken = pageToken;
  const historyLength = parseInteger(str(values, 'history'), 'history');
  if (historyLength !== undefined) params.historyLength = historyLength;
  const agent = await client(ctx);
  const call = { signal: ctx.signal, timeoutMs: ctx.timeoutMs };
  let page: ListTasksResult;
  if (values.all === true) {
    const tasks: Task[] = [];
    for await (const task of agent.listTasks(params, call)) {
      if (ctx.format === 'jsonl') ctx.printer.line(json.task(task));
      tasks.push(task);
    }
    page = { tasks, nextPageToken: '', pageSize: tasks.length, totalSize: tasks.length };
    if (ctx.format === 'jsonl') return;
  } else {
    page = await agent.listTasksPage(params, call);
  }
  if (ctx.format === 'json') ctx.printer.document(json.list(page));
  else if (ctx.format === 'jsonl') for (const task of page.tasks) ctx.printer.line(json.task(task));
  else {
    ctx.printer.field('Tasks', page.tasks.length);
    ctx.printer.field('Total', page.totalSize);
    if (page.nextPageToken !== '') ctx.printer.field('Next Page Token', page.nextPageToken);
    for (const task of page.tasks) {
      ctx.printer.field('Task ID', task.id);
      ctx.printer.field('Context ID', task.contextId);
      ctx.printer.field('State', stateName(task.status.state));
    }
  }
}

async function taskSubscribe(ctx: Context, parsed: Parsed): Promise<void> {
  const id = taskId(parsed);
  const agent = await client(ctx);
  requireCapability(agent, 'streaming', 'task subscribe');
  const events = agent.subscribe(id, {
    signal: ctx.signal,
    timeoutMs: ctx.timeoutMs,
    lastEventId: str(ctx.values, 'last-event-id'),
  });
  if (ctx.values.stream === true) {
    await followStream(ctx, events);
    return;
  }
  // Without --stream: follow to the end, then the terminal Task as one document (Appendix B).
  let finalSeen = false;
  for await (const { result } of events) if (endsStream(result)) finalSeen = true;
  const task = await agent.getTask(id, { signal: ctx.signal, timeoutMs: ctx.timeoutMs });
  if (ctx.format === 'text') ctx.printer.task(task);
  else ctx.printer.document(json.task(task));
  reportOutcome(ctx, task, finalSeen || isFinalState(task.status.state));
}

async function pushConfig(ctx: Context, parsed: Parsed, action: string): Promise<void> {
  const id = taskId(parsed);
  const agent = await client(ctx);
  requireCapability(agent, 'pushNotifications', `task push-config ${action}`);
  const call = { signal: ctx.signal, timeoutMs: ctx.timeoutMs };
  const show = (config: import('@fastify-a2a/core/protocol').TaskPushNotificationConfig) =>
    ctx.format === 'text' ? ctx.printer.pushConfig(config) : ctx.printer.document(json.pushConfig(config));
  switch (action) {
    case 'create': {
      const url = str(ctx.values, 'url');
      if (url === undefined) throw new UsageError('task push-config create needs --url <webhook>.');
      const config: { url: string; token?: string; id?: string } = { url };
      const token = str(ctx.values, 'token');
      if (token !== undefined) config.token = token;
      const configId = str(ctx.values, 'id');
      if (configId !== undefined) config.id = configId;
      show(await agent.setPushConfig(id, config, call));
      return;
    }
    case 'get':
      show(await agent.getPushConfig(id, parsed.positionals[1], call));
      return;
    case 'list': {
      const configs = await agent.listPushConfigs(id, call);
      if (ctx.format === 'json') ctx.printer.document(json.pushConfigs(configs));
      else if (ctx.format === 'jsonl') for (const config of configs) ctx.printer.line(json.pushConfig(config));
      else {
        ctx.printer.field('Configs', configs.length);
        for (const config of configs) ctx.printer.pushConfig(config);
      }
      return;
    }
    case 'delete': {
      const configId = parsed.positionals[1];
      if (configId === undefined) throw new UsageError('task push-config delete needs the config id.');
      await agent.deletePushConfig(id, configId, call);
      if (ctx.format === 'text') {
        ctx.printer.field('Task ID', id);
        ctx.printer.field('Deleted Config ID', configId);
      } else ctx.printer.document({});
    }
  }
}

// ---- card ----

async function cardGet(ctx: Context, parsed: Parsed): Promise<void> {
  const reference = parsed.positionals[0] ?? ctx.reference;
  if (reference === undefined) throw new UsageError('Give the agent: a2a card get <url> (or -a <url>).');
  const agent = await client(ctx, { reference });
  let card = agent.card;
  if (ctx.values.extended === true) {
    requireCapability(agent, 'extendedAgentCard', 'card get --extended');
    card = await agent.getExtendedCard({ signal: ctx.signal, timeoutMs: ctx.timeoutMs });
  }
  if (ctx.values.validate === true) {
    checkCard(card, agent.resolvedCard.source);
    if (endpointsOf(card).length === 0) {
      throw new A2AClientError('card-invalid', `${agent.resolvedCard.source} declares no interface.`);
    }
  }
  if (ctx.format !== 'text') {
    ctx.printer.document(card);
    return;
  }
  const p = ctx.printer;
  p.field('Name', card.name as string);
  p.field('Description', card.description as string | undefined);
  p.field('Version', card.version as string | undefined);
  p.field('Card URL', agent.resolvedCard.source);
  for (const e of agent.resolvedCard.endpoints)
    p.field('Interface', `${e.binding} ${e.version} ${e.url}${e.tenant ? ` tenant=${e.tenant}` : ''}`);
  p.field('Selected Interface', `${agent.endpoint.binding} ${agent.endpoint.version} ${agent.endpoint.url}`);
  p.field('Streaming', agent.capabilities.streaming);
  p.field('Push Notifications', agent.capabilities.pushNotifications);
  p.field('Extended Card', agent.capabilities.extendedAgentCard);
  for (const name of Object.keys((card.securitySchemes ?? {}) as object)) p.field('Security Scheme', name);
  for (const skill of (Array.isArray(card.skills) ? card.skills : []) as { id?: string; name?: string }[]) {
    p.field('Skill', `${skill.id ?? ''}${skill.name ? ` (${skill.name})` : ''}`);
  }
  if (ctx.values.validate === true) p.field('Valid', true);
}

// ---- entry ----

/** `-o`/`--output` as given on the command line (or A2ACLI_OUTPUT), read before full parsing. */
function formatOf(argv: string[]): Format {
  let value = process.env.A2ACLI_OUTPUT;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-o' || arg === '--output') value = argv[i + 1];
    else if (arg.startsWith('--output=')) value = arg.slice('--output='.length);
    else if (arg.startsWith('-o') && arg.length > 2) value = arg.slice(2);
  }
  return value === 'json' || value === 'jsonl' ? value : 'text';
}

export async function main(
  argv: string[],
  io: { stdout?: NodeJS.WritableStream; stderr?: NodeJS.WritableStream } = {},
): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  // Known before parsing, so that even a usage error comes in the format asked for.
  let format: Format = formatOf(argv);
  let credentialsGiven = false;
  const controller = new AbortController();
  const onSigint = () => controller.abort(new Error('interrupted'));
  process.once('SIGINT', onSigint);
  let redact = (text: string) => text;
  try {
    const parsed = parse(argv);
    const { values, command } = parsed;
    format = outputFormat(values);
    credentialsGiven = [values.bearer, values['api-key'], values['svc-param']].some((v) => v !== undefined);
    // Credential values given directly are redacted from every message, even before a request.
    const secrets = [str(values, 'bearer'), str(values, 'api-key'), ...Object.values(serviceParameters(values))].filter(
      (s): s is string => s !== undefined && s.length >= 4 && !/^(file|exec|exec-shell):/.test(s),
    );
    redact = (text) => secrets.reduce((out, secret) => out.split(secret).join('***'), text);
    if (values.version === true) {
      stdout.write(`${version()}\n`);
      return 0;
    }
    if (command === '' || command === 'help' || values.help === true) {
      const topic = command === 'help' ? parsed.positionals.join(' ') || undefined : command || undefined;
      if (topic !== undefined && COMMANDS[topic] === undefined) throw new UsageError(`Unknown command "${topic}".`);
      stdout.write(help(topic));
      return 0;
    }
    if (COMMANDS[command] === undefined) throw new UsageError(`Unknown command "${command}".`);
    if (values.insecure === true) {
      process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
      stderr.write('WARNING: --insecure: TLS certificates are not verified; credentials may go to an impostor.\n');
    }
    const timeout = str(values, 'timeout');
    const poll = str(values, 'poll-interval');
    const ctx: Context = {
      values,
      printer: new Printer(format, stdout, values.verbose === true),
      format,
      reference: str(values, 'agent-card'),
      timeoutMs: timeout === undefined ? undefined : parseDuration(timeout, 'timeout'),
      pollIntervalMs: poll === undefined ? 2000 : parseDuration(poll, 'poll-interval'),
      signal: controller.signal,
      credentialsGiven,
      stderr,
    };
    if (command !== 'send' && command !== 'task subscribe' && values.stream === true) {
      throw new UsageError('--stream is for send and task subscribe.');
    }
    switch (command) {
      case 'card get':
        await cardGet(ctx, parsed);
        break;
      case 'send':
        await send(ctx, parsed);
        break;
      case 'task get':
        await taskGet(ctx, parsed);
        break;
      case 'task cancel':
        await taskCancel(ctx, parsed);
        break;
      case 'task list':
        await taskList(ctx);
        break;
      case 'task subscribe':
        await taskSubscribe(ctx, parsed);
        break;
      default:
        await pushConfig(ctx, parsed, command.split(' ')[2] as string);
    }
    return 0;
  } catch (error) {
    const { envelope, exitCode } = classify(error, { credentialsGiven, debugHint: true });
    envelope.error.message = redact(envelope.error.message);
    if (format === 'text') {
      const { code, message, hint } = envelope.error;
      stderr.write(`a2a: ${message} [${code}]${hint ? ` Hint: ${hint}` : ''}\n`);
    } else stdout.write(`${JSON.stringify(envelope)}\n`);
    return exitCode;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/** The process entry (bin/a2a.js): runs `main` on argv and sets the exit status. */
export async function run(): Promise<void> {
  process.exitCode = await main(process.argv.slice(2));
}
