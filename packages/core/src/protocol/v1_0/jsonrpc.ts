/** A2A 1.0 over JSON-RPC (§9): PascalCase method names, ProtoJSON params and results, errors with ErrorInfo. */

import type { A2AError } from '../../errors.js';
import type { JsonRpcErrorObject } from '../bindings/jsonrpc.js';
import type { JsonRpcMapping } from '../codec.js';
import type { OperationName } from '../operations.js';
import { METHOD_NAMES_1_0, protoJson1_0, protoJson1_0WithGenerations } from './codec.js';
import { jsonRpcError1_0 } from './errors.js';

export const A2A_1_0_VERSION = '1.0';

export const jsonRpc1_0: JsonRpcMapping = {
  codec: protoJson1_0,
  versionString: A2A_1_0_VERSION,
  methods: new Map(Object.entries(METHOD_NAMES_1_0).map(([operation, method]) => [method, operation as OperationName])),
  error(error: A2AError): JsonRpcErrorObject {
    return jsonRpcError1_0(error);
  },
  refusedStreamAsEvent: false,
};

/** {@link jsonRpc1_0} with the A2A 1.1 draft's task generations (`draft11.generations`). */
export const jsonRpc1_0WithGenerations: JsonRpcMapping = { ...jsonRpc1_0, codec: protoJson1_0WithGenerations };
