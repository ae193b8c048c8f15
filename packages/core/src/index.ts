/**
 * `@fastify-a2a/core`: what the plugin, the stores, the gRPC binding, the client and applications
 * use. Every name is listed, so a helper added inside core stays internal until it is put here on
 * purpose. `@fastify-a2a/core/protocol` (protocol-entry.ts) is the protocol layer alone.
 */

// ---- The model: A2A's objects as the runtime and the stores hold them (A2A 0.3's wire shape) ----

export { DATA_PART_COMPAT_FLAG, dataPart, dataValue } from './model/data-part.js';
export { applyEvents } from './model/task-state.js';
export type {
  AgentCapabilities,
  AgentCard,
  AgentCardSignature,
  AgentExtension,
  AgentInterface,
  AgentProvider,
  AgentSkill,
  Artifact,
  DataPart,
  DeleteTaskPushNotificationConfigParams,
  FilePart,
  FileWithBytes,
  FileWithUri,
  GetTaskPushNotificationConfigParams,
  ListTaskPushNotificationConfigParams,
  ListTasksParams,
  ListTasksResult,
  Message,
  MessageSendConfiguration,
  MessageSendParams,
  Metadata,
  Part,
  PushNotificationAuthenticationInfo,
  PushNotificationConfig,
  Role,
  SecurityScheme,
  StreamResult,
  SupportedInterface,
  Task,
  TaskArtifactUpdateEvent,
  TaskEvent,
  TaskIdParams,
  TaskPushNotificationConfig,
  TaskQueryParams,
  TaskState,
  TaskStatus,
  TaskStatusUpdateEvent,
  TextPart,
  TurnEndEvent,
} from './model/types.js';
export {
  A2A_PROTOCOL_VERSION,
  INTERRUPTED_STATES,
  isFinalState,
  isTerminalState,
  TERMINAL_STATES,
} from './model/types.js';

// ---- Errors: one coded error, its table to JSON-RPC codes and HTTP statuses ----

export type { A2AErrorCode, A2AErrorOptions, ErrorMapping } from './errors.js';
export {
  A2AError,
  DuplicateMessageError,
  ERROR_TABLE,
  invalidParams,
  JsonRpcErrorCode,
  jsonRpcCodeFor,
  lastEventIdPastEnd,
  taskGenerationMismatch,
  taskNotCancelable,
  taskNotFound,
  VersionConflictError,
} from './errors.js';

// ---- Small shared pieces: JSON objects, the logger, multi-maps, telemetry ----

export type { JsonObject } from './json.js';
export { cloneJson, isJsonObject, MAX_JSON_DEPTH } from './json.js';
export type { Logger } from './logger.js';
export { silentLogger } from './logger.js';
export type { MultiMap } from './multi-map.js';
export { multiMapAdd, multiMapDelete, multiMapHas, multiMapValues } from './multi-map.js';
export type { PushAttemptOutcome, PushTelemetry, RequestTelemetry, Telemetry } from './telemetry.js';
export { monotonicSeconds, noTelemetry } from './telemetry.js';

// ---- The agent: what an application implements ----

export type { AgentExecutor, AgentExecutorLike, ArtifactInput, MessageInput, TurnContext } from './executor.js';
export { textOf, toAgentMessage, toArtifact, toExecutor } from './executor.js';

// ---- The protocol layer: operations, dispatch, bindings, access rules, a codec per version ----

export type { AccessRule, OperationGroup } from './protocol/access-rules.js';
export { accessRules, allOf, permissionDenied } from './protocol/access-rules.js';
export type {
  JsonRpcBindingOptions,
  JsonRpcErrorObject,
  JsonRpcErrorResponse,
  JsonRpcId,
  JsonRpcOutcome,
  JsonRpcReply,
  JsonRpcRequest,
  JsonRpcResponse,
  JsonRpcSuccessResponse,
} from './protocol/bindings/jsonrpc.js';
export { errorResponse, JsonRpcBinding } from './protocol/bindings/jsonrpc.js';
export type { RestBindingOptions, RestMethod, RestOutcome, RestReply } from './protocol/bindings/rest.js';
export { RestBinding } from './protocol/bindings/rest.js';
export type { CardSignatureForm } from './protocol/card-signature.js';
export { canonicalCardPayload, cardSignatureFormOf } from './protocol/card-signature.js';
export type {
  CallerCodec,
  JsonRpcMapping,
  ProtocolCodec,
  RestErrorResponse,
  RestMapping,
  RestRequest,
  RestRoute,
} from './protocol/codec.js';
export type {
  BindingName,
  CallContext,
  CallContextInit,
  Caller,
  Principal,
  ProtocolVersion,
  StreamSignal,
} from './protocol/context.js';
export { callContext } from './protocol/context.js';
export type {
  AuthorizeHook,
  DeclaredCapabilities,
  Dispatched,
  DispatcherOptions,
  MessageCheck,
} from './protocol/dispatch.js';
export { Dispatcher, publicError } from './protocol/dispatch.js';
export { declaresTaskGenerations, TASK_GENERATION_EXTENSION, taskGenerationExtension } from './protocol/draft11.js';
export type {
  A2AService,
  Capability,
  OperationName,
  OperationParams,
  OperationResult,
  OperationSpec,
  OperationTypes,
  StreamFrame,
} from './protocol/operations.js';
export { isOperationName, OPERATIONS } from './protocol/operations.js';
export { encodePushNotification } from './protocol/push-notification.js';
export { A2A_0_3_VERSION, json0_3, json0_3Caller, jsonRpc0_3 } from './protocol/v0_3/jsonrpc.js';
export { protoJson0_3, protoJson0_3Caller, rest0_3 } from './protocol/v0_3/rest.js';
export {
  METHOD_NAMES_1_0,
  protoJson1_0,
  protoJson1_0Caller,
  protoJson1_0WithGenerations,
} from './protocol/v1_0/codec.js';
export { ERROR_TABLE_1_0, errorDetails } from './protocol/v1_0/errors.js';
// The 1.0 writers under their versioned names (protocol/v1_0/index.ts names them).
export {
  cardOut1_0,
  STATE_FROM_WIRE_1_0,
  STATE_TO_WIRE_1_0,
  securityRequirementsOut1_0,
  securitySchemeOut1_0,
} from './protocol/v1_0/index.js';
export { A2A_1_0_VERSION, jsonRpc1_0, jsonRpc1_0WithGenerations } from './protocol/v1_0/jsonrpc.js';
export { rest1_0, rest1_0WithGenerations } from './protocol/v1_0/rest.js';

