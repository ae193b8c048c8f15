/** CPU and bytes-written counters read before and after a level of `npm run bench:tokens`. */

import { readdirSync, readFileSync } from 'node:fs';
import { processCpuTime } from '../lib/child.js';
import { withPostgres } from '../lib/env.js';

const cpuMs = (pid: number): number => {
  const t = processCpuTime(pid);
  return t.userMs + t.systemMs;
};

/** CPU ms used so far by every process whose command name is `postgres` (the server and its backends). */
export function postgresCpuMs(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    const ms = cpuMs(Number(entry));
    if (Number.isFinite(ms)) total += ms;
  }
  return total;
}

/** Bytes process `pid` caused to be written to storage so far (/proc/<pid>/io `write_bytes`). */
export function writeBytes(pid: number): number {
  try {
    const match = /write_bytes: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return match ? Number(match[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** The WAL position of the Postgres server, in bytes (pg_current_wal_lsn as a number). */
export async function walBytes(url: string): Promise<number> {
  return withPostgres(async (client) => {
    const { rows } = await client.query<{ bytes: string }>(
      `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS bytes`,
    );
    return Number(rows[0]?.bytes ?? Number.NaN);
  }, url);
}

export interface Counters {
  serverCpuMs: number;
  loadCpuMs: number;
  postgresCpuMs: number;
  /** Storage bytes: Postgres WAL bytes, or the servers' write_bytes (SQLite). */
  storeBytes: number;
}

export async function readCounters(pids: number[], postgresUrl: string | undefined): Promise<Counters> {
  const load = process.cpuUsage();
  return {
    serverCpuMs: pids.reduce((sum, pid) => sum + cpuMs(pid), 0),
    loadCpuMs: (load.user + load.system) / 1000,
    postgresCpuMs: postgresUrl ? postgresCpuMs() : 0,
    storeBytes: postgresUrl ? await walBytes(postgresUrl) : pids.reduce((sum, pid) => sum + writeBytes(pid), 0),
  };
}
