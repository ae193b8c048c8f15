/**
 * What the two ProtoJSON readers of the test client (0.3's HTTP+JSON in ./proto-json.ts, 1.0's in
 * ./proto-json-1.0.ts) read alike: strict checks of a member's JSON type, and the unions of an
 * answer (SendMessageResponse, StreamResponse) from the version's own readers of their members.
 */
import type {
  Artifact,
  Message,
  StreamResult,
  Task,
  TaskArtifactUpdateEvent,
  TaskStatusUpdateEvent,
} from '@fastify-a2a/core';

export type Json = Record<string, unknown>;

export const ROLES: Readonly<Record<string, Message['role']>> = { ROLE_USER: 'user', ROLE_AGENT: 'agent' };

export class ProtoJsonError extends Error {
  override name = 'ProtoJsonError';
}

/** An object without `kind` (a JSON-RPC spelling neither ProtoJSON has). */
export function object(value: unknown, what: string): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ProtoJsonError(`${what}: expected an object, got ${JSON.stringify(value)}`);
  }
  if ('kind' in value) throw new ProtoJsonError(`${what}: ProtoJSON has no "kind" member: ${JSON.stringify(value)}`);
  return value as Json;
}

export function array(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new ProtoJsonError(`${what}: expected an array, got ${JSON.stringify(value)}`);
  return value;
}

export function string(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new ProtoJsonError(`${what}: expected a string, got ${JSON.stringify(value)}`);
  return value;
}

/** Copies the optional members that are the same in both shapes. */
export function copyOptional<T extends object>(target: T, from: Json, keys: readonly string[]): T {
  for (const key of keys) if (from[key] !== undefined) (target as Json)[key] = from[key];
  return target;
}

/** A version's readers of the members an answer's unions hold. */
export interface MemberReaders {
  taskFrom(wire: unknown): Task;
  messageFrom(wire: unknown): Message;
  statusUpdateFrom(wire: unknown): TaskStatusUpdateEvent;
  artifactFrom(wire: unknown, what: string): Artifact;
}

/** Readers of SendMessageResponse and StreamResponse built on one version's member readers. */
export function answerReaders({ taskFrom, messageFrom, statusUpdateFrom, artifactFrom }: MemberReaders): {
  sendResultFrom(wire: unknown): Task | Message;
  streamItemFrom(wire: unknown): StreamResult;
} {
  function artifactUpdateFrom(wire: unknown): TaskArtifactUpdateEvent {
    const event = object(wire, 'artifactUpdate');
    const out: TaskArtifactUpdateEvent = {
      kind: 'artifact-update',
      taskId: string(event.taskId, 'artifactUpdate.taskId'),
      contextId: string(event.contextId, 'artifactUpdate.contextId'),
      artifact: artifactFrom(event.artifact, 'artifactUpdate.artifact'),
    };
    return copyOptional(out, event, ['append', 'lastChunk', 'metadata']);
  }

  return {
    /** §7.1 SendMessageResponse: `{ task }` or `{ message }`. */
    sendResultFrom(wire) {
      const result = object(wire, 'SendMessageResponse');
      const members = Object.keys(result);
      if (members.length !== 1) {
        throw new ProtoJsonError(`SendMessageResponse: expected one of task, message: ${members}`);
      }
      if (result.task !== undefined) return taskFrom(result.task);
      if (result.message !== undefined) return messageFrom(result.message);
      throw new ProtoJsonError(`SendMessageResponse: expected task or message, got ${members}`);
    },
    /** §7.2 StreamResponse: exactly one of `task`, `message`, `statusUpdate`, `artifactUpdate`. */
    streamItemFrom(wire) {
      const item = object(wire, 'StreamResponse');
      const members = Object.keys(item);
      if (members.length !== 1) throw new ProtoJsonError(`StreamResponse: expected exactly one member, got ${members}`);
      if (item.task !== undefined) return taskFrom(item.task);
      if (item.message !== undefined) return messageFrom(item.message);
      if (item.statusUpdate !== undefined) return statusUpdateFrom(item.statusUpdate);
      if (item.artifactUpdate !== undefined) return artifactUpdateFrom(item.artifactUpdate);
      throw new ProtoJsonError(`StreamResponse: unknown member ${members}`);
    },
  };
}
