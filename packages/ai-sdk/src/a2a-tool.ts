/**
 * `a2aTool`: an AI SDK tool whose call sends a message to a remote A2A agent through
 * `@fastify-a2a/client` (card discovery, credentials, retries with the same messageId, streams
 * that resume on any worker of the remote server) and gives the model the agent's answer.
 *
 * The remote conversation continues across calls: every result carries the remote contextId (and
 * the taskId of a task waiting for input), and the next call finds the latest one in the
 * conversation's messages (`execute`'s `messages`). Nothing is kept in the tool itself, so one
 * tool serves many conversations, and a conversation served by `fromAiSdk` (whose messages live in
 * the A2A context state) continues the remote one on whichever worker runs its next turn.
 */

import { type A2AClient, type CallAgentOptions, type CallAgentResult, callAgent, connect } from '@fastify-a2a/client';
import { readableErrorMessage } from '@fastify-a2a/core/agent-kit';
import { jsonSchema, type ModelMessage, type Tool, type ToolResultPart, tool } from 'ai';

type ToolResultOutput = ToolResultPart['output'];

export interface A2AToolOptions {
  /** The agent: its base URL (the card is read from its well-known path), a card URL, or a card file. */
  url?: string;
  /** Same as `url`: where the agent card is (a URL ending in `.json`, or a file). */
  card?: string;
  /** A client already connected (its card is not read again). */
  client?: A2AClient;
  /** What the model reads to decide when to call the agent. @default from the card (name, description, skills) when given a `client` (see {@link a2aToolFor}), else a sentence naming the URL */
  description?: string;
  /** Follow the task's stream (when the agent streams), resuming it if it drops. @default true */
  stream?: boolean;
  /** The whole call, retries included. @default 300000 */
  timeoutMs?: number;
  /** Credentials and connect options (`bearer`, `headers`, `connect: { retry, preferences, … }`), as for `callAgent`. */
  bearer?: CallAgentOptions['bearer'];
  headers?: CallAgentOptions['headers'];
  connect?: CallAgentOptions['connect'];
}

/** The tool's input: the message for the remote agent. */
export interface A2AToolInput {
  message: string;
}

/** Where a remote conversation stands: carried in each result, read back from the messages. */
export interface RemoteConversation {
  /** The remote agent's card URL or base URL, as given: which agent this result is from. */
  agent: string;
  contextId?: string | undefined;
  /** The remote task waiting for input (`input-required`), which the next call answers. */
  pendingTaskId?: string | undefined;
}

/** The tool's result (its `output`; the model reads it through `toModelOutput`). */
export interface A2AToolOutput {
  a2a: RemoteConversation & { state: string | undefined; agentName: string };
  /** The agent's text answer, or its question when `question` is set. */
  text: string;
  /** The remote agent's question, when its task waits for input (`input-required` or `auth-required`). */
  question?: string;
  data: unknown[];
  files: CallAgentResult['files'];
}

const INPUT_SCHEMA = jsonSchema<A2AToolInput>({
  type: 'object',
  properties: { message: { type: 'string', description: 'The message to send to the agent.' } },
  required: ['message'],
  additionalProperties: false,
});

/** The latest remote conversation with `agent` in `messages`, from earlier results of this tool. */
export function remoteConversationIn(messages: readonly ModelMessage[], agent: string): RemoteConversation | undefined {
  let found: RemoteConversation | undefined;
  for (const message of messages) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result') continue;
      const remote = remoteOf(part.output);
      if (remote?.agent === agent) found = remote;
    }
  }
  return found;
}

function remoteOf(output: ToolResultOutput): RemoteConversation | undefined {
  let header: unknown;
  if (output.type === 'json') header = output.value;
  else if (output.type === 'content' && output.value[0]?.type === 'text') {
    try {
      header = JSON.parse(output.value[0].text);
    } catch {
      return undefined;
    }
  }
  if (header === null || typeof header !== 'object' || !('a2a' in header)) return undefined;
  const remote = (header as { a2a: unknown }).a2a;
  if (remote === null || typeof remote !== 'object') return undefined;
  const { agent, contextId, pendingTaskId } = remote as Record<string, unknown>;
  if (typeof agent !== 'string') return undefined;
  return {
    agent,
    contextId: typeof contextId === 'string' ? contextId : undefined,
    pendingTaskId: typeof pendingTaskId === 'string' ? pendingTaskId : undefined,
  };
}

/** `data:` URL → its media type and base64 bytes; undefined for any other URL. */
function dataUrl(url: string): { mediaType: string; base64: string } | undefined {
  const match = /^data:([^;,]*)(;base64)?,(.*)$/s.exec(url);
  if (!match) return undefined;
  const mediaType = match[1] || 'application/octet-stream';
  const body = match[3] ?? '';
  return { mediaType, base64: match[2] ? body : Buffer.from(decodeURIComponent(body)).toString('base64') };
}

