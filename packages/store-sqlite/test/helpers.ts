import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExpiredWorker, Task, TaskState } from '@fastify-a2a/core';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const childScript = fileURLToPath(new URL('./fixtures/child.ts', import.meta.url));

/** A fresh directory under the OS temp dir; call the returned `remove` when done. */
export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-sqlite-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface ChildOutput {
  ok: boolean;
  code?: string;
  message?: string;
  data?: unknown;
  version?: number;
  conflicts?: number;
  positions?: number[];
  elapsedMs?: number;
  claimed?: ExpiredWorker[];
  pushClaims?: string[];
}

export interface ChildResult {
  exitCode: number | null;
  stderr: string;
  /** The JSON line the child printed, if any. */
  output: ChildOutput | undefined;
}

/** Runs test/fixtures/child.ts in a real Node process (see that file for the commands). */
export function runChild(args: string[], env: Record<string, string> = {}): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@fastify-a2a/source', '--import', 'tsx', childScript, ...args],
      { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (exitCode) => {
      const line = stdout.trim().split('\n').at(-1);
      resolve({ exitCode, stderr, output: line ? JSON.parse(line) : undefined });
    });
  });
}

export function makeTask(id: string, contextId: string, state: TaskState = 'submitted'): Task {
  return { kind: 'task', id, contextId, status: { state } };
}

/** A clock tests move by hand. */
export function manualClock(start = 1_700_000_000_000): { now: () => number; advance: (ms: number) => void } {
  let time = start;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}
