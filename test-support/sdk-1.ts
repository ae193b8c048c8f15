/**
 * Building requests for, and reading answers of, @a2a-js/sdk 1.3.0 (the A2A 1.0 line), whatever
 * transport the SDK client uses: its messages and requests carry every proto field.
 */
import { Role, type Message as SdkMessage, type Task as SdkTask } from '@a2a-js/sdk-1';
import { nextId } from './helpers.js';

function textPart(value: string) {
  return { content: { $case: 'text' as const, value }, metadata: undefined, filename: '', mediaType: '' };
}

/** A user message holding one text part, every other proto field empty unless `extra` sets it. */
export function message(value: string, extra: Partial<SdkMessage> = {}): SdkMessage {
  return {
    messageId: nextId('sdk1'),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [textPart(value)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  };
}

/** The SDK's request objects have every proto field; tests give the ones they mean. */
export const request = (fields: object): never => ({ tenant: '', ...fields }) as never;

export function textOf(parts: SdkMessage['parts'] | undefined): string {
  return (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

export function asSdkTask(result: SdkMessage | SdkTask): SdkTask {
  if (!('status' in result)) throw new Error(`expected a Task, got ${JSON.stringify(result)}`);
  return result;
}

/** The error `promise` rejects with; fails the test if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );
}

/** The members (`$case`) a stream's responses held in order, and the last response's payload. */
export async function streamedCases(
  stream: AsyncIterable<{ payload?: { $case: string } }>,
): Promise<{ cases: string[]; last: unknown }> {
  const cases: string[] = [];
  let last: unknown;
  for await (const event of stream) {
    cases.push(event.payload?.$case ?? 'none');
    last = event.payload;
  }
  return { cases, last };
}
