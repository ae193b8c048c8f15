/**
 * Blocking message/send throughput on Postgres with 1 worker, then with 2 workers on the same kind
 * of fresh schema: the same total number of connections, split evenly over the workers, one
 * autocannon instance per worker, all in this process and running at the same time.
 */

import { createRequire } from 'node:module';
import pg from 'pg';
import { Cluster } from './cluster.js';
import { type CpuWindow, cpuWindow, type Distribution, distribution } from './stats.js';

// autocannon ships no type declarations: type what is used here.
interface AutocannonHistogram {
  average: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  total: number;
}
interface AutocannonResult {
  requests: AutocannonHistogram;
  latency: AutocannonHistogram;
  duration: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  non2xx: number;
}
interface AutocannonInstance {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void;
  stop(): void;
}
type Autocannon = (
  options: Record<string, unknown>,
  callback: (error: Error | null, result: AutocannonResult) => void,
) => AutocannonInstance;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export interface LoadResult {
  worker: string;
  connections: number;
  /** autocannon's mean of its per-second request counts. */
  reqPerSec: number;
  total: number;
  durationS: number;
  /** autocannon's latency histogram (ms, whole-ms resolution). */
  latencyMs: { p50: number; p90: number; p99: number; avg: number; max: number };
  errors: { socket: number; timeouts: number; non2xx: number; badBody: number };
}

export interface ThroughputRun {
  label: string;
  workers: number;
  connections: number;
  perWorker: LoadResult[];
  combined: {
    reqPerSec: number;
    total: number;
    errors: number;
    /** The conservative merge: the larger of the instances' percentiles. */
    conservative: { p50: number; p99: number };
    /** Exact percentiles over every response time autocannon reported, all instances together. */
    merged: Distribution;
  };
  cpu: CpuWindow;
  /** Measurements of this part (1 = the first one was kept); earlier ones were disturbed by other processes. */
  attempts?: number;
  /** The disturbance (cores used by other processes) of each discarded attempt. */
  discarded?: number[];
  /** Average number of the store's active Postgres backends per wait event (pg_stat_activity, every 100 ms). */
  postgresWaits: Record<string, number>;
  /**
   * Backends of the whole server waiting for the NOTIFY queue lock (pg_locks: object 0 of pg_database,
   * database 0, AccessExclusiveLock, not granted), same samples: average and largest.
   */
  notifyLockWaiters: { avg: number; max: number };
}

export interface ThroughputConfig {
  connections: number;
  durationS: number;
  warmupS: number;
  echoText: string;
}

let nextRequest = 0;
const runTag = Math.random().toString(36).slice(2, 8);

function sendBody(text: string): string {
  nextRequest++;
  return JSON.stringify({
    jsonrpc: '2.0',
    id: nextRequest,
    method: 'message/send',
    params: {
      message: {
        kind: 'message',
        messageId: `xw-${runTag}-${nextRequest}`,
        role: 'user',
        parts: [{ kind: 'text', text }],
      },
      configuration: { blocking: true },
    },
  });
}

const completed = (body: string): boolean => body.includes('"state":"completed"') && !body.includes('"error"');

