/** Load generators: autocannon for request/response scenarios, a raw http client for held SSE streams. */

import http from 'node:http';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

// autocannon ships no type declarations and @types/autocannon is not a dependency: type what we use.
interface AutocannonOptions {
  url: string;
  method: 'POST' | 'GET';
  connections: number;
  duration: number;
  headers: Record<string, string>;
  body: string;
  /**
   * Per-request hooks. (autocannon's own `idReplacement` is not used: it assumes 27 more bytes per
   * id when computing Content-Length, which does not match the ids it generates.)
   */
  requests?: { setupRequest: (request: { body?: string }) => { body?: string } }[];
  /** A response whose body fails this counts as a mismatch. */
  verifyBody?: (body: string) => boolean;
  timeout: number;
}
interface Histogram {
  average: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  total: number;
}
interface AutocannonResult {
  requests: Histogram & { sent: number };
  latency: Histogram;
  duration: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  non2xx: number;
  '2xx': number;
}
type Autocannon = (
  options: AutocannonOptions,
  callback: (error: Error | null, result: AutocannonResult) => void,
) => {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void;
  stop(): void;
};
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export interface HttpLoadResult {
  /** Mean requests per second over the measured window. */
  reqPerSec: number;
  /** Responses completed. */
  total: number;
  durationS: number;
  latencyMs: { p50: number; p90: number; p99: number; avg: number; max: number };
  /** Socket errors + timeouts + non-2xx + bodies that failed verification (e.g. JSON-RPC errors). */
  errors: { socket: number; timeouts: number; non2xx: number; badBody: number };
}

export interface HttpLoad {
  url: string;
  /** The request body, or a function called for every request (e.g. for a fresh messageId each time). */
  body: string | (() => string);
  connections: number;
  /** Seconds. */
  duration: number;
  verify?: (body: string) => boolean;
  /** Request headers besides `content-type: application/json`. */
  headers?: Record<string, string>;
  /** Called with every response's time in ms (e.g. to merge the distributions of several runs). */
  onResponseMs?: (ms: number) => void;
}

/** One autocannon run; durations are bounded by autocannon itself. */
export function httpLoad(load: HttpLoad): Promise<HttpLoadResult> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: load.url,
        method: 'POST',
        connections: load.connections,
        duration: load.duration,
        headers: { 'content-type': 'application/json', ...load.headers },
        ...(typeof load.body === 'string'
          ? { body: load.body }
          : {
              body: load.body(),
              requests: [{ setupRequest: (request) => ({ ...request, body: (load.body as () => string)() }) }],
            }),
        timeout: 30,
        ...(load.verify ? { verifyBody: load.verify } : {}),
      },
      (error, result) => {
        if (error) return reject(error);
        resolve({
          reqPerSec: result.requests.average,
          total: result.requests.total,
          durationS: result.duration,
          latencyMs: {
            p50: result.latency.p50,
            p90: result.latency.p90,
            p99: result.latency.p99,
            avg: result.latency.average,
            max: result.latency.max,
          },
          errors: {
            socket: result.errors,
            timeouts: result.timeouts,
            non2xx: result.non2xx,
            badBody: result.mismatches,
          },
        });
      },
    );
    const { onResponseMs } = load;
    if (onResponseMs) instance.on('response', (_client, _status, _bytes, ms) => onResponseMs(ms));
  });
}

// ---- held SSE streams ----

export interface StreamLoad {
  port: number;
  streams: number;
  /** Body of stream `i`. */
  body: (i: number) => string;
  /** At most this many streams connecting (sent, no first event yet) at a time. */
  openConcurrency: number;
  /** Called once, when every stream has received its first event or failed (all that will open, are open). */
  onAllOpen: (open: number) => Promise<void>;
  /** Hard bound for the whole scenario. */
  timeoutMs: number;
}

