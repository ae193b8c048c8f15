/**
 * How the plugin closes (issue 23, item 9). Fastify bounds every preClose hook by its
 * `pluginTimeout` (10 s by default, avvio's ready timeout) and rejects `close()` with
 * AVV_ERR_READY_TIMEOUT past it, while the drain takes up to `drainTimeoutMs` (also 10 s by
 * default) plus the interrupted turns' last writes and the streams' grace. So the drain is not
 * bounded by the hook: preClose starts it and waits for it only for part of `pluginTimeout`, then
 * lets Fastify go on closing the server (which waits for the open connections the drain is about
 * to end), and onClose, which Fastify does not time out, waits for the rest before the store is
 * closed. `close()` thus succeeds with any drainTimeoutMs and pluginTimeout, and resolves only once
 * the drain's final writes are committed.
 */

import type { A2ARuntime } from '@fastify-a2a/core';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { StreamHub } from './sse.js';

/**
 * After the turns drained, how long open streams get to write their final events before the rest
 * (following tasks that run on other workers) are ended.
 */
const STREAM_GRACE_MS = 1000;

/**
 * The share of Fastify's pluginTimeout the preClose hook waits for the drain before it returns and
 * leaves the rest to onClose: enough margin for the other preClose hooks' bookkeeping.
 */
const PRE_CLOSE_SHARE = 0.8;

export interface ShutdownParts {
  readonly runtime: A2ARuntime;
  readonly streams: StreamHub;
  readonly log: FastifyBaseLogger;
  readonly drainTimeoutMs: number;
  /** Fastify's pluginTimeout (`initialConfig.pluginTimeout`); 0 means no bound. */
  readonly pluginTimeoutMs: number;
  /** Runs after the drain, before the runtime closes the store. */
  readonly onClosed: () => void;
}

/** Adds the preClose and onClose hooks that drain the runtime and the streams, then close the runtime. */
export function addShutdownHooks(scope: FastifyInstance, parts: ShutdownParts): void {
  const { runtime, streams, log } = parts;
  let draining: Promise<void> | undefined;
  const drain = async (): Promise<void> => {
    const since = Date.now();
    const open = streams.size;
    log.info(
      { turns: runtime.runningTurns, streams: open, drainTimeoutMs: parts.drainTimeoutMs },
      'a2a: closing: draining running turns and open streams',
    );
    const turns = await runtime.drain();
    const cut = await streams.drain(STREAM_GRACE_MS);
    log.info(
      { ...turns, streams: open, streamsCut: cut, ms: Date.now() - since },
      'a2a: drained: turns finished or failed, streams ended',
    );
  };
  // preClose, not onClose: Fastify closes the server between the two, and that waits for every
  // open connection, so open streams must end by then. They end with their final event: the turns
  // drain first (new requests already get 503), and a stream of a turn that ran here carries how it
  // ended, rather than being cut off mid-turn (§7.2).
  scope.addHook('preClose', async () => {
    draining = drain().catch((error: unknown) => log.error({ err: error }, 'a2a: the drain failed'));
    if (parts.pluginTimeoutMs <= 0) return draining;
    const waitMs = Math.floor(parts.pluginTimeoutMs * PRE_CLOSE_SHARE);
    let timer: NodeJS.Timeout | undefined;
    const outlived = await Promise.race([
      draining.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), waitMs);
      }),
    ]);
    clearTimeout(timer);
    if (outlived) {
      log.info(
        { waitedMs: waitMs, pluginTimeoutMs: parts.pluginTimeoutMs },
        "a2a: the drain goes on past Fastify's pluginTimeout; close() resolves when it is done",
      );
    }
  });
  // A request the drain answers after Fastify closed the server (a blocking send, a stream): its
  // keep-alive connection would then stay open, and the server's close() wait for it for good
  // (Node reaps idle connections once, when close() is called). End the connection once answered.
  // (HTTP/1 only: an HTTP/2 stream's socket is its session's, shared with other requests.)
  // A callback hook, not an async one: it runs on every request of the scope, and an async hook
  // costs a promise each time for a check that is false until shutdown.
  scope.addHook('onResponse', (request, _reply, done) => {
    if (draining !== undefined && request.raw.httpVersionMajor === 1) request.raw.socket?.end();
    done();
  });
  scope.addHook('onClose', async () => {
    await draining;
    parts.onClosed();
    streams.close();
    await runtime.close();
  });
}
