/**
 * The internal model is A2A 0.3's wire JSON, on purpose. What the runtime computes with, what the
 * agent sees and what every store persists has the shape of the A2A v0.3.0 JSON of §6 "Protocol
 * Data Objects" and §7 (written from the specification text): `kind` discriminators, lower-case
 * kebab task states (`input-required`), `final` on status updates. The 0.3 codec is near-identity;
 * the 1.0 codec (`protocol/v1_0`) translates to and from this model at the edge, in both
 * directions, so no stored row and no agent depends on the protocol version a client speaks.
 *
 * Do not "fix" these types toward A2A 1.0 (enum-style states, `oneof` parts, no `kind`): every
 * store's rows and every agent would change with them. A 1.0 shape belongs in the 1.0 codec.
 */

export const A2A_PROTOCOL_VERSION = '0.3.0';

export type Role = 'user' | 'agent';

/** §6.3 TaskState. */
export type TaskState =
  | 'submitted'
  | 'working'
  | 'input-required'
  | 'completed'
  | 'canceled'
  | 'failed'
  | 'rejected'
  | 'auth-required'
  | 'unknown';

export type Metadata = Record<string, unknown>;

export interface TextPart {
  kind: 'text';
  text: string;
  metadata?: Metadata;
}

export interface FileWithBytes {
  /** base64-encoded content. */
  bytes: string;
  name?: string;
  mimeType?: string;
}

export interface FileWithUri {
  uri: string;
  name?: string;
  mimeType?: string;
}

export interface FilePart {
  kind: 'file';
  file: FileWithBytes | FileWithUri;
  metadata?: Metadata;
}

export interface DataPart {
  kind: 'data';
  data: Record<string, unknown>;
  metadata?: Metadata;
}

export type Part = TextPart | FilePart | DataPart;

/**
 * §6.4 Message, as A2A 0.3 puts it on the wire (see the top of this file): the runtime, the agent
 * and the stores use this shape whatever version the client speaks; the 1.0 codec translates.
 */
export interface Message {
  kind: 'message';
  messageId: string;
  role: Role;
  parts: Part[];
  contextId?: string;
  taskId?: string;
  referenceTaskIds?: string[];
  extensions?: string[];
  metadata?: Metadata;
}

/** §6.2 TaskStatus. */
export interface TaskStatus {
  state: TaskState;
  message?: Message;
  /** ISO 8601 timestamp. */
  timestamp?: string;
}

/** §6.7 Artifact. */
export interface Artifact {
  artifactId: string;
  parts: Part[];
  name?: string;
  description?: string;
  extensions?: string[];
  metadata?: Metadata;
}

/**
 * §6.1 Task, as A2A 0.3 puts it on the wire (see the top of this file): what stores persist and
 * streams replay, whatever version the client speaks; the 1.0 codec translates at the edge.
 */
export interface Task {
  kind: 'task';
  id: string;
  contextId: string;
  status: TaskStatus;
  history?: Message[];
  artifacts?: Artifact[];
  metadata?: Metadata;
  /**
   * The A2A 1.1 draft's task generation (§3.2.7 of the spec's `dev-1.1` branch): 1 at creation, +1
   * for every event of the log that {@link advancesGeneration} (model/task-state.ts). Kept on every
   * snapshot, whatever the options, so it is right the day the option is turned on; sent only to
   * 1.0 clients of an agent with `draft11.generations` on. Absent on a task last written before
   * this field existed (it counts from 1 at its next change).
   */
  generation?: number;
}

/** §7.2.2 TaskStatusUpdateEvent. */
export interface TaskStatusUpdateEvent {
  kind: 'status-update';
  taskId: string;
  contextId: string;
  status: TaskStatus;
  /** True when this is the last event of the stream (terminal or interrupted state). */
  final: boolean;
  metadata?: Metadata;
  /**
   * The task's generation after this event (A2A 1.1 draft §3.2.7). Never stored in the log: a
   * stream sets it on a copy of the event it sends when `draft11.generations` is on.
   */
  generation?: number;
}

