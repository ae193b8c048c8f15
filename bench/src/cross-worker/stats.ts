/** Percentiles, and where the machine's CPU time went during a window (/proc/stat, /proc/<pid>/stat). */

import { readdirSync, readFileSync } from 'node:fs';
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
 */
export function cpuWindow(groups: Record<string, number[]>, options: { postgres: boolean }): () => CpuWindow {
  const start = performance.now();
  const machine0 = machineTicks();
  const before = allProcessTicks();
  return () => {
    const seconds = (performance.now() - start) / 1000;
    const machine1 = machineTicks();
    const after = allProcessTicks();
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
    return {
      seconds,
      cores,
      machineBusyCores,
      machine,
      groups: result,
      topOthers: others.slice(0, 5).map((o) => ({ ...o, cores: Math.round(o.cores * 1000) / 1000 })),
      otherProcessCores,
      unattributedCores: Math.max(0, machineBusyCores - toCores(processTicks)),
      loadavg1mAtEnd: loadavg()[0] ?? Number.NaN,
    };
  };
}

/** CPU the benchmark's own processes cannot account for: other processes, and ones that came and went. */
export function disturbance(cpu: CpuWindow): number {
  return cpu.otherProcessCores + cpu.unattributedCores;
}

/** At or above this many cores of {@link disturbance}, a window counts as disturbed by the shared machine. */
export const DISTURBED_CORES = 0.2;
