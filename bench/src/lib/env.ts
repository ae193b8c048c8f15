/** Machine, run and repository information recorded with every result file, and small helpers. */

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

/** The bench workspace directory (bench/). */
export const BENCH_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const REPO_DIR = resolve(BENCH_DIR, '..');
export const RESULTS_DIR = join(BENCH_DIR, 'results');

export const POSTGRES_URL =
  process.env.BENCH_POSTGRES_URL || process.env.A2A_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  totalMemoryMb: number;
  node: string;
  platform: string;
}

export interface RepoInfo {
  commit: string;
  /** Uncommitted changes under packages/ or examples/ at run time: the numbers measure the working tree. */
  dirtyPaths: string[];
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    totalMemoryMb: Math.round(totalmem() / 1024 / 1024),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}

export function repoInfo(): RepoInfo {
  const git = (...args: string[]): string => {
    try {
      // trimEnd only: porcelain lines start with a status column that may be a space.
      return execFileSync('git', args, { cwd: REPO_DIR, encoding: 'utf8' }).trimEnd();
    } catch {
      return '';
    }
  };
  return {
    commit: git('rev-parse', '--short', 'HEAD') || 'unknown',
    dirtyPaths: git('status', '--porcelain', '--', 'packages', 'examples')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.slice(3)),
  };
}

/** YYYY-MM-DD (UTC), for result file names. */
export function today(): string {
  return new Date().toISOString().slice(0, 10);
}

export function writeFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number; got "${raw}".`);
  return value;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A short random suffix for schema and file names (bench_<suffix>). */
export function randomSuffix(): string {
  return Math.random().toString(36).slice(2, 10);
}

/** `1234.5` → `1,235`; small numbers keep decimals. */
export function fmt(value: number | undefined | null, digits = 0): string {
  if (value === undefined || value === null || !Number.isFinite(value)) return '–';
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** `a / b` as `1.23×`, or `–` when not computable. */
export function ratio(a: number | undefined | null, b: number | undefined | null): string {
  if (a === undefined || a === null || b === undefined || b === null || !Number.isFinite(a) || !b) return '–';
  return `${(a / b).toFixed(2)}×`;
}

export function machineLine(machine: MachineInfo): string {
  return `${machine.cpuModel}, ${machine.cores} cores, ${machine.totalMemoryMb} MB RAM, Node ${machine.node} (${machine.platform})`;
}

/** Settings of the Postgres server that decide commit cost, or undefined when it does not answer. */
export async function postgresSettings(): Promise<Record<string, string> | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    const settings: Record<string, string> = {};
    for (const name of ['server_version', 'synchronous_commit', 'fsync', 'wal_sync_method', 'shared_buffers']) {
      const { rows } = await client.query<Record<string, string>>(`SHOW ${name}`);
      settings[name] = rows[0]?.[name] ?? '?';
    }
    return settings;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}

/** `server_version 15.2, synchronous_commit on, …` */
export function settingsLine(settings: Record<string, string> | undefined): string {
  if (!settings) return 'unknown';
  return Object.entries(settings)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}

/** Runs `fn` with a fresh client of the Postgres server at `url`, ended afterwards. */
export async function withPostgres<T>(fn: (client: pg.Client) => Promise<T>, url = POSTGRES_URL): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Drops a throwaway schema a bench run created (nothing if it is gone already). */
export async function dropSchema(schema: string, url = POSTGRES_URL): Promise<void> {
  await withPostgres(async (client) => {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }, url);
}
