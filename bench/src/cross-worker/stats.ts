/** Percentiles, and where the machine's CPU time went during a window (/proc/stat, /proc/<pid>/stat). */

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';

export interface Distribution {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  min: number;
  mean: number;
}

/** Nearest-rank percentiles of `values` (ms). */
export function distribution(values: number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const at = (p: number): number =>
    n === 0 ? Number.NaN : (sorted[Math.min(n - 1, Math.ceil((p / 100) * n) - 1)] ?? 0);
  return {
    n,
    p50: at(50),
    p90: at(90),
    p99: at(99),
    max: n === 0 ? Number.NaN : (sorted[n - 1] ?? 0),
    min: n === 0 ? Number.NaN : (sorted[0] ?? 0),
    mean: n === 0 ? Number.NaN : sorted.reduce((sum, v) => sum + v, 0) / n,
  };
}

// ---- CPU accounting ----

/** Clock ticks per second of /proc times (USER_HZ); 100 on every Linux we run on. */
const TICKS_PER_SECOND = 100;

/** The aggregate `cpu` line of /proc/stat, in ticks. */
interface MachineTicks {
  user: number;
  system: number;
  idle: number;
  iowait: number;
  irq: number;
  softirq: number;
  steal: number;
  total: number;
}

function machineTicks(): MachineTicks | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest time is inside user)
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    const at = (i: number): number => f[i] ?? 0;
    return {
      user: at(0) + at(1),
      system: at(2),
      idle: at(3),
      iowait: at(4),
      irq: at(5),
      softirq: at(6),
      steal: at(7),
      total: f.slice(0, 8).reduce((sum, v) => sum + v, 0),
    };
  } catch {
    return undefined;
  }
}

interface ProcessTicks {
  name: string;
  ticks: number;
}

/** utime + stime of one thread (or of a process's main thread: tid = pid), in ticks; undefined when gone. */
function threadTicks(pid: number, tid = pid): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** Local TCP ports of the sockets `pids` hold open (their fds → socket inodes → /proc/net/tcp{,6}). */
function localPorts(pids: number[]): Set<number> {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match?.[1]) inodes.add(match[1]);
      } catch {
        // closed meanwhile
      }
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const inode = f[9];
      const port = f[1]?.split(':')[1];
      if (inode && port && inodes.has(inode)) ports.add(Number.parseInt(port, 16));
    }
  }
  return ports;
}

/** What a postgres process is: a client's backend (with its client port) or one of the server's own processes. */
function postgresRole(pid: number): { port: number } | 'server' {
  try {
    const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    // A backend's title: "postgres: 15/main: <user> <database> <host>(<port>) <state>".
    const port = /\((\d+)\)/.exec(title)?.[1];
    return port ? { port: Number(port) } : 'server';
  } catch {
    return 'server';
  }
}

/** Who the postgres processes' CPU was for: the benchmark's workers, its own sampler, the server itself, or others. */
export interface PostgresBreakdown {
  /** Backends of the workers' connections. */
  workers: number;
  /** The server's own processes: postmaster, walwriter, checkpointer, background writer, autovacuum, … */
  server: number;
  /** Backends of the load-generator process's connections (the wait sampler, counters). */
  sampler: number;
  /** Backends of anyone else's connections (other work on the shared server: a disturbance). */
  others: number;
}

/** utime + stime of every process now visible in /proc, by pid (threads are included in their process). */
function allProcessTicks(): Map<number, ProcessTicks> {
  const result = new Map<number, ProcessTicks>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return result;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const open = stat.indexOf('(');
      const close = stat.lastIndexOf(')');
      // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
      const fields = stat.slice(close + 2).split(' ');
      result.set(Number(entry), {
        name: stat.slice(open + 1, close),
        ticks: Number(fields[11]) + Number(fields[12]),
      });
    } catch {
      // gone meanwhile
    }
  }
  return result;
}

export interface CpuWindow {
  seconds: number;
  /** Cores available to the machine (os.cpus().length). */
  cores: number;
  /** Average number of cores busy, whole machine (/proc/stat: everything but idle, iowait and steal). */
  machineBusyCores: number;
  /** The machine's busy time by /proc/stat category, in cores; steal (time the hypervisor gave elsewhere) apart. */
  machine: { user: number; system: number; irq: number; softirq: number; iowait: number; steal: number };
  /** Average cores used by each group: CPU seconds / wall seconds. `postgres` is every process named postgres. */
  groups: Record<string, number>;
  /** The cores of each group's main threads alone (a Node process's JavaScript runs there; GC helpers elsewhere). */
  mainThreads?: Record<string, number>;
  /** `postgres` split by whom the process served (when the window was given the workers' pids). */
  postgresBreakdown?: PostgresBreakdown;
  /** The processes outside the groups that used the most CPU in the window (cores). */
  topOthers: { pid: number; name: string; cores: number }[];
  /** Cores used by processes outside the groups, all together. */
  otherProcessCores: number;
  /** Busy time no process accounts for (interrupts, softirq outside process context, processes that came and went). */
  unattributedCores: number;
  loadavg1mAtEnd: number;
}