/** §7.2.3 TaskArtifactUpdateEvent. */
export interface TaskArtifactUpdateEvent {
  kind: 'artifact-update';
  taskId: string;
  contextId: string;
  artifact: Artifact;
  /** Append these parts to the artifact with the same artifactId instead of replacing it. */
  append?: boolean;
  /** This is the last chunk of the artifact. */
  lastChunk?: boolean;
  metadata?: Metadata;
  /** As {@link TaskStatusUpdateEvent.generation}: set on a streamed copy only, never stored. */
  generation?: number;
}

/** Items of a message/stream or tasks/resubscribe response (§7.2.1 SendStreamingMessageResponse). */
export type StreamResult = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent;

/** Internal marker: the turn `turnId` ended with the task still non-final (e.g. `working`). */
export interface TurnEndEvent {
  kind: 'turn-end';
  taskId: string;
  contextId: string;
  /**
   * The messageId of the user message that started the turn, kept under its stored name: events
   * already in a task's log carry `turnId`, as does the SQL stores' column (the store contract
   * itself now says `messageId`).
   */
  turnId: string;
}

/**
 * What a task's event log holds. `task` creates the task; a `message` appends a user message to the
 * history (a follow-up on an existing task); status and artifact updates are the A2A stream events
 * (§7.2); `turn-end` is internal and never sent to clients.
 */
export type TaskEvent = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent | TurnEndEvent;

// ---- Push notifications (§6.8–6.10) ----

export interface PushNotificationAuthenticationInfo {
  schemes: string[];
  credentials?: string;
}

export interface PushNotificationConfig {
  id?: string;
  url: string;
  token?: string;
  authentication?: PushNotificationAuthenticationInfo;
}

export interface TaskPushNotificationConfig {
  taskId: string;
  pushNotificationConfig: PushNotificationConfig;
}

// ---- Method parameters (§7) ----

export interface MessageSendConfiguration {
  acceptedOutputModes?: string[];
  historyLength?: number;
  pushNotificationConfig?: PushNotificationConfig;
  /** When false the server returns as soon as the task exists (§7.1.1). Default true. */
  blocking?: boolean;
  /**
   * A2A 1.1 draft (§3.2.7) `ifGenerationMatch`: a follow-up is refused (TASK_GENERATION_MISMATCH)
   * unless its task's generation is this one. Ignored for a message that creates a task.
   */
  ifGenerationMatch?: number;
}

export interface MessageSendParams {
  message: Message;
  configuration?: MessageSendConfiguration;
  metadata?: Metadata;
}

export interface TaskIdParams {
  id: string;
  metadata?: Metadata;
}

export interface TaskQueryParams extends TaskIdParams {
  historyLength?: number;
  /**
   * A2A 1.1 draft (§3.2.7) long-poll: answer once the task's generation is greater than this one,
   * or after the agent's bounded wait, with the task as it then is.
   */
  currentGeneration?: number;
}

/**
 * ListTasks (A2A 1.0 ListTasksRequest; A2A 0.3 HTTP+JSON `GET /v1/tasks`). The tenant, when the
 * binding carries one, is in the call's context.
 */
export interface ListTasksParams {
  /** Only tasks of this context. */
  contextId?: string;
  /** Only tasks in this state (the wire's `status` filter). */
  status?: TaskState;
  /** Only tasks whose status timestamp is at or after this instant (≥): an ISO 8601 timestamp. */
  statusTimestampAfter?: string;
  /** 1 to 100. @default 50 */
  pageSize?: number;
  /** The `nextPageToken` of the previous page; absent or `""` for the first page. */
  pageToken?: string;
  /** Keep only the N most recent messages of each task's history; 0 keeps none. @default all */
  historyLength?: number;
  /** @default false: `artifacts` is left out of every task. */
  includeArtifacts?: boolean;
}

