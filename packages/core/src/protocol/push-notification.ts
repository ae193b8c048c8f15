/**
 * What a push notification's body is, by the A2A version its config was set with: A2A 0.3 (§9.5)
 * POSTs the Task itself; A2A 1.0 (§4.3.3) POSTs a StreamResponse carrying it, in ProtoJSON. Each is
 * its version's codec's own stream item, so a push body and a streamed task are written by the
 * same code.
 *
 * The runtime's delivery job holds no codec: whoever composes the bindings (the Fastify plugin)
 * passes this function as the runtime's `push.encodeNotification`, so push delivery never reaches
 * into the protocol layer.
 */

import type { Task } from '../model/types.js';
import type { ProtocolVersion } from './context.js';
import { json0_3 } from './v0_3/jsonrpc.js';
import { protoJson1_0 } from './v1_0/codec.js';

/** The JSON body of a push notification carrying `task` to a config set with `version`. */
export function encodePushNotification(task: Task, version: ProtocolVersion): unknown {
  return version === '1.0' ? protoJson1_0.encodeStreamItem(task) : json0_3.encodeStreamItem(task);
}
