/**
 * `<monitor>/events`: every task change of the agent, from every worker, as Server-Sent Events.
 *
 * The hub follows the store's `subscribeAll` — the cross-process notifications (Postgres NOTIFY,
 * SQLite's poll) that task streams follow too — while at least one operator is connected, reads
 * each changed task once per burst, and writes the same event to every connection.
 *
 * Event ids are `<epoch ms>.<counter>` of this process. A reconnect with `Last-Event-ID` gets the
 * hello and the snapshots again, then a `task` event for each task whose status changed since
 * that time (minus a margin for clocks of workers that disagree a little, and notifications still
 * in flight): repeats are possible, changes are not lost. A connection that cannot keep up (more
 * than `maxBufferedEvents` live events waiting to be written) gets a `resync` event, which has no id, and is
 * closed; the client reloads everything and reconnects without a Last-Event-ID.
 */

import type { ServerResponse } from 'node:http';
import type { A2AStore, TaskRecord } from '@fastify-a2a/core';
import type { FastifyReply } from 'fastify';
import { type MonitorTask, QueueView, taskView } from './view.js';

/** How far before a Last-Event-ID's time a resume looks for changed tasks. */
const RESUME_MARGIN_MS = 5000;
/** At most this many changed tasks are replayed on a resume; more, and the client is told to resync. */
const RESUME_LIMIT = 500;
/** How often the workers are read again for the `workers` event (only sent when they changed). */
const WORKERS_INTERVAL_MS = 2000;
/** After a failed read of changed tasks, the first retry's delay (doubling with each failure in a row). */
const FLUSH_RETRY_MS = 250;
/** Failed reads in a row (about 4 s with the doubling) before the connections are told to resync. */
const FLUSH_RETRIES = 4;
/** Bytes waiting on a connection beyond which it is resynced, whatever the event count. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

interface Connection {
  readonly res: ServerResponse;
  /** Events written since the socket last drained. */
  waiting: number;
}

export interface MonitorHubOptions {
  store: A2AStore;
  workerId: string;
  agentPrefix: string;
  maxBufferedEvents: number;
  heartbeatIntervalMs: number;
  clock?: () => number;
  onError: (error: unknown) => void;
}

export class MonitorHub {
  readonly #options: MonitorHubOptions;
  readonly #connections = new Set<Connection>();
  readonly #pending = new Set<string>();
  #flushing = false;
  /** A failed flush's retry, and how many flushes in a row failed. */
  #retryTimer: NodeJS.Timeout | undefined;
  #failedFlushes = 0;
  #unsubscribe: (() => void) | undefined;
  #workersTimer: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #lastWorkers = '';
  #counter = 0;
  #closed = false;

  constructor(options: MonitorHubOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#connections.size;
  }

  #now(): number {
    return (this.#options.clock ?? Date.now)();
  }