// ---- The store contract and kit (store/) and ListTasks paging (task-list.ts) ----

export type {
  A2AStore,
  ClaimPushDeliveriesRequest,
  Clock,
  CommitRequest,
  CommitResult,
  CompletePushDeliveryRequest,
  ContextRecord,
  ContextStore,
  CoordinationStore,
  EnqueueTurnRequest,
  EventNotifier,
  ExpiredWorker,
  FailPushAttemptRequest,
  IndexedMessage,
  InterruptedTasksQuery,
  ListTasksOptions,
  MessageIndexEntry,
  PurgeResult,
  PushClaimKey,
  PushConfigRecord,
  PushDelivery,
  PushDeliveryFilter,
  PushDeliveryState,
  PushProtocolVersion,
  PushStore,
  QueueSlot,
  ReadEventsOptions,
  SavePushConfigRequest,
  StoreCallContext,
  StoreCapabilities,
  StoredEvent,
  StoredPushConfig,
  TaskListCursor,
  TaskListPage,
  TaskListQuery,
  TaskRecord,
  TaskStore,
  TurnReadiness,
  Unsubscribe,
  WorkerDescription,
  WorkerRecord,
} from './store/index.js';
export {
  checkCommitRequest,
  checkPushConfigRequest,
  hasPushStore,
  indexedMessageIds,
  indexedMessages,
  messageDigest,
  NO_STATUS_TIMESTAMP,
  statusTimestampOf,
  systemClock,
} from './store/index.js';
export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './task-list.js';

// ---- The store kit: what every adapter shares (store/kit.ts, sql-rows.ts, subscribers.ts, recent-events.ts) ----

export type {
  ContextRow,
  EpochColumn,
  EventRow,
  ListedTaskKey,
  MessageIndexRow,
  PushConfigRow,
  PushDeliveryRow,
  QueueSlotRow,
  RecentEventsLimits,
  TaskListConditions,
  TaskRow,
  WorkerDescriptionRow,
} from './store/index.js';
export {
  ACTIVE_STATES,
  ANONYMOUS_SCOPE,
  FINAL_STATES,
  fromRow,
  fullStoreCapabilities,
  LIST_FILTER,
  LIST_SHAPES,
  perListShape,
  pushTaskListFilters,
  RECENT_EVENTS_DEFAULTS,
  RecentEvents,
  SQL_STATE_LISTS,
  Subscribers,
  savedPushConfigRecord,
  sqlStateList,
  TASK_STATES,
  taskListPage,
  taskListShape,
  taskListWhere,
  toContextRecord,
  toMessageIndexEntry,
  toPushConfigRecord,
  toPushDelivery,
  toQueueSlot,
  toStoredEvent,
  toTaskRecord,
  toWorkerRecord,
} from './store/index.js';

// ---- Push delivery: the webhook types the push options name ----

export type { ResolvedAddress, Resolver } from './push/destination.js';
export type { TlsCa } from './push/webhook.js';

// ---- The runtime, and the service through which dispatch calls it ----

export type {
  A2ARuntimeOptions,
  Draft11Options,
  DrainSummary,
  InterruptedExpiryOptions,
  PushDestinationOptions,
  PushNotificationEncoder,
  PushOptions,
  RetentionOptions,
  StreamOptions,
} from './runtime.js';
export {
  A2ARuntime,
  checkPushOptions,
  configIdOf,
  LONG_POLL_DEFAULT_MS,
  LONG_POLL_MAX_MS,
  notificationHeaders,
  OperatorActions,
  PUSH_DEFAULTS,
} from './runtime.js';
export type { RuntimeServiceOptions } from './runtime-service.js';
export { RuntimeService } from './runtime-service.js';
