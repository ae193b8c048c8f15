/**
 * A2A v0.3.0 protocol objects (specification §6 "Protocol Data Objects" and §7 "Protocol RPC Methods").
 * Written from the specification text; field names follow the JSON wire format exactly.
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

/** §6.4 Message. */
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

/** §6.1 Task. */
export interface Task {
  kind: 'task';
  id: string;
  contextId: string;
  status: TaskStatus;
  history?: Message[];
  artifacts?: Artifact[];
  metadata?: Metadata;
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
}

/** Items of a message/stream or tasks/resubscribe response (§7.2.1 SendStreamingMessageResponse). */
export type StreamResult = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent;

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
}

// ---- JSON-RPC 2.0 envelopes ----

export type JsonRpcId = string | number | null;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id?: JsonRpcId;
  method: string;
  params?: unknown;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcSuccessResponse<T = unknown> {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: T;
}

export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: JsonRpcId;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse<T = unknown> = JsonRpcSuccessResponse<T> | JsonRpcErrorResponse;

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
