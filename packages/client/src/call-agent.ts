/**
 * `callAgent`: one call to a remote A2A agent shaped for an LLM tool — text in, the agent's text,
 * files and data out, with the ids to continue (and, past `maxWaitMs`, the task id to poll).
 */

import type { Artifact, Message, Part, Task, TaskState } from '@fastify-a2a/core/protocol';
import { type A2AClient, type ConnectOptions, connect } from './client.js';
import type { HeaderValue } from './headers.js';

export interface CallAgentOptions {
  text: string;
  contextId?: string | undefined;
  taskId?: string | undefined;
  /** Follow the task's stream (when the agent streams) rather than one blocking send. @default false */
  stream?: boolean | undefined;
  /** Return after this long with the task's id and state if it is still running. */
  maxWaitMs?: number | undefined;
  /** Extra headers; values may be `file:PATH` or `exec:COMMAND`. */
  headers?: Readonly<Record<string, HeaderValue>> | undefined;
  bearer?: HeaderValue | undefined;
  signal?: AbortSignal | undefined;
  /** The whole call. @default 300000 */
  timeoutMs?: number | undefined;
  /** Passed to `connect` (retry, preferences, debug…). */
  connect?: Omit<ConnectOptions, 'headers' | 'bearer'> | undefined;
  /** A client already connected (its card is not read again). */
  client?: A2AClient | undefined;
}

export interface AgentFile {
  name?: string | undefined;
  mediaType?: string | undefined;
  /** A `data:` URL for bytes the agent sent inline, or the link it sent. */
  url: string;
}

export interface CallAgentResult {
  /** The agent's text: every text part of its answer and artifacts, in order. */
  text: string;
  files: AgentFile[];
  data: unknown[];
  /** The task's state (`completed`, `input-required`…); undefined when the agent answered with a message. */
  state: TaskState | undefined;
  /** False when `maxWaitMs` passed first: poll or subscribe with `taskId`. */
  done: boolean;
  metadata: { contextId: string | undefined; taskId: string | undefined; agent: string; url: string };
}

function collect(parts: readonly Part[], into: Pick<CallAgentResult, 'files' | 'data'> & { texts: string[] }): void {
  for (const part of parts) {
    if (part.kind === 'text') into.texts.push(part.text);
    else if (part.kind === 'data') into.data.push(part.data);
    else {
      const file = part.file;
      into.files.push({
        name: file.name,
        mediaType: file.mimeType,
        url: 'bytes' in file ? `data:${file.mimeType ?? 'application/octet-stream'};base64,${file.bytes}` : file.uri,
      });
    }
  }
}

/**
 * The answer's parts, one group per source: a message's, or each artifact's (a task that stops for
 * input, or has no artifact, explains itself in its status message). A group's text parts are
 * chunks of one text (appended stream chunks), so they are joined as they are; groups by newlines.
 */
function partsOf(result: Task | Message, artifacts: readonly Artifact[]): Part[][] {
  if (result.kind === 'message') return [result.parts];
  const groups = artifacts.map((artifact) => artifact.parts).filter((parts) => parts.length > 0);
  if (groups.length === 0 && result.status.message) return [result.status.message.parts];
  return groups;
}

export async function callAgent(url: string, options: CallAgentOptions): Promise<CallAgentResult> {
  const client =
    options.client ??
    (await connect(url, {
      timeoutMs: options.timeoutMs ?? 300_000,
      ...options.connect,
      headers: options.headers,
      bearer: options.bearer,
    }));
  const input = { text: options.text, contextId: options.contextId, taskId: options.taskId };
  const call = { signal: options.signal, timeoutMs: options.timeoutMs ?? 300_000 };
  let result: Task | Message;
  let done = true;
  let artifacts: Artifact[] = [];
  if (options.stream && client.capabilities.streaming && options.maxWaitMs === undefined) {
    // Artifacts rebuilt from their updates (append adds parts; 1.0 §3.1.2).
    const byId = new Map<string, Artifact>();
    let last: Task | Message | undefined;
    let contextId: string | undefined;
    let taskId: string | undefined;
    let status: Task['status'] | undefined;
    for await (const { result: item } of client.stream(input, call)) {
      if (item.kind === 'message' || item.kind === 'task') last = item;
      if (item.kind === 'task') for (const a of item.artifacts ?? []) byId.set(a.artifactId, a);
      if (item.kind === 'artifact-update') {
        const previous = byId.get(item.artifact.artifactId);
        byId.set(
          item.artifact.artifactId,
          item.append && previous ? { ...previous, parts: [...previous.parts, ...item.artifact.parts] } : item.artifact,
        );
      }
      if (item.kind !== 'message') {
        contextId = item.contextId;
        taskId = item.kind === 'task' ? item.id : item.taskId;
      }
      if (item.kind === 'status-update' || item.kind === 'task') status = item.status;
    }
    artifacts = [...byId.values()];
    result =
      last?.kind === 'message'
        ? last
        : {
            kind: 'task',
            id: taskId ?? '',
            contextId: contextId ?? '',
            status: status ?? { state: 'unknown' },
            artifacts,
          };
  } else {
    const sent = await client.send(input, { ...call, maxWaitMs: options.maxWaitMs });
    result = sent.result;
    done = sent.done;
    if (result.kind === 'task') artifacts = result.artifacts ?? [];
  }
  const texts: string[] = [];
  const gathered = { texts: [] as string[], files: [] as AgentFile[], data: [] as unknown[] };
  for (const group of partsOf(result, artifacts)) {
    gathered.texts = [];
    collect(group, gathered);
    if (gathered.texts.length > 0) texts.push(gathered.texts.join(''));
  }
  return {
    text: texts.join('\n'),
    files: gathered.files,
    data: gathered.data,
    state: result.kind === 'task' ? result.status.state : undefined,
    done,
    metadata: {
      contextId: result.contextId,
      taskId: result.kind === 'task' ? result.id : result.taskId,
      agent: typeof client.card.name === 'string' ? client.card.name : url,
      url: client.endpoint.url,
    },
  };
}
