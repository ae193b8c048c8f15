/**
 * The client against several real worker processes on one store (the fastify package's
 * multi-worker machinery), behind a round-robin balancer with no sticky sessions:
 * - a stream whose worker is SIGKILLed mid-turn resumes on another worker, and the caller gets
 *   every event exactly once, in order;
 * - a send whose answer is lost after the server read it is retried with the same messageId and
 *   returns the one task; the agent ran once.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster } from '../../fastify/test/multi-worker/cluster.js';
import { type A2AClient, type ClientStreamEvent, connectEndpoint } from '../src/index.js';
import { a2a as cli, ensureBuilt } from './cli-process.js';
import { Balancer } from './proxy.js';

export interface MultiWorkerOptions {
  name: string;
  storeUrl: () => Promise<string> | string;
}

export function clientMultiWorker(options: MultiWorkerOptions): void {
  describe(`the client on 3 workers on ${options.name}`, () => {
    let cluster: Cluster;
    let balancer: Balancer;
    const debug: string[] = [];
    const client = (version: '1.0' | '0.3' = '1.0'): A2AClient =>
      connectEndpoint(
        { url: `${balancer.url}/a2a`, binding: 'JSONRPC', version },
        { retry: { attempts: 6, baseDelayMs: 50, maxDelayMs: 400 }, debug: (line) => debug.push(line) },
      );

    beforeAll(async () => {
      ensureBuilt();
      cluster = await new Cluster({ storeUrl: await options.storeUrl(), workers: 3, leaseTtlMs: 3000 }).start();
      balancer = await new Balancer(() =>
        cluster.workers.map((w) => ({
          id: w.id,
          url: w.url,
          alive: () => w.process.exitCode === null && w.process.signalCode === null,
        })),
      ).start();
    }, 90_000);

    afterAll(async () => {
      await balancer?.stop();
      await cluster?.stop();
    });

    it.each(['1.0', '0.3'] as const)(
      'A2A %s: a stream whose worker is SIGKILLed mid-turn resumes on another worker, every event once and in order',
      async (version) => {
        const a2a = client(version);
        const before = balancer.routes.length;
        let killed: string | undefined;
        try {
          // The agent runs where the send lands; the subscription then lands on the next worker.
          const { result } = await a2a.send({ text: 'tick:10:150' }, { blocking: false });
          if (result.kind !== 'task') throw new Error('expected a task');
          const events: ClientStreamEvent[] = [];
          // The ticks as the caller sees them: those already written when the subscription opened
          // come in the Task it starts with (§7.9), the rest as artifact updates; on a loaded
          // machine the subscription may well open after the first tick.
          const ticks: string[] = [];
          for await (const event of a2a.subscribe(result.id, { timeoutMs: 30_000 })) {
            events.push(event);
            ticks.push(...ticksIn(event.result));
            if (ticks.length >= 3 && killed === undefined) {
              const routed = balancer.routes.slice(before);
              const streaming = routed.filter((r) => r.stream).at(-1)?.upstream as string;
              const running = routed.find((r) => r.body.includes('tick:10:150') && !r.stream)?.upstream;
              expect(streaming).not.toBe(running);
              killed = streaming;
              await cluster.kill(streaming, 'SIGKILL');
            }
          }
          expect(killed).toBeDefined();
          // Resumed through the balancer on a live worker, with Last-Event-ID.
          const resumed = balancer.routes.filter((r) => r.stream).at(-1);
          expect(resumed?.upstream).not.toBe(killed);
          expect(events[0]?.result.kind).toBe('task');
          expect(events.slice(1).some((e) => e.result.kind === 'task')).toBe(false);
          expect(ticks).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
          const ids = events.map((e) => Number(e.id));
          expect(new Set(ids).size).toBe(ids.length);
          expect(ids).toEqual([...ids].sort((a, b) => a - b));
          const last = events.at(-1)?.result;
          expect(last?.kind === 'status-update' && last.status.state).toBe('completed');
        } finally {
          // The killed worker is back for the next case, whatever this one's outcome.
          if (killed !== undefined) await cluster.startWorker(killed);
        }
      },
      60_000,
    );

    it('the a2a CLI: --async and --max-wait return a task id that task get --wait follows to completion, across workers', async () => {
      const endpoint = ['-e', `${balancer.url}/a2a`, '--transport', 'JSONRPC', '-o', 'json'];
      const started = await cli(['send', 'sleep:800', '--async', ...endpoint]);
      expect(started.code, started.stderr).toBe(0);
      const { task } = started.json() as { task: { id: string; status: { state: string } } };
      expect(task.status.state).not.toBe('TASK_STATE_COMPLETED');
      const waited = await cli(['task', 'get', task.id, '--wait', '--poll-interval', '100ms', ...endpoint]);
      expect(waited.code, waited.stderr).toBe(0);
      expect((waited.json() as { status: { state: string } }).status.state).toBe('TASK_STATE_COMPLETED');
      const bounded = await cli(['send', 'sleep:1500', '--max-wait', '300ms', '--poll-interval', '100ms', ...endpoint]);
      expect(bounded.code, bounded.stderr).toBe(0);
      const running = (bounded.json() as { task: { id: string; status: { state: string } } }).task;
      expect(running.status.state).toMatch(/TASK_STATE_(SUBMITTED|WORKING)/);
      const followed = await cli(['task', 'get', running.id, '--wait', '--poll-interval', '100ms', ...endpoint]);
      expect((followed.json() as { status: { state: string } }).status.state).toBe('TASK_STATE_COMPLETED');
      // The polls went round the workers: more than one answered for these tasks.
      const polled = new Set(balancer.routes.filter((r) => r.body.includes(running.id)).map((r) => r.upstream));
      expect(polled.size).toBeGreaterThan(1);
    });

    it('a send whose answer is lost after the server read it is retried and returns the one task; the agent ran once', async () => {
      const a2a = client();
      const marker = `lost-answer-${Date.now()}`;
      balancer.cutNextResponse((body) => body.includes(marker));
      const before = balancer.routes.length;
      const sent = await a2a.send({ text: marker });
      if (sent.result.kind !== 'task') throw new Error('expected a task');
      expect(sent.result.status.state).toBe('completed');
      const tries = balancer.routes.slice(before).filter((r) => r.body.includes(marker));
      // The first answer was cut; the retry carried the same messageId, on another worker.
      expect(tries.length).toBe(2);
      expect(new Set(tries.map((t) => JSON.parse(t.body).params.message.messageId)).size).toBe(1);
      expect(tries[0]?.upstream).not.toBe(tries[1]?.upstream);
      const starts = cluster.trace().filter((t) => t.event === 'start' && t.text?.includes(marker));
      expect(starts).toHaveLength(1);
      expect(starts[0]?.taskId).toBe(sent.result.id);
      expect(debug.some((line) => /retry 1/.test(line))).toBe(true);
    });
  });
}

/**
 * The ticks an event carries, one character each: the `ticks` artifact's text in a Task (its
 * consecutive text chunks share one part there), or an update's chunk.
 */
function ticksIn(result: ClientStreamEvent['result']): string[] {
  const artifact =
    result.kind === 'task'
      ? result.artifacts?.find((a) => a.artifactId === 'ticks')
      : result.kind === 'artifact-update'
        ? result.artifact
        : undefined;
  return [...(artifact?.parts ?? []).map((part) => (part.kind === 'text' ? part.text : '?')).join('')];
}
