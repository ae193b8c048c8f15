/** Starts real worker processes on one store and drives them round-robin, like a load balancer. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JsonRpcResponse } from '@fastify-a2a/core';
import { rpcBody } from '../helpers.js';

const workerEntry = fileURLToPath(new URL('./worker.ts', import.meta.url));

export interface Worker {
  id: string;
  url: string;
  process: ChildProcess;
  exited: Promise<number | null>;
  output: () => string;
}

export interface TraceEntry {
  worker: string;
  at: number;
  event: 'start' | 'finishing' | 'end' | 'abort';
  taskId: string;
  contextId?: string;
  messageId?: string;
  text?: string;
}

export interface ClusterOptions {
  storeUrl: string;
  workers: number;
  leaseTtlMs?: number;
  drainTimeoutMs?: number;
  /** More environment for every worker (e.g. the PUSH_* settings worker.ts reads). */
  env?: Record<string, string>;
}

export class Cluster {
  readonly workers: Worker[] = [];
  readonly dir = mkdtempSync(join(tmpdir(), 'a2a-cluster-'));
  readonly traceFile = join(this.dir, 'trace.jsonl');
  #next = 0;

  constructor(readonly options: ClusterOptions) {}

  async start(): Promise<this> {
    await Promise.all(Array.from({ length: this.options.workers }, (_, i) => this.startWorker(`w${i + 1}`)));
    this.workers.sort((a, b) => a.id.localeCompare(b.id));
    return this;
  }

  async startWorker(id: string): Promise<Worker> {
    const child = spawn(process.execPath, ['--conditions=@fastify-a2a/source', '--import', 'tsx', workerEntry], {
      env: {
        ...process.env,
        STORE_URL: this.options.storeUrl,
        WORKER_ID: id,
        LEASE_TTL_MS: String(this.options.leaseTtlMs ?? 3000),
        DRAIN_TIMEOUT_MS: String(this.options.drainTimeoutMs ?? 2000),
        TRACE_FILE: this.traceFile,
        ...this.options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (d) => {
      output += d;
    });
    child.stderr?.on('data', (d) => {
      output += d;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`worker ${id} did not start in 30 s:\n${output}`)), 30_000);
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
    const worker: Worker = { id, url: `http://127.0.0.1:${port}`, process: child, exited, output: () => output };
    const index = this.workers.findIndex((w) => w.id === id);
    if (index === -1) this.workers.push(worker);
    else this.workers[index] = worker;
    return worker;
  }

  worker(id: string): Worker {
    const worker = this.workers.find((w) => w.id === id);
    if (!worker) throw new Error(`no worker ${id}`);
    return worker;
  }

  /** The next live worker, round-robin, as a load balancer without sticky sessions would pick. */
  nextWorker(): Worker {
    const live = this.workers.filter((w) => w.process.exitCode === null && w.process.signalCode === null);
    const worker = live[this.#next++ % live.length];
    if (!worker) throw new Error('no live worker');
    return worker;
  }

  /** `headers` go with the request: `authorization: Bearer tok-<name>` calls as principal <name>. */
  async call<T = unknown>(
    method: string,
    params: unknown,
    worker: Worker = this.nextWorker(),
    headers: Readonly<Record<string, string>> = {},
  ): Promise<JsonRpcResponse<T>> {
    const res = await fetch(`${worker.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(rpcBody(method, params)),
    });
    return (await res.json()) as JsonRpcResponse<T>;
  }

  async result<T>(
    method: string,
    params: unknown,
    worker?: Worker,
    headers: Readonly<Record<string, string>> = {},
  ): Promise<T> {
    const body = await this.call<T>(method, params, worker, headers);
    if (!('result' in body)) throw new Error(`${method} failed: ${JSON.stringify(body)}`);
    return body.result;
  }

  trace(): TraceEntry[] {
    try {
      return readFileSync(this.traceFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as TraceEntry);
    } catch {
      return [];
    }
  }

  async kill(id: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
    const worker = this.worker(id);
    worker.process.kill(signal);
    return worker.exited;
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.workers.map(async (w) => {
        if (w.process.exitCode === null && w.process.signalCode === null) {
          w.process.kill('SIGKILL');
          await w.exited;
        }
      }),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }
}
