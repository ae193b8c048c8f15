export { METHOD_NAMES_1_0, protoJson1_0, protoJson1_0Caller, protoJson1_0WithGenerations } from './codec.js';
export { ERROR_TABLE_1_0, errorDetails } from './errors.js';
export { A2A_1_0_VERSION, jsonRpc1_0, jsonRpc1_0WithGenerations } from './jsonrpc.js';
export {
  cardOut as cardOut1_0,
  STATE_FROM_WIRE as STATE_FROM_WIRE_1_0,
  STATE_TO_WIRE as STATE_TO_WIRE_1_0,
  securityRequirementsOut as securityRequirementsOut1_0,
  securitySchemeOut as securitySchemeOut1_0,
} from './proto-json.js';
export { rest1_0, rest1_0WithGenerations } from './rest.js';
export * as schemas1_0 from './schemas.js';
