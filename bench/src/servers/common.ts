/**
 * What every bench server child shares: it reports its port to the parent over IPC, answers
 * `GET /__rss` with its memory usage (after a GC with `?gc=1` when started with --expose-gc), records
 * time marks for the profile summary, and shuts down cleanly when asked, so --cpu-prof can write
 * its profile.
 */

import { readdirSync, writeFileSync } from 'node:fs';
import { findSourceMap } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';

const REPO_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * The source maps of the repository's TypeScript modules this process loaded (tsx transpiles each
 * module to one line, so a profile's positions need them to name source lines).
 */
function loadedSourceMaps(): Record<string, unknown> {
  const maps: Record<string, unknown> = {};
  const walk = (dir: string): void => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        const url = pathToFileURL(path).href;
        const map = findSourceMap(url);
        if (map) maps[url] = map.payload;
      }
    }
  };
  for (const top of ['packages', 'examples', 'bench/src']) walk(join(REPO_DIR, top));
  return maps;
}

export interface ParentMessage {
  type: 'shutdown' | 'mark';
  name?: string;
}

export interface ChildMessage {
  type: 'ready' | 'marked';
  port?: number;
  pid?: number;
  name?: string;
  /** With `ready`: the settings the server runs with, as it read them back (e.g. a database's). */
  settings?: Record<string, string>;
}

export interface RssReport {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  gc: boolean;
}

const gc = (globalThis as { gc?: () => void }).gc;

/** process.memoryUsage(), after two full GCs when asked and available. */
export function rssReport(collect: boolean): RssReport {
  if (collect && gc) {
    gc();
    gc();
  }
  const m = process.memoryUsage();
  return {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    gc: collect && gc !== undefined,
  };
}

/** Whether a request URL asks for a GC first: `/__rss?gc=1`. */
export function wantsGc(url: string | undefined): boolean {
  return url?.includes('gc=1') ?? false;
}

/**
 * Tells the parent the server listens on `port`, and wires shutdown (IPC or SIGTERM/SIGINT) to
 * `close`. Marks (IPC) are written, as process.hrtime µs, to BENCH_MARKS_FILE at shutdown.
 * `settings` go to the parent with the ready message and into the results.
 */
export function serve(port: number, close: () => Promise<void>, settings?: Record<string, string>): void {
  const marks: Record<string, number> = {};
  let closing = false;
  const shutdown = (): void => {
    if (closing) return;
    closing = true;
    const file = process.env.BENCH_MARKS_FILE;
    if (file) writeFileSync(file, JSON.stringify({ pid: process.pid, marks, sourceMaps: loadedSourceMaps() }));
    const timer = setTimeout(() => process.exit(0), 5000);
    timer.unref();
    close().then(
      () => process.exit(0),
      (error) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'shutdown') shutdown();
    if (message.type === 'mark' && message.name) {
      marks[message.name] = Number(process.hrtime.bigint() / 1000n);
      process.send?.({ type: 'marked', name: message.name } satisfies ChildMessage);
    }
  });
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  // The parent died: do not linger.
  process.once('disconnect', shutdown);
  process.send?.({ type: 'ready', port, pid: process.pid, ...(settings ? { settings } : {}) } satisfies ChildMessage);
}

/** The IPv4 loopback port the child listens on (0 = any free port). */
export const LISTEN = { host: '127.0.0.1', port: Number(process.env.BENCH_PORT ?? 0) };

/** Listens on {@link LISTEN} and reports the port to the parent ({@link serve}); a failure ends the process. */
export async function listenAndServe(app: FastifyInstance): Promise<void> {
  try {
    await app.listen(LISTEN);
    const address = app.server.address();
    serve(typeof address === 'object' && address ? address.port : 0, () => app.close());
  } catch (error) {
    fail(error);
  }
}

export function fail(error: unknown): never {
  console.error(`bench server failed to start: ${(error as Error)?.stack ?? String(error)}`);
  process.exit(1);
}
