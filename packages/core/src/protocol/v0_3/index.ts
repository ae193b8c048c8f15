export { A2A_0_3_VERSION, json0_3, json0_3Caller, jsonRpc0_3 } from './jsonrpc.js';
export { protoJson0_3, protoJson0_3Caller, rest0_3 } from './rest.js';
export * as schemas0_3 from './schemas.js';
