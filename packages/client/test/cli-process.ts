/**
 * Runs the real `a2a` binary (bin/a2a.js on the compiled dist/) as a child process, as a user
 * would: plain node, no tsx, no source export condition. dist/ is rebuilt first when a source of
 * core or the client is newer than it.
 */

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGES = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = join(PACKAGES, 'client', 'bin', 'a2a.js');

function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

function builtAt(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** Waits (synchronously) for a directory lock shared by the test files that build dist/. */
function withBuildLock(fn: () => void): void {
  const lock = join(PACKAGES, 'client', '.build-lock');
  const started = Date.now();
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another test file is building; a lock older than two minutes is a crashed run's.
      if (Date.now() - started > 120_000) rmSync(lock, { recursive: true, force: true });
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Compiles core and the client when their dist/ is missing or older than their src/. */
export function ensureBuilt(): void {
  withBuildLock(build);
}

function build(): void {
  for (const name of ['core', 'client']) {
    const root = join(PACKAGES, name);
    if (newest(join(root, 'src')) <= builtAt(join(root, 'dist', 'index.js'))) continue;
    const tsc = join(PACKAGES, '..', 'node_modules', 'typescript', 'bin', 'tsc');
    const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`building ${name} failed:\n${result.stdout}${result.stderr}`);
  }
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as one JSON document. */
  json(): unknown;
  /** stdout parsed as JSON Lines. */
  lines(): unknown[];
}

export function a2a(
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number; cwd?: string } = {},
): Promise<Run> {
  const env: Record<string, string | undefined> = { ...process.env, ...options.env };
  delete env.NODE_OPTIONS;
  for (const key of Object.keys(env)) if (key.startsWith('A2ACLI_') && !options.env?.[key]) delete env[key];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({
        code,
        stdout,
        stderr,
        json: () => JSON.parse(stdout),
        lines: () =>
          stdout
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l)),
      });
    });
  });
}
