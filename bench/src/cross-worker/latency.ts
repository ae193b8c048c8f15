/**
 * Cross-worker event latency on one store: two workers A and B. For each task, the client sends
 * `stamp:<n>:<ms>:<delay>` with message/stream to the origin worker (the same-worker stream) and,
 * once the task exists, opens tasks/resubscribe on the other worker (the cross-worker stream). Every
 * artifact event is seen by both streams, so each gives a pair of samples: receive time − emittedAt
 * on the origin's stream and on the follower's.
 */

import { performance } from 'node:perf_hooks';
import { Cluster } from './cluster.js';
import { hrNow, openSse, type SseFrame } from './sse.js';
import { type CpuWindow, cpuWindow, type Distribution, distribution } from './stats.js';

export interface LatencyConfig {
  /** Tasks run one after another, A → B. */
  sequentialTasks: number;
  sequentialEvents: number;
  /** Tasks run at once, origins alternating A, B, A, … (followers the other worker). */
  concurrentTasks: number;
  concurrentEvents: number;
  intervalMs: number;
  /** The agent waits this long before its first event, so the follower's stream is open by then. */
  startDelayMs: number;
}

export type Phase = 'sequential' | 'concurrent';

export interface LatencySample {
  phase: Phase;
  task: number;
  i: number;
  origin: string;
  follower: string;
  /** ms, sub-ms clock (performance.timeOrigin + performance.now() in both processes). */
  same: number;
  cross: number;
  /** ms, Date.now() on both sides (1 ms resolution): the check on the clock above. */
  sameMs: number;
  crossMs: number;
}

export interface LatencySummary {
  same: Distribution;
  cross: Distribution;
  /** cross − same, per event. */
  extra: Distribution;
  /** Date.now()-based, for comparison with the sub-ms clock. */
  sameMs: Distribution;
  crossMs: Distribution;
}

export interface StoreLatencyResult {
  store: 'postgres' | 'sqlite';
  storeDescription: string;
  all: LatencySummary;
  byPhase: Record<Phase, LatencySummary>;
  /** Events expected on each stream, events that arrived, and problems (missing events, no final, timeouts). */
  checks: {
    tasks: number;
    expectedPerStream: number;
    sameReceived: number;
    crossReceived: number;
    /** Events emitted before the follower's stream had its snapshot: not counted. */
    excluded: number;
    problems: string[];
  };
  /** Where CPU went while the latency tasks ran (the machine is shared). */
  cpu: CpuWindow;
  wallMs: number;
  /** Measurements of this part (1 = the first one was kept); earlier ones were disturbed by other processes. */
  attempts?: number;
  /** The disturbance (cores used by other processes) of each discarded attempt. */
  discarded?: number[];
  /** Only in memory: the raw samples (not written to the results file). */
  samples: LatencySample[];
}

interface Stamp {
  i: number;
  emittedAt: number;
  emittedAtHr: number;
}

let nextMessage = 0;
const runTag = Math.random().toString(36).slice(2, 8);

function streamBody(text: string): unknown {
  nextMessage++;
  return {
    jsonrpc: '2.0',
    id: `xw-${runTag}-${nextMessage}`,
    method: 'message/stream',
    params: {
      message: {
        kind: 'message',
        messageId: `xw-${runTag}-m${nextMessage}`,
        role: 'user',
        parts: [{ kind: 'text', text }],
      },
    },
  };
}

function stampsOf(frames: SseFrame[]): Map<number, { stamp: Stamp; frame: SseFrame }> {
  const stamps = new Map<number, { stamp: Stamp; frame: SseFrame }>();
  for (const frame of frames) {
    const result = frame.data.result as
      | { kind?: string; artifact?: { parts?: { kind?: string; data?: Partial<Stamp> }[] } }
      | undefined;
    if (result?.kind !== 'artifact-update') continue;
    const data = result.artifact?.parts?.[0]?.data;
    if (typeof data?.i !== 'number' || typeof data.emittedAtHr !== 'number' || typeof data.emittedAt !== 'number')
      continue;
    stamps.set(data.i, { stamp: data as Stamp, frame });
  }
  return stamps;
}

function isFinal(frame: SseFrame | undefined): boolean {
  return (frame?.data.result as { final?: boolean } | undefined)?.final === true;
}

interface TaskOutcome {
  samples: LatencySample[];
  sameReceived: number;
  crossReceived: number;
  excluded: number;
  problems: string[];
}

