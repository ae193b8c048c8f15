/**
 * What a push notification's body is, by the A2A version its config was set with: A2A 0.3 (§9.5)
 * POSTs the Task itself; A2A 1.0 (§3.3, §4.3.3) POSTs a StreamResponse carrying it, in ProtoJSON.
 *
 * The delivery job (runtime/jobs/push.ts) asks here rather than reaching into the protocol layer,
 * so the runtime holds no codec; the 1.0 form is the 1.0 codec's own stream item, so a push body
 * and a streamed task are written by the same code.
 */

import type { Task } from '../model/types.js';
import { task0_3 } from '../protocol/v0_3/jsonrpc.js';
import { protoJson1_0 } from '../protocol/v1_0/codec.js';
import type { PushProtocolVersion } from '../store/index.js';

/** The JSON body of a push notification carrying `task` to a config set with `protocolVersion`. */
export function pushPayload(task: Task, protocolVersion: PushProtocolVersion): unknown {
  // Neither carries the A2A 1.1 draft's `generation` (a feature of the 1.0 bindings' answers and
  // streams only, docs/interop.md).
  return protocolVersion === '1.0' ? protoJson1_0.encodeStreamItem(task) : task0_3(task);
}
