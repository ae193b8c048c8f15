/**
 * What the CLI prints. `json` is the A2A 1.0 protocol's own types in ProtoJSON (a2a-cli SPEC.md
 * Appendix B), whichever version the agent speaks: the model is written with core's 1.0 codec.
 * `text` is one `Label: value` field per line with the same labels every time, blocks (a text or
 * data part) under their own label and closed by a blank line, no control sequences (§9.2).
 *
 * Text output is the agent's words on the user's terminal, so it is made inert (`visible`): every
 * C0 and C1 control character but newline and tab, DEL, and the bidirectional controls are shown
 * escaped (`\x1b`, `\u202e`), so no escape sequence, bare carriage return or direction override
 * can retitle the terminal, erase a line or make text read as other text. `json` and `jsonl` stay
 * byte-exact: JSON escapes what needs escaping, and the reader is a program.
 */

import {
  type Artifact,
  type ListTasksResult,
  type Message,
  type Part,
  protoJson1_0,
  STATE_TO_WIRE_1_0,
  type StreamResult,
  type Task,
  type TaskPushNotificationConfig,
  type TaskState,
} from '@fastify-a2a/core/protocol';
import { redactUrlPassword } from './redact.js';

export type Format = 'text' | 'json' | 'jsonl';

/**
 * C0 controls but tab and newline, DEL, C1 controls; the Arabic letter mark, LRM/RLM, the line and
 * paragraph separators, and the bidirectional embeddings, overrides and isolates (U+202A–U+202E,
 * U+2066–U+2069: Unicode TR9, the "Trojan Source" characters).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this finds.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** Text made safe for a terminal: CRLF read as a newline, every unsafe character escaped. */
export function visible(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** A writable stream whose text is made `visible` (and URL passwords masked): stderr. */
export function terminalSafe(out: NodeJS.WritableStream): NodeJS.WritableStream {
  return new Proxy(out, {
    get(target, property) {
      if (property === 'write')
        return (chunk: unknown, ...rest: unknown[]) =>
          (target.write as (...args: unknown[]) => boolean)(
            typeof chunk === 'string' ? visible(redactUrlPassword(chunk)) : chunk,
            ...rest,
          );
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

export const stateName = (state: TaskState): string => STATE_TO_WIRE_1_0[state] ?? String(state);

/**
 * The A2A 1.1 draft's `generation` (§3.2.7) beside a task written by the 1.0 codec, when the agent
 * sent one: what `send --if-generation` needs.
 */
const withGeneration = (out: unknown, task: Task): unknown =>
  task.generation === undefined ? out : { ...(out as Record<string, unknown>), generation: task.generation };

export const json = {
  sendResponse: (result: Task | Message) =>
    result.kind === 'task'
      ? { task: withGeneration(protoJson1_0.encodeResult('getTask', result), result) }
      : protoJson1_0.encodeResult('sendMessage', result),
  task: (task: Task) => withGeneration(protoJson1_0.encodeResult('getTask', task), task),
  streamItem: (item: StreamResult) => protoJson1_0.encodeStreamItem(item),
  list: (list: ListTasksResult) => protoJson1_0.encodeResult('listTasks', list),
  pushConfig: (config: TaskPushNotificationConfig) =>
    protoJson1_0.encodeResult('getTaskPushNotificationConfig', config),
  pushConfigs: (configs: TaskPushNotificationConfig[]) =>
    protoJson1_0.encodeResult('listTaskPushNotificationConfig', configs),
};

export class Printer {
  constructor(
    readonly format: Format,
    private readonly out: NodeJS.WritableStream = process.stdout,
    /** `--verbose`: metadata blocks and each part's media type too (the concise view leaves them out). */
    private readonly verbose = false,
  ) {}

  #metadata(label: string, metadata: Record<string, unknown> | undefined): void {
    if (this.verbose && metadata !== undefined && Object.keys(metadata).length > 0)
      this.block(`${label} Metadata`, JSON.stringify(metadata, null, 2));
  }

  /** One JSON document (pretty for `json`, one line for `jsonl`). */
  document(value: unknown): void {
    this.out.write(this.format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : `${JSON.stringify(value)}\n`);
  }

  /** One JSON Lines record. */
  line(value: unknown): void {
    this.out.write(`${JSON.stringify(value)}\n`);
  }

  field(label: string, value: string | number | boolean | undefined): void {
    if (value === undefined) return;
    // One field per line: a value with newlines would break the line contract.
    this.out.write(`${label}: ${visible(redactUrlPassword(String(value)).replace(/\r?\n/g, ' '))}\n`);
  }

  block(label: string, content: string): void {
    this.out.write(`${label}:\n${visible(redactUrlPassword(content)).replace(/\n+$/, '')}\n\n`);
  }

  parts(label: string, parts: readonly Part[]): void {
    for (const part of parts) {
      this.#metadata(`${label} Part`, part.metadata);
      if (part.kind === 'text') this.block(label, part.text);
      else if (part.kind === 'data') this.block(`${label} Data`, JSON.stringify(part.data, null, 2));
      else {
        const { file } = part;
        const size = 'bytes' in file ? `${Math.floor((file.bytes.length * 3) / 4)} bytes` : undefined;
        this.field(
          `${label} File`,
          [file.name ?? '(unnamed)', file.mimeType, size ?? ('uri' in file ? file.uri : undefined)]
            .filter(Boolean)
            .join(', '),
        );
      }
    }
  }

  artifact(artifact: Artifact): void {
    this.field(
      'Artifact',
      artifact.name === undefined ? artifact.artifactId : `${artifact.name} (${artifact.artifactId})`,
    );
    this.parts('Artifact Content', artifact.parts);
  }

  task(task: Task): void {
    this.field('Task ID', task.id);
    this.field('Context ID', task.contextId);
    this.field('State', stateName(task.status.state));
    this.field('Generation', task.generation);
    if (this.verbose) this.field('Status Timestamp', task.status.timestamp);
    this.#metadata('Task', task.metadata);
    if (task.status.message) this.parts('Status Message', task.status.message.parts);
    for (const artifact of task.artifacts ?? []) this.artifact(artifact);
    for (const message of task.history ?? []) {
      this.field('History', `${message.role} ${message.messageId}`);
      this.parts('History Content', message.parts);
    }
  }

  message(message: Message): void {
    this.field('Message ID', message.messageId);
    this.field('Context ID', message.contextId);
    this.field('Task ID', message.taskId);
    this.field('Role', message.role);
    this.#metadata('Message', message.metadata);
    this.parts('Message Content', message.parts);
  }

  streamItem(item: StreamResult): void {
    switch (item.kind) {
      case 'task':
        this.field('Event', 'task');
        this.task(item);
        return;
      case 'message':
        this.field('Event', 'message');
        this.message(item);
        return;
      case 'status-update':
        this.field('Event', 'status-update');
        this.field('Task ID', item.taskId);
        this.field('Context ID', item.contextId);
        this.field('State', stateName(item.status.state));
        if (item.status.message) this.parts('Status Message', item.status.message.parts);
        return;
      case 'artifact-update':
        this.field('Event', 'artifact-update');
        this.artifact(item.artifact);
    }
  }

  pushConfig(config: TaskPushNotificationConfig): void {
    this.field('Task ID', config.taskId);
    this.field('Config ID', config.pushNotificationConfig.id);
    this.field('URL', config.pushNotificationConfig.url);
    if (config.pushNotificationConfig.token !== undefined) this.field('Token', '***');
  }
}
