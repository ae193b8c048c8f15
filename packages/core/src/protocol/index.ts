export * from './access-rules.js';
export * from './bindings/jsonrpc.js';
export * from './bindings/rest.js';
export type {
  CallerCodec,
  JsonRpcMapping,
  ProtocolCodec,
  RestErrorResponse,
  RestMapping,
  RestRequest,
  RestRoute,
} from './codec.js';
export * from './context.js';
export * from './dispatch.js';
export * from './operations.js';
export * from './v0_3/index.js';
export * from './v1_0/index.js';
export * from './validation.js';
