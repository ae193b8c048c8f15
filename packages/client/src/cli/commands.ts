/**
 * What each `a2a` command does, on the client library: `card get`, `send`, `task get|cancel|list|
 * subscribe` and `task push-config create|get|list|delete` (a2a-cli SPEC.md v0.2 §8 and
 * Appendix A), printing through `render.ts`.
 */

import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import {
  dataPart,
  isFinalState,
  type ListTasksParams,
  type ListTasksResult,
  type Message,
  type Part,
  STATE_FROM_WIRE_1_0,
  type StreamResult,
  type Task,
  type TaskPushNotificationConfig,
  type TaskState,
} from '@fastify-a2a/core/protocol';
import type { AgentEndpoint, CardCheck, Json } from '../card.js';
import { type CardViolation, checkCardSchema, describeViolation } from '../card-schema.js';
import { type VerifyCardOptions, verifyCardSignatures } from '../card-verify.js';
import { type A2AClient, type ConnectOptions, connect, connectEndpoint, endsStream } from '../client.js';
import { A2AClientError } from '../errors.js';
import { insecureFetch } from '../insecure-fetch.js';
import { agentKey, readCredentials, type StoredCredential } from './config.js';
import { UsageError } from './errors.js';
import {
  binding,
  COMMANDS,
  list,
  PART_FLAGS,
  type Parsed,
  parseDuration,
  parseInteger,
  serviceParameters,
  str,
  versions,
} from './options.js';
import { maskPushConfig, redactSecrets } from './redact.js';
import { type Format, json, type Printer, stateName } from './render.js';

export interface Context {
  values: Parsed['values'];
  printer: Printer;
  format: Format;
  reference: string | undefined;
  timeoutMs: number | undefined;
  pollIntervalMs: number;
  signal: AbortSignal;
  credentialsGiven: boolean;
  stderr: NodeJS.WritableStream;
  /** Each client's redact: the values read from file: and exec: are known only to it. */
  redactors: ((text: string) => string)[];
}

/**
 * The credential `a2a auth login` stored for this agent, when none came from a flag, the
 * environment or a file (A2ACLI_AUTH_007): those always win, as explicit settings do (§6.4).
 */
function storedCredential(ctx: Context, reference: string | undefined): StoredCredential | undefined {
  const { values } = ctx;
  if (reference === undefined || values.bearer !== undefined || values['api-key'] !== undefined) return undefined;
  const stored = readCredentials()[agentKey(reference)];
  if (stored?.expiresAt !== undefined && Date.parse(stored.expiresAt) <= Date.now()) {
    // Sending it would only earn a 401: say why, and what to do.
    ctx.stderr.write(
      `warning: the token stored for ${agentKey(reference)} expired at ${stored.expiresAt}; run \`a2a auth login\` again.\n`,
    );
    return undefined;
  }
  if (stored !== undefined) {
    ctx.credentialsGiven = true;
    if (values.debug)
      ctx.stderr.write(`[debug] using the credential stored by \`a2a auth login\` for ${agentKey(reference)}\n`);
  }
  return stored;
}

/**
 * The keys `--verify` / `--verify-card` trust (1.0 §8.4.3): `--jwks <file|url>` (a JWK Set, read
 * from a file or fetched once) and `--trusted-jku <url>` (key sets a signature's `jku` may name).
 */
