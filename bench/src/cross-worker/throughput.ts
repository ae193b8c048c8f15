/**
 * Blocking message/send throughput on Postgres with 1 worker, then with 2 workers on the same kind
 * of fresh schema: the same total number of connections, split evenly over the workers, one
 * autocannon instance per worker, all in this process and running at the same time.
 */

import { withPostgres } from '../lib/env.js';
import { type HttpLoadResult, httpLoad } from '../lib/load.js';
import { samplePostgresWaits } from '../lib/postgres-waits.js';
import type { CgroupKind, CpuCaps, ThrottleStats } from './cgroup.js';
import { Cluster } from './cluster.js';
import { type CpuWindow, cpuWindow, type Distribution, distribution } from './stats.js';

/** One worker's share of a run: autocannon's result (latencies in whole ms) for its connections. */
export interface LoadResult extends HttpLoadResult {
  worker: string;
  connections: number;
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
  /**
   * Server-wide Postgres counters over the window (pg_stat_database of the bench database,
   * pg_stat_wal): approximate, since backends report them at most once a second.
   */
  postgresCounters?: PostgresCounters;
  /** Set when every worker ran in a cgroup of its own with this CPU budget. */
  cap?: {
    kind: CgroupKind;
    /** Cores per worker: quotaUs / periodUs. */
    cores: number;
    quotaUs: number;
    periodUs: number;
    /** cpu.stat of each worker's group over the measured window, by worker id. */
    throttling: Record<string, ThrottleStats>;
  };
}

export interface PostgresCounters {
  /** Transactions committed in the database (xact_commit). */
  commits: number;
  /** WAL flushes to disk (pg_stat_wal.wal_sync), by any process of the server. */
  walSyncs: number;
  walWrites: number;
  walBytes: number;
}

/** The counters now; undefined when the server does not have them (pg_stat_wal is Postgres 14+). */
async function postgresCounters(connectionString: string): Promise<PostgresCounters | undefined> {
  try {
    return await withPostgres(async (client) => {
      const { rows } = await client.query<Record<string, string>>(
        `SELECT d.xact_commit AS commits, w.wal_sync AS wal_syncs, w.wal_write AS wal_writes, w.wal_bytes AS wal_bytes
         FROM pg_stat_database d, pg_stat_wal w WHERE d.datname = current_database()`,
      );
      const row = rows[0];
      if (!row) return undefined;
      return {
        commits: Number(row.commits),
        walSyncs: Number(row.wal_syncs),
        walWrites: Number(row.wal_writes),
        walBytes: Number(row.wal_bytes),
      };
    }, connectionString);
  } catch {
    return undefined;
  }
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
async function load(
  worker: string,
  url: string,
  connections: number,
  durationS: number,
  text: string,
  times?: number[],
): Promise<LoadResult> {
  const result = await httpLoad({
    url: `${url}/a2a`,
    body: () => sendBody(text),
    connections,
    duration: durationS,
    verify: completed,
    ...(times ? { onResponseMs: (ms: number) => times.push(ms) } : {}),
  });
  return { worker, connections, ...result };
}

/**
 * Starts `workers` workers on `storeUrl` (a fresh schema), warms each up, then measures all of them
 * at once, `config.connections / workers` connections each. With `caps`, each worker is moved into a
 * cgroup of its own with that CPU budget once it is ready (before the warm-up).
 */
export async function measureThroughput(
  label: string,
  workers: number,
  storeUrl: string,
  connectionString: string,
  schema: string,
  config: ThroughputConfig,
  onCluster: (cluster: Cluster | undefined) => void,
  caps?: CpuCaps,
): Promise<ThroughputRun> {
  const cluster = await Cluster.start(storeUrl, workers);
  onCluster(cluster);
  try {
    for (const w of cluster.workers) caps?.attach(w.id, w.pid);
    const each = Math.max(1, Math.round(config.connections / workers));
    await Promise.all(cluster.workers.map((w) => load(w.id, w.url, each, config.warmupS, config.echoText)));
    const times: number[] = [];
    const groups: Record<string, number[]> = { 'load generator': [process.pid] };
    for (const w of cluster.workers) groups[`worker ${w.id}`] = [w.pid];
    const counters0 = await postgresCounters(connectionString);
    const stopThrottle = caps?.window();
    const stopCpu = cpuWindow(groups, {
      postgres: true,
      postgresClients: cluster.workers.map((w) => w.pid),
      postgresSampler: [process.pid],
    });
    const stopWaits = samplePostgresWaits(connectionString, schema);
    const perWorker = await Promise.all(
      cluster.workers.map((w) => load(w.id, w.url, each, config.durationS, config.echoText, times)),
    );
    const cpu = stopCpu();
    const throttling = stopThrottle?.();
    const counters1 = await postgresCounters(connectionString);
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
      ...(counters0 && counters1
        ? {
            postgresCounters: {
              commits: counters1.commits - counters0.commits,
              walSyncs: counters1.walSyncs - counters0.walSyncs,
              walWrites: counters1.walWrites - counters0.walWrites,
              walBytes: counters1.walBytes - counters0.walBytes,
            },
          }
        : {}),
      ...(caps && throttling
        ? {
            cap: {
              kind: caps.support.kind,
              cores: caps.quotaUs / caps.periodUs,
              quotaUs: caps.quotaUs,
              periodUs: caps.periodUs,
              throttling,
            },
          }
        : {}),
    };
  } finally {
    await cluster.stop();
    onCluster(undefined);
    const problems = caps?.remove() ?? [];
    if (problems.length > 0) console.error(`could not remove cgroups: ${problems.join('; ')}`);
  }
}
