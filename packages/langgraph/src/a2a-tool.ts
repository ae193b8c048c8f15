/**
 * `a2aTool`: a LangChain tool, for a LangGraph agent, whose call sends a message to a remote A2A
 * agent through `@fastify-a2a/client` and returns the agent's answer.
 *
 * The remote conversation continues across calls: each result is a ToolMessage whose `artifact`
 * carries the remote contextId (and the taskId of a remote task waiting for input), and the next
 * call finds the latest one in the graph's `messages`. The graph's checkpointer keeps them, so the
 * remote conversation goes on from whichever worker runs the next call.
 */

import { type A2AClient, type CallAgentOptions, type CallAgentResult, callAgent, connect } from '@fastify-a2a/client';
import { readableErrorMessage } from '@fastify-a2a/core/agent-kit';
import { type StructuredToolInterface, tool } from '@langchain/core/tools';
import { getCurrentTaskInput } from '@langchain/langgraph';

export interface A2AToolOptions {
  /** The agent: its base URL (the card is read from its well-known path), or a card URL. */
  url?: string;
  /** A client already connected (its card is not read again). */
  client?: A2AClient;
  /** The tool's name, as the model calls it. @default "call_agent" */
  name?: string;
  /** What the model reads to decide when to call the agent. @default the card's description, else a sentence naming the URL */
  description?: string;
  /** Follow the task's stream when the agent streams. @default true */
  stream?: boolean;
  /** The whole call, retries included. @default 300000 */
  timeoutMs?: number;
  bearer?: CallAgentOptions['bearer'];
  headers?: CallAgentOptions['headers'];
  connect?: CallAgentOptions['connect'];
}

/** Where a remote conversation stands: the artifact of each result, read back from the messages. */
export interface RemoteConversation {
  /** The remote agent as given (`url`): which agent this result is from. */
  agent: string;
  contextId?: string | undefined;
  /** The remote task waiting for input, which the next call answers. */
  pendingTaskId?: string | undefined;
  state?: string | undefined;
}

/** The artifact of the ToolMessage a call returns. */
export interface A2AToolArtifact {
  a2a: RemoteConversation;
  data: unknown[];
  files: CallAgentResult['files'];
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The latest remote conversation with `agent` among `messages` (ToolMessages of earlier calls). */
export function remoteConversationIn(messages: readonly unknown[], agent: string): RemoteConversation | undefined {
  let found: RemoteConversation | undefined;
  for (const message of messages) {
    if (!isRecord(message) || message.type !== 'tool' || !isRecord(message.artifact)) continue;
    const remote = message.artifact.a2a;
    if (!isRecord(remote) || remote.agent !== agent) continue;
    found = {
      agent,
      contextId: typeof remote.contextId === 'string' ? remote.contextId : undefined,
      pendingTaskId: typeof remote.pendingTaskId === 'string' ? remote.pendingTaskId : undefined,
    };
  }
  return found;
}

/** The graph state's messages when the tool runs inside a graph (a ToolNode), else none. */
function graphMessages(): readonly unknown[] {
  try {
    const state = getCurrentTaskInput();
    return isRecord(state) && Array.isArray(state.messages) ? state.messages : [];
  } catch {
    return []; // called outside a graph run: a fresh remote conversation
  }
}

const ENDED = new Set(['failed', 'rejected', 'canceled']);

/**
 * A LangChain tool that sends its `message` to a remote A2A agent and returns the agent's answer
 * (a question when the remote task waits for input, for the model to put to the user):
 *
 * ```ts
 * const research = a2aTool({ url: 'https://agents.example/research' });
 * const graph = createReactAgent({ llm, tools: [research], checkpointer });
 * ```
 *
 * The remote agent failing (`failed`, `rejected`, `canceled`) or being unreachable makes the call
 * throw with a readable message, which LangGraph's ToolNode hands to the model as the tool's error.
 */
export function a2aTool(options: A2AToolOptions): StructuredToolInterface {
  const reference = options.url ?? options.client?.endpoint.url;
  if (reference === undefined) throw new TypeError('a2aTool: give the agent as `url` or `client`.');
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
  const cardDescription = options.client?.card.description;
  const description =
    options.description ??
    (typeof cardDescription === 'string' && cardDescription !== ''
      ? cardDescription
      : `Send a message to the A2A agent at ${agent} and get its answer. The conversation with it continues across calls.`);

  return tool(
    async ({ message }: { message: string }, config): Promise<[string, A2AToolArtifact]> => {
      const remote = remoteConversationIn(graphMessages(), agent);
      let answer: CallAgentResult;
      try {
        answer = await callAgent(agent, {
          client: await client(),
          text: message,
          contextId: remote?.contextId,
          taskId: remote?.pendingTaskId,
          stream: options.stream ?? true,
          signal: config?.signal,
          timeoutMs: options.timeoutMs ?? 300_000,
        });
      } catch (error) {
        throw new Error(`The agent at ${agent} could not be reached: ${readableErrorMessage(error)}`);
      }
      if (answer.state !== undefined && ENDED.has(answer.state)) {
        throw new Error(`${answer.metadata.agent} ended ${answer.state}${answer.text ? `: ${answer.text}` : '.'}`);
      }
      const waiting = answer.state === 'input-required' || answer.state === 'auth-required';
      const artifact: A2AToolArtifact = {
        a2a: {
          agent,
          contextId: answer.metadata.contextId,
          pendingTaskId: waiting ? answer.metadata.taskId : undefined,
          state: answer.state,
        },
        data: answer.data,
        files: answer.files,
      };
      const lines = waiting
        ? [
            `${answer.metadata.agent} asks: ${answer.text || 'it needs more input.'}`,
            'Ask the user, then call this tool again with their answer.',
          ]
        : [answer.text];
      for (const data of answer.data) lines.push(`Data: ${JSON.stringify(data)}`);
      for (const file of answer.files)
        lines.push(`File: ${file.name ?? 'unnamed'} (${file.mediaType ?? 'unknown type'})`);
      return [lines.filter((line) => line !== '').join('\n'), artifact];
    },
    {
      name: options.name ?? 'call_agent',
      description,
      schema: {
        type: 'object',
        properties: { message: { type: 'string', description: 'The message to send to the agent.' } },
        required: ['message'],
        additionalProperties: false,
      },
      responseFormat: 'content_and_artifact',
    },
  );
}