/**
 * Starts measuring CPU: call the returned function at the end of the window. `groups` names pids
 * (e.g. workers, the load generator = this process); `postgres` groups every process named postgres.
 * With `postgresClients` (the workers' pids) and `postgresSampler` (this process), the postgres CPU
 * is also split by whom each backend served (see {@link PostgresBreakdown}).
 */
export function cpuWindow(
  groups: Record<string, number[]>,
  options: { postgres: boolean; postgresClients?: number[]; postgresSampler?: number[] },
): () => CpuWindow {
  const start = performance.now();
  const machine0 = machineTicks();
  const before = allProcessTicks();
  const groupedPids = Object.values(groups).flat();
  const main0 = new Map(groupedPids.map((pid) => [pid, threadTicks(pid)]));
  return () => {
    const seconds = (performance.now() - start) / 1000;
    const machine1 = machineTicks();
    const after = allProcessTicks();
    const main1 = new Map(groupedPids.map((pid) => [pid, threadTicks(pid)]));
    const cores = cpus().length;
    const toCores = (ticks: number): number => ticks / TICKS_PER_SECOND / seconds;
    const grouped = new Map<number, string>();
    for (const [name, pids] of Object.entries(groups)) for (const pid of pids) grouped.set(pid, name);
    const result: Record<string, number> = Object.fromEntries(Object.keys(groups).map((name) => [name, 0]));
    if (options.postgres) result.postgres = 0;
    const others: { pid: number; name: string; cores: number }[] = [];
    let processTicks = 0;
    for (const [pid, now] of after) {
      // A process started during the window counts from zero.
      const delta = Math.max(0, now.ticks - (before.get(pid)?.ticks ?? 0));
      if (delta === 0) continue;
      processTicks += delta;
      const group = grouped.get(pid) ?? (options.postgres && now.name === 'postgres' ? 'postgres' : undefined);
      if (group !== undefined) result[group] = (result[group] ?? 0) + toCores(delta);
      else others.push({ pid, name: now.name, cores: toCores(delta) });
    }
    others.sort((a, b) => b.cores - a.cores);
    let machine: CpuWindow['machine'] = { user: NaN, system: NaN, irq: NaN, softirq: NaN, iowait: NaN, steal: NaN };
    let machineBusyCores = Number.NaN;
    if (machine0 && machine1 && machine1.total > machine0.total) {
      const share = (key: keyof MachineTicks): number =>
        ((machine1[key] - machine0[key]) / (machine1.total - machine0.total)) * cores;
      machine = {
        user: share('user'),
        system: share('system'),
        irq: share('irq'),
        softirq: share('softirq'),
        iowait: share('iowait'),
        steal: share('steal'),
      };
      machineBusyCores = machine.user + machine.system + machine.irq + machine.softirq;
    }
    const otherProcessCores = others.reduce((sum, o) => sum + o.cores, 0);
    const mainThreads: Record<string, number> = {};
    for (const [name, pids] of Object.entries(groups)) {
      mainThreads[name] = pids.reduce((sum, pid) => {
        const a = main0.get(pid);
        const b = main1.get(pid);
        return sum + (a !== undefined && b !== undefined ? toCores(b - a) : 0);
      }, 0);
    }
    let postgresBreakdown: PostgresBreakdown | undefined;
    if (options.postgres && options.postgresClients) {
      const workerPorts = localPorts(options.postgresClients);
      const samplerPorts = localPorts(options.postgresSampler ?? []);
      postgresBreakdown = { workers: 0, server: 0, sampler: 0, others: 0 };
      for (const [pid, now] of after) {
        if (now.name !== 'postgres' || grouped.has(pid)) continue;
        const delta = Math.max(0, now.ticks - (before.get(pid)?.ticks ?? 0));
        if (delta === 0) continue;
        const role = postgresRole(pid);
        const key: keyof PostgresBreakdown =
          role === 'server'
            ? 'server'
            : workerPorts.has(role.port)
              ? 'workers'
              : samplerPorts.has(role.port)
                ? 'sampler'
                : 'others';
        postgresBreakdown[key] += toCores(delta);
      }
    }
    return {
      seconds,
      cores,
      machineBusyCores,
      machine,
      groups: result,
      mainThreads,
      ...(postgresBreakdown ? { postgresBreakdown } : {}),
      topOthers: others.slice(0, 5).map((o) => ({ ...o, cores: Math.round(o.cores * 1000) / 1000 })),
      otherProcessCores,
      unattributedCores: Math.max(0, machineBusyCores - toCores(processTicks)),
      loadavg1mAtEnd: loadavg()[0] ?? Number.NaN,
    };
  };
}

/**
 * CPU the benchmark's own processes cannot account for: other processes, ones that came and went,
 * and Postgres backends serving someone else.
 */
export function disturbance(cpu: CpuWindow): number {
  return cpu.otherProcessCores + cpu.unattributedCores + (cpu.postgresBreakdown?.others ?? 0);
}

/** At or above this many cores of {@link disturbance}, a window counts as disturbed by the shared machine. */
export const DISTURBED_CORES = 0.2;
