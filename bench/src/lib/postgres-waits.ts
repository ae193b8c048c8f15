/**
 * What the Postgres backends of a bench schema wait on while a load runs, sampled every 100 ms:
 * `npm run bench` and `npm run bench:cross-worker` report it.
 */

import pg from 'pg';

export interface WaitSamples {
  /** Average number of the schema's active backends per wait event, most frequent first. */
  waits: Record<string, number>;
  notifyLockWaiters: { avg: number; max: number };
}

/**
 * Samples pg_stat_activity (the backends running `schema`'s queries, or connected with `schema` as
 * their application_name) and pg_locks (who waits for the NOTIFY queue lock) every 100 ms until
 * the returned function is called.
 */
export function samplePostgresWaits(connectionString: string, schema: string): () => Promise<WaitSamples> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 5000 });
  const counts = new Map<string, number>();
  let samples = 0;
  let lockWaiters = 0;
  let maxLockWaiters = 0;
  let running = true;
  const loop = (async () => {
    await client.connect();
    while (running) {
      const { rows } = await client.query<{ wait: string }>(
        `SELECT coalesce(wait_event_type || '/' || wait_event, 'CPU') AS wait FROM pg_stat_activity
         WHERE state = 'active' AND pid <> pg_backend_pid()
           AND (position($1 in query) > 0 OR application_name = $1)`,
        [schema],
      );
      const locks = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks
         WHERE locktype = 'object' AND classid = 'pg_database'::regclass AND objid = 0 AND database = 0
           AND mode = 'AccessExclusiveLock' AND NOT granted`,
      );
      samples++;
      for (const { wait } of rows) counts.set(wait, (counts.get(wait) ?? 0) + 1);
      const n = locks.rows[0]?.n ?? 0;
      lockWaiters += n;
      maxLockWaiters = Math.max(maxLockWaiters, n);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return async () => {
    running = false;
    await loop.catch(() => undefined);
    await client.end().catch(() => undefined);
    return {
      waits: Object.fromEntries(
        [...counts].sort((a, b) => b[1] - a[1]).map(([wait, n]) => [wait, samples > 0 ? n / samples : 0]),
      ),
      notifyLockWaiters: { avg: samples > 0 ? lockWaiters / samples : 0, max: maxLockWaiters },
    };
  };
}