async function verifyOptions(ctx: Context, flag: string): Promise<VerifyCardOptions> {
  const { values } = ctx;
  const jwksRef = str(values, 'jwks');
  const trustedJku = list(values, 'trusted-jku');
  if (jwksRef === undefined && trustedJku.length === 0) {
    throw new UsageError(
      `${flag} needs keys to trust: --jwks <file|url> and/or --trusted-jku <url>.`,
      "Get the agent operator's public JWK Set (e.g. its /.well-known/jwks.json) over a channel you trust.",
    );
  }
  const fetcher = values.insecure === true ? insecureFetch : globalThis.fetch;
  let jwks: VerifyCardOptions['jwks'];
  if (jwksRef !== undefined) {
    let text: string;
    try {
      if (/^https?:\/\//i.test(jwksRef)) {
        const response = await fetcher(jwksRef, { redirect: 'error', signal: AbortSignal.timeout(10_000) });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        text = await response.text();
      } else {
        text = await readFile(jwksRef, 'utf8');
      }
      jwks = JSON.parse(text) as VerifyCardOptions['jwks'];
    } catch (error) {
      throw new UsageError(`--jwks ${jwksRef} could not be read: ${(error as Error).message}.`, null);
    }
    if (jwks === null || typeof jwks !== 'object' || !Array.isArray((jwks as { keys?: unknown }).keys)) {
      throw new UsageError(`--jwks ${jwksRef} holds no JWK Set ({ "keys": [...] }).`, null);
    }
  }
  return { jwks, trustedJku, fetch: fetcher };
}

