/**
 * A CPU-budget model of message/send throughput with W workers on one Postgres, from the CPU each
 * process spent per request in the measured runs:
 *
 *   X(W workers, shared C cores)      ≈ min(W × cap / w, (C − o) / (w + p + g + k))
 *   X(W workers, P Postgres cores)    ≈ min(W × 1 / w, P / p)        (separate cores, load elsewhere)
 *
 * w, p, g, k: CPU ms per request of the workers, Postgres, the load generator and the kernel (busy
 * time no process accounts for); o: cores other processes of the shared machine used meanwhile;
 * cap: the cores one worker can use (its cgroup quota, or 1: a Node worker's JavaScript runs on one
 * thread). It ignores everything that is not CPU: WAL flush
 * latency, lock waits, network round trips, the closed loop's connection count.
 */

import type { ThroughputRun } from './throughput.js';

/** CPU ms per request of each party in one run. */
export interface PerRequest {
  requests: number;
  reqPerSec: number;
  worker: number;
  /** The workers' main threads alone (their JavaScript); the rest of `worker` is GC and other helper threads. */
  workerMain: number;
  /** The workers' backends and the server's own processes (not other sessions on a shared server). */
  postgres: number;
  loadGenerator: number;
  /** Machine busy time no process accounts for (the kernel: interrupts, softirq; processes that came and went). */
  kernel: number;
  machine: number;
}

const workerCores = (run: ThroughputRun): number =>
  Object.entries(run.cpu.groups)
    .filter(([name]) => name.startsWith('worker '))
    .reduce((sum, [, v]) => sum + v, 0);

/** CPU ms per request of the workers, Postgres, the load generator and the kernel in `run`'s window. */
export function perRequest(run: ThroughputRun): PerRequest {
  const n = run.combined.total;
  const perReq = (coresUsed: number): number => (n > 0 ? (coresUsed * run.cpu.seconds * 1000) / n : Number.NaN);
  const worker = workerCores(run);
  const workerMain = Object.entries(run.cpu.mainThreads ?? {})
    .filter(([name]) => name.startsWith('worker '))
    .reduce((sum, [, v]) => sum + v, 0);
  const breakdown = run.cpu.postgresBreakdown;
  const postgres = breakdown ? breakdown.workers + breakdown.server : (run.cpu.groups.postgres ?? 0);
  const loadGenerator = run.cpu.groups['load generator'] ?? 0;
  const machine = run.cpu.machineBusyCores;
  return {
    requests: n,
    reqPerSec: run.combined.reqPerSec,
    worker: perReq(worker),
    workerMain: run.cpu.mainThreads ? perReq(workerMain) : Number.NaN,
    postgres: perReq(postgres),
    loadGenerator: perReq(loadGenerator),
    kernel: perReq(run.cpu.unattributedCores),
    machine: perReq(machine),
  };
}

/** CPU ms per request over several runs together: their CPU time over their requests. */
export function pooled(runs: ThroughputRun[]): PerRequest {
  const parts = runs.map((run) => ({ run, per: perRequest(run) }));
  const requests = parts.reduce((sum, { per }) => sum + per.requests, 0);
  const weighted = (key: keyof PerRequest): number =>
    requests > 0 ? parts.reduce((sum, { per }) => sum + per[key] * per.requests, 0) / requests : Number.NaN;
  return {
    requests,
    reqPerSec: Number.NaN,
    worker: weighted('worker'),
    workerMain: weighted('workerMain'),
    postgres: weighted('postgres'),
    loadGenerator: weighted('loadGenerator'),
    kernel: weighted('kernel'),
    machine: weighted('machine'),
  };
}

/** The share of the machine the capped workers, Postgres and the load generator should stay below. */
export const CAP_TARGET_SHARE = 0.6;

/**
 * Cores per capped worker so that `workers` capped workers at full budget, plus the Postgres, load
 * generator and other CPU their requests cost (as measured in `oneWorkerRuns`), use about
 * CAP_TARGET_SHARE of the machine's cores: q = target / (W × (1 + (p + g + k) / w)), rounded down to 0.05.
 */