/** A2A 1.0 ListTasksResponse. */
export interface ListTasksResult {
  /** Newest status timestamp first. */
  tasks: Task[];
  /** Pass it as `pageToken` for the next page; `""` on the last page. */
  nextPageToken: string;
  /** The page size used (the request's, or the default). */
  pageSize: number;
  /** How many tasks match the filters, over all pages. */
  totalSize: number;
}

export interface GetTaskPushNotificationConfigParams {
  id: string;
  pushNotificationConfigId?: string;
  metadata?: Metadata;
}

export interface ListTaskPushNotificationConfigParams {
  id: string;
  metadata?: Metadata;
}

export interface DeleteTaskPushNotificationConfigParams {
  id: string;
  pushNotificationConfigId: string;
  metadata?: Metadata;
}

// ---- Agent card (§5.5) ----

export interface AgentProvider {
  organization: string;
  url: string;
}

export interface AgentExtension {
  uri: string;
  description?: string;
  required?: boolean;
  params?: Record<string, unknown>;
}

export interface AgentCapabilities {
  streaming?: boolean;
  pushNotifications?: boolean;
  stateTransitionHistory?: boolean;
  extensions?: AgentExtension[];
  /** A2A 1.0 §4.4.3: the agent serves an extended card to authenticated callers (0.3: `supportsAuthenticatedExtendedCard`). */
  extendedAgentCard?: boolean;
}

export interface AgentSkill {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples?: string[];
  inputModes?: string[];
  outputModes?: string[];
  security?: Record<string, string[]>[];
}

export interface AgentInterface {
  url: string;
  transport: string;
}

/** A2A 1.0 §4.4.6 AgentInterface: one (binding, protocol version) the agent serves at a URL. */
export interface SupportedInterface {
  url: string;
  /** `JSONRPC`, `HTTP+JSON` or `GRPC`. */
  protocolBinding: string;
  /** Major.minor, e.g. `0.3` or `1.0`. */
  protocolVersion: string;
  tenant?: string;
}

export interface AgentCardSignature {
  protected: string;
  signature: string;
  header?: Record<string, unknown>;
}

/** §5.5.2 SecurityScheme, an OpenAPI 3 security scheme object. */
export type SecurityScheme =
  | { type: 'apiKey'; name: string; in: 'query' | 'header' | 'cookie'; description?: string }
  | { type: 'http'; scheme: string; bearerFormat?: string; description?: string }
  | { type: 'oauth2'; flows: Record<string, unknown>; oauth2MetadataUrl?: string; description?: string }
  | { type: 'openIdConnect'; openIdConnectUrl: string; description?: string }
  | { type: 'mutualTLS'; description?: string };

export interface AgentCard {
  protocolVersion: string;
  name: string;
  description: string;
  url: string;
  preferredTransport?: string;
  additionalInterfaces?: AgentInterface[];
  iconUrl?: string;
  provider?: AgentProvider;
  version: string;
  documentationUrl?: string;
  capabilities: AgentCapabilities;
  securitySchemes?: Record<string, SecurityScheme>;
  security?: Record<string, string[]>[];
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: AgentSkill[];
  supportsAuthenticatedExtendedCard?: boolean;
  signatures?: AgentCardSignature[];
  /**
   * A2A 1.0 §4.4.1: every (binding, version) served, the preferred first. The card served to all
   * clients carries it beside 0.3's `url`, `preferredTransport` and `additionalInterfaces`.
   */
  supportedInterfaces?: SupportedInterface[];
}

export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set(['completed', 'canceled', 'failed', 'rejected']);
/** States in which a task waits for the client (§6.3): streams end, the task is not terminal. */
export const INTERRUPTED_STATES: ReadonlySet<TaskState> = new Set(['input-required', 'auth-required']);

export function isTerminalState(state: TaskState): boolean {
  return TERMINAL_STATES.has(state);
}

/** A status that ends a stream: terminal or interrupted (§7.2 `final`). */
export function isFinalState(state: TaskState): boolean {
  return TERMINAL_STATES.has(state) || INTERRUPTED_STATES.has(state);
}