export interface StreamLoadResult {
  requested: number;
  /** Streams that received their first event. */
  opened: number;
  /** Largest number open at the same time. */
  maxConcurrent: number;
  /** Open when onAllOpen ran. */
  openAtMeasure: number;
  /** Time from the first request to all streams open (or failed). */
  openMs: number;
  /** Streams that received an event with `"final":true`. */
  finals: number;
  /** Events received, all streams. */
  events: number;
  /** Non-200 answers, socket errors, streams that ended without a final event, or timed out. */
  errors: number;
  errorSamples: string[];
  timedOut: boolean;
  totalMs: number;
}

/** Opens `streams` SSE streams with a raw http client, holds them until the server ends them. */
export async function streamLoad(load: StreamLoad): Promise<StreamLoadResult> {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const start = performance.now();
  let launched = 0;
  let opened = 0;
  let open = 0;
  let maxConcurrent = 0;
  let pending = 0;
  let finals = 0;
  let events = 0;
  let errors = 0;
  let settled = 0;
  const errorSamples: string[] = [];
  const requests = new Set<http.ClientRequest>();
  let openAtMeasure = 0;
  let openMs = 0;
  let measured: Promise<void> | undefined;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  let wakeLauncher: (() => void) | undefined;

  const fail = (message: string): void => {
    errors++;
    if (errorSamples.length < 5) errorSamples.push(message);
  };
  const maybeMeasure = (): void => {
    if (measured === undefined && launched === load.streams && pending === 0) {
      openAtMeasure = open;
      openMs = performance.now() - start;
      measured = load.onAllOpen(open);
    }
  };
  const finish = (): void => {
    settled++;
    if (settled === load.streams) resolveDone();
  };

  const openOne = (i: number): void => {
    const body = load.body(i);
    let first = true;
    let final = false;
    let ended = false;
    pending++;
    const leavePending = (): void => {
      if (!first) return;
      first = false;
      pending--;
      wakeLauncher?.();
    };
    const end = (): void => {
      if (ended) return;
      ended = true;
      leavePending();
      maybeMeasure();
      finish();
    };
    const request = http.request({
      agent,
      host: '127.0.0.1',
      port: load.port,
      path: '/a2a',
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'content-length': Buffer.byteLength(body),
      },
    });
    requests.add(request);
    request.on('response', (response) => {
      if (response.statusCode !== 200) {
        fail(`HTTP ${response.statusCode}`);
        response.resume();
        response.on('end', end);
        return;
      }
      response.setEncoding('utf8');
      let buffer = '';
      let wasOpen = false;
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let boundary = buffer.indexOf('\n\n');
        while (boundary >= 0) {
          const frame = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          boundary = buffer.indexOf('\n\n');
          if (!frame.includes('data:')) continue; // heartbeat comment
          events++;
          if (frame.includes('"error"')) fail(`error event: ${frame.slice(0, 200)}`);
          if (first) {
            opened++;
            open++;
            wasOpen = true;
            if (open > maxConcurrent) maxConcurrent = open;
            leavePending();
            maybeMeasure();
          }
          if (frame.includes('"final":true')) {
            final = true;
            finals++;
          }
        }
      });
      response.on('end', () => {
        if (wasOpen) open--;
        if (!final) fail('stream ended without a final event');
        requests.delete(request);
        end();
      });
      response.on('error', (error) => fail(`response: ${error.message}`));
    });
    request.on('error', (error) => {
      fail(`request: ${error.message}`);
      requests.delete(request);
      end();
    });
    request.end(body);
  };

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    for (const request of requests) request.destroy();
    resolveDone();
  }, load.timeoutMs);

  // Launch, keeping at most openConcurrency streams waiting for their first event.
  while (launched < load.streams && performance.now() - start < load.timeoutMs) {
    if (pending >= load.openConcurrency) {
      await new Promise<void>((resolve) => {
        wakeLauncher = resolve;
      });
      wakeLauncher = undefined;
      continue;
    }
    openOne(launched++);
    if (launched % 100 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  maybeMeasure();
  await done;
  clearTimeout(timer);
  await measured;
  agent.destroy();
  return {
    requested: load.streams,
    opened,
    maxConcurrent,
    openAtMeasure,
    openMs: Math.round(openMs),
    finals,
    events,
    errors: errors + (load.streams - settled),
    errorSamples,
    timedOut,
    totalMs: Math.round(performance.now() - start),
  };
}