async function runTask(
  cluster: Cluster,
  originIndex: number,
  phase: Phase,
  task: number,
  events: number,
  config: LatencyConfig,
): Promise<TaskOutcome> {
  const origin = cluster.worker(originIndex);
  const follower = cluster.worker(1 - originIndex);
  const timeoutMs = config.startDelayMs + events * config.intervalMs * 4 + 30_000;
  const problems: string[] = [];
  const same = openSse(
    origin.url,
    streamBody(`stamp:${events}:${config.intervalMs}:${config.startDelayMs}`),
    timeoutMs,
  );
  const first = await same.first;
  const snapshot = first.data.result as { kind?: string; id?: string } | undefined;
  if (snapshot?.kind !== 'task' || !snapshot.id)
    throw new Error(`message/stream began with ${JSON.stringify(first.data)}`);
  const taskId = snapshot.id;
  const cross = openSse(
    follower.url,
    { jsonrpc: '2.0', id: `xw-${runTag}-r${task}`, method: 'tasks/resubscribe', params: { id: taskId } },
    timeoutMs,
  );
  const crossOpenedAt = await cross.first.then(
    (frame) => frame.receivedAtHr,
    () => hrNow(),
  );
  const [sameDone, crossDone] = await Promise.all([same.done, cross.done]);
  for (const [name, done] of [
    ['same', sameDone],
    ['cross', crossDone],
  ] as const) {
    if (done.error) problems.push(`${phase} task ${task} ${name}-worker stream: ${done.error}`);
    else if (!isFinal(done.frames.at(-1)))
      problems.push(`${phase} task ${task} ${name}-worker stream ended without a final event`);
  }
  const sameStamps = stampsOf(sameDone.frames);
  const crossStamps = stampsOf(crossDone.frames);
  const samples: LatencySample[] = [];
  let excluded = 0;
  for (let i = 0; i < events; i++) {
    const s = sameStamps.get(i);
    const c = crossStamps.get(i);
    if (!s || !c) {
      // An event emitted before the follower's snapshot is inside that snapshot, not a frame.
      if (s && !c && s.stamp.emittedAtHr < crossOpenedAt) excluded++;
      else problems.push(`${phase} task ${task}: event ${i} missing on the ${s ? 'cross' : 'same'}-worker stream`);
      continue;
    }
    if (s.stamp.emittedAtHr < crossOpenedAt) {
      excluded++;
      continue;
    }
    samples.push({
      phase,
      task,
      i,
      origin: origin.id,
      follower: follower.id,
      same: s.frame.receivedAtHr - s.stamp.emittedAtHr,
      cross: c.frame.receivedAtHr - c.stamp.emittedAtHr,
      sameMs: s.frame.receivedAt - s.stamp.emittedAt,
      crossMs: c.frame.receivedAt - c.stamp.emittedAt,
    });
  }
  return { samples, sameReceived: sameStamps.size, crossReceived: crossStamps.size, excluded, problems };
}

function summarize(samples: LatencySample[]): LatencySummary {
  return {
    same: distribution(samples.map((s) => s.same)),
    cross: distribution(samples.map((s) => s.cross)),
    extra: distribution(samples.map((s) => s.cross - s.same)),
    sameMs: distribution(samples.map((s) => s.sameMs)),
    crossMs: distribution(samples.map((s) => s.crossMs)),
  };
}

/** Starts A and B on `storeUrl`, warms them up, runs the sequential then the concurrent phase, stops them. */
export async function measureLatency(
  store: 'postgres' | 'sqlite',
  storeUrl: string,
  storeDescription: string,
  config: LatencyConfig,
  onCluster: (cluster: Cluster | undefined) => void,
): Promise<StoreLatencyResult> {
  const cluster = await Cluster.start(storeUrl, 2);
  onCluster(cluster);
  try {
    // Warm-up (JIT, pools, the LISTEN connection), both directions; not counted.
    await runTask(cluster, 0, 'sequential', -1, 20, { ...config, intervalMs: 10 });
    await runTask(cluster, 1, 'sequential', -2, 20, { ...config, intervalMs: 10 });

    const started = performance.now();
    const stopCpu = cpuWindow(
      { 'worker A': [cluster.worker(0).pid], 'worker B': [cluster.worker(1).pid], client: [process.pid] },
      { postgres: store === 'postgres' },
    );
    const outcomes: TaskOutcome[] = [];
    for (let t = 0; t < config.sequentialTasks; t++) {
      outcomes.push(await runTask(cluster, 0, 'sequential', t, config.sequentialEvents, config));
    }
    outcomes.push(
      ...(await Promise.all(
        Array.from({ length: config.concurrentTasks }, (_, t) =>
          runTask(cluster, t % 2, 'concurrent', t, config.concurrentEvents, config),
        ),
      )),
    );
    const cpu = stopCpu();
    const samples = outcomes.flatMap((o) => o.samples);
    return {
      store,
      storeDescription,
      all: summarize(samples),
      byPhase: {
        sequential: summarize(samples.filter((s) => s.phase === 'sequential')),
        concurrent: summarize(samples.filter((s) => s.phase === 'concurrent')),
      },
      checks: {
        tasks: outcomes.length,
        expectedPerStream:
          config.sequentialTasks * config.sequentialEvents + config.concurrentTasks * config.concurrentEvents,
        sameReceived: outcomes.reduce((sum, o) => sum + o.sameReceived, 0),
        crossReceived: outcomes.reduce((sum, o) => sum + o.crossReceived, 0),
        excluded: outcomes.reduce((sum, o) => sum + o.excluded, 0),
        problems: outcomes.flatMap((o) => o.problems).slice(0, 20),
      },
      cpu,
      wallMs: Math.round(performance.now() - started),
      samples,
    };
  } finally {
    await cluster.stop();
    onCluster(undefined);
  }
}
