/**
 * Interop: the client against the official SDK servers, @a2a-js/sdk 0.3.14 and 1.3.0, over the
 * bindings each offers (JSON-RPC and HTTP+JSON): send, stream, get, cancel, list (a 1.0 method).
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type A2AClient, type Binding, connect } from '../src/index.js';
import { type SdkServer, startSdk03, startSdk13 } from './sdk-servers.js';

const CASES: [string, () => Promise<SdkServer>, Binding, '1.0' | '0.3'][] = [
  ['@a2a-js/sdk 1.3.0', startSdk13, 'JSONRPC', '1.0'],
  ['@a2a-js/sdk 1.3.0', startSdk13, 'HTTP+JSON', '1.0'],
  ['@a2a-js/sdk 0.3.14', startSdk03, 'JSONRPC', '0.3'],
  ['@a2a-js/sdk 0.3.14', startSdk03, 'HTTP+JSON', '0.3'],
];

describe.each(CASES)('the client against %s over %s %s', (_name, start, binding, version) => {
  let server: SdkServer;
  let client: A2AClient;
  beforeAll(async () => {
    server = await start();
    client = await connect(server.url, { preferences: [{ binding, version }], freshCard: true, timeoutMs: 15_000 });
    expect(client.endpoint).toMatchObject({ binding, version });
  });
  afterAll(() => server?.close());

  it('sends (blocking), then gets the task', async () => {
    const { result, done } = await client.send({ text: 'hello there' });
    expect(done).toBe(true);
    if (result.kind !== 'task') throw new Error(`expected a task, got ${JSON.stringify(result)}`);
    expect(result.status.state).toBe('completed');
    const parts = (result.artifacts ?? []).flatMap((a) => a.parts).map((p) => (p.kind === 'text' ? p.text : ''));
    expect(parts.join(' ')).toBe('hello there');
    const got = await client.getTask(result.id);
    expect(got).toMatchObject({ id: result.id, contextId: result.contextId, status: { state: 'completed' } });
  });

  it('streams the task, its artifact chunks and the final status, in order', async () => {
    const kinds: string[] = [];
    const words: string[] = [];
    for await (const { result } of client.stream({ text: 'one two three' })) {
      kinds.push(result.kind);
      if (result.kind === 'artifact-update')
        words.push(result.artifact.parts[0]?.kind === 'text' ? result.artifact.parts[0].text : '');
    }
    expect(kinds[0]).toBe('task');
    expect(words).toEqual(['one', 'two', 'three']);
    expect(kinds.at(-1)).toBe('status-update');
  });

  it('cancels a running task', async () => {
    const { result } = await client.send({ text: 'sleep:5000' }, { blocking: false });
    if (result.kind !== 'task') throw new Error('expected a task');
    const canceled = await client.cancelTask(result.id);
    expect(canceled.id).toBe(result.id);
    expect((await client.getTask(result.id)).status.state).toBe('canceled');
  });

  it('lists tasks (1.0), or says 0.3 JSON-RPC has no list', async () => {
    const { result } = await client.send({ text: 'listed' });
    if (version === '0.3') {
      await expect(client.listTasksPage()).rejects.toMatchObject({ a2aCode: 'UNSUPPORTED_OPERATION' });
      return;
    }
    const ids: string[] = [];
    for await (const task of client.listTasks({ contextId: result.contextId as string, pageSize: 5 }))
      ids.push(task.id);
    expect(ids).toContain(result.kind === 'task' ? result.id : '');
  });

  it('names the protocol error of an unknown task', async () => {
    await expect(client.getTask('no-such-task')).rejects.toMatchObject({ kind: 'protocol', a2aCode: 'TASK_NOT_FOUND' });
  });
});
