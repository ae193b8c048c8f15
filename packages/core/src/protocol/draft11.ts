/**
 * The A2A 1.1 draft features this project serves opt-in (the specification's `dev-1.1` branch;
 * docs/interop.md): what an agent's card declares for them, so a client knows it may use them.
 */

import type { AgentCard, AgentExtension } from '../model/types.js';

/**
 * Task generations (§3.2.7 "Task Generation Semantics"): `generation` on Task and the update
 * events, GetTask `currentGeneration` (long-poll), SendMessageConfiguration `ifGenerationMatch`,
 * on the 1.0 JSON-RPC and HTTP+JSON bindings. The draft names no extension, so the URI is ours.
 */
export const TASK_GENERATION_EXTENSION = 'https://fastify-a2a.dev/extensions/a2a-1.1-draft/task-generation';

/** The `capabilities.extensions` entry of an agent serving task generations. */
export function taskGenerationExtension(longPollMaxWaitMs: number): AgentExtension {
  return {
    uri: TASK_GENERATION_EXTENSION,
    description:
      'A2A 1.1 draft task generations (§3.2.7), on the A2A 1.0 JSON-RPC and HTTP+JSON bindings: Task.generation and generation on status and artifact update events; GetTask currentGeneration long-polls; SendMessageConfiguration.ifGenerationMatch. Tracks a draft.',
    required: false,
    params: { longPollMaxWaitMs },
  };
}

/** Whether `card` declares task generations (a client uses them only then). */
export function declaresTaskGenerations(card: Pick<AgentCard, 'capabilities'> | undefined): boolean {
  const extensions = card?.capabilities?.extensions;
  return Array.isArray(extensions) && extensions.some((extension) => extension?.uri === TASK_GENERATION_EXTENSION);
}
