/**
 * Work a runtime does on a timer, apart from any request: lease renewal, the retention sweep, and
 * next the delivery of push notifications. Each job runs on an unref'd interval (a job never keeps
 * the process alive), one run at a time (a run that outlasts the interval makes the next tick a
 * no-op rather than a second run beside it), and its failures are logged, never thrown: the next
 * tick tries again. Jobs are independent: a slow sweep does not hold up lease renewal.
 */

import type { RuntimeLogger } from '../options.js';

export interface JobSpec {
  /** Names the job in the log line of a failed run: `a2a: <name> failed`. */
  readonly name: string;
  readonly intervalMs: number;
  /** One run; a rejection is logged. */
  run(): Promise<void>;
}

function logFailure(log: RuntimeLogger, name: string, error: unknown): void {
  log.error({ err: error, job: name }, `a2a: ${name} failed`);
}

/** Runs `run`, logging a failure as `a2a: <name> failed` instead of throwing it. */
export async function runLogged(log: RuntimeLogger, name: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    logFailure(log, name, error);
  }
}

export class BackgroundJob {
  readonly #spec: JobSpec;
  readonly #log: RuntimeLogger;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #stopped = false;

  constructor(spec: JobSpec, log: RuntimeLogger) {
    this.#spec = spec;
    this.#log = log;
  }

  get name(): string {
    return this.#spec.name;
  }

  /** Whether a run is in progress. */
  get running(): boolean {
    return this.#running;
  }

  /** Starts the interval (the first run comes one interval from now). Once; never after stop(). */
  start(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    this.#timer = setInterval(() => void this.run(), this.#spec.intervalMs);
    this.#timer.unref();
  }

  /** Runs the job now, unless a run is already in progress or the job was stopped. */
  async run(): Promise<void> {
    if (this.#running || this.#stopped) return;
    this.#running = true;
    // Not through runLogged: a run is one async frame around the job's own, as the lease renewal
    // was before it became a job (callers awaiting renewLeaseAndReap see the same timing).
    try {
      await this.#spec.run();
    } catch (error) {
      logFailure(this.#log, this.#spec.name, error);
    } finally {
      this.#running = false;
    }
  }

  /** No more runs, from the timer or run(); a run in progress finishes. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/** A set of jobs started and stopped together. */
export class BackgroundJobs {
  readonly #log: RuntimeLogger;
  readonly #jobs: BackgroundJob[] = [];
  #started = false;
  #stopped = false;

  constructor(log: RuntimeLogger) {
    this.#log = log;
  }

  /** Adds a job: it starts with the others, or at once if they already run; never after stop(). */
  add(spec: JobSpec): BackgroundJob {
    const job = new BackgroundJob(spec, this.#log);
    this.#jobs.push(job);
    if (this.#stopped) job.stop();
    else if (this.#started) job.start();
    return job;
  }

  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    for (const job of this.#jobs) job.start();
  }

  stop(): void {
    this.#stopped = true;
    for (const job of this.#jobs) job.stop();
  }
}