/** What the model reads: the remote conversation's header (JSON), the answer or question, data as JSON, files. */
export function toModelOutput(output: A2AToolOutput): ToolResultOutput {
  const value: Extract<ToolResultOutput, { type: 'content' }>['value'] = [
    { type: 'text', text: JSON.stringify({ a2a: output.a2a }) },
  ];
  if (output.question !== undefined) {
    value.push({
      type: 'text',
      text: `${output.a2a.agentName} asks: ${output.question}\nAsk the user, then call this tool again with their answer.`,
    });
  } else if (output.text !== '') value.push({ type: 'text', text: output.text });
  for (const data of output.data) value.push({ type: 'text', text: `Data: ${JSON.stringify(data)}` });
  for (const file of output.files) {
    const inline = dataUrl(file.url);
    if (inline) {
      value.push({
        type: 'file-data',
        data: inline.base64,
        mediaType: file.mediaType ?? inline.mediaType,
        ...(file.name ? { filename: file.name } : {}),
      });
    } else value.push({ type: 'file-url', url: file.url, ...(file.mediaType ? { mediaType: file.mediaType } : {}) });
  }
  return { type: 'content', value };
}

const ENDED = new Set(['failed', 'rejected', 'canceled']);

/** Longest tool description made from a card: the card is the remote party's text, and the model reads it on every call. */
const MAX_CARD_DESCRIPTION = 1000;

/** The tool's description from an agent card: its name and description, and its skills'. Undefined when the card says nothing. */
function describeCard(card: Record<string, unknown>): string | undefined {
  const text = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');
  const lines: string[] = [];
  const head = [text(card.name), text(card.description)].filter(Boolean).join(': ');
  if (head !== '') lines.push(`Send a message to the A2A agent ${head}`);
  const skills = Array.isArray(card.skills) ? card.skills : [];
  for (const skill of skills) {
    if (skill === null || typeof skill !== 'object') continue;
    const entry = [text((skill as Record<string, unknown>).name), text((skill as Record<string, unknown>).description)]
      .filter(Boolean)
      .join(': ');
    if (entry !== '') lines.push(`- ${entry}`);
  }
  if (lines.length === 0) return undefined;
  const description = lines.join('\n');
  return description.length > MAX_CARD_DESCRIPTION ? `${description.slice(0, MAX_CARD_DESCRIPTION - 1)}…` : description;
}

/**
 * {@link a2aTool} for the agent at `reference`, its card read first: the tool's description (what the
 * model reads to choose it) is the card's name, description and skills unless `options.description`
 * is given.
 */
export async function a2aToolFor(
  reference: string,
  options: Omit<A2AToolOptions, 'url' | 'card' | 'client'> = {},
): Promise<Tool<A2AToolInput, A2AToolOutput>> {
  const client = await connect(reference, {
    ...options.connect,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.bearer !== undefined ? { bearer: options.bearer } : {}),
  });
  return a2aTool({ ...options, url: reference, client });
}

/**
 * An AI SDK tool that sends its `message` to a remote A2A agent and returns the agent's answer.
 *
 * ```ts
 * const research = a2aTool({ url: 'https://agents.example/research', bearer: 'file:/run/secrets/token' });
 * streamText({ model, tools: { research }, messages });
 * ```
 *
 * The remote agent failing (its task `failed`, `rejected` or `canceled`), or being unreachable
 * after the client's retries, makes the call throw with a readable message: the SDK reports it to
 * the model as the tool's error (or, under `fromAiSdk` with `toolErrors: 'fail'`, fails the task).
 */
export function a2aTool(options: A2AToolOptions): Tool<A2AToolInput, A2AToolOutput> {
  const reference = options.url ?? options.card ?? options.client?.endpoint.url;
  if (reference === undefined) throw new TypeError('a2aTool: give the agent as `url`, `card` or `client`.');
  const agent = reference;
  let connecting: Promise<A2AClient> | undefined = options.client ? Promise.resolve(options.client) : undefined;
  const client = (): Promise<A2AClient> => {
    connecting ??= connect(agent, {
      ...options.connect,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.bearer !== undefined ? { bearer: options.bearer } : {}),
    }).catch((error: unknown) => {
      connecting = undefined; // try again on the next call
      throw error;
    });
    return connecting;
  };
  const description =
    options.description ??
    (options.client ? describeCard(options.client.card) : undefined) ??
    `Send a message to the A2A agent at ${agent} and get its answer. The conversation with it continues across calls.`;

  return tool<A2AToolInput, A2AToolOutput>({
    description,
    inputSchema: INPUT_SCHEMA,
    async execute({ message }, { messages, abortSignal }) {
      const remote = remoteConversationIn(messages, agent);
      let answer: CallAgentResult;
      try {
        answer = await callAgent(agent, {
          client: await client(),
          text: message,
          contextId: remote?.contextId,
          taskId: remote?.pendingTaskId,
          stream: options.stream ?? true,
          signal: abortSignal,
          timeoutMs: options.timeoutMs ?? 300_000,
        });
      } catch (error) {
        throw new Error(`The call to the agent at ${agent} failed: ${readableErrorMessage(error)}`);
      }
      const waiting = answer.state === 'input-required' || answer.state === 'auth-required';
      if (answer.state !== undefined && ENDED.has(answer.state)) {
        throw new Error(`${answer.metadata.agent} ended ${answer.state}${answer.text ? `: ${answer.text}` : '.'}`);
      }
      const output: A2AToolOutput = {
        a2a: {
          agent,
          agentName: answer.metadata.agent,
          contextId: answer.metadata.contextId,
          pendingTaskId: waiting ? answer.metadata.taskId : undefined,
          state: answer.state,
        },
        text: answer.text,
        data: answer.data,
        files: answer.files,
      };
      if (waiting) output.question = answer.text || `${answer.metadata.agent} needs more input.`;
      return output;
    },
    toModelOutput: ({ output }) => toModelOutput(output),
  });
}
