/**
 * Starts worker processes (bench/src/cross-worker/worker.ts) on one store URL, each on its own
 * loopback port. The worker runs compiled to plain JavaScript (bench/dist/cross-worker/worker.mjs,
 * esbuild, as `npm run bench` runs its servers), by plain Node without tsx.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { compiledScript } from '../lib/child.js';
import { BENCH_DIR } from '../lib/env.js';

export interface WorkerProcess {
  id: string;
  url: string;
  pid: number;
  process: ChildProcess;
  exited: Promise<number | null>;
  output: () => string;
}

async function startWorker(id: string, storeUrl: string): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [await compiledScript('cross-worker/worker.ts')], {
    cwd: BENCH_DIR,
    env: { ...process.env, XW_STORE: storeUrl, XW_WORKER_ID: id },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const append = (chunk: Buffer): void => {
    // Keep the tail only: a worker that logs a lot must not grow the parent's memory.
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`worker ${id} did not start in 60 s:\n${output}`));
    }, 60_000);
    const onData = (): void => {
      const match = /READY (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        resolve(Number(match[1]));
      }
    };
    child.stdout?.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`worker ${id} exited with ${code} before it was ready:\n${output}`));
    });
  });
  return { id, url: `http://127.0.0.1:${port}`, pid: child.pid ?? 0, process: child, exited, output: () => output };
}

export class Cluster {
  private constructor(readonly workers: WorkerProcess[]) {}

  /** Starts `count` workers (A, B, …) on `storeUrl`, one after another so migrations never race at startup. */
  static async start(storeUrl: string, count: number): Promise<Cluster> {
    const workers: WorkerProcess[] = [];
    const cluster = new Cluster(workers);
    try {
      for (let i = 0; i < count; i++) workers.push(await startWorker(String.fromCharCode(65 + i), storeUrl));
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  worker(index: number): WorkerProcess {
    const worker = this.workers[index];
    if (!worker) throw new Error(`no worker #${index}`);
    return worker;
  }

  /** SIGTERM (graceful close), then SIGKILL for any worker still running after 15 s. */
  async stop(): Promise<void> {
    await Promise.all(
      this.workers.map(async (worker) => {
        if (worker.process.exitCode !== null || worker.process.signalCode !== null) return;
        worker.process.kill('SIGTERM');
        const timer = setTimeout(() => worker.process.kill('SIGKILL'), 15_000);
        await worker.exited;
        clearTimeout(timer);
      }),
    );
  }
}