  #nextId(): string {
    return `${this.#now()}.${++this.#counter}`;
  }

  /** Takes over the reply: hello, snapshots, replay after `lastEventId`, then live changes. */
  async open(reply: FastifyReply, lastEventId: string | undefined): Promise<void> {
    const { store } = this.#options;
    if (this.#closed) {
      // The server began closing while the operator check ran: close() ended the streams it had,
      // and one opened now would start the subscription and timers again and hold its connection,
      // so that the server's close would wait on it (issue 28, item 8).
      await reply
        .code(503)
        .header('retry-after', '1')
        .header('cache-control', 'no-store')
        .send({ error: 'UNAVAILABLE', message: 'The server is closing; reconnect in a moment.' });
      return;
    }
    reply.hijack();
    const res = reply.raw;
    // The client may have left while the operator check ran: 'close' has fired already, so a
    // listener added now would never remove the connection.
    if (res.destroyed) return;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const connection: Connection = { res, waiting: 0 };
    // Subscribed before the snapshots are read, so that no change falls between the two.
    this.#add(connection);
    res.on('close', () => this.#remove(connection));
    res.on('drain', () => {
      connection.waiting = 0;
    });
    try {
      const queue = await QueueView.read(store);
      const now = this.#now();
      await this.#write(connection, 'hello', {
        workerId: this.#options.workerId,
        agent: this.#options.agentPrefix,
        time: now,
        resumed: lastEventId !== undefined,
        workers: queue.workerViews(now),
      });
      for (const record of await store.listActiveTasks()) {
        if (res.destroyed || res.writableEnded) return;
        await this.#write(connection, 'snapshot', await taskView(store, record, queue, now));
      }
      const since = resumeTime(lastEventId);
      if (since !== undefined) await this.#replay(connection, since - RESUME_MARGIN_MS, queue);
    } catch (error) {
      this.#options.onError(error);
      this.#resync(connection, 'the store could not be read; reconnect in a moment');
    }
  }

  async #replay(connection: Connection, after: number, queue: QueueView): Promise<void> {
    const { store } = this.#options;
    if (store.listTasks === undefined) {
      this.#resync(connection, 'this store cannot list changed tasks; reload everything');
      return;
    }
    const now = this.#now();
    let cursor: Parameters<NonNullable<A2AStore['listTasks']>>[0]['after'];
    let sent = 0;
    do {
      const page = await store.listTasks({
        statusTimestampAfter: after,
        limit: 100,
        ...(cursor ? { after: cursor } : {}),
      });
      for (const record of page.records) {
        if (++sent > RESUME_LIMIT) {
          this.#resync(connection, 'too many changes since Last-Event-ID; reload everything');
          return;
        }
        await this.#write(connection, 'task', await taskView(store, record, queue, now));
      }
      cursor = page.next;
    } while (cursor !== undefined);
  }

  #add(connection: Connection): void {
    this.#connections.add(connection);
    // Started by the first connection only: #unsubscribe cannot tell, since a store without
    // subscribeAll leaves it undefined, and each connection would start timers #remove never clears.
    if (this.#connections.size > 1) return;
    const { store } = this.#options;
    this.#unsubscribe = store.subscribeAll?.((taskId) => this.#changed(taskId));
    this.#workersTimer = setInterval(() => void this.#pollWorkers(), WORKERS_INTERVAL_MS);
    this.#workersTimer.unref();
    if (this.#options.heartbeatIntervalMs > 0) {
      this.#heartbeat = setInterval(() => {
        for (const c of this.#connections) c.res.write(': heartbeat\n\n');
      }, this.#options.heartbeatIntervalMs);
      this.#heartbeat.unref();
    }
  }

  #remove(connection: Connection): void {
    if (!this.#connections.delete(connection) || this.#connections.size > 0) return;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    clearInterval(this.#workersTimer);
    clearInterval(this.#heartbeat);
    // Nobody is left to tell: a new connection starts from snapshots.
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    this.#failedFlushes = 0;
    this.#pending.clear();
    this.#lastWorkers = '';
  }

  #changed(taskId: string): void {
    if (taskId === '') {
      // The store may have missed notifications (its listener reconnected): start over.
      for (const connection of [...this.#connections]) this.#resync(connection, 'notifications were interrupted');
      return;
    }
    this.#pending.add(taskId);
    if (this.#flushing) return;
    this.#flushing = true;
    // A change while a retry waits: read now, the store may be back (the retry is then moot).
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    // Coalesced: a burst of commits of one task becomes one read and one event.
    setImmediate(() => void this.#flush());
  }

  async #flush(): Promise<void> {
    const { store } = this.#options;
    let failed = false;
    try {
      while (this.#pending.size > 0 && this.#connections.size > 0) {
        const taskIds = [...this.#pending];
        this.#pending.clear();
        let sent = 0;
        try {
          const queue = await QueueView.read(store);
          const now = this.#now();
          for (const taskId of taskIds) {
            const record: TaskRecord | undefined = await store.getTask(taskId);
            if (record !== undefined) this.#broadcast('task', await taskView(store, record, queue, now));
            sent++;
          }
          this.#sendWorkers(queue, now);
        } catch (error) {
          // A store blip: the changes not sent yet stay pending, for the retry (issue 28, item 9).
          for (const taskId of taskIds.slice(sent)) this.#pending.add(taskId);
          throw error;
        }
      }
      this.#failedFlushes = 0;
    } catch (error) {
      this.#options.onError(error);
      failed = true;
    } finally {
      this.#flushing = false;
    }
    if (failed) this.#retryFlush();
  }

  /**
   * Reads the pending changes again after a failed read, a little later each time; when the store
   * stays unreadable that long, the connections are told to resync (they reload everything once
   * it is back) rather than show a task's old state for good.
   */
  #retryFlush(): void {
    if (this.#connections.size === 0) {
      this.#pending.clear();
      return;
    }
    if (++this.#failedFlushes > FLUSH_RETRIES) {
      this.#failedFlushes = 0;
      this.#pending.clear();
      for (const connection of [...this.#connections]) {
        this.#resync(connection, 'the store could not be read; reload everything');
      }
      return;
    }
    const delayMs = FLUSH_RETRY_MS * 2 ** (this.#failedFlushes - 1);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      if (this.#flushing || this.#pending.size === 0) return;
      this.#flushing = true;
      void this.#flush();
    }, delayMs);
    this.#retryTimer.unref();
  }

  async #pollWorkers(): Promise<void> {
    try {
      this.#sendWorkers(await QueueView.read(this.#options.store), this.#now());
    } catch (error) {
      this.#options.onError(error);
    }
  }

  #sendWorkers(queue: QueueView, now: number): void {
    // Sent when the set of workers or their turns changed, not for every renewal.
    const workers = queue.workerViews(now);
    const key = JSON.stringify(workers.map(({ lastRenewal, leaseUntil, ...rest }) => rest));
    if (key === this.#lastWorkers) return;
    this.#lastWorkers = key;
    this.#broadcast('workers', { workers });
  }

  #broadcast(event: string, data: MonitorTask | object): void {
    const id = this.#nextId();
    const frame = `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const connection of [...this.#connections]) this.#send(connection, frame);
  }

  /**
   * One connection's own events (hello, snapshots, replay): written at the pace the client reads,
   * waiting for 'drain', and not counted against maxBufferedEvents, which is for live broadcasts:
   * otherwise a thousand active tasks would resync every connection as it opens.
   */
  async #write(connection: Connection, event: string, data: unknown): Promise<void> {
    const { res } = connection;
    if (res.destroyed || res.writableEnded) return;
    if (res.write(`id: ${this.#nextId()}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  }

  #send(connection: Connection, frame: string): void {
    const { res } = connection;
    if (res.destroyed || res.writableEnded) return;
    if (
      res.writableNeedDrain &&
      (connection.waiting >= this.#options.maxBufferedEvents || res.writableLength > MAX_BUFFERED_BYTES)
    ) {
      this.#resync(connection, 'this connection fell behind; reload everything');
      return;
    }
    if (!res.write(frame)) connection.waiting++;
  }

  /** Tells the client to read everything again, and closes its connection. */
  #resync(connection: Connection, reason: string): void {
    const { res } = connection;
    this.#remove(connection);
    if (res.destroyed || res.writableEnded) return;
    // No id: the client must not resume after this point (it missed changes); it reloads everything.
    res.end(`event: resync\ndata: ${JSON.stringify({ reason })}\n\n`);
  }

  /** Ends every connection (the server is closing). */
  close(): void {
    this.#closed = true;
    for (const connection of [...this.#connections]) {
      this.#remove(connection);
      connection.res.end();
    }
  }

  get closed(): boolean {
    return this.#closed;
  }
}

/** The time of a Last-Event-ID this hub (or another worker's) wrote; undefined when absent or not one. */
function resumeTime(lastEventId: string | undefined): number | undefined {
  if (lastEventId === undefined) return undefined;
  const match = /^(\d{1,16})\.\d{1,16}$/.exec(lastEventId.trim());
  return match === null ? undefined : Number(match[1]);
}