export function chooseCap(oneWorkerRuns: ThroughputRun[], workers: number): { cores: number; how: string } {
  const per = pooled(oneWorkerRuns);
  const cores = oneWorkerRuns[0]?.cpu.cores ?? 2;
  const others = per.postgres + per.loadGenerator + per.kernel;
  const target = CAP_TARGET_SHARE * cores;
  const exact = target / (workers * (1 + others / per.worker));
  if (!Number.isFinite(exact) || exact <= 0) {
    return { cores: 0.2, how: 'default 0.2 (part 2 gave no CPU per request to choose from)' };
  }
  const q = Math.min(1, Math.max(0.05, Math.floor(exact * 20 + 1e-9) / 20));
  return {
    cores: q,
    how: `chosen from part 2's 1-worker runs: a request cost the worker ${per.worker.toFixed(3)} ms of CPU and Postgres, the load generator and the kernel ${others.toFixed(3)} ms, so ${workers} workers at q cores each keep the machine at about ${workers} × q × (1 + ${others.toFixed(3)} / ${per.worker.toFixed(3)}) cores; q = ${exact.toFixed(3)} gives ${target.toFixed(1)} of ${cores} cores (${Math.round(CAP_TARGET_SHARE * 100)}%), rounded down to ${q.toFixed(2)}`,
  };
}

export interface SharedPrediction {
  /** What the workers can do: W × cap / w. */
  workerLimit: number;
  /** What the machine's CPU left by other processes can do: (C − o) / (w + p + g + k). */
  machineLimit: number;
  predicted: number;
  binds: 'workers' | 'machine CPU';
}

/**
 * Everything on `cores` shared cores (as in the measured runs) of which other processes take
 * `otherCores`, each of `workers` workers able to use `cap` cores.
 */
export function predictShared(
  params: PerRequest,
  workers: number,
  cap: number,
  cores: number,
  otherCores: number,
): SharedPrediction {
  const workerLimit = (workers * cap * 1000) / params.worker;
  const machineLimit =
    (Math.max(0, cores - otherCores) * 1000) / (params.worker + params.postgres + params.loadGenerator + params.kernel);
  return {
    workerLimit,
    machineLimit,
    predicted: Math.min(workerLimit, machineLimit),
    binds: workerLimit <= machineLimit ? 'workers' : 'machine CPU',
  };
}

export interface SeparatePrediction {
  cores: number;
  workers: number;
  postgresCores: number;
  workerLimit: number;
  postgresLimit: number;
  predicted: number;
  binds: 'workers' | 'Postgres CPU';
  /** The same cores with one worker and the rest for Postgres. */
  oneWorker: number;
}

/**
 * `cores` for workers (one core each) and Postgres (the rest), the load generator elsewhere: the
 * split with the highest min(W / w, P / p), fewest workers first on a tie. `single` are the costs
 * per request with one worker, `multi` with several (a request costs more CPU once the load is
 * split over workers: see the report).
 */
export function predictSeparate(single: PerRequest, cores: number, multi: PerRequest = single): SeparatePrediction {
  let best: SeparatePrediction | undefined;
  const params = single;
  for (let workers = 1; workers < cores; workers++) {
    const costs = workers === 1 ? single : multi;
    const postgresCores = cores - workers;
    const workerLimit = (workers * 1000) / costs.worker;
    const postgresLimit = (postgresCores * 1000) / costs.postgres;
    const predicted = Math.min(workerLimit, postgresLimit);
    if (!best || predicted > best.predicted * 1.0001) {
      best = {
        cores,
        workers,
        postgresCores,
        workerLimit,
        postgresLimit,
        predicted,
        binds: workerLimit <= postgresLimit ? 'workers' : 'Postgres CPU',
        oneWorker: Math.min(1000 / params.worker, ((cores - 1) * 1000) / params.postgres),
      };
    }
  }
  return (
    best ?? {
      cores,
      workers: 1,
      postgresCores: 0,
      workerLimit: 1000 / params.worker,
      postgresLimit: 0,
      predicted: 0,
      binds: 'Postgres CPU',
      oneWorker: 0,
    }
  );
}
