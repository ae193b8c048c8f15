/**
 * CPU caps for worker processes with Linux cgroups: one cgroup per worker, each with its own CFS
 * bandwidth budget (quota per period), so that a worker behaves like a process on a slower core of
 * its own. cgroup v1 (`cpu` controller: cpu.cfs_quota_us / cpu.cfs_period_us) or v2 (`cpu.max`).
 *
 * Every group is named `<prefix>-<worker>` under the cpu hierarchy's root and removed again by
 * {@link CpuCaps.remove}; {@link removeAllCapsSync} is the last resort on exit.
 */

import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type CgroupKind = 'v1' | 'v2';

export type CgroupSupport = { available: true; kind: CgroupKind; root: string } | { available: false; reason: string };

/** Throttling counters of one group (cpu.stat), as a difference over a window. */
export interface ThrottleStats {
  /** Enforcement periods that had runnable tasks. */
  periods: number;
  /** Periods in which the group used up its quota and was stopped until the next one. */
  throttled: number;
  /** Total time the group's tasks spent stopped by the quota, ms. */
  throttledMs: number;
  /** CPU time the group used (v2 usage_usec; v1: not in the cpu controller, so NaN), ms. */
  usageMs: number;
}

const V1_ROOTS = ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu,cpuacct', '/sys/fs/cgroup/cpuacct,cpu'];
const V2_ROOT = '/sys/fs/cgroup';

const message = (error: unknown): string => (error as Error).message ?? String(error);

/** Creates and removes a probe group, so that "available" means this process may really do it. */
function probe(root: string, kind: CgroupKind): string | undefined {
  const dir = join(root, `xw-probe-${process.pid}`);
  try {
    mkdirSync(dir);
  } catch (error) {
    return `cannot create a group under ${root}: ${message(error)}`;
  }
  try {
    if (kind === 'v1') writeFileSync(join(dir, 'cpu.cfs_quota_us'), '-1');
    else writeFileSync(join(dir, 'cpu.max'), 'max 100000');
    return undefined;
  } catch (error) {
    return `cannot set a CPU quota under ${root}: ${message(error)}`;
  } finally {
    try {
      rmdirSync(dir);
    } catch {
      // an empty group we just created; nothing else to do
    }
  }
}

/**
 * Finds a writable cpu controller: cgroup v1 first (its own `cpu` hierarchy), then v2 (the unified
 * hierarchy at /sys/fs/cgroup with `cpu` enabled in the root's cgroup.subtree_control; this does not
 * enable it). `mode` (BENCH_CGROUP): auto, v1, v2 or off.
 */
export function detectCgroup(mode = 'auto'): CgroupSupport {
  if (process.platform !== 'linux') return { available: false, reason: `not Linux (${process.platform})` };
  if (mode === 'off') return { available: false, reason: 'switched off (BENCH_CGROUP=off)' };
  const reasons: string[] = [];
  if (mode === 'auto' || mode === 'v1') {
    const root = V1_ROOTS.find((dir) => existsSync(join(dir, 'cpu.cfs_quota_us')));
    if (root) {
      const problem = probe(root, 'v1');
      if (!problem) return { available: true, kind: 'v1', root };
      reasons.push(`cgroup v1: ${problem}`);
    } else reasons.push('cgroup v1: no cpu controller mounted (no /sys/fs/cgroup/cpu/cpu.cfs_quota_us)');
  }
  if (mode === 'auto' || mode === 'v2') {
    const controllers = join(V2_ROOT, 'cgroup.controllers');
    if (!existsSync(controllers)) {
      reasons.push('cgroup v2: /sys/fs/cgroup is not the unified hierarchy');
    } else {
      let subtree = '';
      try {
        subtree = readFileSync(join(V2_ROOT, 'cgroup.subtree_control'), 'utf8');
      } catch (error) {
        reasons.push(`cgroup v2: cannot read cgroup.subtree_control: ${message(error)}`);
      }
      if (!/\bcpu\b/.test(readFileSync(controllers, 'utf8'))) {
        reasons.push('cgroup v2: the cpu controller is not available at /sys/fs/cgroup');
      } else if (!/\bcpu\b/.test(subtree)) {
        reasons.push(
          'cgroup v2: the cpu controller is not enabled for child groups (`echo +cpu > /sys/fs/cgroup/cgroup.subtree_control`)',
        );
      } else {
        const problem = probe(V2_ROOT, 'v2');
        if (!problem) return { available: true, kind: 'v2', root: V2_ROOT };
        reasons.push(`cgroup v2: ${problem}`);
      }
    }
  }
  return { available: false, reason: reasons.join('; ') };
}