/** One autocannon run against one worker, bounded by its duration; `times` collects every response time. */
function load(
  worker: string,
  url: string,
  connections: number,
  durationS: number,
  text: string,
  times?: number[],
): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${url}/a2a`,
        method: 'POST',
        connections,
        duration: durationS,
        headers: { 'content-type': 'application/json' },
        body: sendBody(text),
        requests: [{ setupRequest: (request: { body?: string }) => ({ ...request, body: sendBody(text) }) }],
        verifyBody: completed,
        timeout: 30,
      },
      (error, result) => {
        if (error) return reject(error);
        resolve({
          worker,
          connections,
          reqPerSec: result.requests.average,
          total: result.requests.total,
          durationS: result.duration,
          latencyMs: {
            p50: result.latency.p50,
            p90: result.latency.p90,
            p99: result.latency.p99,
            avg: result.latency.average,
            max: result.latency.max,
          },
          errors: {
            socket: result.errors,
            timeouts: result.timeouts,
            non2xx: result.non2xx,
            badBody: result.mismatches,
          },
        });
      },
    );
    if (times) instance.on('response', (_client, _status, _bytes, ms) => times.push(ms));
  });
}

interface WaitSamples {
  waits: Record<string, number>;
  notifyLockWaiters: { avg: number; max: number };
}

/**
 * Samples pg_stat_activity (the backends running `schema`'s queries) and pg_locks (who waits for
 * the NOTIFY queue lock) every 100 ms until the returned function is called.
 */
function sampleWaits(connectionString: string, schema: string): () => Promise<WaitSamples> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 5000 });
  const counts = new Map<string, number>();
  let samples = 0;
  let lockWaiters = 0;
  let maxLockWaiters = 0;
  let running = true;
  const loop = (async () => {
    await client.connect();
    while (running) {
      const { rows } = await client.query<{ wait: string }>(
        `SELECT coalesce(wait_event_type || '/' || wait_event, 'CPU') AS wait FROM pg_stat_activity
         WHERE state = 'active' AND pid <> pg_backend_pid() AND position($1 in query) > 0`,
        [schema],
      );
      const locks = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks
         WHERE locktype = 'object' AND classid = 'pg_database'::regclass AND objid = 0 AND database = 0
           AND mode = 'AccessExclusiveLock' AND NOT granted`,
      );
      samples++;
      for (const { wait } of rows) counts.set(wait, (counts.get(wait) ?? 0) + 1);
      const n = locks.rows[0]?.n ?? 0;
      lockWaiters += n;
      maxLockWaiters = Math.max(maxLockWaiters, n);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return async () => {
    running = false;
    await loop.catch(() => undefined);
    await client.end().catch(() => undefined);
    return {
      waits: Object.fromEntries(
        [...counts].sort((a, b) => b[1] - a[1]).map(([wait, n]) => [wait, samples > 0 ? n / samples : 0]),
      ),
      notifyLockWaiters: { avg: samples > 0 ? lockWaiters / samples : 0, max: maxLockWaiters },
    };
  };
}

/**
 * Starts `workers` workers on `storeUrl` (a fresh schema), warms each up, then measures all of them
 * at once, `config.connections / workers` connections each.
 */
export async function measureThroughput(
  label: string,
  workers: number,
  storeUrl: string,
  connectionString: string,
  schema: string,
  config: ThroughputConfig,
  onCluster: (cluster: Cluster | undefined) => void,
): Promise<ThroughputRun> {
  const cluster = await Cluster.start(storeUrl, workers);
  onCluster(cluster);
  try {
    const each = Math.max(1, Math.round(config.connections / workers));
    await Promise.all(cluster.workers.map((w) => load(w.id, w.url, each, config.warmupS, config.echoText)));
    const times: number[] = [];
    const groups: Record<string, number[]> = { 'load generator': [process.pid] };
    for (const w of cluster.workers) groups[`worker ${w.id}`] = [w.pid];
    const stopCpu = cpuWindow(groups, { postgres: true });
    const stopWaits = sampleWaits(connectionString, schema);
    const perWorker = await Promise.all(
      cluster.workers.map((w) => load(w.id, w.url, each, config.durationS, config.echoText, times)),
    );
    const cpu = stopCpu();
    const { waits: postgresWaits, notifyLockWaiters } = await stopWaits();
    return {
      label,
      workers,
      connections: each * workers,
      perWorker,
      combined: {
        reqPerSec: perWorker.reduce((sum, r) => sum + r.reqPerSec, 0),
        total: perWorker.reduce((sum, r) => sum + r.total, 0),
        errors: perWorker.reduce(
          (sum, r) => sum + r.errors.socket + r.errors.timeouts + r.errors.non2xx + r.errors.badBody,
          0,
        ),
        conservative: {
          p50: Math.max(...perWorker.map((r) => r.latencyMs.p50)),
          p99: Math.max(...perWorker.map((r) => r.latencyMs.p99)),
        },
        merged: distribution(times),
      },
      cpu,
      postgresWaits,
      notifyLockWaiters,
    };
  } finally {
    await cluster.stop();
    onCluster(undefined);
  }
}
