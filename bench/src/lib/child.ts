/** Starts a bench server as a separate Node process (its RSS is its own) and talks to it. */

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';
import type { ChildMessage, ParentMessage, RssReport } from '../servers/common.js';
import { BENCH_DIR } from './env.js';

export interface ServerSpec {
  /** Short key used in results: ceiling, sdk, sdk-sqlite, sdk-postgres, memory, sqlite, postgres. */
  name: string;
  label: string;
  /** Entry point under bench/src/servers. */
  entry: string;
  env?: Record<string, string>;
  /** Run with stdout discarded: for a server that logs every request (what it writes still costs it the write). */
  discardStdout?: boolean;
}

/** CPU time a process has used so far, in ms, from /proc/<pid>/stat (all its threads). */
export interface CpuTime {
  userMs: number;
  systemMs: number;
}

/** The kernel's clock ticks per second, the unit of /proc/<pid>/stat's utime and stime. */
const CLOCK_TICKS_PER_SECOND = (() => {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100; // USER_HZ is 100 on every Linux architecture Node runs on
  }
})();

/** utime and stime of process `pid` (NaN when it cannot be read: not Linux, or the process is gone). */
export function processCpuTime(pid: number): CpuTime {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const msPerTick = 1000 / CLOCK_TICKS_PER_SECOND;
    // Fields 14 and 15 of proc(5); fields[0] is field 3 (state).
    return { userMs: Number(fields[11]) * msPerTick, systemMs: Number(fields[12]) * msPerTick };
  } catch {
    return { userMs: Number.NaN, systemMs: Number.NaN };
  }
}

export interface StartOptions {
  /** Adds --cpu-prof --cpu-prof-dir=<dir>. */
  cpuProfDir?: string;
  /** Where the child writes its time marks at shutdown. */
  marksFile?: string;
}

/**
 * Bare imports stay imports (fastify, pg, the SDK, … load from node_modules as in production); only
 * the repository's own packages are compiled into the bundle, from their TypeScript sources.
 */
const externalDependencies: Plugin = {
  name: 'external-dependencies',
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) => {
      const own = args.path === 'fastify-a2a' || args.path.startsWith('@fastify-a2a/');
      return own ? undefined : { path: args.path, external: true };
    });
  },
};

const compiled = new Map<string, Promise<string>>();

/**
 * A bench entry point compiled to plain JavaScript (bench/dist/<path>.mjs for bench/src/<path>.ts),
 * the way an application ships: run by plain Node, without tsx, whose keep-names wrappers give every
 * named closure its own property array (about 4 KB more heap per held stream in the demo server) and
 * whose loader costs CPU on every import. `path` is relative to bench/src.
 */
export function compiledScript(path: string): Promise<string> {
  let output = compiled.get(path);
  if (output === undefined) {
    const outfile = join(BENCH_DIR, 'dist', path.replace(/\.ts$/, '.mjs'));
    output = build({
      entryPoints: [join(BENCH_DIR, 'src', path)],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      conditions: ['@fastify-a2a/source'],
      plugins: [externalDependencies],
      logLevel: 'warning',
    }).then(() => outfile);
    compiled.set(path, output);
  }
  return output;
}

/** The server entry bench/src/servers/<entry> compiled to bench/dist/servers/<entry>.mjs (see {@link compiledScript}). */
export function compiledEntry(entry: string): Promise<string> {
  return compiledScript(join('servers', entry));
}

export class ServerProcess {
  readonly #child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  /** What the server reported it runs with (see `serve`), if anything. */
  readonly settings: Record<string, string> | undefined;
  readonly #exited: Promise<number | null>;

  private constructor(
    child: ChildProcess,
    pid: number,
    port: number,
    exited: Promise<number | null>,
    settings: Record<string, string> | undefined,
  ) {
    this.#child = child;
    this.pid = pid;
    this.port = port;
    this.#exited = exited;
    this.settings = settings;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static async start(spec: ServerSpec, options: StartOptions = {}): Promise<ServerProcess> {
    // Profiles run the TypeScript through tsx: the profile summary maps positions back to source
    // lines with tsx's per-module source maps. Measurements run the compiled entry.
    const args = options.cpuProfDir
      ? [
          '--expose-gc',
          '--conditions=@fastify-a2a/source',
          '--import',
          'tsx',
          '--cpu-prof',
          `--cpu-prof-dir=${options.cpuProfDir}`,
          join(BENCH_DIR, 'src', 'servers', spec.entry),
        ]
      : ['--expose-gc', await compiledEntry(spec.entry)];
    const child = spawn(process.execPath, args, {
      cwd: BENCH_DIR,
      stdio: ['ignore', spec.discardStdout ? 'ignore' : 'inherit', 'inherit', 'ipc'],
      env: {
        ...process.env,
        ...spec.env,
        ...(options.marksFile ? { BENCH_MARKS_FILE: options.marksFile } : {}),
      },
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const ready = await new Promise<ChildMessage>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${spec.name}: server not ready after 60 s`)), 60_000);
      child.on('message', (message: ChildMessage) => {
        if (message.type === 'ready') {
          clearTimeout(timer);
          resolve(message);
        }
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`${spec.name}: server exited with code ${code} before it was ready`));
      });
    });
    return new ServerProcess(child, ready.pid ?? child.pid ?? 0, ready.port ?? 0, exited, ready.settings);
  }

  /** The child's process.memoryUsage() through GET /__rss (after a full GC when `gc`). */
  async memory(gc: boolean): Promise<RssReport> {
    const response = await fetch(`${this.url}/__rss${gc ? '?gc=1' : ''}`, { signal: AbortSignal.timeout(30_000) });
    if (!response.ok) throw new Error(`/__rss answered ${response.status}`);
    return (await response.json()) as RssReport;
  }

  /** VmRSS from /proc/<pid>/status, in bytes: costs the server nothing, for sampling under load. */
  procRss(): number {
    try {
      const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
      return kb === undefined ? Number.NaN : Number(kb) * 1024;
    } catch {
      return Number.NaN;
    }
  }

  /** The server's CPU time so far (see {@link processCpuTime}): read before and after a window. */
  cpuTime(): CpuTime {
    return processCpuTime(this.pid);
  }

  /** Records a named process.hrtime mark in the child (for the profile window). */
  mark(name: string): Promise<void> {
    return new Promise((resolve) => {
      const onMessage = (message: ChildMessage) => {
        if (message.type === 'marked' && message.name === name) {
          this.#child.off('message', onMessage);
          resolve();
        }
      };
      this.#child.on('message', onMessage);
      this.#child.send({ type: 'mark', name } satisfies ParentMessage);
    });
  }

  /** Asks the child to close and exit (so --cpu-prof writes its file); kills it after 15 s. */
  async stop(): Promise<number | null> {
    if (this.#child.exitCode !== null) return this.#child.exitCode;
    if (this.#child.connected) this.#child.send({ type: 'shutdown' } satisfies ParentMessage);
    else this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 15_000);
    const code = await this.#exited;
    clearTimeout(timer);
    return code;
  }
}
