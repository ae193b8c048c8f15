/**
 * One level of `npm run bench:tokens`: `streams` concurrent token streams, started evenly over one
 * second, each read to its end; every chunk's latency is its arrival (the bytes' arrival, before
 * parsing) minus the emit time the agent put in its part. Each stream's chunks are checked: every
 * index 0..count-1 exactly once, in order.
 */

import { randomUUID } from 'node:crypto';
import { hrNow, openSse } from '../cross-worker/sse.js';
import { tokenIndex } from './agent.js';

export interface LevelPlan {
  streams: number;
  chunks: number;
  perSecond: number;
  /** Where each stream's message is sent. */
  sendUrl: string;
  /**
   * Where the client reads: the same URL (message/stream), or another worker's, which it reads by
   * tasks/resubscribe after a non-blocking message/send to `sendUrl`.
   */
  readUrl: string;
  /** Spread of the stream starts, ms. */
  spreadMs: number;
  /** With `readUrl` on another worker: the agent waits this long before its first chunk. */
  resubscribeDelayMs: number;
}

export interface StreamOutcome {
  /** Chunks received as artifact-update events. */
  received: number;
  /** Chunks that were already in the task snapshot a resubscribe began with (no latency). */
  inSnapshot: number;
  lost: number;
  duplicated: number;
  outOfOrder: number;
  /** Whether the stream ended with a final status `completed`. */
  completed: boolean;
  error?: string;
}

export interface LevelOutcome {
  streams: StreamOutcome[];
  /** Every chunk's latency, ms. */
  latencies: number[];
  /** Every chunk's arrival (performance.timeOrigin-based ms), for the steady-state rate. */
  arrivals: number[];
  /** When the first stream started (same clock as `arrivals`). */
  startedAt: number;
  /** From the first start to the last stream's end, ms. */
  wallMs: number;
}

interface Frame {
  data: { result?: Record<string, unknown>; error?: unknown };
  receivedAtHr: number;
}

interface TextPart {
  kind?: string;
  text?: string;
}

function checkStream(
  frames: Frame[],
  plan: LevelPlan,
  latencies: number[],
  arrivals: number[],
): Omit<StreamOutcome, 'error'> {
  const seen = new Set<number>();
  let received = 0;
  let inSnapshot = 0;
  let duplicated = 0;
  let outOfOrder = 0;
  let last = -1;
  let completed = false;
  const note = (index: number): boolean => {
    if (!Number.isInteger(index) || index < 0 || index >= plan.chunks) return false;
    if (seen.has(index)) duplicated++;
    else seen.add(index);
    if (index < last) outOfOrder++;
    last = Math.max(last, index);
    return true;
  };
  for (const frame of frames) {
    const result = frame.data.result;
    if (!result) continue;
    if (result.kind === 'task') {
      const artifacts = (result.artifacts ?? []) as { parts?: TextPart[] }[];
      for (const artifact of artifacts)
        for (const part of artifact.parts ?? []) {
          // A snapshot may carry several chunks in one part's text: four characters each.
          for (let i = 0; i + 4 <= (part.text ?? '').length; i += 4)
            if (note(tokenIndex((part.text ?? '').slice(i, i + 4)))) inSnapshot++;
        }
    } else if (result.kind === 'artifact-update') {
      const artifact = result.artifact as { parts?: TextPart[]; metadata?: { t?: number } };
      for (const part of artifact.parts ?? []) {
        if (note(tokenIndex(part.text ?? ''))) {
          received++;
          arrivals.push(frame.receivedAtHr);
          const emittedAt = artifact.metadata?.t;
          if (typeof emittedAt === 'number') latencies.push(frame.receivedAtHr - emittedAt);
        }
      }
    } else if (result.kind === 'status-update') {
      const status = result.status as { state?: string };
      if (result.final === true || status.state === 'completed') completed = status.state === 'completed';
    }
  }
  return { received, inSnapshot, lost: plan.chunks - seen.size, duplicated, outOfOrder, completed };
}

async function postJson(url: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const json = (await response.json()) as { result?: Record<string, unknown>; error?: { message?: string } };
  if (!json.result) throw new Error(`HTTP ${response.status}: ${json.error?.message ?? 'no result'}`);
  return json.result;
}

function message(text: string): Record<string, unknown> {
  return { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] };
}

async function oneStream(plan: LevelPlan, latencies: number[], arrivals: number[]): Promise<StreamOutcome> {
  const timeoutMs = (plan.chunks / plan.perSecond) * 1000 + plan.resubscribeDelayMs + 60_000;
  const failed = (error: string): StreamOutcome => ({
    received: 0,
    inSnapshot: 0,
    lost: plan.chunks,
    duplicated: 0,
    outOfOrder: 0,
    completed: false,
    error,
  });
  let body: unknown;
  if (plan.readUrl === plan.sendUrl) {
    body = {
      jsonrpc: '2.0',
      id: 1,
      method: 'message/stream',
      params: { message: message(`tokens:${plan.chunks}:${plan.perSecond}`) },
    };
  } else {
    try {
      const task = await postJson(plan.sendUrl, {
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: {
          message: message(`tokens:${plan.chunks}:${plan.perSecond}:${plan.resubscribeDelayMs}`),
          configuration: { blocking: false },
        },
      });
      body = { jsonrpc: '2.0', id: 2, method: 'tasks/resubscribe', params: { id: task.id } };
    } catch (error) {
      return failed(`send: ${(error as Error).message}`);
    }
  }
  const stream = openSse(plan.readUrl, body, timeoutMs);
  const { frames, error, timedOut } = await stream.done;
  const outcome = checkStream(frames, plan, latencies, arrivals);
  const problem = error ?? (timedOut ? 'timed out' : outcome.completed ? undefined : 'ended without completed');
  return problem ? { ...outcome, error: problem } : outcome;
}

export async function runLevel(plan: LevelPlan): Promise<LevelOutcome> {
  const latencies: number[] = [];
  const arrivals: number[] = [];
  const startedAt = hrNow();
  const started = performance.now();
  const streams = await Promise.all(
    Array.from(
      { length: plan.streams },
      (_, i) =>
        new Promise<StreamOutcome>((resolve) => {
          setTimeout(() => resolve(oneStream(plan, latencies, arrivals)), (i * plan.spreadMs) / plan.streams);
        }),
    ),
  );
  return { streams, latencies, arrivals, startedAt, wallMs: performance.now() - started };
}

/**
 * The final task of a `chunks`-chunk answer without emit stamps: its JSON as tasks/get answers it
 * (bytes), the answer's text bytes, and the parts of its artifact.
 */
export async function finalTaskSize(
  url: string,
  chunks: number,
): Promise<{ taskBytes: number; textBytes: number; parts: number }> {
  const sent = await postJson(url, {
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: { message: message(`tokens:${chunks}:5000:0:plain`), configuration: { blocking: true } },
  });
  // The SDK answers a blocking send before its store has the last events: read until completed.
  for (let attempt = 0; attempt < 50; attempt++) {
    const task = await postJson(url, { jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: sent.id } });
    const state = (task.status as { state?: string } | undefined)?.state;
    if (state === 'completed') {
      const artifacts = (task.artifacts ?? []) as { parts?: TextPart[] }[];
      const parts = artifacts.flatMap((artifact) => artifact.parts ?? []);
      const textBytes = parts.reduce((sum, part) => sum + Buffer.byteLength(part.text ?? ''), 0);
      return { taskBytes: Buffer.byteLength(JSON.stringify(task)), textBytes, parts: parts.length };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the 300-chunk task did not complete');
}