/** Every group created by this process, for the exit handler. */
const created = new Map<string, string>();

function readStat(dir: string, kind: CgroupKind): ThrottleStats {
  const fields = new Map<string, number>();
  try {
    for (const line of readFileSync(join(dir, 'cpu.stat'), 'utf8').split('\n')) {
      const [key, value] = line.trim().split(/\s+/);
      if (key && value !== undefined) fields.set(key, Number(value));
    }
  } catch {
    // gone: NaN below
  }
  const get = (key: string): number => fields.get(key) ?? Number.NaN;
  return {
    periods: get('nr_periods'),
    throttled: get('nr_throttled'),
    throttledMs: kind === 'v1' ? get('throttled_time') / 1e6 : get('throttled_usec') / 1000,
    usageMs: kind === 'v2' ? get('usage_usec') / 1000 : Number.NaN,
  };
}

/** Moves every process still in `dir` to the hierarchy's root, then removes the group (a few tries). */
function removeGroupSync(dir: string, root: string): string | undefined {
  let last: string | undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const procs = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
      for (const pid of procs) {
        try {
          writeFileSync(join(root, 'cgroup.procs'), pid);
        } catch {
          // exited meanwhile
        }
      }
      rmdirSync(dir);
      return undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      last = message(error);
      // A process leaving the group is not instantaneous: wait a moment (synchronously: also used on exit).
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
  return last;
}

/** Removes every group this process created and has not removed yet (synchronous: safe in an exit handler). */
export function removeAllCapsSync(): string[] {
  const problems: string[] = [];
  for (const [dir, root] of created) {
    const problem = removeGroupSync(dir, root);
    if (problem) problems.push(`${dir}: ${problem}`);
    else created.delete(dir);
  }
  return problems;
}

/** One cgroup per process, each with `cores` of CPU per `periodUs`. */
export class CpuCaps {
  readonly quotaUs: number;
  readonly #groups: { name: string; dir: string; pid: number }[] = [];

  constructor(
    readonly support: Extract<CgroupSupport, { available: true }>,
    readonly prefix: string,
    readonly cores: number,
    readonly periodUs = 100_000,
  ) {
    this.quotaUs = Math.max(1000, Math.round(cores * periodUs));
  }

  /** Creates the group `<prefix>-<name>` with the quota and moves `pid` (all its threads) into it. */
  attach(name: string, pid: number): void {
    const { kind, root } = this.support;
    const dir = join(root, `${this.prefix}-${name}`);
    mkdirSync(dir);
    created.set(dir, root);
    this.#groups.push({ name, dir, pid });
    if (kind === 'v1') {
      writeFileSync(join(dir, 'cpu.cfs_period_us'), String(this.periodUs));
      writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(this.quotaUs));
    } else {
      writeFileSync(join(dir, 'cpu.max'), `${this.quotaUs} ${this.periodUs}`);
    }
    writeFileSync(join(dir, 'cgroup.procs'), String(pid));
    const members = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n');
    if (!members.includes(String(pid))) throw new Error(`pid ${pid} is not in ${dir} after writing cgroup.procs`);
  }

  /** Starts a window: the returned function gives each group's throttling over it. */
  window(): () => Record<string, ThrottleStats> {
    const before = new Map(this.#groups.map((g) => [g.name, readStat(g.dir, this.support.kind)]));
    return () =>
      Object.fromEntries(
        this.#groups.map((g) => {
          const a = before.get(g.name);
          const b = readStat(g.dir, this.support.kind);
          return [
            g.name,
            {
              periods: b.periods - (a?.periods ?? 0),
              throttled: b.throttled - (a?.throttled ?? 0),
              throttledMs: b.throttledMs - (a?.throttledMs ?? 0),
              usageMs: b.usageMs - (a?.usageMs ?? 0),
            },
          ];
        }),
      );
  }

  /** Removes the groups (after the processes in them exited; any still there go back to the root). */
  remove(): string[] {
    const problems: string[] = [];
    for (const g of this.#groups.splice(0)) {
      const problem = removeGroupSync(g.dir, this.support.root);
      if (problem) problems.push(`${g.dir}: ${problem}`);
      else created.delete(g.dir);
    }
    return problems;
  }
}
