/**
 * Task generations (A2A 1.1 draft §3.2.7) across real worker processes on one store: two clients
 * racing follow-ups with the same ifGenerationMatch on two workers (exactly one wins), a long-poll
 * on one worker woken by a change made on another, a stream resumed on another worker, and the
 * generation a new worker reports after a restart. The workers are ../multi-worker/worker.ts.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextId, postSse, readSse, rpcBody } from '../helpers.js';
import { Cluster, type Worker } from '../multi-worker/cluster.js';

type Json = Record<string, unknown>;

export interface GenerationClusterOptions {
  name: string;
  storeUrl: () => string;
}

const message1_0 = (text: string, taskId?: string): Json => ({
  messageId: nextId(),
  role: 'ROLE_USER',
  parts: [{ text }],
  ...(taskId === undefined ? {} : { taskId }),
});

/** A 1.0 JSON-RPC call to one worker: the whole response body. */
async function call(worker: Worker, method: string, params: unknown): Promise<Json> {
  const res = await fetch(`${worker.url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify(rpcBody(method, params)),
  });
  return (await res.json()) as Json;
}

async function task(worker: Worker, id: string, currentGeneration?: number): Promise<Json> {
  const body = await call(worker, 'GetTask', currentGeneration === undefined ? { id } : { id, currentGeneration });
  if (body.error !== undefined) throw new Error(`GetTask failed: ${JSON.stringify(body.error)}`);
  return body.result as Json;
}

/** A task waiting for input (the worker agent's `ask:`), with its generation. */
async function askingTask(worker: Worker): Promise<{ id: string; generation: number }> {
  const body = await call(worker, 'SendMessage', { message: message1_0('ask:which one?') });
  const created = (body.result as Json | undefined)?.task as Json | undefined;
  if (created === undefined) throw new Error(`SendMessage failed: ${JSON.stringify(body)}`);
  expect((created.status as Json).state).toBe('TASK_STATE_INPUT_REQUIRED');
  return { id: created.id as string, generation: created.generation as number };
}

const reasonOf = (error: Json): unknown =>
  (error.data as Json[] | undefined)?.find((d) => String(d['@type']).endsWith('ErrorInfo'))?.reason;

export function generationClusterScenarios(options: GenerationClusterOptions): void {
  describe(`${options.name}: task generations across two worker processes`, () => {
    let cluster: Cluster;
    const w = (n: number): Worker => cluster.worker(`w${n}`);

    beforeAll(async () => {
      cluster = await new Cluster({
        storeUrl: options.storeUrl(),
        workers: 2,
        env: { DRAFT11_GENERATIONS: '1', LONG_POLL_MAX_WAIT_MS: '20000' },
      }).start();
    }, 60_000);
    afterAll(async () => {
      await cluster?.stop();
    });

    it('lets exactly one of two follow-ups racing with the same ifGenerationMatch through, on two workers', async () => {
      for (let round = 0; round < 4; round++) {
        const { id, generation } = await askingTask(w(1 + (round % 2)));
        const race = (worker: Worker) =>
          call(worker, 'SendMessage', {
            message: message1_0(`answer from ${worker.id}`, id),
            configuration: { ifGenerationMatch: generation },
          });
        const answers = await Promise.all([race(w(1)), race(w(2))]);
        const won = answers.filter((a) => a.result !== undefined);
        const lost = answers.filter((a) => a.error !== undefined);
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(1);
        const error = (lost[0] as Json).error as Json;
        expect(error.code).toBe(-32010);
        expect(reasonOf(error)).toBe('TASK_GENERATION_MISMATCH');
        // The winner completed the task: one recorded message, then its turn's changes.
        const winner = ((won[0] as Json).result as Json).task as Json;
        expect((winner.status as Json).state).toBe('TASK_STATE_COMPLETED');
        expect(winner.generation as number).toBeGreaterThan(generation + 1);
        // Both workers report the same generation, the one the winner answered with.
        expect((await task(w(1), id)).generation).toBe(winner.generation);
        expect((await task(w(2), id)).generation).toBe(winner.generation);
        // Only the winner's message is in the history.
        const history = (await task(w(2), id)).history as Json[];
        expect(history.filter((m) => m.role === 'ROLE_USER')).toHaveLength(2);
      }
    });

    it('refuses a stale ifGenerationMatch with -32010 after the winner completed the task, on the other worker', async () => {
      const { id, generation } = await askingTask(w(1));
      const winner = await call(w(1), 'SendMessage', {
        message: message1_0('first', id),
        configuration: { ifGenerationMatch: generation },
      });
      expect((((winner.result as Json).task as Json).status as Json).state).toBe('TASK_STATE_COMPLETED');
      const loser = await call(w(2), 'SendMessage', {
        message: message1_0('second', id),
        configuration: { ifGenerationMatch: generation },
      });
      expect((loser.error as Json).code).toBe(-32010);
    });

    it('wakes a long-poll held on one worker with a change made on the other', async () => {
      const { id, generation } = await askingTask(w(1));
      let answered = false;
      const held = task(w(1), id, generation).then((value) => {
        answered = true;
        return value;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(answered).toBe(false);
      const followUp = await call(w(2), 'SendMessage', { message: message1_0('go on', id) });
      expect(followUp.result).toBeDefined();
      // Answered with a newer generation: woken (the bound is 20 s, beyond this test's timeout).
      const woken = await held;
      expect(woken.generation as number).toBeGreaterThan(generation);
    });

    it('numbers a stream resumed on the other worker (Last-Event-ID) as the log does', async () => {
      const request = { message: message1_0('tick:6:60') };
      const first = await postSse(`${w(1).url}/a2a`, rpcBody('SendStreamingMessage', request), {
        'a2a-version': '1.0',
      });
      const seen: { id: string; item: Json }[] = [];
      for await (const event of readSse(first)) {
        seen.push({ id: event.id as string, item: (event.data as Json).result as Json });
        if (seen.length === 4) break;
      }
      const taskId = (((seen[0] as { item: Json }).item as Json).task as Json).id as string;
      const lastId = (seen[seen.length - 1] as { id: string }).id;
      const resumed = await postSse(`${w(2).url}/a2a`, rpcBody('SendStreamingMessage', request), {
        'a2a-version': '1.0',
        'last-event-id': lastId,
      });
      const rest: Json[] = [];
      for await (const event of readSse(resumed)) rest.push((event.data as Json).result as Json);
      const generations = [...seen.slice(1).map((s) => s.item), ...rest].map(
        (item) => ((item.statusUpdate ?? item.artifactUpdate) as Json).generation,
      );
      // One stream's worth of changes, continued without a gap or a repeat across the workers.
      expect(generations).toEqual(generations.map((_, i) => 2 + i));
      expect((await task(w(1), taskId)).generation).toBe(generations[generations.length - 1]);
    });

    it('reports the same generation from a new worker after a restart', async () => {
      const { id } = await askingTask(w(1));
      await call(w(1), 'SendMessage', { message: message1_0('done', id) });
      const before = (await task(w(1), id)).generation as number;
      expect(before).toBeGreaterThan(1);
      await cluster.kill('w1', 'SIGTERM');
      await cluster.kill('w2', 'SIGTERM');
      const fresh = await cluster.startWorker('w3');
      expect((await task(fresh, id)).generation).toBe(before);
    });
  });
}
