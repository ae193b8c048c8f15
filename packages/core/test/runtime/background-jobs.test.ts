/**
 * The background-jobs facility the runtime's timed work runs on (lease renewal, the retention
 * sweep, push delivery next): unref'd interval timers, one run of a job at a time, failures logged
 * and retried at the next tick, and nothing after stop().
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BackgroundJob, BackgroundJobs, type JobSpec, runLogged } from '../../src/runtime/jobs/background.js';
import { gate, recordingLogger } from './helpers.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A job that counts its runs; `body` is what each run does. */
function counted(name: string, intervalMs: number, body: () => Promise<void> = async () => {}) {
  const spec = {
    name,
    intervalMs,
    runs: 0,
    run: async (): Promise<void> => {
      spec.runs++;
      await body();
    },
  };
  return spec;
}

describe('BackgroundJob', () => {
  it('runs every interval once started, on a timer that does not keep the process alive', async () => {
    const setInterval = vi.spyOn(globalThis, 'setInterval');
    const spec = counted('tick', 100);
    const job = new BackgroundJob(spec, recordingLogger());
    job.start();
    job.start(); // once
    expect(setInterval).toHaveBeenCalledTimes(1);
    const timer = setInterval.mock.results[0]?.value as NodeJS.Timeout | undefined;
    expect(timer?.hasRef()).toBe(false);
    expect(spec.runs).toBe(0); // the first run is one interval away
    await vi.advanceTimersByTimeAsync(350);
    expect(spec.runs).toBe(3);
    job.stop();
  });

  it('runs one at a time: a tick or a run() while a run is in progress does nothing', async () => {
    let hold = gate();
    const spec = counted('slow', 100, () => hold.promise);
    const job = new BackgroundJob(spec, recordingLogger());
    job.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(spec.runs).toBe(1);
    expect(job.running).toBe(true);
    await vi.advanceTimersByTimeAsync(300);
    await job.run();
    expect(spec.runs).toBe(1);
    hold.open();
    hold = gate();
    await vi.advanceTimersByTimeAsync(0);
    expect(job.running).toBe(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(spec.runs).toBe(2);
    hold.open();
    job.stop();
  });

  it('logs a failed run with the job name, never throws it, and runs again at the next tick', async () => {
    const log = recordingLogger();
    const failure = new Error('store unreachable (injected)');
    let fail = true;
    const spec = counted('retention sweep', 100, async () => {
      if (fail) throw failure;
    });
    const job = new BackgroundJob(spec, log);
    await expect(job.run()).resolves.toBeUndefined();
    expect(log.lines).toEqual([
      { level: 'error', obj: { err: failure, job: 'retention sweep' }, msg: 'a2a: retention sweep failed' },
    ]);
    fail = false;
    job.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(spec.runs).toBe(2);
    expect(log.lines).toHaveLength(1);
    job.stop();
  });

  it('stop(): no more ticks, run() does nothing, start() does not restart it; a run in progress finishes', async () => {
    const hold = gate();
    let finished = false;
    const spec = counted('stoppable', 100, async () => {
      await hold.promise;
      finished = true;
    });
    const job = new BackgroundJob(spec, recordingLogger());
    job.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(spec.runs).toBe(1);
    job.stop();
    hold.open();
    await vi.advanceTimersByTimeAsync(0);
    expect(finished).toBe(true);
    job.start();
    await job.run();
    await vi.advanceTimersByTimeAsync(1000);
    expect(spec.runs).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('BackgroundJobs', () => {
  it('starts its jobs together; a job added after start() starts at once, one added after stop() never', async () => {
    const jobs = new BackgroundJobs(recordingLogger());
    const early = counted('early', 100);
    jobs.add(early);
    await vi.advanceTimersByTimeAsync(200);
    expect(early.runs).toBe(0); // not started yet
    jobs.start();
    const late = counted('late', 100);
    jobs.add(late);
    await vi.advanceTimersByTimeAsync(100);
    expect([early.runs, late.runs]).toEqual([1, 1]);
    jobs.stop();
    const after: JobSpec & { runs: number } = counted('after', 100);
    const job = jobs.add(after);
    jobs.start();
    await job.run();
    await vi.advanceTimersByTimeAsync(500);
    expect([early.runs, late.runs, after.runs]).toEqual([1, 1, 0]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('runs jobs independently: a slow run of one does not hold up another', async () => {
    const hold = gate();
    const jobs = new BackgroundJobs(recordingLogger());
    const slow = counted('slow sweep', 100, () => hold.promise);
    const lease = counted('lease renewal', 100);
    jobs.add(slow);
    jobs.add(lease);
    jobs.start();
    await vi.advanceTimersByTimeAsync(500);
    expect([slow.runs, lease.runs]).toEqual([1, 5]);
    hold.open();
    jobs.stop();
  });
});

describe('runLogged', () => {
  it('logs a failure as "a2a: <name> failed" and resolves', async () => {
    const log = recordingLogger();
    const failure = new Error('boom');
    await expect(
      runLogged(log, 'retention sweep', async () => {
        throw failure;
      }),
    ).resolves.toBeUndefined();
    expect(log.lines).toEqual([
      { level: 'error', obj: { err: failure, job: 'retention sweep' }, msg: 'a2a: retention sweep failed' },
    ]);
  });
});