export async function client(
  ctx: Context,
  options: {
    reference?: string | undefined;
    cardCheck?: CardCheck | undefined;
    /** Refuse a card whose signatures do not verify (`--verify`, `--verify-card`): the flag's name. */
    verifyFlag?: string | undefined;
  } = {},
): Promise<A2AClient> {
  const { values } = ctx;
  const stored = storedCredential(ctx, options.reference ?? ctx.reference);
  const transports = list(values, 'transport').map(binding);
  const allowed = versions(values);
  const retries = parseInteger(str(values, 'retries'), 'retries');
  const connectOptions: ConnectOptions = {
    bearer: str(values, 'bearer') ?? stored?.bearer,
    apiKey: str(values, 'api-key') ?? stored?.apiKey,
    apiKeyHeader: str(values, 'api-key-header') ?? stored?.apiKeyHeader,
    headers: serviceParameters(values),
    versions: allowed,
    // §11.1: the card's order unless the caller gave theirs (first offered match wins).
    preferences: transports.length > 0 ? transports.map((b) => ({ binding: b })) : 'card',
    timeoutMs: ctx.timeoutMs,
    retry: retries === undefined ? undefined : { attempts: Math.max(1, retries) },
    // The library redacts the credentials it sends; a push config's token and the like are in bodies.
    debug: values.debug ? (line) => ctx.stderr.write(`[debug] ${redactSecrets(line)}\n`) : undefined,
    // This client alone skips verification: the process (and Node's own warning) stay untouched.
    fetch: values.insecure === true ? insecureFetch : undefined,
    cardCheck: options.cardCheck,
    verifyCard: options.verifyFlag === undefined ? undefined : await verifyOptions(ctx, options.verifyFlag),
  };
  const endpointUrl = str(values, 'endpoint');
  const tenant = str(values, 'tenant');
  let connected: A2AClient;
  if (endpointUrl !== undefined && options.reference === undefined) {
    if (options.verifyFlag !== undefined) {
      throw new UsageError(`${options.verifyFlag} verifies the agent's card: give -a/--agent-card, not -e/--endpoint.`);
    }
    const endpoint: AgentEndpoint = {
      url: endpointUrl,
      binding: transports[0] ?? 'JSONRPC',
      version: allowed[0] as string,
      tenant,
    };
    connected = connectEndpoint(endpoint, connectOptions);
    ctx.redactors.push((text) => connected.redact(text));
  } else {
    const reference = options.reference ?? ctx.reference;
    if (reference === undefined) {
      throw new UsageError(
        'No agent given.',
        'Pass -a/--agent-card <url> (or set A2ACLI_AGENT_CARD), or -e/--endpoint <url>.',
      );
    }
    connected = await connect(reference, connectOptions);
    ctx.redactors.push((text) => connected.redact(text));
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

async function followStream(ctx: Context, events: AsyncIterable<{ result: StreamResult }>) {
  let last: StreamResult | undefined;
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

export async function send(ctx: Context, parsed: Parsed): Promise<void> {
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
  const agent = await client(ctx, { verifyFlag: values['verify-card'] === true ? '--verify-card' : undefined });
  const input = {
    parts,
    taskId: str(values, 'task-id'),
    contextId: str(values, 'context-id'),
    messageId: str(values, 'message-id'),
    historyLength: parseInteger(str(values, 'history'), 'history'),
    metadata,
    // A2A 1.1 draft §3.2.7: refused by the agent (TaskGenerationMismatchError) unless the task is at N.
    ifGenerationMatch: parseInteger(str(values, 'if-generation'), 'if-generation'),
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

export function taskId(parsed: Parsed, what = 'task id'): string {
  const id = parsed.positionals[0];
  if (id === undefined || id === '')
    throw new UsageError(`Give the ${what}.`, `Usage: ${COMMANDS[parsed.command]?.usage}`);
  return id;
}

export async function taskGet(ctx: Context, parsed: Parsed): Promise<void> {
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

export async function taskCancel(ctx: Context, parsed: Parsed): Promise<void> {
  const id = taskId(parsed);
  const agent = await client(ctx);
  const task = await agent.cancelTask(id, { signal: ctx.signal, timeoutMs: ctx.timeoutMs });
  if (ctx.format === 'text') ctx.printer.task(task);
  else ctx.printer.document(json.task(task));
}

export async function taskList(ctx: Context): Promise<void> {
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

export async function taskSubscribe(ctx: Context, parsed: Parsed): Promise<void> {
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

export async function pushConfig(ctx: Context, parsed: Parsed, action: string): Promise<void> {
  const id = taskId(parsed);
  const agent = await client(ctx);
  requireCapability(agent, 'pushNotifications', `task push-config ${action}`);
  const call = { signal: ctx.signal, timeoutMs: ctx.timeoutMs };
  const show = (config: TaskPushNotificationConfig) =>
    ctx.format === 'text'
      ? ctx.printer.pushConfig(config)
      : ctx.printer.document(json.pushConfig(maskPushConfig(config)));
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
      const masked = configs.map(maskPushConfig);
      if (ctx.format === 'json') ctx.printer.document(json.pushConfigs(masked));
      else if (ctx.format === 'jsonl') for (const config of masked) ctx.printer.line(json.pushConfig(config));
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

/**
 * The full-schema check of `--validate`. In text, each violation is a `Violation:` field on stdout
 * (the error's one line goes to stderr); in json the error envelope carries them (`violations`).
 */
function reportViolations(ctx: Context, value: unknown, source: string): Json {
  try {
    return checkCardSchema(value, source);
  } catch (error) {
    if (ctx.format === 'text' && A2AClientError.is(error) && Array.isArray(error.data)) {
      ctx.printer.field('Card URL', source);
      ctx.printer.field('Valid', false);
      for (const violation of error.data as CardViolation[])
        ctx.printer.field('Violation', describeViolation(violation));
    }
    throw error;
  }
}

export async function cardGet(ctx: Context, parsed: Parsed): Promise<void> {
  const reference = parsed.positionals[0] ?? ctx.reference;
  if (reference === undefined) throw new UsageError('Give the agent: a2a card get <url> (or -a <url>).');
  const validate = ctx.values.validate === true;
  // --validate holds the card to its versions' schemas before anything else reads it, so a broken
  // card is reported rule by rule rather than by the first thing that trips over it.
  const cardCheck = validate ? (value: unknown, source: string) => reportViolations(ctx, value, source) : undefined;
  const verify = ctx.values.verify === true;
  const agent = await client(ctx, { reference, cardCheck, verifyFlag: verify ? '--verify' : undefined });
  let card = agent.card;
  if (ctx.values.extended === true) {
    requireCapability(agent, 'extendedAgentCard', 'card get --extended');
    card = await agent.getExtendedCard({ signal: ctx.signal, timeoutMs: ctx.timeoutMs });
    if (cardCheck) cardCheck(card, `${agent.resolvedCard.source} (extended card)`);
    // The extended card is signed on its own (1.0 §8.4): checked with the same keys.
    if (verify) {
      await verifyCardSignatures(
        card,
        await verifyOptions(ctx, '--verify'),
        `${agent.resolvedCard.source} (extended card)`,
      );
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
